"""Where the project's C++ executables are (the Jupyter kernel, the MCP
server): an explicit path, the variable that names one, the project's own
build, or PATH, in that order."""

import os
import shutil

#: The directory holding the `openai4s` package (the worker's import root).
#: Computed here rather than imported from `openai4s.kernel` so `--help`
#: never loads the C++ core.
PACKAGE_SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def is_executable(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


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
