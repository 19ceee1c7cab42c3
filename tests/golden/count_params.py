#!/usr/bin/env python3
"""Independent reference for parameter and MAC counts: walks the canonical text printed by
`trainc print SPEC` (the resolved net) and infers shapes layer by layer, with the
torchvision conventions (MACs = conv and linear multiply-accumulates only).
Usage: count_params.py TRAINC SPEC...   prints "SPEC params macs" per spec."""
import subprocess
import sys


def parse(text):
    """Canonical print output -> nested list of (field, value) pairs."""
    root, stack = [], []
    cur = root
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s == "}":
            cur = stack.pop()
        elif s.endswith("{"):
            sub = []
            cur.append((s[:-1].strip(), sub))
            stack.append(cur)
            cur = sub
        else:
            k, v = s.split(":", 1)
            cur.append((k.strip(), eval_value(v.strip())))
    return root


def eval_value(v):
    if v.startswith("["):
        return [eval_value(x.strip()) for x in split_list(v[1:-1])]
    if v.startswith('"'):
        return v[1:-1]
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def split_list(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[":
            depth += 1
        if ch in "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def count(net):
    fields = dict((k, v) for k, v in net if not isinstance(v, list) or k in ("input_shape",))
    shape = tuple(fields["input_shape"])
    shapes = {"data": shape}
    prev = "data"
    params = macs = 0
    for typ, body in net:
        if not isinstance(body, list) or typ in ("input_shape",):
            continue
        f = dict(body)
        ins = f.get("inputs") or [f.get("input", prev)]
        x = shapes[ins[0]]
        c = x[0]
        if typ == "conv":
            kh, kw = pair(f["kernel"])
            sh, sw = pair(f.get("stride", 1))
            ph, pw = pair(f.get("pad", 0))
            dh, dw = pair(f.get("dilation", 1))
            g = f.get("groups", 1)
            o = f["out"]
            h = (x[1] + 2 * ph - dh * (kh - 1) - 1) // sh + 1
            w = (x[2] + 2 * pw - dw * (kw - 1) - 1) // sw + 1
            p = o * (c // g) * kh * kw + (o if f.get("bias", "true") != "false" else 0)
            y = (o, h, w)
            macs += o * h * w * (c // g) * kh * kw
        elif typ == "linear":
            n = 1
            for d in x:
                n *= d
            o = f["out"]
            p = n * o + (o if f.get("bias", "true") != "false" else 0)
            y = (o,)
            macs += n * o
        elif typ in ("bn", "ln"):
            p, y = 2 * c, x
        elif typ == "layer_scale":
            p, y = c, x
        elif typ in ("maxpool", "avgpool"):
            k = f["kernel"]
            s = f.get("stride", k)
            pd = f.get("pad", 0)
            p, y = 0, (c, (x[1] + 2 * pd - k) // s + 1, (x[2] + 2 * pd - k) // s + 1)
        elif typ == "adaptive_avgpool":
            p, y = 0, (c, f["size"], f["size"])
        elif typ == "gap":
            p, y = 0, (c, 1, 1)
        elif typ == "flatten":
            n = 1
            for d in x:
                n *= d
            p, y = 0, (n,)
        elif typ == "concat":
            p, y = 0, (sum(shapes[i][0] for i in ins),) + x[1:]
        else:  # relu, gelu, dropout, add, stochastic_depth, lrn, softmax_ce
            p, y = 0, x
        params += p
        shapes[f["name"]] = y
        prev = f["name"]
    return params, macs


def main():
    trainc = sys.argv[1]
    for spec in sys.argv[2:]:
        text = subprocess.run([trainc, "print", spec], check=True, capture_output=True,
                              text=True).stdout
        net = dict(parse(text))["net"]
        params, macs = count(net)
        print(spec, params, macs)


if __name__ == "__main__":
    main()
