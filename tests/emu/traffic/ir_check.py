#!/usr/bin/env python3
"""The traffic build's guard (tests/emu/emu-nvcc --emu-traffic): in the LLVM IR of a .cu file
after ThreadSanitizer's instrumentation, every load and store that can reach device memory must
be of a size the instrumentation counts (1, 2, 4, 8 or 16 bytes, scalar or vector): LLVM's
pass leaves any other size (an i48, a <3 x float>, a first-class struct or array) without a
call, which would be a silent miss. Loads and stores of the function's own stack (an alloca,
through getelementptr / bitcast) are not device memory and are not checked. Prints each
offending access (function, instruction) and exits 1; exits 0 when there is none.
usage: ir_check.py FILE.ll SOURCE"""
import re
import sys

SCALAR = {"half": 16, "bfloat": 16, "float": 32, "double": 64, "fp128": 128, "x86_fp80": 80}


OPEN, CLOSE = "{<[(", "}>])"


def balanced(s, i):
    """The end of the bracketed group that opens at s[i]."""
    depth = 0
    while i < len(s):
        if s[i] in OPEN:
            depth += 1
        elif s[i] in CLOSE:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def parse_type(s):
    """(type, rest) from the start of s: a bracketed or named type, function parameters, stars."""
    s = s.lstrip()
    if s and s[0] in OPEN:
        i = balanced(s, 0)
    else:
        m = re.match(r'%"[^"]*"|[%\w.$]+', s)
        i = m.end() if m else 0
    while True:
        j = i
        while j < len(s) and s[j] == " ":
            j += 1
        if j < len(s) and s[j] == "(":
            i = balanced(s, j)
        elif j < len(s) and s[j] == "*":
            i = j + 1
        else:
            break
    return s[:i], s[i:]


def skip_value(s):
    """The rest of s after one operand value (up to the comma that ends it, at depth 0)."""
    depth, i = 0, 0
    while i < len(s):
        c = s[i]
        if c in OPEN:
            depth += 1
        elif c in CLOSE:
            depth -= 1
        elif c == "," and depth == 0:
            return s[i + 1:]
        i += 1
    return ""


def bits(ty):
    """The type's size in bits, or None for an aggregate or a type not known here."""
    ty = ty.strip()
    if ty.endswith("*"):
        return 64
    m = re.fullmatch(r"i(\d+)", ty)
    if m:
        return int(m.group(1))
    if ty in SCALAR:
        return SCALAR[ty]
    m = re.fullmatch(r"<(\d+) x (.+)>", ty)
    if m:
        e = bits(m.group(2))
        return None if e is None else int(m.group(1)) * e
    return None


def access(s):
    """(type, pointer) of a load or store instruction, or None."""
    m = re.match(r"(?:%[\w.]+ = )?(load|store) (?:atomic )?(?:volatile )?(.*)", s)
    if not m:
        return None
    ty, rest = parse_type(m.group(2))
    rest = rest.lstrip()
    if m.group(1) == "load":
        rest = rest[1:] if rest.startswith(",") else rest
    else:
        rest = skip_value(rest)
    _, rest = parse_type(rest)
    p = re.match(r"\s*(%[\w.]+|@[\w.]+)", rest)
    return (ty, p.group(1) if p else "?")


def main():
    path, source = sys.argv[1], sys.argv[2]
    bad, fn, stack = [], "?", set()
    for line in open(path):
        if line.startswith("define "):
            m = re.search(r"@([\w.$]+)\(", line)
            fn, stack = (m.group(1) if m else "?"), set()
            continue
        s = line.strip()
        m = re.match(r"(%[\w.]+) = (alloca|getelementptr|bitcast|addrspacecast)\b(.*)", s)
        if m:
            name, op, rest = m.groups()
            if op == "alloca" or any(a in stack for a in re.findall(r"%[\w.]+", rest)):
                stack.add(name)
            continue
        a = access(s)
        if not a:
            continue
        ty, ptr = a
        if ptr in stack or ptr.startswith("@"):
            continue   # the function's stack, or a host global (emulated shared memory, constants)
        b = bits(ty)
        if b is None or b % 8 or b // 8 not in (1, 2, 4, 8, 16):
            bad.append((fn, s))
    for f, s in bad:
        print("emu-nvcc: %s: %s: a memory access of a size the traffic build cannot count: %s" % (source, f, s[:160]),
              file=sys.stderr)
    if bad:
        print("  hint: load or store it as 1-, 2-, 4-, 8- or 16-byte values, or copy it with memcpy", file=sys.stderr)
    sys.exit(1 if bad else 0)


main()
