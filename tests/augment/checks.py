# Shared by the tests/augment/*_test.py scripts: named checks that print ok/FAIL and collect the
# failures, the augment_dump driver, and a two-sample comparison of means.
import math
import subprocess
import sys

import numpy as np

failures = []


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (": " + detail if detail else ""))
    if not ok:
        failures.append(what)


def runner(tool):
    """run(*args, env=None): augment_dump's stdout."""
    return lambda *args, env=None: subprocess.run([tool] + [str(a) for a in args], check=True, capture_output=True,
                                                  text=True, env=env).stdout


def close_stat(what, ours, theirs, tol_se=5.0):
    """Means of two samples agree within tol_se standard errors of their difference."""
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    se = math.sqrt(ours.var() / len(ours) + theirs.var() / len(theirs)) + 1e-12
    diff = ours.mean() - theirs.mean()
    check(abs(diff) < tol_se * se, what, f"ours {ours.mean():.5g} reference {theirs.mean():.5g} ({diff / se:+.2f} SE)")


def finish(name):
    print(f"{name}:", "FAILED " + ", ".join(failures) if failures else "all passed")
    sys.exit(1 if failures else 0)
