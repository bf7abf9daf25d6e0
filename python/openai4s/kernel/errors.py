"""Exceptions of the kernel API (a leaf module: no imports of the core)."""


class KernelBusyError(RuntimeError):
    """A transaction is in flight; inspection refuses instead of waiting."""


class KernelRestartFailed(RuntimeError):
    """A restart could not produce a live worker."""


class KernelInterruptUnavailable(RuntimeError):
    """There is no way to deliver an interrupt to this worker."""
