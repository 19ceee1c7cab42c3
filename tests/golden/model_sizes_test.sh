#!/usr/bin/env bash
# The model specs match the torchvision architectures: `trainc show --json` must report
# exactly their parameter counts, and forward MACs within 2% of the published figures.
# The same numbers are recomputed independently by count_params.py from `trainc print`.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
"$PY" - "$TRAINC" <<'PY'
import json, subprocess, sys
sys.path.insert(0, "tests/golden")
import count_params

trainc = sys.argv[1]
# model: (params, GMACs) -- torchvision's published figures.
want = {
    "alexnet": (61100840, 0.71), "resnet18": (11689512, 1.81), "resnet50": (25557032, 4.09),
    "resnet101": (44549160, 7.80), "resnet152": (60192808, 11.51),
    "convnext_tiny": (28589128, 4.46), "convnext_small": (50223688, 8.68), "vgg16": (138357544, 15.47),
}
bad = 0
for model, (params, gmacs) in want.items():
    spec = "specs/models/%s.spec" % model
    r = subprocess.run([trainc, "show", "--json", spec], capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL %s: trainc show --json exit %d\n%s" % (model, r.returncode, r.stderr[:2000]))
        bad += 1
        continue
    j = json.loads(r.stdout)
    got_p, got_m = j["params"], j["macs"]
    text = subprocess.run([trainc, "print", spec], check=True, capture_output=True, text=True).stdout
    ref_p, ref_m = count_params.count(dict(count_params.parse(text))["net"])
    err = abs(got_m / 1e9 - gmacs) / gmacs
    ok = got_p == params and err <= 0.02 and (got_p, got_m) == (ref_p, ref_m)
    print("%-4s %-14s params %11d (want %11d)  MACs %6.3f G (want %5.2f G, %+.2f%%)  ref %d/%d"
          % ("ok" if ok else "FAIL", model, got_p, params, got_m / 1e9, gmacs,
             100 * (got_m / 1e9 - gmacs) / gmacs, ref_p, ref_m))
    bad += not ok
sys.exit(1 if bad else 0)
PY
