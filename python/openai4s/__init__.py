"""openai4s: a persistent, sandboxable code-execution kernel runtime for agents.

Kept import-light on purpose: the worker process imports this package too,
and must not pay for (or load) the C++ host core.
"""

__version__ = "0.1.0"


def __getattr__(name):
    # The warm pool of kernels (openai4s.kernel.pool): loads the host core.
    if name == "KernelPool":
        from openai4s.kernel.pool import KernelPool

        return KernelPool
    # The kernel's exception classes, e.g. `except openai4s.KernelDiedError`;
    # resolved lazily from the leaf errors module (no host core is loaded).
    from openai4s.kernel import errors

    if name in errors.__all__:
        return getattr(errors, name)
    raise AttributeError(f"module 'openai4s' has no attribute {name!r}")
