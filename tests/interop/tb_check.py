"""tests/interop/tensorboard_test.sh's reader: TensorFlow's record format and the Event
protocol buffer, decoded here from their specifications (Debian packages no TensorBoard):
every record's two masked CRC32Cs are checked, the first event is file_version
"brain.Event:2", and the scalars equal metrics.jsonl's records at the same steps.

  tb_check.py TB_DIR METRICS.jsonl [RESUMED_AT]
"""
import glob, json, struct, sys

import numpy as np


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    b = open(path, "rb").read()
    at = 0
    while at < len(b):
        head = b[at:at + 8]
        (n,) = struct.unpack("<Q", head)
        (c1,) = struct.unpack("<I", b[at + 8:at + 12])
        assert c1 == masked(head), "%s: length CRC at byte %d" % (path, at)
        data = b[at + 12:at + 12 + n]
        (c2,) = struct.unpack("<I", b[at + 12 + n:at + 16 + n])
        assert len(data) == n and c2 == masked(data), "%s: data CRC at byte %d" % (path, at)
        yield data
        at += 16 + n


def fields(buf):   # protobuf wire format: (field, value) with varints, fixed64/32, bytes
    at, out = 0, []
    while at < len(buf):
        key, at = varint(buf, at)
        f, wt = key >> 3, key & 7
        if wt == 0: v, at = varint(buf, at)
        elif wt == 1: v, at = buf[at:at + 8], at + 8
        elif wt == 5: v, at = buf[at:at + 4], at + 4
        elif wt == 2:
            n, at = varint(buf, at)
            v, at = buf[at:at + n], at + n
        else: raise SystemExit("wire type %d" % wt)
        out.append((f, v))
    return out


def varint(buf, at):
    v = shift = 0
    while True:
        b = buf[at]; at += 1
        v |= (b & 0x7F) << shift; shift += 7
        if not b & 0x80: return v, at


def main():
    tb_dir, metrics = sys.argv[1], sys.argv[2]
    resumed_at = int(sys.argv[3]) if len(sys.argv) > 3 else None
    files = sorted(glob.glob(tb_dir + "/events.out.tfevents.*"))
    assert files, "no event files in " + tb_dir
    scalars, starts = {}, []
    for path in files:
        for i, rec in enumerate(records(path)):
            ev = dict((f, v) for f, v in fields(rec) if f != 5)
            step = ev.get(2, 0)
            assert 1 in ev, "an event without wall_time"
            if i == 0:
                assert ev.get(3) == b"brain.Event:2", "the first event must be file_version"
            if 6 in ev:
                assert dict(fields(ev[6])).get(1) == 1, "session_log other than START"
                starts.append(step)
            for f, summary in fields(rec):
                if f != 5: continue
                for vf, value in fields(summary):
                    v = dict(fields(value))
                    scalars[(v[1].decode(), step)] = struct.unpack("<f", v[2])[0]   # the later file wins
    recs = [json.loads(l) for l in open(metrics)]
    checked = 0
    for r in recs:
        pairs = {"train": [("train/loss", "loss"), ("train/lr", "lr"), ("train/top1", "top1"),
                           ("train/images_per_s", "images_per_s")],
                 "eval": [("eval/loss", "loss"), ("eval/top1", "top1"), ("eval/top5", "top5")]}.get(r["event"], [])
        for tag, key in pairs:
            got = scalars.get((tag, r["step"]))
            assert got is not None, "no %s at step %d" % (tag, r["step"])
            # The event file holds float32(x); metrics.jsonl prints x to 9 significant digits
            # (images/s to 6), and float32 of that print may land one float32 step away.
            tol = 1e-5 if key == "images_per_s" else 2.4e-7
            assert abs(got - r[key]) <= tol * abs(r[key]) + 1e-30, "%s at step %d: %r vs metrics.jsonl %r" % (
                tag, r["step"], got, r[key])
            checked += 1
    if resumed_at is not None:
        assert starts == [resumed_at], "session_log START steps %s, expected [%d]" % (starts, resumed_at)
    print("%d event file(s), CRCs good; %d scalars equal metrics.jsonl's (to float32's precision)%s" % (
        len(files), checked, "" if resumed_at is None else "; the resumed run's file starts a session at step %d" % resumed_at))


main()
