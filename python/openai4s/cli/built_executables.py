"""Where the project's C++ executables are (the Jupyter kernel, the MCP
server): an explicit path, the variable that names one, the project's own
build, or PATH, in that order."""

import os
import shutil

#: The directory holding the `openai4s` package (the worker's import root).
#: Computed here rather than imported from `openai4s.kernel` so `--help`
#: never loads the C++ core.
PACKAGE_SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


#: What an executable runs from beside it: the Jupyter kernel's launcher
#: execs the kernel itself (apps/jupyter_kernel/launcher_main.cpp).
_COMPANIONS = {"openai4s-jupyter-kernel": "openai4s-jupyter-kernel-core"}


def is_executable(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def missing_companion(path):
    """The program `path` needs beside it that is not there, or None."""
    needed = _COMPANIONS.get(os.path.basename(path or ""))
    if needed and not is_executable(os.path.join(os.path.dirname(path), needed)):
        return needed
    return None


def find_built(name, app_dir, env_var):
    """`name` from $`env_var`, build/release/apps/`app_dir`/, or PATH; None
    when none of them has it."""
    repo = os.path.dirname(PACKAGE_SOURCE_ROOT)
    candidates = [
        os.environ.get(env_var),
        os.path.join(repo, "build", "release", "apps", app_dir, name),
        shutil.which(name),
    ]
    for candidate in candidates:
        if is_executable(candidate):
            return os.path.abspath(candidate)
    return None
