#!/usr/bin/env python3
"""Reference LRs for tests/unit/test_schedule.c, computed the way torch.optim.lr_scheduler
computes them: by its *recursive* get_lr() updates (one multiply per scheduler.step()), not
by the closed forms runtime/core/schedule.c uses, so the two are independent. Plain Python:
run `python3 tests/ref/lr_reference.py` and compare with the constants in the test."""
import math


def step_lr(base, step_size, gamma, n):
    lrs, lr = [], base
    for e in range(n):
        if e > 0 and e % step_size == 0:
            lr *= gamma
        lrs.append(lr)
    return lrs


def multistep_lr(base, milestones, gamma, n):
    lrs, lr = [], base
    for e in range(n):
        if e in milestones:
            lr *= gamma ** milestones.count(e)
        lrs.append(lr)
    return lrs


def exponential_lr(base, gamma, n):
    lrs, lr = [], base
    for e in range(n):
        if e > 0:
            lr *= gamma
        lrs.append(lr)
    return lrs


def cosine_lr(base, t_max, eta_min, n):
    lrs, lr = [], base
    for e in range(n):
        if e == 0:
            lr = base
        elif (e - 1 - t_max) % (2 * t_max) == 0:
            lr = lr + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
        else:
            lr = ((1 + math.cos(math.pi * e / t_max)) / (1 + math.cos(math.pi * (e - 1) / t_max))
                  * (lr - eta_min) + eta_min)
        lrs.append(lr)
    return lrs


def polynomial_lr(base, total_iters, power, n):
    lrs, lr = [], base
    for e in range(n):
        if e > 0 and e <= total_iters:
            lr *= ((1.0 - e / total_iters) / (1.0 - (e - 1) / total_iters)) ** power
        lrs.append(lr)
    return lrs


def linear_lr(base, start, end, total_iters, n):
    lrs, lr = [], base
    for e in range(n):
        if e == 0:
            lr = base * start
        elif e <= total_iters:
            lr *= 1.0 + (end - start) / (total_iters * start + (e - 1) * (end - start))
        lrs.append(lr)
    return lrs


def one_cycle_lr(max_lr, total, pct, div, final_div, anneal):
    initial, low = max_lr / div, max_lr / div / final_div
    phases = [(pct * total - 1, initial, max_lr), (total - 1, max_lr, low)]
    def cos(a, b, p): return b + (a - b) / 2.0 * (math.cos(math.pi * p) + 1)
    def lin(a, b, p): return (b - a) * p + a
    f = cos if anneal == "cos" else lin
    out = []
    for s in range(total):
        start = 0
        for i, (end, a, b) in enumerate(phases):
            if s <= end or i == len(phases) - 1:
                out.append(f(a, b, (s - start) / (end - start)))
                break
            start = end
    return out


def chained_warmup_multistep(base, start, warm, milestones, gamma, n):
    """ChainedScheduler(LinearLR(start, 1, warm), MultiStepLR(milestones, gamma))."""
    w = linear_lr(1.0, start, 1.0, warm, n)
    m = multistep_lr(1.0, milestones, gamma, n)
    return [base * a * b for a, b in zip(w, m)]


def sequential_warmup_cosine(base, start, warm, total, eta_min):
    """SequentialLR([LinearLR(start, 1, warm), CosineAnnealingLR(total - warm, eta_min)], [warm])."""
    w = linear_lr(base, start, 1.0, warm, warm)
    c = cosine_lr(base, total - warm, eta_min, total - warm)
    return w + c


def show(name, lrs, idx):
    print(name + ": " + ", ".join("[%d]=%.17g" % (i, lrs[i]) for i in idx))


if __name__ == "__main__":
    show("StepLR(0.1, 30, 0.1)", step_lr(0.1, 30, 0.1, 90), [0, 29, 30, 59, 60, 89])
    show("MultiStepLR(1.6, [30,60,80], 0.1)", multistep_lr(1.6, [30, 60, 80], 0.1, 90),
         [29, 30, 60, 79, 80, 89])
    show("ExponentialLR(0.4, 0.95)", exponential_lr(0.4, 0.95, 90), [0, 1, 10, 89])
    show("CosineAnnealingLR(0.1, T_max=90, 0.001)", cosine_lr(0.1, 90, 0.001, 91), [0, 1, 30, 45, 89, 90])
    show("PolynomialLR(0.1, 85, power=2)", polynomial_lr(0.1, 85, 2.0, 86), [0, 1, 40, 84, 85])
    show("LinearLR(0.5, 1/3, 1, 10)", linear_lr(0.5, 1 / 3, 1.0, 10, 12), [0, 1, 5, 9, 10, 11])
    show("LinearLR(decay 2.0 -> 0, 100 iters)", linear_lr(2.0, 1.0, 0.0, 100, 101), [0, 1, 37, 99, 100])
    oc = one_cycle_lr(3e-3, 350, 0.25, 25.0, 1e4, "cos")
    show("OneCycleLR(3e-3, 350, .25, cos)", oc, [0, 1, 50, 86, 87, 88, 200, 349])
    ol = one_cycle_lr(0.1, 100, 0.3, 25.0, 1e4, "linear")
    show("OneCycleLR(0.1, 100, .3, linear)", ol, [0, 10, 29, 30, 60, 99])
    g = chained_warmup_multistep(3.2, 1 / 32, 5 * 10, [300, 600, 800], 0.1, 900)
    show("Goyal: spe 10, Chained(LinearLR(1/32, 50), MultiStep[300,600,800])", g,
         [0, 1, 25, 49, 50, 299, 300, 600, 899])
    sc = sequential_warmup_cosine(0.4, 0.1, 20, 200, 0.0)
    show("Sequential(LinearLR(.1, 20), Cosine(180)) base .4", sc, [0, 10, 19, 20, 21, 110, 199])
