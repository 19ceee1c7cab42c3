#!/usr/bin/env python3
"""Independent reference for the import tests: Caffe's learnable parameter count of a net
prototxt, computed the way Caffe sizes its blobs (Convolution: out x in/group x kh x kw + out;
InnerProduct: out x C*H*W + out; Scale: 2 x C with a bias; BatchNorm's mean, variance and
factor are statistics, not learned) with Caffe's shape rules (ceil-mode pooling). TEST-phase
layers are left out, as in Caffe's training net.
Usage: caffe_params.py NET.prototxt   prints the count."""
import math
import re
import sys

TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\]|\\.)*"|[{}:\[\],]|[^\s{}:\[\],"#]+')


def parse(text):
    """protobuf text -> list of (field, value); messages are lists, strings unquoted."""
    tokens = [t for t in TOKEN.findall(text) if t.strip() and not t.startswith("#")]
    pos = 0

    def message(end):
        nonlocal pos
        out = []
        while pos < len(tokens) and tokens[pos] != end:
            name = tokens[pos]
            pos += 1
            if tokens[pos] == ":":
                pos += 1
            if tokens[pos] == "{":
                pos += 1
                out.append((name, message("}")))
                pos += 1
            else:
                out.append((name, scalar(tokens[pos])))
                pos += 1
        return out

    return message(None)


def scalar(tok):
    if tok.startswith('"'):
        return tok[1:-1]
    try:
        return int(tok)
    except ValueError:
        try:
            return float(tok)
        except ValueError:
            return tok


def get(msg, name, default=None):
    for k, v in msg:
        if k == name:
            return v
    return default


def getall(msg, name):
    return [v for k, v in msg if k == name]


def pair(p, both, hname, wname, default):
    vals = getall(p, both)
    h = w = default
    if vals:
        h, w = vals[0], vals[-1]
    return get(p, hname, h), get(p, wname, w)


def meets_train(rule):
    """Caffe's NetStateRule against the training state: phase TRAIN, level 0, no stages."""
    return (get(rule, "phase", "TRAIN") == "TRAIN" and get(rule, "min_level", 0) <= 0 <= get(rule, "max_level", 0)
            and not getall(rule, "stage"))


def in_train(layer):
    includes, excludes = getall(layer, "include"), getall(layer, "exclude")
    if includes and not any(meets_train(r) for r in includes):
        return False
    return not any(meets_train(r) for r in excludes)


def count(net):
    shapes, total, batch = {}, 0, 1   # shapes: each blob's dims after the batch, as Caffe has them
    for layer in getall(net, "layer"):
        if not in_train(layer):
            continue
        kind = get(layer, "type")
        bottoms, top = getall(layer, "bottom"), get(layer, "top")
        if kind == "Input":
            dims = getall(get(get(layer, "input_param"), "shape"), "dim")
            shapes[top], batch = tuple(dims[1:]), dims[0]
            continue
        if kind == "DummyData":   # its first shape is the data top's
            dims = getall(get(get(layer, "dummy_data_param"), "shape"), "dim")
            shapes[top] = tuple(dims[1:])
            continue
        if kind == "ImageData":   # 3 channels (is_color: false: 1) at crop_size, else new_height x new_width
            crop = get(get(layer, "transform_param"), "crop_size") if get(layer, "transform_param") else None
            p = get(layer, "image_data_param")
            c = 1 if get(p, "is_color") in (False, "false") else 3
            shapes[top] = (c, crop, crop) if crop else (c, get(p, "new_height"), get(p, "new_width"))
            continue
        if kind in ("SoftmaxWithLoss", "Accuracy"):
            continue
        c, h, w = (shapes[bottoms[0]] + (1, 1, 1))[:3]
        if kind == "Convolution":
            p = get(layer, "convolution_param")
            out, group = get(p, "num_output"), get(p, "group", 1)
            kh, kw = pair(p, "kernel_size", "kernel_h", "kernel_w", 0)
            sh, sw = pair(p, "stride", "stride_h", "stride_w", 1)
            ph, pw = pair(p, "pad", "pad_h", "pad_w", 0)
            total += out * (c // group) * kh * kw + (out if get(p, "bias_term", "true") == "true" else 0)
            c, h, w = out, (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
        elif kind == "InnerProduct":
            p = get(layer, "inner_product_param")
            out = get(p, "num_output")
            total += out * math.prod(shapes[bottoms[0]]) + (out if get(p, "bias_term", "true") == "true" else 0)
            shapes[top] = (out,)
            continue
        elif kind == "Pooling":
            p = get(layer, "pooling_param")
            if get(p, "global_pooling", "false") == "true":
                h = w = 1
            else:
                kh, kw = pair(p, "kernel_size", "kernel_h", "kernel_w", 0)
                sh, sw = pair(p, "stride", "stride_h", "stride_w", 1)
                ph, pw = pair(p, "pad", "pad_h", "pad_w", 0)
                h = math.ceil((h + 2 * ph - kh) / sh) + 1
                w = math.ceil((w + 2 * pw - kw) / sw) + 1
        elif kind == "Scale":
            p = get(layer, "scale_param", [])
            total += c * (2 if get(p, "bias_term", "false") == "true" else 1)
        elif kind == "BatchNorm":   # NVCaffe's scale_bias: gamma and beta in the BatchNorm itself
            p = get(layer, "batch_norm_param", [])
            total += 2 * c if get(p, "scale_bias", "false") == "true" else 0
        elif kind == "Concat":
            c = sum(shapes[b][0] for b in bottoms)
        elif kind == "Slice":   # channels at slice_point, or equal parts; one shape per top
            tops = getall(layer, "top")
            p = get(layer, "slice_param", [])
            points = [int(x) for x in getall(p, "slice_point")] if p else []
            ends = points + [c] if points else [c // len(tops) * (k + 1) for k in range(len(tops))]
            for t, a, b in zip(tops, [0] + ends[:-1], ends):
                shapes[t] = (b - a, h, w)
            continue
        elif kind == "Reshape":   # axes [axis, axis + num_axes) replaced by the dims: 0 copies, -1 infers
            p = get(layer, "reshape_param")
            bottom = (batch,) + shapes[bottoms[0]]
            axis, num = get(p, "axis", 0), get(p, "num_axes", -1)
            start = axis if axis >= 0 else len(bottom) + axis + 1
            end = len(bottom) if num == -1 else start + num
            dims = [bottom[start + i] if d == 0 else d for i, d in enumerate(getall(get(p, "shape"), "dim"))]
            out = list(bottom[:start]) + dims + list(bottom[end:])
            if -1 in out:
                out[out.index(-1)] = math.prod(bottom) // -math.prod(out)
            shapes[top] = tuple(out[1:])
            continue
        elif kind not in ("ReLU", "Dropout", "LRN", "Eltwise", "Sigmoid", "Softmax"):
            sys.exit("caffe_params.py: layer type %s is not counted here" % kind)
        shapes[top] = (c, h, w)
    return total


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print(count(parse(f.read())))
