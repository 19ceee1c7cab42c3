# Writes the first seeds of the checkpoint and IDX fuzz targets (format by hand, from
# rt_checkpoint.h and the IDX layout) into tests/fuzz/corpus/{ckpt,idx}/; the fuzzer grows
# the corpus from there (tests/fuzz/fuzz_long.sh). Run once; the output is committed.
# usage: make_seeds.py CORPUS_DIR
import gzip, os, struct, sys, zlib

out = sys.argv[1]


def ckpt(spec_hash, sections, step=7, epoch=1):
    body = b""
    for name, payload in sections:
        body += struct.pack("<I", len(name)) + name + struct.pack("<QI", len(payload), zlib.crc32(payload)) + payload
    total = 112 + len(body) + 16
    h = b"TRAINCKP" + struct.pack("<IIQQQ", 1, len(sections), step, epoch, total)
    h += spec_hash.ljust(68, b"\0")
    h += struct.pack("<I", zlib.crc32(h))
    data = h + body
    return data + b"TCKPEND\0" + struct.pack("<II", zlib.crc32(data), 0)


def save(kind, name, data):
    os.makedirs(f"{out}/{kind}", exist_ok=True)
    with open(f"{out}/{kind}/seed-{name}", "wb") as f:
        f.write(data)


full = [(b"trainer", bytes(range(96))), (b"params", bytes(256)), (b"optimizer", b"\x01" * 256)]
save("ckpt", "full", ckpt(b"fuzz-spec-hash", full))
save("ckpt", "other-hash", ckpt(b"another", full))
save("ckpt", "missing-section", ckpt(b"fuzz-spec-hash", full[:2]))
save("ckpt", "extra-section", ckpt(b"fuzz-spec-hash", full + [(b"loss_scale", bytes(24))]))
save("ckpt", "empty", ckpt(b"", []))


def idx(dims, payload, kind_byte):
    return bytes([kind_byte]) + bytes([0, 0, 8, len(dims)]) + struct.pack(">" + "I" * len(dims), *dims) + payload


images = idx((3, 4, 4), bytes(range(48)), 1)
labels = idx((5,), bytes([0, 1, 2, 9, 3]), 0)
save("idx", "images-raw", images)
save("idx", "labels-raw", labels)
save("idx", "images-gz", images[:1] + gzip.compress(images[1:], mtime=0))
save("idx", "labels-gz", labels[:1] + gzip.compress(labels[1:], mtime=0))
