"""Kernel system adapters, imported lazily so a process that measures one
system never loads the other's libraries (the memory probe depends on it)."""

import importlib

KERNEL_SYSTEMS = ("openai4s", "jupyter")
#: openai4s under an enforced sandbox, measured where the sandbox can change
#: the answer (start-up, round trips, interrupts); never compared to targets.
SANDBOXED = "o4s-sandbox"
_MODULES = {
    "openai4s": "bench.systems.openai4s_kernel",
    "jupyter": "bench.systems.jupyter_kernel",
    SANDBOXED: "bench.systems.openai4s_sandboxed",
}


def start(name, cwd):
    """Construct a kernel of system `name` and return its KernelSession once
    it accepts cells (the cold-start clock runs around this plus `1+1`)."""
    return importlib.import_module(_MODULES[name]).start(cwd)


def preload(name):
    """Import a system's client library ahead of timing anything."""
    importlib.import_module(_MODULES[name]).preload()
