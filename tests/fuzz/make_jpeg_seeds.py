# Writes the first seeds of the image decoder's fuzz target (tests/fuzz/fuzz_jpeg.c) into
# CORPUS_DIR/jpeg/: small JPEGs of each kind the loader meets (baseline 4:2:0 / 4:4:4 / 4:2:2,
# grayscale, progressive, restart markers, CMYK, an EXIF block, a truncated one), each behind
# the harness's 4 transform bytes. Run once; the output is committed and the fuzzer grows it.
# usage: make_jpeg_seeds.py CORPUS_DIR
import io, os, sys
from PIL import Image

out = os.path.join(sys.argv[1], "jpeg")
os.makedirs(out, exist_ok=True)


def picture(mode, w, h):
    img = Image.new("RGB", (w, h))
    img.putdata([((x * 37) % 256, (y * 53) % 256, ((x + y) * 11) % 256) for y in range(h) for x in range(w)])
    return img.convert(mode)


def jpeg(img, **opts):
    b = io.BytesIO()
    img.save(b, "JPEG", quality=opts.pop("quality", 75), **opts)
    return b.getvalue()


# prefix: mode/flip/pack scale, output size, crop seed, resize/pad (see fuzz_jpeg.c)
seeds = {
    "rgb-420": (b"\x00\x21\x07\x00", jpeg(picture("RGB", 24, 16))),
    "rgb-444-center": (b"\x05\x42\x01\x10", jpeg(picture("RGB", 17, 23), subsampling=0)),
    "rgb-422-randomcrop": (b"\x0a\x19\x02\x4c", jpeg(picture("RGB", 40, 9), subsampling=1)),
    "gray": (b"\x13\x10\x03\x00", jpeg(picture("L", 16, 16))),
    "progressive": (b"\x20\x33\x04\x08", jpeg(picture("RGB", 32, 20), progressive=True)),
    "restart": (b"\x29\x28\x05\x00", jpeg(picture("RGB", 48, 16), restart_marker_blocks=1)),
    "cmyk": (b"\x31\x11\x06\x00", jpeg(picture("CMYK", 12, 10))),
    "exif": (b"\x04\x22\x08\x05", jpeg(picture("RGB", 8, 8), exif=b"Exif\0\0" + b"MM\0*\0\0\0\x08\0\0")),
}
whole = seeds["rgb-420"][1]
seeds["truncated"] = (b"\x00\x21\x07\x00", whole[: len(whole) * 2 // 3])
seeds["after-end"] = (b"\x01\x21\x09\x00", whole + b"\0\0junk")
for name, (prefix, data) in seeds.items():
    with open(os.path.join(out, "seed-" + name), "wb") as f:
        f.write(prefix + data)
