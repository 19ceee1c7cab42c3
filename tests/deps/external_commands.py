"""Every external program and Python module that the tests, the demo and CI run, with the
Debian package it comes from; fails when that package is not one mk/deps.mk installs.

Programs: the words in command position of tests/**/*.sh, .ci/run and the Makefile's recipes
(Makefile, mk/*.mk), and the programs the tests' Python starts (subprocess.run(["prog", ...])),
found on PATH (shell builtins, keywords, functions and the project's own
binaries are not programs). Modules: the imports of tests/**/*.py and of the Python that the
scripts run inline (-c '...' and heredocs), outside the standard library and the tests' own
files. Each is traced to its file, and the file to its Debian package through dpkg's lists.

A package counts as installed by the Makefile when it is in DEB_PACKAGES, or a package those
depend on (apt installs them too), or part of every Debian system (Essential or Priority
required), or the CUDA toolkit under /usr/local/cuda (the image brings it, see the guide).

Usage: external_commands.py ROOT  (prints the table; exits 1 naming each unaccounted one)"""
import glob
import importlib.util
import os
import re
import shutil
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
os.chdir(ROOT)

SHELL_WORDS = set("""
if then else elif fi for while until do done case esac in function select time coproc
! [[ ]] { } ( ) [ test echo printf read cd pwd export unset local declare typeset readonly
set shift source . eval exec exit return trap wait kill true false : type command builtin
let alias unalias hash help jobs fg bg disown umask ulimit getopts mapfile readarray pushd
popd dirs shopt enable caller compgen complete break continue times suspend logout
""".split())
# make's own functions and variables that appear at a recipe's command position
MAKE_WORDS = {"@", "-", "+"}


def sh_files():
    files = sorted(glob.glob("tests/**/*.sh", recursive=True))
    files += [".ci/run"] if os.path.exists(".ci/run") else []
    return [f for f in files if not f.startswith("tests/gpu/")]   # run on the GPU machine


def strip_heredocs(lines):
    """Yields (lineno, text, in_heredoc, heredoc_tag) for each line."""
    tag = None
    for n, line in enumerate(lines, 1):
        if tag is not None:
            if line.strip() == tag:
                tag = None
                yield n, line, False, None
                continue
            yield n, line, True, tag
            continue
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        yield n, line, False, None
        if m and "<<<" not in line:
            tag = m.group(1)


COMMAND_START = re.compile(r"(?:^|[|;&(`{]|\$\(|&&|\|\||\bthen\b|\bdo\b|\belse\b|!)\s*")


def command_words(line):
    """The words in command position of one shell line (after assignments and wrappers)."""
    words = []
    for m in COMMAND_START.finditer(line):
        rest = line[m.end():].split()
        while rest and re.match(r"^[A-Za-z_][A-Za-z_0-9]*=", rest[0]):
            if "$(" in rest[0] or "`" in rest[0]:
                rest = []                                   # x=$(cmd): found at its $(
                break
            rest = rest[1:]                                 # VAR=value cmd
        while rest and rest[0] in ("nice", "exec", "time", "env", "command", "timeout", "xargs",
                                   "stdbuf", "setsid", "nohup"):
            wrapper = rest.pop(0)
            words.append(wrapper)
            while rest and (rest[0].startswith("-") or re.match(r"^\d+[smh]?$", rest[0]) or
                            re.match(r"^[A-Za-z_][A-Za-z_0-9]*=", rest[0])):
                rest = rest[1:]
        if rest:
            words.append(rest[0])
    return words


def clean(word):
    word = word.strip("\"'`();{}")
    return word


def shell_text(lines):
    """The script's lines with heredoc bodies, comments and quoted text blanked (the line
    count kept), so that only shell code is left to find commands in."""
    kept = []
    for _, line, in_heredoc, _ in strip_heredocs(lines):
        if in_heredoc:
            kept.append("")
            continue
        kept.append(re.sub(r"(^|\s)#.*$", "", line))
    text = "\n".join(kept)
    # single-quoted text (awk, perl, python code) may span lines: keep only its newlines
    text = re.sub(r"'[^']*'", lambda m: "''" + "\n" * m.group(0).count("\n"), text)
    # double-quoted text without a command substitution is data too
    text = re.sub(r'"(?:[^"\\$\n]|\\.|\$(?!\())*"', '""', text)
    return text.split("\n")


def programs():
    used = {}   # name -> first "file:line"
    sources = [(f, open(f, errors="replace").read().split("\n"), False) for f in sh_files()]
    for mk in ["Makefile"] + sorted(glob.glob("mk/*.mk")):
        sources.append((mk, open(mk).read().split("\n"), True))
    for path, lines, is_make in sources:
        functions = set(re.findall(r"^\s*([A-Za-z_][\w-]*)\s*\(\)\s*\{", "\n".join(lines), re.M))
        if is_make:
            lines = [re.sub(r"\$\([^()]*\)", "X", l.lstrip("\t@-+")) if l.startswith("\t") else ""
                     for l in lines]
        for n, line in enumerate(shell_text(lines), 1):
            for w in command_words(line):
                w = clean(w)
                if (not w or w in SHELL_WORDS or w in MAKE_WORDS or w in functions or
                        "$" in w or "/" in w or w.startswith("-") or not re.match(r"^[\w.+-]+$", w)):
                    continue
                used.setdefault(w, f"{path}:{n}")
    for origin, text in python_sources():   # subprocess.run(["prog", ...]) and the like
        for m in re.finditer(r"(?:subprocess\.\w+|Popen)\(\s*\[\s*[\"']([\w.+-]+)[\"']", text):
            used.setdefault(m.group(1), origin)
    return used


def python_sources():
    """(origin, text) of every Python the tests run: .py files and inline code."""
    out = [(f, open(f).read()) for f in sorted(glob.glob("tests/**/*.py", recursive=True))
           if not f.startswith("tests/gpu/")]
    for f in sh_files():
        lines = open(f, errors="replace").read().split("\n")
        block, start, tag = [], 0, None
        for n, line, in_heredoc, t in strip_heredocs(lines):
            if in_heredoc:
                if not block:
                    start = n
                block.append(line)
                tag = t
            elif block:
                out.append((f"{f}:{start}", "\n".join(block)))
                block = []
        for m in re.finditer(r"PY\"?\s+-c\s+'([^']*)'", "\n".join(lines), re.S):
            out.append((f, m.group(1)))
        for m in re.finditer(r'PY"?\s+-c\s+"([^"]*)"', "\n".join(lines), re.S):
            out.append((f, m.group(1)))
    return out


def modules():
    local = {os.path.splitext(os.path.basename(p))[0] for p in glob.glob("tests/**/*.py", recursive=True)}
    local |= {os.path.splitext(os.path.basename(p))[0] for p in glob.glob("bench/*.py")}
    used = {}
    for origin, text in python_sources():
        if "import" not in text:
            continue
        for m in re.finditer(r"^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import)", text, re.M):
            names = m.group(1).split(",") if m.group(1) else [m.group(2)]
            for name in names:
                top = name.strip().split(".")[0]
                if top and top not in sys.stdlib_module_names and top not in local and top != "__future__":
                    used.setdefault(top, origin)
    return used


def dpkg_owner_index():
    owner = {}
    for lst in glob.glob("/var/lib/dpkg/info/*.list"):
        pkg = os.path.basename(lst)[:-5].split(":")[0]
        for path in open(lst, errors="replace").read().split("\n"):
            if path:
                owner.setdefault(path, pkg)
    return owner


def owner_of(path, owner):
    if path in owner:
        return owner[path]
    real = os.path.realpath(path)
    if real in owner:
        return owner[real]
    # /usr-merge: /bin/x is /usr/bin/x in dpkg's lists, or the other way round
    for alt in (re.sub(r"^/usr/", "/", real), "/usr" + real, re.sub(r"^/usr/", "/", path), "/usr" + path):
        if alt in owner:
            return owner[alt]
    return None


def installed_packages():
    """name -> (depends list, essential or required)"""
    pkgs, cur = {}, {}
    text = open("/var/lib/dpkg/status", errors="replace").read()
    for para in text.split("\n\n"):
        fields = dict(re.findall(r"^([\w-]+):\s*(.*)$", para, re.M))
        if "Package" not in fields or "install ok installed" not in fields.get("Status", ""):
            continue
        deps = []
        for key in ("Depends", "Pre-Depends"):
            for alt in fields.get(key, "").split(","):
                for choice in alt.split("|"):
                    name = choice.strip().split(" ")[0].split(":")[0]
                    if name:
                        deps.append(name)
        base = fields.get("Essential") == "yes" or fields.get("Priority") == "required"
        pkgs[fields["Package"]] = (deps, base, fields.get("Provides", ""))
    return pkgs


def allowed_packages(pkgs):
    text = open("mk/deps.mk").read()
    m = re.search(r"DEB_PACKAGES\s*:=((?:.*\\\n)*.*)", text)
    listed = m.group(1).replace("\\\n", " ").split()
    provides = {}
    for name, (_, _, prov) in pkgs.items():
        for p in prov.split(","):
            p = p.strip().split(" ")[0]
            if p:
                provides.setdefault(p, []).append(name)
    allowed, todo = set(), list(listed)
    while todo:
        p = todo.pop()
        for name in [p] + provides.get(p, []):
            if name in allowed or name not in pkgs:
                continue
            allowed.add(name)
            todo.extend(pkgs[name][0])
    for name, (_, base, _) in pkgs.items():
        if base:
            allowed.add(name)
            todo.append(name)
    while todo:   # what the base system's packages pull in is on every system too
        p = todo.pop()
        for d in pkgs.get(p, ([], 0, ""))[0]:
            if d in pkgs and d not in allowed:
                allowed.add(d)
                todo.append(d)
    return listed, allowed


def cuda_wrapper(path):
    """A small script of the image's that runs a program of the CUDA toolkit (its nvcc)."""
    try:
        with open(path, errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.startswith("#!") and "/usr/local/cuda" in head


def main():
    own = {os.path.basename(p) for p in glob.glob("build/*") if os.access(p, os.X_OK)}
    own |= {"trainc"}
    owner = dpkg_owner_index()
    pkgs = installed_packages()
    listed, allowed = allowed_packages(pkgs)
    problems, rows = [], []

    def judge(what, row_name, path, where):   # path's package must be one the Makefile installs
        pkg = owner_of(path, owner)
        if pkg is None:
            problems.append(f"{where}: {what} ({path}) belongs to no installed Debian package")
        elif pkg not in allowed:
            problems.append(f"{where}: {what} comes from package {pkg}, which mk/deps.mk does not "
                            f"install: add {pkg} to DEB_PACKAGES")
        else:
            rows.append((row_name, pkg, where))

    for name, where in sorted(programs().items()):
        if name in own:
            continue
        path = shutil.which(name, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/cuda/bin")
        if path is None:
            if shutil.which(name):   # only on a PATH of this session: not from any package here
                problems.append(f"{where}: program '{name}' ({shutil.which(name)}) comes from no Debian package")
            continue   # not a program: a word of some other kind at a command position
        if os.path.realpath(path).startswith("/usr/local/cuda") or cuda_wrapper(path):
            rows.append((name, "CUDA toolkit (/usr/local/cuda)", where))
            continue
        judge(f"program '{name}'", name, path, where)
    for name, where in sorted(modules().items()):
        spec = importlib.util.find_spec(name)
        origin = spec and (spec.origin if spec.origin not in (None, "namespace") else
                           next(iter(spec.submodule_search_locations or []), None))
        if not origin:
            problems.append(f"{where}: Python module '{name}' is not installed for /usr/bin/python3: "
                            f"find its Debian package (python3-...) and add it to DEB_PACKAGES")
            continue
        judge(f"Python module '{name}'", f"python: {name}", origin, where)
    for name, pkg, where in rows:
        print(f"{name:28} {pkg:32} {where}")
    print(f"{len(rows)} external programs and modules, each from a package mk/deps.mk installs "
          f"({len(listed)} listed, {len(allowed)} with their dependencies and the base system)")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


sys.exit(main())
