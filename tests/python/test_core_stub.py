"""python/openai4s/_core.pyi against the built openai4s._core, both ways.

Every public name the module exports (and every method and property of each
class) is in the stub, every name in the stub exists at runtime, each is the
same kind of thing (function, method, property, staticmethod), and each
signature has the same parameters: names, order, positional/keyword-only and
which have defaults. pybind11 writes the signature it bound into the first
line of each docstring, which is what the stub is compared with.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from openai4s import _core

STUB = Path(__file__).resolve().parents[2] / "python" / "openai4s" / "_core.pyi"

# Attributes every pybind11 class carries that no binding declares.
_CLASS_PLUMBING = {"__doc__", "__module__", "__dict__", "__weakref__"}
# pybind11 installs this __init__ on a class bound without py::init.
_NO_CONSTRUCTOR_DOC = "Initialize self."
# A parameter pybind11 had no py::arg name for.
_UNNAMED = re.compile(r"arg\d+$")


@dataclass(frozen=True)
class Param:
    name: str  # "" for a positional-only parameter: its name is not API
    keyword_only: bool
    has_default: bool


@dataclass(frozen=True)
class Member:
    kind: str  # "function", "method", "property", "staticmethod", "class"
    params: tuple = ()


# --- the stub -------------------------------------------------------------


def _stub_params(args: ast.arguments, drop_self: bool) -> tuple:
    positional = [(a, True) for a in args.posonlyargs] + [(a, False) for a in args.args]
    if drop_self:
        positional = positional[1:]
    defaults_from = len(positional) - len(args.defaults)
    params = [
        Param("" if posonly else arg.arg, False, index >= defaults_from)
        for index, (arg, posonly) in enumerate(positional)
    ]
    params += [
        Param(arg.arg, True, default is not None)
        for arg, default in zip(args.kwonlyargs, args.kw_defaults)
    ]
    return tuple(params)


def _decorators(node: ast.FunctionDef) -> set:
    return {d.id for d in node.decorator_list if isinstance(d, ast.Name)}


def _stub_member(node: ast.FunctionDef, in_class: bool) -> Member:
    if not in_class:
        return Member("function", _stub_params(node.args, drop_self=False))
    decorators = _decorators(node)
    if "property" in decorators:
        return Member("property")
    if "staticmethod" in decorators:
        return Member("staticmethod", _stub_params(node.args, drop_self=False))
    return Member("method", _stub_params(node.args, drop_self=True))


def stub_api(source: str) -> dict:
    """{"name": Member, "Class": Member("class"), "Class.method": Member}."""
    api = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            api[node.name] = _stub_member(node, in_class=False)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            api[node.name] = Member("class")
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    api[f"{node.name}.{item.name}"] = _stub_member(item, in_class=True)
    return api


# --- the runtime module -----------------------------------------------------


def _split_top_level(text: str) -> list:
    """Split a pybind11 parameter list at the commas outside brackets and
    quotes (a default may be "'a, b'" or a type "Dict[str, int]")."""
    parts, depth, quote, start = [], 0, None, 0
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _bound_signature(function, name: str) -> str:
    first = (function.__doc__ or "").splitlines()[0] if function.__doc__ else ""
    assert first.startswith(name + "("), f"{name}: no pybind11 signature in {first!r}"
    # The parameter list runs to the parenthesis matching the first one.
    depth = 0
    for index, char in enumerate(first):
        depth += char == "("
        depth -= char == ")"
        if depth == 0 and char == ")":
            return first[len(name) + 1 : index]
    raise AssertionError(f"{name}: unbalanced signature {first!r}")


def _runtime_params(function, name: str, drop_self: bool) -> tuple:
    params, keyword_only = [], False
    parts = _split_top_level(_bound_signature(function, name))
    if drop_self:
        assert parts and parts[0].split(":")[0].strip() == "self", (name, parts)
        parts = parts[1:]
    for part in parts:
        if part == "*":
            keyword_only = True
            continue
        param_name = part.split(":", 1)[0].split("=", 1)[0].strip()
        if _UNNAMED.match(param_name):
            param_name = ""
        params.append(Param(param_name, keyword_only, "=" in part))
    return tuple(params)


def _runtime_member(cls, name: str, value) -> Member:
    if isinstance(value, property):
        return Member("property")
    if isinstance(value, staticmethod):
        return Member("staticmethod", _runtime_params(value.__func__, name, drop_self=False))
    return Member("method", _runtime_params(value, name, drop_self=True))


def runtime_api(module) -> dict:
    api = {}
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, type):
            api[name] = Member("class")
            for attr, member in vars(value).items():
                if attr in _CLASS_PLUMBING:
                    continue
                if attr == "__init__" and (member.__doc__ or "").startswith(_NO_CONSTRUCTOR_DOC):
                    continue
                api[f"{name}.{attr}"] = _runtime_member(value, attr, member)
        else:
            api[name] = Member("function", _runtime_params(value, name, drop_self=False))
    return api


def differences(stub: dict, runtime: dict) -> list:
    found = [f"missing from the stub: {name}" for name in sorted(runtime.keys() - stub.keys())]
    found += [f"not in the module: {name}" for name in sorted(stub.keys() - runtime.keys())]
    for name in sorted(stub.keys() & runtime.keys()):
        if stub[name] != runtime[name]:
            found.append(f"{name}: stub {stub[name]} != bound {runtime[name]}")
    return found


# --- the checks -------------------------------------------------------------


@pytest.fixture(scope="module")
def stub_source() -> str:
    return STUB.read_text(encoding="utf-8")


def test_the_stub_matches_the_module_both_ways(stub_source):
    assert differences(stub_api(stub_source), runtime_api(_core)) == []


def test_the_package_is_marked_typed():
    assert (STUB.parent / "py.typed").is_file()


def test_the_module_exports_what_the_bindings_register():
    # A floor so an empty module and an empty stub cannot agree vacuously.
    runtime = runtime_api(_core)
    classes = {name for name, member in runtime.items() if member.kind == "class"}
    assert {"KernelCore", "PipeTransport", "Store", "HostDispatcher"} <= classes
    assert len(runtime) > 80


def test_a_binding_missing_from_the_stub_is_reported(stub_source):
    # Dropping one def from the stub is what adding a binding without it
    # looks like.
    without = stub_source.replace("def name_can_carry_a_secret(", "def _gone(")
    assert differences(stub_api(without), runtime_api(_core)) == [
        "missing from the stub: name_can_carry_a_secret"
    ]


def test_a_stub_name_the_module_lacks_is_reported(stub_source):
    extra = stub_source + "\nclass Store:\n    def vacuum(self) -> None: ...\n"
    assert "not in the module: Store.vacuum" in differences(stub_api(extra), runtime_api(_core))


def test_a_changed_signature_is_reported(stub_source):
    renamed = stub_source.replace(
        "def start(self, init_timeout: float)", "def start(self, timeout: float)"
    )
    assert renamed != stub_source
    (report,) = differences(stub_api(renamed), runtime_api(_core))
    assert report.startswith("KernelCore.start:")


def test_a_keyword_only_parameter_made_positional_is_reported(stub_source):
    loosened = stub_source.replace(
        "def close(self, *, graceful: bool = True)", "def close(self, graceful: bool = True)"
    )
    assert loosened != stub_source
    (report,) = differences(stub_api(loosened), runtime_api(_core))
    assert report.startswith("PipeTransport.close:")


def test_pybind_parameter_lists_split_at_top_level_commas_only():
    assert _split_top_level("a: Dict[str, int], b: str = 'x, y', *, c: object = None") == [
        "a: Dict[str, int]",
        "b: str = 'x, y'",
        "*",
        "c: object = None",
    ]
