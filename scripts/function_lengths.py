"""Measure function lengths in the project's C++ and Python sources.

A function's length is every line from its signature to its closing brace
(C++) or last body line (Python), blank lines and comments included: the
question is whether it fits a screen. Data tables (a function whose body is
one literal or initializer) are reported apart and never count as long.

C++ is read with a brace-matching scanner rather than clang: clang needs each
file's compile flags and takes minutes on this tree, the scanner takes a
fraction of a second. It blanks comments, strings and preprocessor lines
first, then classifies each top-level brace by the declaration before it.
Lambdas and local classes count as part of the function that holds them;
Python's nested functions and methods count on their own (ast.walk).

Usage: function_lengths.py [--json] [--over N]  (stdlib only)
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CPP_DIRS = ("src", "apps")
PY_DIRS = ("python", "scripts", "bench")
CPP_SUFFIXES = {".cpp", ".cc", ".h", ".hpp"}
LONG = 80


@dataclass(frozen=True)
class Function:
    path: str
    name: str
    line: int
    length: int
    table: bool  # one literal / initializer: a data table, not an algorithm

    @property
    def key(self) -> str:
        return f"{self.path}::{self.name}"


# ---------------------------------------------------------------- C++ ----

_RAW_STRING = re.compile(r'R"([^(\s]{0,16})\(')


def _blank(text: str) -> str:
    """Replace comments, string/char literals and preprocessor lines by
    spaces, keeping every newline so line numbers survive."""
    out: list[str] = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            end = i
            while end < n and (text[end] != "\n" or text[end - 1] == "\\"):
                end += 1
            out.append(_keep_newlines(text[i:end]))
            i = end
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        line_start = c == "\n"
        end = _literal_end(text, i)
        if end > i:
            blank = _keep_newlines(text[i:end])
            is_literal = text[i] != "/"  # a string keeps one quote: extern "C"
            out.append('"' + blank[1:] if is_literal else blank)
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _keep_newlines(chunk: str) -> str:
    return re.sub(r"[^\n]", " ", chunk)


def _literal_end(text: str, i: int) -> int:
    """End of the comment or literal starting at i, or i if none does."""
    two = text[i : i + 2]
    if two == "//":
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if two == "/*":
        end = text.find("*/", i + 2)
        return len(text) if end < 0 else end + 2
    raw = _RAW_STRING.match(text, i)
    if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
        end = text.find(")" + raw.group(1) + '"', raw.end())
        return len(text) if end < 0 else end + len(raw.group(1)) + 2
    c = text[i]
    if c in "\"'":
        if c == "'" and i > 0 and text[i - 1].isalnum():
            return i  # digit separator: 1'000'000
        j = i + 1
        while j < len(text) and text[j] != c and text[j] != "\n":
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return i


_TEMPLATE_HEAD = re.compile(r"^\s*template\s*<")
_SCOPE_HEAD = re.compile(r'^\s*((inline\s+)?namespace\b|extern\s*"\s*$)')
_LEADING = re.compile(r"(?:\s*(?:public|private|protected)\s*:(?!:))*\s*")
_LINKAGE = re.compile(r'^\s*extern\s*"')
_ACCESS = re.compile(r"^\s*(public|private|protected)\s*:(?!:)")
_TYPE_HEAD = re.compile(r"^\s*(typedef\s+)?(class|struct|union|enum)\b")
_QUALIFIERS = re.compile(
    r"^\s*((const|volatile|mutable|override|final|noexcept(\s*\(.*\))?|&&?|"
    r"->[^=;]*|try)\s*)*(:.*[)}]\s*)?$",  # a constructor's last initializer is closed
    re.S,
)
_NAME_BEFORE_PAREN = re.compile(
    r"((?:~?\w+\s*::\s*)*(?:operator\s*(?:\(\)|[^\w\s(]+|\s\w+)|~?\w+)|\])" r"\s*(<[^()]*>)?\s*$"
)


def _strip_template(head: str) -> str:
    head = _ACCESS.sub("", head)
    while _TEMPLATE_HEAD.match(head):
        depth, i = 0, head.index("<")
        for i in range(i, len(head)):
            depth += {"<": 1, ">": -1}.get(head[i], 0)
            if depth == 0:
                break
        head = head[i + 1 :]
    return re.sub(r"\[\[.*?\]\]", " ", head)


def _function_name(head: str) -> str | None:
    """The name if `head` (the text before a `{`) declares a function body."""
    depth = 0
    for i, c in enumerate(head):
        if c == "(" and depth == 0:
            name = _NAME_BEFORE_PAREN.search(head[:i])
            close = _matching_paren(head, i)
            if name and close is not None and _QUALIFIERS.match(head[close + 1 :]):
                return _clean_name(head[:i], name.group(1))
        depth += {"(": 1, ")": -1}.get(c, 0)
    return None


def _matching_paren(text: str, open_at: int) -> int | None:
    depth = 0
    for j in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j
    return None


def _clean_name(before: str, name: str) -> str:
    if name == "]":  # a lambda stored in a variable: name it by the variable
        var = re.search(r"(\w+)\s*=\s*\[[^\]]*\]\s*$", before)
        return var.group(1) if var else "<lambda>"
    return re.sub(r"\s+", "", name)


def _classify(head: str) -> str:
    head = _strip_template(head)
    if _SCOPE_HEAD.match(head):
        return "scope"
    head = _LINKAGE.sub("", head)
    if _TYPE_HEAD.match(head) and "(" not in head.split("{")[0].split(":")[0]:
        return "scope"
    return "function" if _function_name(head) else "init"


def _match_brace(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


_CONTROL = re.compile(r"\b(if|for|while|switch|do|case)\b")
_LAMBDA_BODY = re.compile(r"\)\s*(mutable\s*)?(->[^{;]*)?\{")


def _is_table(body: str) -> bool:
    """A literal table: one or two top-level statements, no control flow, no
    lambda bodies, and one brace initializer holding most of the lines:
    `return {...};` or `static const T k{...}; return k;`."""
    inner, depth, widest, opened = [], 0, 0, 0
    for i, c in enumerate(body[1:-1]):
        if c == "{" and depth == 0:
            opened = i
        depth += {"{": 1, "}": -1, "(": 1, ")": -1}.get(c, 0)
        if c == "}" and depth == 0:
            widest = max(widest, body.count("\n", opened, i + 1))
        if depth == 0:
            inner.append(c)
    statements = "".join(inner).count(";")
    if statements > 2 or _CONTROL.search(body) or _LAMBDA_BODY.search(body):
        return False
    return widest >= 3 and 2 * widest >= body.count("\n")


def cpp_functions(path: Path, rel: str) -> list[Function]:
    text = _blank(path.read_text(encoding="utf-8", errors="replace"))
    found: list[Function] = []
    _scan_scope(text, 0, len(text), rel, found)
    return found


def _scan_scope(text: str, start: int, end: int, rel: str, found: list[Function]) -> None:
    head_start, i = start, start
    while i < end:
        c = text[i]
        if c in ";}":
            head_start = i + 1
        elif c == "{":
            close = _match_brace(text, i)
            kind = _classify(text[head_start:i])
            if kind == "scope":
                _scan_scope(text, i + 1, close, rel, found)
                head_start = close + 1
            elif kind == "function":
                found.append(_cpp_function(text, head_start, i, close, rel))
                head_start = close + 1
            i = close  # an initializer: the declaration goes on to its `;`
        i += 1


def _cpp_function(text: str, head_start: int, open_at: int, close: int, rel: str) -> Function:
    head = text[head_start:open_at]
    first = head_start + _LEADING.match(head).end()
    line = text.count("\n", 0, first) + 1
    last = text.count("\n", 0, close) + 1
    name = _function_name(_LINKAGE.sub("", _strip_template(head))) or "?"
    return Function(rel, name, line, last - line + 1, _is_table(text[open_at : close + 1]))


# ------------------------------------------------------------- Python ----

_LITERALS = (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Constant)


def _is_py_table(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # docstring
    if len(body) != 1:
        return False
    value = getattr(body[0], "value", None)
    if not isinstance(body[0], (ast.Return, ast.Assign, ast.AnnAssign)):
        return False
    if not isinstance(value, _LITERALS):
        return False
    span = value.end_lineno - value.lineno + 1
    return span >= 3 and 2 * span >= node.end_lineno - node.lineno + 1


def py_functions(path: Path, rel: str) -> list[Function]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            found.append(Function(rel, node.name, node.lineno, length, _is_py_table(node)))
    return found


# ------------------------------------------------------------- report ----


def _files(dirs: tuple[str, ...], suffixes: set[str]) -> list[Path]:
    files = []
    for d in dirs:
        files += [p for p in (ROOT / d).rglob("*") if p.suffix in suffixes and p.is_file()]
    return sorted(p for p in files if "__pycache__" not in p.parts)


def measure() -> dict[str, list[Function]]:
    cpp = [f for p in _files(CPP_DIRS, CPP_SUFFIXES) for f in cpp_functions(p, _rel(p))]
    py = [f for p in _files(PY_DIRS, {".py"}) for f in py_functions(p, _rel(p))]
    return {"cpp": cpp, "python": py}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def summary(functions: list[Function]) -> dict[str, float]:
    lengths = sorted(f.length for f in functions if not f.table)
    if not lengths:
        return {"count": 0, "p50": 0, "p90": 0, "max": 0}
    deciles = statistics.quantiles(lengths, n=10, method="inclusive")
    return {
        "count": len(lengths),
        "p50": statistics.median(lengths),
        "p90": round(deciles[8], 1),
        "max": lengths[-1],
    }


def long_functions(functions: list[Function], over: int = LONG) -> list[Function]:
    return sorted(
        (f for f in functions if f.length > over and not f.table), key=lambda f: -f.length
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--over", type=int, default=LONG, help="list functions longer than N")
    args = parser.parse_args(argv)
    measured = measure()
    report = {
        lang: {"summary": summary(fs), "long": [asdict(f) for f in long_functions(fs, args.over)]}
        for lang, fs in measured.items()
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for lang, part in report.items():
        s = part["summary"]
        print(f"{lang}: {s['count']} functions, p50 {s['p50']}, p90 {s['p90']}, max {s['max']}")
        for f in part["long"]:
            print(f"  {f['length']:4d}  {f['path']}:{f['line']}  {f['name']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
