"""The R kernel (spec kernel.md §7): the same manager driving `r_worker.R`.

R speaks the worker protocol but has no attestation handshake; its `host`
(runtime/r_host.R) sends host_call frames that the kernel's dispatcher
serves as Python's; its cell output comes back through host-drained fifos
(`capture_sinks`), so only the argv and the Rscript choice live here.
"""

import os
import shutil
from collections import namedtuple

_R_WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime", "r_worker.R")

#: protocol OUT on fd 3 (the stdout pipe), protocol IN on fd 4 (the stdin
#: pipe), fd 0 from /dev/null so R code reading stdin cannot eat frames, fd 1
#: onto stderr; `exec` keeps the spawned pid R's, so SIGINT reaches R's main
#: thread.
_R_SHELL_LINE = 'exec "$0" --vanilla "$1" 3>&1 4<&0 </dev/null 1>&2'

NO_R_INTERPRETER = (
    "no R interpreter available: build the prebuilt 'r' environment (openai4s setup) "
    "or install R so Rscript is on PATH"
)

#: One environment Rscript may come from: `root` is a conda-style prefix.
REnvironment = namedtuple("REnvironment", "name root")

RSelection = namedtuple("RSelection", "rscript env_root env_name")


def r_argv(rscript):
    """The worker argv for `rscript` (spec §7.1)."""
    return ["/bin/sh", "-c", _R_SHELL_LINE, os.fspath(rscript), _R_WORKER_SCRIPT]


def _environment_rscript(root):
    candidate = os.path.join(os.fspath(root), "bin", "Rscript")
    return candidate if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None


def discover_environments(data_dir=None):
    """Environments under `<data dir>/envs` (OPENAI4S_DATA_DIR, else ~/.openai4s)."""
    if data_dir is None:
        configured = os.environ.get("OPENAI4S_DATA_DIR")
        data_dir = (
            os.path.expanduser(configured)
            if configured
            else os.path.join(os.path.expanduser("~"), ".openai4s")
        )
    envs = os.path.join(os.fspath(data_dir), "envs")
    try:
        names = sorted(os.listdir(envs))
    except OSError:
        return []
    return [
        REnvironment(name, os.path.join(envs, name))
        for name in names
        if os.path.isdir(os.path.join(envs, name))
    ]


def _as_environment(env):
    if env is None or isinstance(env, REnvironment):
        return env
    if isinstance(env, dict):
        return REnvironment(env.get("name"), env["root"])
    root = os.fspath(env)
    return REnvironment(os.path.basename(root.rstrip(os.sep)), root)


def find_rscript(rscript=None, env=None, environments=None, path=None):
    """Which Rscript an R kernel runs, in the spec's order: an explicit
    `rscript`; the selected environment's; a discovered environment named
    `r`; any discovered environment; `Rscript` on PATH. Never Python; none
    raises RuntimeError with the spec's text."""
    if rscript is not None:
        return RSelection(os.fspath(rscript), None, None)
    selected = _as_environment(env)
    if selected is not None:
        found = _environment_rscript(selected.root)
        if found:
            return RSelection(found, os.fspath(selected.root), selected.name)
    candidates = list(discover_environments() if environments is None else environments)
    candidates = [_as_environment(e) for e in candidates]
    ordered = [e for e in candidates if e.name == "r"] + [e for e in candidates if e.name != "r"]
    for environment in ordered:
        found = _environment_rscript(environment.root)
        if found:
            return RSelection(found, os.fspath(environment.root), environment.name)
    on_path = shutil.which("Rscript", path=path)
    if on_path:
        return RSelection(on_path, None, None)
    raise RuntimeError(NO_R_INTERPRETER)


def spawn_r_kernel(cwd=None, rscript=None, env=None, **kernel_options):
    """A `Kernel` running R (spec §7.1): `Kernel(mode="r", argv=r_argv(...),
    capture_sinks=True)`, with env_root/env_name only for an environment
    that supplied Rscript. Extra keyword arguments (sandbox, dispatcher)
    go to the Kernel."""
    from openai4s.kernel.manager import Kernel

    selection = find_rscript(rscript=rscript, env=env)
    kernel_options.setdefault("dispatcher", None)
    return Kernel(
        cwd=cwd,
        mode="r",
        env_root=selection.env_root,
        env_name=selection.env_name,
        argv=r_argv(selection.rscript),
        capture_sinks=True,
        **kernel_options,
    )
