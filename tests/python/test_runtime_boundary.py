"""The worker runtime never reaches the host side.

Everything the worker interpreter loads lives in `openai4s/kernel/runtime/`,
`openai4s/sdk/`, the entry point `kernel/worker.py` and the few faces that
are the runtime's modules under their old names. None of it may import the
host core or a host-side module: the worker is untrusted, and a host module
loaded there would hand a Cell the host's code (and, for `_core`, its
process-management machinery). Checked twice: statically over every file
(so a new module is covered the moment it exists) and in a real worker,
whose `sys.modules` must hold nothing but runtime modules.
"""

import ast
import os
import sys
import textwrap

import pytest

import openai4s
from openai4s.kernel import Kernel

PACKAGE = os.path.dirname(os.path.abspath(openai4s.__file__))
KERNEL = os.path.join(PACKAGE, "kernel")

#: Host-side modules (and packages: a name covers its submodules).
HOST_SIDE = (
    "openai4s._core",
    "openai4s.config",
    "openai4s.store",
    "openai4s.host_dispatch",
    "openai4s.skills_loader",
    "openai4s.cli",
    "openai4s.server",
    "openai4s.__main__",
    "openai4s.kernel.manager",
    "openai4s.kernel.transport",
    "openai4s.kernel.environment",
    "openai4s.kernel.sandbox_status",
    "openai4s.kernel.cell_timeout",
    "openai4s.kernel.r_kernel",
)

#: The package inits the worker loads on the way to the runtime. Only their
#: module-level imports count: `openai4s.kernel` resolves `Kernel` lazily
#: (PEP 562) for host code, which the runtime never asks for.
PACKAGE_INITS = (os.path.join(PACKAGE, "__init__.py"), os.path.join(KERNEL, "__init__.py"))

#: Other files outside runtime/ and sdk/ that the worker loads: the entry
#: point, the exception leaf and the faces.
WORKER_FILES_OUTSIDE = (
    os.path.join(KERNEL, "errors.py"),
    os.path.join(KERNEL, "worker.py"),
    os.path.join(KERNEL, "provenance.py"),
    os.path.join(KERNEL, "guards.py"),
    os.path.join(KERNEL, "display.py"),
    os.path.join(KERNEL, "mpl_inline.py"),
)

#: Third-party imports the runtime may make, each only where the user's own
#: code brought the library in (or optionally, guarded): (file, top name).
THIRD_PARTY_ALLOWED = {
    ("kernel/runtime/mpl_inline.py", "matplotlib"),  # the backend matplotlib loads
    ("kernel/runtime/completion.py", "jedi"),  # optional, ImportError falls back
    ("sdk/namespaces.py", "pandas"),  # only for a DataFrame the Cell passed
}


def runtime_files(package_dir):
    """Every Python file of the runtime and the sdk under `package_dir`."""
    found = []
    for top in ("kernel/runtime", "sdk"):
        for dirpath, _dirs, files in os.walk(os.path.join(package_dir, top)):
            found += [os.path.join(dirpath, name) for name in files if name.endswith(".py")]
    return sorted(found)


def _module_name(path, package_dir):
    relative = os.path.relpath(path, os.path.dirname(package_dir))[: -len(".py")]
    parts = relative.split(os.sep)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_names(path, package_dir, top_level_only=False):
    """Absolute module names `path` imports: import statements (relative ones
    resolved), `from X import y` as both X and X.y, and literal
    importlib.import_module / __import__ calls."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    module = _module_name(path, package_dir)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    names = []
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            names += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names.append((base, node.lineno))
            names += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = getattr(func, "attr", None) or getattr(func, "id", None)
            first = node.args[0]
            if called in ("import_module", "__import__") and isinstance(first, ast.Constant):
                if isinstance(first.value, str):
                    names.append((first.value, node.lineno))
    return names


def host_side(name):
    return any(name == host or name.startswith(host + ".") for host in HOST_SIDE)


def boundary_violations(paths, package_dir, top_level_only=False):
    """One line per offending statement: ``file:line imports name``."""
    violations = {}
    for path in paths:
        for name, lineno in imported_names(path, package_dir, top_level_only):
            where = f"{os.path.relpath(path, package_dir)}:{lineno}"
            if host_side(name) and where not in violations:
                violations[where] = f"{where} imports {name}"
    return list(violations.values())


def test_the_runtime_and_the_sdk_import_nothing_host_side():
    paths = runtime_files(PACKAGE) + list(WORKER_FILES_OUTSIDE)
    assert len(paths) > 30, paths  # the walk found the package
    assert boundary_violations(paths, PACKAGE) == []
    assert boundary_violations(PACKAGE_INITS, PACKAGE, top_level_only=True) == []


def test_the_runtime_imports_only_the_standard_library_and_itself():
    stdlib = sys.stdlib_module_names
    strays = []
    for path in runtime_files(PACKAGE) + list(WORKER_FILES_OUTSIDE):
        relative = os.path.relpath(path, PACKAGE)
        for name, lineno in imported_names(path, PACKAGE):
            top = name.split(".")[0]
            if top in stdlib or top == "openai4s" or (relative, top) in THIRD_PARTY_ALLOWED:
                continue
            strays.append(f"{relative}:{lineno} imports {name}")
    assert strays == []


HOSTILE_IMPORTS = [
    "from openai4s import _core\n",
    "import openai4s.store\n",
    "from openai4s.kernel import manager\n",
    "from openai4s.kernel.transport import PipeTransport\n",
    "def later():\n    from ... import config\n",
    "from .. import environment\n",
    "import importlib\nimportlib.import_module('openai4s.host_dispatch')\n",
    "__import__('openai4s.server.recovery_runtime')\n",
]


@pytest.mark.parametrize("source", HOSTILE_IMPORTS)
def test_a_host_import_added_to_a_runtime_module_is_caught(tmp_path, source):
    """The same walk over a copy of the layout with one new module: the
    check covers files it has never seen, whatever the import's spelling."""
    package = tmp_path / "openai4s"
    runtime = package / "kernel" / "runtime"
    runtime.mkdir(parents=True)
    (runtime / "innocent.py").write_text(
        "import os\nfrom openai4s.kernel.runtime import protocol\n"
    )
    (runtime / "added.py").write_text(textwrap.dedent(source))
    paths = runtime_files(str(package))
    assert [os.path.basename(p) for p in paths] == ["added.py", "innocent.py"]
    violations = boundary_violations(paths, str(package))
    assert len(violations) == 1 and violations[0].startswith("kernel/runtime/added.py:")


def test_a_host_import_added_to_the_sdk_is_caught(tmp_path):
    package = tmp_path / "openai4s"
    (package / "sdk").mkdir(parents=True)
    (package / "sdk" / "added.py").write_text("from openai4s.kernel.manager import Kernel\n")
    assert boundary_violations(runtime_files(str(package)), str(package)) == [
        "sdk/added.py:1 imports openai4s.kernel.manager"
    ]


_LOADED = (
    "import json, sys\n"
    "print(json.dumps(sorted((n, getattr(m, '__file__', None)) for n, m in "
    "list(sys.modules.items()) if n == 'openai4s' or n.startswith('openai4s.'))))"
)


def test_a_real_worker_loads_only_runtime_modules(tmp_path):
    """After the cells that pull in most of the runtime (host facade,
    provenance, display, input plumbing, completion, inspection), nothing
    host-side is in the worker's sys.modules, and every openai4s module it
    holds is a file of the runtime, the sdk or the faces."""

    def dispatcher(method, args):
        return "pong" if method == "ping" else None

    with Kernel(dispatcher=dispatcher, cwd=str(tmp_path)) as kernel:
        (tmp_path / "data.txt").write_text("x")
        warmed = kernel.execute(
            "from openai4s.kernel import provenance, display as _d\n"
            "data = open('data.txt').read()\n"
            "print(host._call('ping', []))\n"
            "open('out.txt', 'w').write(data)\n"
            "display('shown')"
        )
        assert warmed["error"] is None, warmed
        kernel.inspect_variables()
        kernel.complete("da", 2)
        result = kernel.execute(_LOADED)
    assert result["error"] is None, result
    loaded = dict(__import__("json").loads(result["stdout"]))
    assert "openai4s.kernel.runtime.session" in loaded  # the listing is real
    assert "openai4s.kernel.runtime.provenance_tags" in loaded
    assert "openai4s.sdk" in loaded
    assert sorted(name for name in loaded if host_side(name)) == []
    worker_files = runtime_files(PACKAGE) + list(WORKER_FILES_OUTSIDE) + list(PACKAGE_INITS)
    allowed = {os.path.realpath(path) for path in worker_files}
    extension = [n for n in loaded if n == "openai4s.kernel._fast_open"]
    strays = {
        name: path
        for name, path in loaded.items()
        if name not in extension and (path is None or os.path.realpath(path) not in allowed)
    }
    assert strays == {}
