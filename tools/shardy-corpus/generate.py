#!/usr/bin/env python3
"""Extracts facts from Shardy's own dialect tests into shardy/testdata/shardy_corpus.json.

Shardy (github.com/openxla/shardy) tests its dialect with MLIR lit files,
shardy/dialect/sdy/**/test/*.mlir. This script reads them and keeps only
facts about the attributes package shardy models, not the files' text:

  valid    every distinct mesh op, tensor sharding (`#sdy.sharding<...>` or
           the stripped `<...>` of sdy.sharding_constraint, sdy.reshard,
           out_sharding=, sharding=), per-value sharding, sharding list
           (in_shardings=/out_shardings=) and manual axes list found in a test
           that expects no error, with the mesh ops it refers to, and
           Shardy's own printing of it where a test shows it: attributes on
           CHECK lines print as themselves (Shardy printed them: "canonical"),
           an input of a round-trip test (`sdy_opt %s | FileCheck`, no pass)
           prints as the attribute in the same place on the CHECK lines just
           above ("print"). With --printer, the Shardy in jaxlib prints the
           other inputs ("print" and "printed_by"), and must agree with every
           printing the tests show.
  invalid  every expected-error of a -verify-diagnostics test whose message is
           about an attribute (parse errors, mesh and sharding verifier
           errors; see ATTRIBUTE_ERRORS), with the attribute it is about, the
           mesh ops of its split, the key phrase (the message without the op
           prefix such as "'func.func' op arg 0 - "), and the tensor rank or
           value count when the message is about them.
  op_level the other expected errors (about ops, types, regions, the axes
           operands of collectives), by message only, to show what was left
           out.

Mesh ops are stored once, in "meshes", and cases refer to them by index.

Usage (ROOT: a git repository, bare or not, or a plain source tree):

    python3 tools/shardy-corpus/generate.py [--rev COMMIT] \\
        [--printer .cache/oracle-venv/bin/python] ROOT > shardy/testdata/shardy_corpus.json

The checked-in corpus was made from a bare clone of github.com/openxla/shardy
at the commit it records, with --printer (the oracle venv: jaxlib 0.8.1).
Standard library only (--printer's Python needs jaxlib). The output is
deterministic for a given commit and jaxlib.
"""
import argparse
import json
import os
import re
import subprocess
import sys

TEST_PATH = re.compile(r"^shardy/dialect/sdy/(.+/)?test/(.+/)?[^/]+\.mlir$")

# Expected-error key phrases that are about an attribute on its own (its text,
# or the attribute checked against its mesh, the tensor's rank or the number
# of values): what package shardy parses and validates. Anything else is an
# op-level error.
ATTRIBUTE_ERRORS = [
    # parser
    "expecting priority in format", "expecting integer priority", "priorities with leading zeros",
    "expected valid named axis list after comma", "expected '='", "expected '{'", "expected '}'",
    "expected string",
    # mesh
    "axis size must be at least 1", "duplicate axis name", "device id must be non-negative",
    "axes is empty and device_ids has more than one element",
    "total product of axis sizes must match total number of device ids", "sorted device ids must be iota",
    "if the ordered device ids are the same as iota",
    # tensor sharding
    "sharding doesn't match tensor rank", "unknown mesh", "unknown axis name", "duplicate axis ref",
    "replicated axes are not ordered w.r.t. mesh", "unreduced axes are not ordered w.r.t. mesh",
    "is empty and closed but has a priority", "both sub-axis and full-axis are used",
    "two consecutive sub-axes can be merged", "sub-axis pre-size must be at least 1",
    "sub-axis sizes must be greater than 1", "sub-axis next pre-size", "sub-axis size is equal to the full axis size",
    "overlapping sub-axes", "a maximal sharding can only have a sharding with rank 0",
    "shardings don't match number of values", "unknown manual axis",
]

# Prefixes Shardy's diagnostics put before an attribute's message.
OP_PREFIX = re.compile(
    r"^(?:custom op '[\w.]+' |'[\w.]+' op |op )?"
    r"(?:(?P<where>arg|result|operand|in_shardings|out_shardings)(?: (?P<index>\d+))? - |"
    r"(?P<count>result|operand|in_shardings|out_shardings) (?=shardings don't match))?"
    r"(?:failed to parse Sdy_\w+, )?")

CHECK = re.compile(r"^\s*//\s*CHECK(?P<suffix>-[A-Z]+)?(?P<literal>\{LITERAL\})?:\s?(?P<body>.*)$")
EXPECTED = re.compile(r"expected-error\s*(?:@(?P<loc>[+-]\d+|below|above))?\s*\{\{(?P<msg>.*?)\}\}")
SPLIT = re.compile(r"^\s*//\s*-----")

# Where attributes start in a line: (regex, kind, group whose start begins the text).
STARTS = [
    (re.compile(r"#sdy\.sharding_per_value<"), "per_value", 0),
    (re.compile(r"#sdy\.sharding<"), "sharding", 0),
    (re.compile(r"\bsdy\.mesh\s*(?:@[\w.$-]+|@\"[^\"]*\")\s*=\s*(?:#sdy\.mesh)?<"), "mesh_op", 0),
    (re.compile(r"#sdy\.mesh<"), "mesh", 0),
    (re.compile(r"\bsdy\.(?:sharding_constraint|reshard)\s+%[\w#:.-]+\s+(<)"), "sharding", 1),
    (re.compile(r"\b(?:out_sharding|sharding)\s*=\s*(<)"), "sharding", 1),
    (re.compile(r"\b(?:in_shardings|out_shardings)\s*=\s*(\[)"), "list", 1),
    (re.compile(r"\bmanual_axes\s*=\s*(\{)"), "manual_axes", 1),
    (re.compile(r"#sdy<manual_axes(\{)"), "manual_axes", 1),
]
LIST_NAME = re.compile(r"\b(in_shardings|out_shardings)\s*=\s*$")
MESH_REF = re.compile(r"@([\w.$-]+)")
COLLECTIVE = re.compile(r"\bsdy\.(all_gather|all_slice|all_to_all|all_reduce|reduce_scatter|collective_permute|"
                        r"sharded_to_unreduced|replicated_to_unreduced)\b")
MESH_NAME = re.compile(r"^sdy\.mesh\s*@([\w.$-]+)")
OPENERS, CLOSERS = "([{<", ")]}>"


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def read_tests(root, rev):
    """Returns (commit, {path: text}) for Shardy's dialect test files."""
    if subprocess.run(["git", "-C", root, "rev-parse", "--git-dir"], capture_output=True).returncode == 0:
        commit = git(root, "rev-parse", rev + "^{commit}").strip()
        paths = [p for p in git(root, "ls-tree", "-r", "--name-only", commit).splitlines() if TEST_PATH.match(p)]
        return commit, {p: git(root, "show", f"{commit}:{p}") for p in paths}
    files = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.relpath(os.path.join(dirpath, n), root)
            if TEST_PATH.match(p):
                with open(os.path.join(dirpath, n), encoding="utf-8") as f:
                    files[p] = f.read()
    return "unknown (not a git checkout)", files


def balanced_end(s, i):
    """Index just past the bracket group opening at s[i], or None. Strings are skipped."""
    depth, j = 0, i
    while j < len(s):
        c = s[j]
        if c == '"':
            j += 1
            while j < len(s) and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
        elif c in OPENERS:
            depth += 1
        elif c in CLOSERS:
            if c == ">" and j > 0 and s[j - 1] == "-":
                pass  # an arrow, not a bracket
            else:
                depth -= 1
                if depth == 0:
                    return j + 1
        j += 1
    return None


def strip_comment(line):
    """line without a trailing // comment (outside strings)."""
    inside = False
    for i, c in enumerate(line):
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            inside = not inside
        elif not inside and line.startswith("//", i):
            return line[:i]
    return line


def attributes(text):
    """The attributes in text, as (kind, attribute text, start, list name) in order, outermost only."""
    found = []
    for rx, kind, group in STARTS:
        for m in rx.finditer(text):
            start = m.start(group)
            open_at = m.end() - 1
            end = balanced_end(text, open_at)
            if end is None:
                continue
            if kind == "mesh_op":
                start = m.start()
            name = ""
            if kind == "list":
                name = LIST_NAME.search(text[:m.end(group) - 1]).group(1)
            found.append((start, end, kind, name))
    found.sort(key=lambda f: (f[0], -f[1]))
    out, last_end = [], -1
    for start, end, kind, name in found:
        if start < last_end:
            continue  # nested in an attribute already taken
        out.append((kind, text[start:end], start, name))
        last_end = end
    return out


def mesh_refs(kind, text):
    """Names of the mesh symbols an attribute refers to."""
    if kind in ("mesh_op", "mesh", "manual_axes"):
        return []
    names = []
    for m in MESH_REF.finditer(re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)):
        if m.group(1) not in names:
            names.append(m.group(1))
    return names


def is_round_trip(text):
    """Whether the file's first RUN line only parses and prints (no pass, no verify)."""
    for line in text.splitlines():
        if "RUN:" in line:
            run = line.split("RUN:", 1)[1]
            if "FileCheck" not in run:
                return False
            opts = run.split("|")[0].split()[2:]  # after "sdy_opt %s"
            return all(o in ("--", "2>&1") for o in opts)
    return False


class Segment:
    """One -split-input-file part of a test file."""

    def __init__(self):
        self.lines = []  # (line number, raw line)

    def meshes(self, use_checks):
        """The mesh ops of the input lines (or of the CHECK lines), by name."""
        ops = {}
        for _, raw in self.lines:
            m = CHECK.match(raw)
            if bool(m) != use_checks:
                continue
            body = m.group("body") if m else strip_comment(raw)
            for kind, text, _, _ in attributes(body):
                if kind == "mesh_op":
                    ops.setdefault(MESH_NAME.match(text).group(1), text)
        return ops


def segments(text):
    """The file's -split-input-file parts (one part when its RUN line does not split)."""
    split = any("RUN:" in line and "split-input-file" in line for line in text.splitlines())
    segs = [Segment()]
    for n, raw in enumerate(text.splitlines(), 1):
        if split and SPLIT.match(raw):
            segs.append(Segment())
            continue
        segs[-1].lines.append((n, raw))
    return segs


def statement(seg, idx):
    """The input statement starting at seg.lines[idx]: it and its continuation lines."""
    parts, depth = [], 0
    for k in range(idx, min(idx + 12, len(seg.lines))):
        line = strip_comment(seg.lines[k][1]).rstrip()
        if not line.strip():
            continue  # a comment between the lines of a statement
        parts.append(line)
        for c in re.sub(r'"(?:[^"\\]|\\.)*"', '""', line):
            depth += c in "([{"
            depth -= c in ")]}"
        text = " ".join(p.strip() for p in parts)
        nxt = strip_comment(seg.lines[k + 1][1]).strip() if k + 1 < len(seg.lines) else ""
        if text.endswith("{") and depth == 1:
            return text  # a region or function body opens
        if depth <= 0 and not text.endswith(":") and not nxt.startswith(("{", ":", "(", "->")):
            return text
    return " ".join(p.strip() for p in parts)


def split_top(s):
    """s split at commas outside brackets and strings."""
    out, depth, cur, j = [], 0, [], 0
    while j < len(s):
        c = s[j]
        if c == '"':
            k = j + 1
            while k < len(s) and s[k] != '"':
                k += 2 if s[k] == "\\" else 1
            cur.append(s[j:k + 1])
            j = k + 1
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}" or (c == ">" and s[j - 1] != "-"):
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        j += 1
    if "".join(cur).strip():
        out.append("".join(cur))
    return out


def func_parts(text):
    """For `func.func @f(args) -> results {`: (list of arg texts, list of result texts)."""
    m = re.search(r"func\.func\s+(?:\w+\s+)?@[\w.$-]+\s*\(", text)
    if not m:
        return None
    end = balanced_end(text, m.end() - 1)
    args = split_top(text[m.end():end - 1])
    rest = text[end:].strip()
    results = []
    if rest.startswith("->"):
        rest = rest[2:].strip()
        if rest.startswith("("):
            results = split_top(rest[1:balanced_end(rest, 0) - 1])
        else:
            results = [rest.rstrip("{").strip()]
    return args, results


def dims_count(sharding):
    """Number of dimension shardings of a (stripped or full) sharding text."""
    i = sharding.index("[", sharding.index(","))
    inner = sharding[i + 1:balanced_end(sharding, i) - 1]
    return len(split_top(inner)) if inner.strip() else 0


def subject(seg, idx, phrase, where, index):
    """The attribute an attribute-level error is about: (kind, text) or None."""
    text = statement(seg, idx)
    attrs = [(k, t, n) for k, t, _, n in attributes(text)]
    if where in ("arg", "result") and text.lstrip().startswith("func.func"):
        args, results = func_parts(text)
        part = (args if where == "arg" else results)[int(index or 0)]
        sub = [(k, t) for k, t, _, _ in attributes(part) if k == "sharding"]
        return sub[0] if len(sub) == 1 else None
    if phrase.startswith("unknown manual axis"):
        attrs = [a for a in attrs if a[0] == "manual_axes"]
    elif where in ("operand", "in_shardings") and any(a[0] == "list" for a in attrs):
        attrs = [a for a in attrs if a[2] == "in_shardings"]
    elif where in ("result", "out_shardings") and any(a[0] == "list" for a in attrs):
        attrs = [a for a in attrs if a[2] == "out_shardings"]
    else:
        attrs = [a for a in attrs if a[0] != "manual_axes"]
    if len(attrs) > 1 and phrase.startswith("sharding doesn't match tensor rank"):
        want = int(re.search(r"rank: (\d+) != ", phrase).group(1))

        def has_rank(a):
            items = split_top(a[1][1:-1]) if a[0] == "list" else [a[1]]
            return any(dims_count(x) == want for x in items)

        attrs = [a for a in attrs if has_rank(a)]
    if len(attrs) != 1:
        return None
    return attrs[0][0], attrs[0][1]


def target_index(seg, k, loc):
    """Index in seg.lines of the line an expected-error at seg.lines[k] points at."""
    if loc is None:
        return k
    if loc in ("below", "above"):
        step = 1 if loc == "below" else -1
        j = k + step
        while 0 <= j < len(seg.lines) and "expected-" in seg.lines[j][1]:
            j += step
        return j
    want = seg.lines[k][0] + int(loc)
    for j, (n, _) in enumerate(seg.lines):
        if n == want:
            return j
    return None


# Run by --printer's Python (one with jaxlib): prints each attribute with the
# Shardy that jaxlib carries. Input and output are JSON lists on stdin/stdout.
PRINTER = r"""
import json, os, sys
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
from jax._src.lib.mlir import ir
from jax._src.interpreters import mlir

def wrap(kind, text):
    if kind == "sharding":
        return text if text.startswith("#") else "#sdy.sharding" + text
    if kind == "list":
        return "#sdy.sharding_per_value<" + text + ">"
    if kind == "manual_axes":
        return "#sdy<manual_axes" + text + ">"
    return text

def unwrap(kind, text, printed):
    if kind == "sharding" and not text.startswith("#"):
        return printed[len("#sdy.sharding"):]
    if kind == "list":
        return printed[len("#sdy.sharding_per_value<"):-1]
    if kind == "manual_axes":
        return printed[len("#sdy<manual_axes"):-1]
    return printed

out = []
with mlir.make_ir_context():
    for kind, text in json.load(sys.stdin):
        try:
            if kind == "mesh_op":
                m = ir.Module.parse(text)
                out.append(str(m).splitlines()[1].strip())
            else:
                m = ir.Module.parse("module attributes {xlamesh.a = %s} {}" % wrap(kind, text))
                out.append(unwrap(kind, text, str(m.operation.attributes["xlamesh.a"])))
        except Exception:
            out.append(None)
json.dump({"jaxlib": jax.__version__, "printed": out}, sys.stdout)
"""


def print_with_jaxlib(python, cases):
    """Shardy's printing of each case by the Shardy in python's jaxlib: (jaxlib version, [text or None])."""
    todo = [[c["kind"], c["text"]] for c in cases]
    res = subprocess.run([python, "-c", PRINTER], input=json.dumps(todo), capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"generate.py: --printer {python} failed:\n{res.stderr}")
    got = json.loads(res.stdout)
    return got["jaxlib"], got["printed"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", help="Shardy repository: a git dir, a clone, or a plain source tree")
    ap.add_argument("--rev", default="HEAD", help="commit to read from a git repository (default HEAD)")
    ap.add_argument("--printer", metavar="PYTHON",
                    help="a Python with jaxlib (the oracle venv's): its Shardy prints the attributes no test "
                         "shows printed, and must agree with the tests where they do")
    args = ap.parse_args()
    commit, files = read_tests(args.root, args.rev)
    if not files:
        sys.exit(f"generate.py: no shardy/dialect/sdy/**/test/*.mlir files under {args.root}")

    valid = {}  # (kind, text, meshes) -> case
    invalid, op_level = [], []
    checked_texts = set()

    def add_valid(kind, text, meshes, where, printed):
        refs = mesh_refs(kind, text)
        used = tuple(meshes[r] for r in refs if r in meshes)
        if len(used) != len(refs):
            used = None  # a mesh this test does not define here: validation is not possible
        key = (kind, text, used)
        case = valid.get(key)
        if case is None:
            case = valid[key] = {"kind": kind, "text": text, "where": where}
            if used is not None and kind not in ("mesh_op", "mesh", "manual_axes"):
                case["meshes"] = list(used)
        if printed is not None and "print" not in case:
            case["print"] = printed

    for path in sorted(files):
        text = files[path]
        round_trip = is_round_trip(text)
        for seg in segments(text):
            in_meshes, out_meshes = seg.meshes(False), seg.meshes(True)
            errors = []
            for k, (n, raw) in enumerate(seg.lines):
                for m in EXPECTED.finditer(raw):
                    errors.append((k, m.group("loc"), m.group("msg")))
            if errors:
                # One case per target line: its first expected-error is the
                # innermost cause, the others say what was being parsed.
                by_target = {}
                for k, loc, msg in errors:
                    t = target_index(seg, k, loc)
                    if t is not None:
                        by_target.setdefault(t, []).append(msg)
                for t, msgs in by_target.items():
                    msg = msgs[0]
                    pm = OP_PREFIX.match(msg)
                    phrase = msg[pm.end():].strip()
                    where = pm.group("where") or pm.group("count")
                    at = f"{path}:{seg.lines[t][0]}"
                    ours = any(phrase.startswith(p) for p in ATTRIBUTE_ERRORS)
                    if ours and phrase.startswith("expected ") and "named axis list" not in phrase:
                        # A generic MLIR parse error: ours only inside an attribute we model.
                        ours = any(re.search(r"Sdy_(TensorSharding|Mesh|AxisRef)\b", m) for m in msgs[1:])
                    if ours and COLLECTIVE.search(statement(seg, t)):
                        ours = False  # the collective's own axes operands, checked by its verifier
                    if not ours:
                        op_level.append({"error": msg, "where": at})
                        continue
                    subj = subject(seg, t, phrase, where, pm.group("index"))
                    if subj is None:
                        sys.exit(f"generate.py: {at}: cannot tell which attribute {msg!r} is about")
                    kind, atext = subj
                    case = {"kind": kind, "text": atext, "error": phrase, "where": at}
                    if kind != "mesh_op":
                        case["meshes"] = [v for v in in_meshes.values() if v != atext]
                    if r := re.search(r"tensor rank: \d+ != (\d+)$", phrase):
                        case["rank"] = int(r.group(1))
                    if r := re.search(r"(\d+) shardings vs (\d+) values$", phrase):
                        case["values"] = int(r.group(2))
                    invalid.append(case)
                continue

            # A test that expects no error: every attribute is valid.
            pending = []  # attributes of CHECK lines just above the next input line
            for k, (n, raw) in enumerate(seg.lines):
                at = f"{path}:{n}"
                m = CHECK.match(raw)
                if m:
                    if m.group("suffix") == "-NOT":
                        continue
                    for kind, atext, _, _ in attributes(m.group("body")):
                        if not m.group("literal") and ("{{" in atext or "[[" in atext):
                            continue  # a FileCheck pattern, not printed text
                        checked_texts.add((kind, atext))
                        add_valid(kind, atext, {**in_meshes, **out_meshes}, at, atext)
                        pending.append((kind, atext))
                    continue
                body = strip_comment(raw)
                if not body.strip():
                    continue  # blank or a comment: CHECK lines above still apply
                found = attributes(body)
                paired = {}
                if round_trip and pending:
                    kinds = {}
                    for kind, atext in pending:
                        kinds.setdefault(kind, []).append(atext)
                    mine = {}
                    for kind, atext, _, _ in found:
                        mine.setdefault(kind, []).append(atext)
                    for kind, texts in mine.items():
                        if len(kinds.get(kind, [])) == len(texts):
                            for a, b in zip(texts, kinds[kind]):
                                paired[(kind, a)] = b
                pending = []
                for kind, atext, _, _ in found:
                    add_valid(kind, atext, {**out_meshes, **in_meshes}, at, paired.get((kind, atext)))

    cases = sorted(valid.values(), key=lambda c: (c["kind"], c["text"], c.get("meshes", [])))
    for c in cases:
        if "print" not in c and (c["kind"], c["text"]) in checked_texts:
            c["print"] = c["text"]
    printer = None
    if args.printer:
        version, printed = print_with_jaxlib(args.printer, cases)
        printer = f"jaxlib {version}"
        disagree = 0
        for c, p in zip(cases, printed):
            if p is None:
                continue
            if "print" not in c:
                c["print"], c["printed_by"] = p, printer
            elif p != c["print"]:
                disagree += 1
                print(f"generate.py: {c['where']}: {printer} prints {p!r}, the test {c['print']!r}", file=sys.stderr)
        if disagree:
            sys.exit(f"generate.py: {printer}'s Shardy disagrees with the tests on {disagree} printings")
    # Mesh ops are stored once, in "meshes"; cases refer to them by index.
    # "print" is Shardy's printing where it differs from "text"; "canonical"
    # says Shardy prints "text" unchanged; neither: no printing is known.
    table, index = [], {}

    def refs(c):
        if "meshes" in c:
            c["meshes"] = [index.setdefault(m, len(index)) for m in c["meshes"]]

    for c in cases:
        refs(c)
        if "print" in c and c["print"] == c["text"]:
            del c["print"]
            c["canonical"] = True
    for c in invalid:
        refs(c)
    table = sorted(index, key=index.get)
    header = {
        "source": "https://github.com/openxla/shardy",
        "commit": commit,
        "files": "shardy/dialect/sdy/**/test/*.mlir",
        "generator": "tools/shardy-corpus/generate.py",
        "printer": printer,
        "meshes": table,
    }
    w = sys.stdout
    w.write("{\n")
    for k, v in header.items():
        if k != "meshes":
            w.write(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n")
    for name, rows in (("meshes", table), ("valid", cases), ("invalid", invalid), ("op_level", op_level)):
        w.write(f' "{name}": [\n')
        w.write(",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in rows))
        w.write("\n ]" + (",\n" if name != "op_level" else "\n"))
    w.write("}\n")
    printed = sum("print" in c or "canonical" in c for c in cases)
    print(f"generate.py: {len(files)} files at {commit[:12]}: {len(cases)} valid attributes "
          f"({printed} with Shardy's printing), {len(invalid)} attribute-level errors, "
          f"{len(op_level)} op-level errors left out", file=sys.stderr)


if __name__ == "__main__":
    main()
