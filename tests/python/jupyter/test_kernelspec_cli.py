"""`python -m openai4s jupyter install|export|describe`."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_support import KERNEL_BINARY, KERNEL_NAME, kernel_missing_reason, run_cli

pytestmark = pytest.mark.skipif(
    kernel_missing_reason() is not None, reason=str(kernel_missing_reason())
)


def test_install_writes_a_spec_that_points_at_the_kernel(tmp_path):
    result = run_cli("install", "--prefix", str(tmp_path), "--executable", str(KERNEL_BINARY))
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / KERNEL_NAME
    assert str(spec_dir) in result.stdout
    spec = json.loads((spec_dir / "kernel.json").read_text())
    assert spec["argv"][0] == str(KERNEL_BINARY)
    assert spec["argv"][1:3] == ["-f", "{connection_file}"]
    assert spec["language"] == "python"
    assert spec["interrupt_mode"] == "message"


def test_install_fails_closed_over_an_existing_spec(tmp_path):
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text('{"argv": ["someone-elses-kernel"]}')
    result = run_cli(
        "install", "--prefix", str(tmp_path), "--executable", str(KERNEL_BINARY), check=False
    )
    assert result.returncode == 1
    assert "--replace" in result.stderr
    assert json.loads((spec_dir / "kernel.json").read_text())["argv"] == ["someone-elses-kernel"]
    run_cli("install", "--prefix", str(tmp_path), "--executable", str(KERNEL_BINARY), "--replace")
    assert json.loads((spec_dir / "kernel.json").read_text())["argv"][0] == str(KERNEL_BINARY)
    assert not [p for p in spec_dir.parent.iterdir() if p.name.startswith(".")]


def test_export_and_describe(tmp_path, monkeypatch):
    exported = json.loads(run_cli("export", "--executable", str(KERNEL_BINARY)).stdout)
    assert exported["display_name"].startswith("openai4s")
    out = run_cli("export", "--executable", str(KERNEL_BINARY), "--output", str(tmp_path)).stdout
    assert (tmp_path / KERNEL_NAME / "kernel.json").exists(), out
    run_cli("install", "--prefix", str(tmp_path / "p"), "--executable", str(KERNEL_BINARY))
    env = {"JUPYTER_PATH": str(tmp_path / "p" / "share" / "jupyter")}
    described = json.loads(run_cli("describe", env={**os.environ, **env}).stdout)
    assert KERNEL_NAME in described["installed"]


def test_a_missing_executable_is_a_clear_error(tmp_path):
    result = run_cli(
        "install", "--prefix", str(tmp_path), "--executable", str(tmp_path / "nope"), check=False
    )
    assert result.returncode == 1
    assert "not an executable" in result.stderr


def test_a_launcher_without_its_kernel_beside_it_is_a_clear_error(tmp_path):
    """The kernelspec's executable execs openai4s-jupyter-kernel-core from
    its own directory: a launcher copied alone would fail at every start."""
    alone = tmp_path / "bin" / KERNEL_BINARY.name
    alone.parent.mkdir()
    shutil.copy(KERNEL_BINARY, alone)
    result = run_cli(
        "install", "--prefix", str(tmp_path / "p"), "--executable", str(alone), check=False
    )
    assert result.returncode == 1
    assert "needs openai4s-jupyter-kernel-core beside it" in result.stderr


def test_a_prefix_install_says_what_to_put_in_jupyter_path(tmp_path):
    result = run_cli("install", "--prefix", str(tmp_path), "--executable", str(KERNEL_BINARY))
    data_dir = tmp_path / "share" / "jupyter"
    assert f"export JUPYTER_PATH={data_dir}" in result.stdout
    user = run_cli(
        "install",
        "--user",
        "--executable",
        str(KERNEL_BINARY),
        env={**os.environ, "HOME": str(tmp_path), "JUPYTER_DATA_DIR": ""},
    )
    assert "JUPYTER_PATH" not in user.stdout


_FIRST_CELL = """
from jupyter_client.manager import start_new_kernel

manager, client = start_new_kernel(kernel_name="openai4s-python", startup_timeout=60)
try:
    reply = client.execute_interactive("print(6 * 7)", timeout=60, output_hook=lambda m: print(
        m["content"].get("text", ""), end=""))
    print(reply["content"]["status"])
finally:
    client.stop_channels()
    manager.shutdown_kernel(now=True)
"""


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_jupyter_installs_kernels_jupyter_finds_with_no_extra_variable(tmp_path):
    # A fresh user: nothing in their Jupyter data dir, no JUPYTER_PATH.
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env["HOME"] = str(tmp_path)
    root = Path(__file__).resolve().parents[3]
    made = subprocess.run(
        ["make", "-s", "-C", str(root), "jupyter"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert made.returncode == 0, made.stderr
    spec = tmp_path / ".local" / "share" / "jupyter" / "kernels" / KERNEL_NAME / "kernel.json"
    assert spec.is_file(), made.stdout
    if shutil.which("jupyter-kernelspec"):
        listed = subprocess.run(
            ["jupyter", "kernelspec", "list"], capture_output=True, text=True, env=env, timeout=60
        )
        assert KERNEL_NAME in listed.stdout, listed.stderr
    # A project directory: the home directory holds the store (~/.openai4s),
    # which the kernel refuses to have inside its workspace.
    project = tmp_path / "project"
    project.mkdir()
    ran = subprocess.run(
        [sys.executable, "-c", _FIRST_CELL],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=120,
    )
    assert ran.stdout.split() == ["42", "ok"], ran.stderr
