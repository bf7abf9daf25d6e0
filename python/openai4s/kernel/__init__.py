"""The kernel: a long-lived worker interpreter driven over a JSON-lines pipe.

`Kernel` and the exception classes are resolved lazily (PEP 562) so that the
worker, which imports modules of this package, never loads the host core.
"""

import sys as _sys

_ENTRY_POINTS = ["Kernel", "spawn_r_kernel"]


def __getattr__(name):
    if name == "Kernel":
        from openai4s.kernel.manager import Kernel

        return Kernel
    if name == "spawn_r_kernel":
        from openai4s.kernel.r_kernel import spawn_r_kernel

        return spawn_r_kernel
    # errors.py is loaded on first use, not by the package: the worker
    # imports this package to start and uses none of the classes (half a
    # millisecond of every kernel's start). Its __all__ is the one list of
    # the exception classes; ours (asked for by ``import *``) adds to it.
    # Only for names that can be one of them: ``from openai4s.kernel import
    # _fast_open`` asks here first, and must not load the module.
    if name != "__all__" and not name[:1].isupper():
        raise AttributeError(f"module 'openai4s.kernel' has no attribute {name!r}")
    __import__("openai4s.kernel.errors")  # by name: no fromlist lookup here
    errors = _sys.modules["openai4s.kernel.errors"]

    if name == "__all__":
        return [*_ENTRY_POINTS, *errors.__all__]
    if name in errors.__all__:
        return getattr(errors, name)
    raise AttributeError(f"module 'openai4s.kernel' has no attribute {name!r}")
