"""`openai4s.kernel`'s names: resolved on first use, each from its one home.

Each check runs in a fresh interpreter, since what a first import loads is
the point (the worker imports this package to start and must not pay for
modules it never uses)."""

import subprocess
import sys

import pytest


def run_fresh(code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_package_loads_neither_the_errors_nor_the_host_core():
    loaded = run_fresh(
        "import sys, openai4s.kernel\n"
        "print(sorted(m for m in sys.modules if m.startswith('openai4s')))"
    )
    assert loaded == "['openai4s', 'openai4s.kernel']"


def test_star_import_binds_the_entry_points_and_every_exception_class():
    out = run_fresh(
        "from openai4s.kernel import *\n"
        "from openai4s.kernel import errors\n"
        "names = ['Kernel', 'spawn_r_kernel', *errors.__all__]\n"
        "missing = [n for n in names if n not in globals()]\n"
        "wrong = [n for n in errors.__all__ if globals()[n] is not getattr(errors, n)]\n"
        "print(missing, wrong, len(errors.__all__) > 5)"
    )
    assert out == "[] [] True"


def test_the_errors_module_can_be_the_first_thing_imported():
    out = run_fresh(
        "from openai4s.kernel import errors\n"
        "import openai4s, openai4s.kernel\n"
        "print(openai4s.kernel.KernelError is errors.KernelError,"
        " openai4s.KernelNotAliveError is errors.KernelNotAliveError)"
    )
    assert out == "True True"


def test_a_private_submodule_lookup_does_not_load_the_errors():
    out = run_fresh(
        "import sys\n"
        "from openai4s.kernel import _fast_open\n"
        "print('openai4s.kernel.errors' in sys.modules)"
    )
    assert out == "False"


@pytest.mark.parametrize("name", ["nope", "NoSuchError", "__wrapped__"])
def test_an_unknown_name_is_an_attribute_error(name):
    out = run_fresh(
        "import openai4s.kernel\n"
        "try:\n"
        f"    getattr(openai4s.kernel, {name!r})\n"
        "except AttributeError as exc:\n"
        "    print(exc)\n"
    )
    assert out == f"module 'openai4s.kernel' has no attribute {name!r}"
