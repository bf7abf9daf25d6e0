"""The worker environment allowlist; the rules live in the C++ core."""

import os

from openai4s import _core

#: The trusted source root: the directory that holds the openai4s package
#: (this file is <root>/openai4s/kernel/environment.py).
PACKAGE_SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_kernel_environment(
    *,
    source=None,
    mode="repl",
    cwd=None,
    env_root=None,
    env_name=None,
    kernel_generation=None,
    repo_root=None,
    interpreter=None,
):
    """A new environment for a worker, built from an allowlist of `source`
    (default: this process's environment), which is never mutated."""
    return _core.build_kernel_environment(
        source=None if source is None else dict(source),
        mode=str(mode),
        cwd=None if cwd is None else os.fspath(cwd),
        env_root=None if env_root is None else os.fspath(env_root),
        env_name=env_name,
        kernel_generation=kernel_generation,
        repo_root=None if repo_root is None else os.fspath(repo_root),
        interpreter=None if interpreter is None else os.fspath(interpreter),
        default_repo_root=PACKAGE_SOURCE_ROOT,
    )


name_can_carry_a_secret = _core.name_can_carry_a_secret
