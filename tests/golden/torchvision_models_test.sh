#!/usr/bin/env bash
# The model specs of the newer torchvision families against torchvision itself (Debian's
# python3-torchvision, its models built here, no weights): for each spec, every Conv2d,
# Linear, BatchNorm2d, LayerNorm and MultiheadAttention module of the torchvision model must
# be a layer of the same name in `trainc show --json` with the same parameters (and, for conv,
# linear and attention, the same MACs, counted by hooks on a forward at the spec's input size,
# 224x224 or Inception v3's 299x299; GoogLeNet and Inception v3 with their auxiliary heads,
# aux_logits=True, forward in training mode, and without them, the specs' vars { aux_logits:
# false }:
# OC*OH*OW*(C/groups)*KH*KW, in*out per token, and attention's 4*E*E*L + 2*L*L*E, its in- and
# out-projections and its two L x L products, as torchvision's published GFLOPS count them;
# Swin's ShiftedWindowAttention 4*C*C*HW + 2*HW*N*C over windows of N positions), and the
# totals must be equal: parameters (class token, position embedding and relative-position
# bias tables included) and MACs to the unit. An attention module's out_proj (qkv and proj)
# is part of its layer.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
py="$PY"   # Debian's python3-torch and python3-torchvision live in the system interpreter
"$py" -c "import torch, torchvision" 2>/dev/null ||
  { echo "FAIL: $py cannot import torch and torchvision (apt-get install python3-torchvision)" >&2; exit 1; }
OMP_NUM_THREADS=1 "$py" - "$TRAINC" <<'PY'
import json, subprocess, sys
import torch, torchvision
from torchvision.models.vision_transformer import VisionTransformer

trainc = sys.argv[1]
torch.set_num_threads(1)
# spec name: torchvision constructor
models = {
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "mobilenet_v3_large": torchvision.models.mobilenet_v3_large,
    "efficientnet_b0": torchvision.models.efficientnet_b0,
    "regnet_y_400mf": torchvision.models.regnet_y_400mf,
    "shufflenet_v2_x1_0": torchvision.models.shufflenet_v2_x1_0,
    "resnext50_32x4d": torchvision.models.resnext50_32x4d,
    "wide_resnet50_2": torchvision.models.wide_resnet50_2,
    "vgg16_bn": torchvision.models.vgg16_bn,
    "squeezenet1_0": torchvision.models.squeezenet1_0,
    "mnasnet1_0": torchvision.models.mnasnet1_0,
    "densenet121": torchvision.models.densenet121,
    # with their auxiliary heads (the specs' softmax_ce loss heads), which run in training only
    "googlenet": lambda: torchvision.models.googlenet(aux_logits=True, init_weights=True),
    "inception_v3": lambda: torchvision.models.inception_v3(aux_logits=True, init_weights=True),
    # and without them: the specs' vars { aux_logits: false }
    "googlenet/noaux": lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True),
    "inception_v3/noaux": lambda: torchvision.models.inception_v3(aux_logits=False, init_weights=True),
    "vit_b_16": torchvision.models.vit_b_16,
    "swin_t": torchvision.models.swin_t,
    # ViT-S/16 and DeiT-Tiny/Small: torchvision has no constructor for them; its
    # VisionTransformer class at their widths (DeiT: timm's ViT with patch 16, depth 12,
    # mlp_ratio 4, qkv bias, the same modules)
    "vit_s_16": lambda: VisionTransformer(224, 16, 12, 6, 384, 1536),
    "deit_small_16": lambda: VisionTransformer(224, 16, 12, 6, 384, 1536),
    "deit_tiny_16": lambda: VisionTransformer(224, 16, 12, 3, 192, 768),
}
from torchvision.models.swin_transformer import ShiftedWindowAttention
ATTN = (torch.nn.MultiheadAttention, ShiftedWindowAttention)
bad = 0
for name, ctor in models.items():
    spec = "specs/models/%s.spec" % name.split("/")[0]
    if name.endswith("/noaux"):   # a run spec's override of the model's variable
        import os, tempfile
        fd, spec = tempfile.mkstemp(suffix=".spec")
        os.write(fd, ('extends: "%s/specs/models/%s.spec"\nvars { aux_logits: false }\n'
                      % (os.getcwd(), name.split("/")[0])).encode())
        os.close(fd)
    r = subprocess.run([trainc, "show", "--json", spec], capture_output=True, text=True)
    if name.endswith("/noaux"): os.unlink(spec)
    if r.returncode != 0:
        print("FAIL %s: trainc show --json exit %d\n%s" % (name, r.returncode, r.stderr[:2000]))
        bad += 1
        continue
    j = json.loads(r.stdout)
    ours = {l["name"]: l for l in j["layers"]}
    model = ctor().eval()
    if name in ("googlenet", "inception_v3"):   # training mode runs the aux heads; BN stays eval for a batch of 1
        model.train()
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d): m.eval()
    macs = {}
    def hook(mod, inp, out, key=None):
        if isinstance(mod, torch.nn.Conv2d):
            oc, oh, ow = out.shape[1], out.shape[2], out.shape[3]
            macs[key] = oc * oh * ow * (mod.in_channels // mod.groups) * mod.kernel_size[0] * mod.kernel_size[1]
        elif isinstance(mod, torch.nn.MultiheadAttention):   # out: (output [1, L, E], weights); batch_first
            seq, e = out[0].shape[1], mod.embed_dim
            macs[key] = 4 * e * e * seq + 2 * seq * seq * e
        elif isinstance(mod, ShiftedWindowAttention):   # out [1, H, W, C]; windows of N positions (no padding at 224)
            hw, e, n = out.shape[1] * out.shape[2], out.shape[3], mod.window_size[0] * mod.window_size[1]
            macs[key] = 4 * e * e * hw + 2 * hw * n * e
        else:   # per token (one row for a classifier's [1, in] input)
            macs[key] = mod.in_features * mod.out_features * (out.numel() // mod.out_features)
    mods, mha = {}, []
    for key, mod in model.named_modules():
        if any(key.startswith(m + ".") for m in mha): continue   # out_proj, qkv, proj: the attention layer's
        if isinstance(mod, ATTN): mha.append(key)
        if isinstance(mod, (torch.nn.Conv2d, torch.nn.Linear, torch.nn.BatchNorm2d, torch.nn.LayerNorm) + ATTN):
            mods[key] = mod
            if not isinstance(mod, (torch.nn.BatchNorm2d, torch.nn.LayerNorm)):
                mod.register_forward_hook(lambda m, i, o, key=key: hook(m, i, o, key))
    with torch.no_grad():
        side = 299 if name.startswith("inception_v3") else 224   # the spec's input_shape
        model(torch.zeros(1, 3, side, side))
    problems = []
    for key, mod in mods.items():
        p = sum(t.numel() for t in mod.parameters(recurse=isinstance(mod, ATTN)))
        l = ours.get(key)
        if l is None:
            problems.append("torchvision's %s (%s) is no layer of the spec" % (key, type(mod).__name__))
        elif l["params"] != p:
            problems.append("%s: params %d, torchvision %d" % (key, l["params"], p))
        elif key in macs and l["macs"] != macs[key]:
            problems.append("%s: MACs %d, torchvision %d" % (key, l["macs"], macs[key]))
    want_p = sum(t.numel() for t in model.parameters())
    want_m = sum(macs.values())
    if j["params"] != want_p: problems.append("total params %d, torchvision %d" % (j["params"], want_p))
    if j["macs"] != want_m: problems.append("total MACs %d, torchvision %d" % (j["macs"], want_m))
    print("%-4s %-20s params %9d (torchvision %9d)  MACs %11d (torchvision %11d)  %d modules matched by name"
          % ("ok" if not problems else "FAIL", name, j["params"], want_p, j["macs"], want_m, len(mods)))
    for p in problems[:10]: print("     " + p)
    bad += bool(problems)
sys.exit(1 if bad else 0)
PY
