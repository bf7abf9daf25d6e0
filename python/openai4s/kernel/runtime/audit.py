"""The worker's single audit hook.

Every audit event in the process (``open``, ``builtins.id``, ``import``, ...)
calls it, so it is one function with one comparison on the common path, not
one hook per concern.
"""

import os
import sys

_GUARD_OFF_VALUES = frozenset({"0", "false", "no", "off"})


def _dlopen_block_roots(environ) -> tuple:
    if environ.get("OPENAI4S_SAFETY_AUDIT_HOOK", "").strip().lower() in _GUARD_OFF_VALUES:
        return ()
    raw = environ.get("OPENAI4S_DLOPEN_BLOCK_ROOTS", "")
    roots = []
    for entry in raw.split(os.pathsep):
        if entry.strip():
            roots.append(os.path.realpath(entry.strip()).rstrip(os.sep) + os.sep)
    return tuple(roots)


def _dlopen_guard(roots):
    def check(args):
        name = args[0] if args else None
        if isinstance(name, bytes):
            name = os.fsdecode(name)
        if not isinstance(name, str) or os.sep not in name:
            return
        resolved = os.path.realpath(name)
        if any((resolved + os.sep).startswith(root) for root in roots):
            raise PermissionError(f"dlopen of {name!r} is blocked inside a protected root")

    return check


#: Called (with the event args) before every os.chdir/os.fchdir, so a cached
#: working directory can be dropped; see provenance.track_cwd.
chdir_listeners = []


def _on_chdir(args):
    for listener in chdir_listeners:
        listener(args)


#: Called (without arguments) on events after which native code or a child
#: process may write to fds 1/2; see native_output.NativeOutput.expect.
native_output_listeners = []

_NATIVE_OUTPUT_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "ctypes.dlsym",
    "ctypes.call_function",
)


def _on_native_output(args):
    for listener in native_output_listeners:
        listener()


def _chained(first, second):
    def both(args):
        first(args)
        second(args)

    return both


def install(observer, sidecars, environ=os.environ) -> None:
    """Register the hook; raises if the interpreter refuses it."""
    open_window = observer.open_window
    on_open = observer.on_open
    handlers = {
        "os.chdir": _on_chdir,
        "openai4s.skill_sidecar_loaded": sidecars.on_sidecar_loaded,
        "openai4s.skill_sidecar_capture_started": sidecars.on_capture_started,
    }
    for event in _NATIVE_OUTPUT_EVENTS:
        handlers[event] = _on_native_output
    handlers["ctypes.dlopen"] = _on_native_output
    roots = _dlopen_block_roots(environ)
    if roots:
        handlers["ctypes.dlopen"] = _chained(_dlopen_guard(roots), _on_native_output)

    def _openai4s_audit_hook(event, args):
        if event == "open":
            if open_window[0]:
                on_open(args)
            return
        if event in handlers:
            handlers[event](args)

    sys.addaudithook(_openai4s_audit_hook)
