"""The kernel: a long-lived worker interpreter driven over a JSON-lines pipe.

`Kernel` and the exception classes are resolved lazily (PEP 562) so that the
worker, which imports modules of this package, never loads the host core.
"""

# errors.py imports nothing, so the worker may load it; its __all__ is the
# one list of the exception classes.
from openai4s.kernel.errors import __all__ as _ERRORS  # noqa: E402

__all__ = ["Kernel", "spawn_r_kernel", *_ERRORS]


def __getattr__(name):
    if name == "Kernel":
        from openai4s.kernel.manager import Kernel

        return Kernel
    if name == "spawn_r_kernel":
        from openai4s.kernel.r_kernel import spawn_r_kernel

        return spawn_r_kernel
    if name in _ERRORS:
        from openai4s.kernel import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'openai4s.kernel' has no attribute {name!r}")
