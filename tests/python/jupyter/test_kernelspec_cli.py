"""`python -m openai4s jupyter install|export|describe`."""

import json

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
    import os

    described = json.loads(run_cli("describe", env={**os.environ, **env}).stdout)
    assert KERNEL_NAME in described["installed"]


def test_a_missing_executable_is_a_clear_error(tmp_path):
    result = run_cli(
        "install", "--prefix", str(tmp_path), "--executable", str(tmp_path / "nope"), check=False
    )
    assert result.returncode == 1
    assert "not an executable" in result.stderr
