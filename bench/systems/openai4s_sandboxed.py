"""openai4s with the OS sandbox required (OPENAI4S_KERNEL_SANDBOX=enforce):
the same adapter, so the sandboxed rows differ from the plain ones only by
bubblewrap, seccomp and the limits."""

from bench.systems import openai4s_kernel


def preload():
    openai4s_kernel.preload()


def start(cwd):
    return openai4s_kernel.start(cwd, sandbox="enforce")
