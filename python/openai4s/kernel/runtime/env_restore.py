"""The workspace's active host.env, restored before a worker's first cell
(issue 30): a restarted kernel, a new one on the same workspace and a
standby swapped in all import what ``host.env.use``/``create`` chose, with
no cell calling it again. Read at the first request, not at start, so a
standby started before the choice still honours it."""

import os

#: The host names the library (read-only here) in this variable
#: (kernel_manager.h, kEnvLibraryName).
LIBRARY_VARIABLE = "OPENAI4S_ENV_LIBRARY"
_STATE_FILE = "state.json"


def active_python_path(environ=os.environ):
    """The active environment's package directory, or None: no library, no
    active environment, or a state this worker cannot read or trust."""
    library = environ.get(LIBRARY_VARIABLE)
    if not library:
        return None
    try:
        handle = open(os.path.join(library, _STATE_FILE), encoding="utf-8")
    except OSError:
        return None
    # json (and re, enum) only when there is a state to read: a first cell
    # without host.env loads nothing it does not need.
    import json

    with handle:
        try:
            state = json.load(handle)
        except (OSError, ValueError):
            return None
    paths = state.get("active_paths") if isinstance(state, dict) else None
    path = paths.get("python_path") if isinstance(paths, dict) else None
    if not isinstance(path, str):
        return None
    # Only a directory of this library: the host wrote the file, but a path
    # elsewhere would put a directory the host never chose on sys.path.
    root = os.path.realpath(library) + os.sep
    return path if os.path.realpath(path).startswith(root) else None


def restore():
    """Puts the active environment first on sys.path as ``host.env.use``
    would (so a later ``use`` replaces it)."""
    path = active_python_path()
    if path is None:
        return
    from openai4s.sdk.namespaces import _activate

    _activate({"python_path": path})
