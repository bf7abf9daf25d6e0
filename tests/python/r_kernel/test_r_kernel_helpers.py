"""r_argv and Rscript discovery (spec kernel.md §7.1)."""

import os
import stat

import pytest

from openai4s.kernel import r_kernel


def _fake_environment(root):
    (root / "bin").mkdir(parents=True)
    rscript = root / "bin" / "Rscript"
    rscript.write_text("#!/bin/sh\n")
    rscript.chmod(rscript.stat().st_mode | stat.S_IXUSR)
    return str(rscript)


def test_r_argv_is_the_spec_shell_line():
    argv = r_kernel.r_argv("/usr/bin/Rscript")
    assert argv[:3] == ["/bin/sh", "-c", 'exec "$0" --vanilla "$1" 3>&1 4<&0 </dev/null 1>&2']
    assert argv[3] == "/usr/bin/Rscript"
    assert os.path.isabs(argv[4]) and argv[4].endswith("openai4s/kernel/runtime/r_worker.R")
    assert os.path.isfile(argv[4])


def test_rscript_resolution_order(tmp_path):
    other = _fake_environment(tmp_path / "envs" / "science")
    named_r = _fake_environment(tmp_path / "envs" / "r")
    selected = _fake_environment(tmp_path / "mine")
    environments = r_kernel.discover_environments(tmp_path)
    assert [e.name for e in environments] == ["r", "science"]

    chosen = r_kernel.find_rscript(env=str(tmp_path / "mine"), environments=environments)
    assert chosen == (selected, str(tmp_path / "mine"), "mine")
    chosen = r_kernel.find_rscript(environments=environments)
    assert chosen == (named_r, str(tmp_path / "envs" / "r"), "r")
    chosen = r_kernel.find_rscript(environments=environments[1:])
    assert chosen.rscript == other
    assert r_kernel.find_rscript(rscript="/opt/R/bin/Rscript").rscript == "/opt/R/bin/Rscript"


def test_no_r_anywhere_is_the_spec_error(tmp_path):
    (tmp_path / "bin").mkdir()
    # A python on PATH must never stand in for R.
    os.symlink("/usr/bin/python3", tmp_path / "bin" / "python")
    with pytest.raises(RuntimeError) as raised:
        r_kernel.find_rscript(environments=[], path=str(tmp_path / "bin"))
    assert str(raised.value) == (
        "no R interpreter available: build the prebuilt 'r' environment (openai4s setup) "
        "or install R so Rscript is on PATH"
    )


def test_an_r_kernel_s_path_does_not_lead_with_the_daemon_python(tmp_path, monkeypatch):
    from openai4s.kernel.manager import Kernel
    import sys

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    kernel = Kernel.__new__(Kernel)
    kernel.mode = "r"
    kernel.cwd = str(tmp_path)
    kernel.python = sys.executable
    kernel.env_root = None
    kernel.env_name = None
    kernel.argv = r_kernel.r_argv("/usr/bin/Rscript")
    kernel.authorization_generation = "kernel:test"
    env = kernel._child_env()
    assert env["PATH"] == "/usr/bin:/bin"
    assert env["OPENAI4S_KERNEL_MODE"] == "r"
