#!/usr/bin/env python3
"""Checks a PNG that rsvg-convert rendered: its size, and that each given color covers at
least a minimum number of pixels (so the lines were drawn, not just the frame).
usage: png_check.py FILE.png WIDTH HEIGHT [#rrggbb:MIN_PIXELS ...]
Decodes the PNG itself (zlib + the five row filters), so it needs nothing beyond Python."""
import struct, sys, zlib
from collections import Counter

def decode(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "expected 8-bit RGB or RGBA, got %d/%d" % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line); prev = line
    return w, h, bpp, rows

path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
w, h, bpp, rows = decode(path)
assert (w, h) == (want_w, want_h), "%s is %dx%d, expected %dx%d" % (path, w, h, want_w, want_h)
colors = Counter()
for row in rows: colors.update(zip(row[0::bpp], row[1::bpp], row[2::bpp]))
for spec in sys.argv[4:]:
    color, need = spec.split(":")
    rgb = tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))
    count = sum(n for c, n in colors.items() if all(abs(c[k] - rgb[k]) <= 24 for k in range(3)))
    assert count >= int(need), "%s: only %d pixels of %s (want >= %s)" % (path, count, color, need)
    print("%s: %dx%d, %d pixels of %s" % (path, w, h, count, color))
