"""`openai4s mcp`: its --help documents every option of the C++ server it
runs (the ones the command fills in itself aside), and it hands them on."""

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from openai4s.cli import build_parser, mcp

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "build" / "release" / "apps" / "mcp_server" / "openai4s-mcp"
# What `openai4s mcp` computes for the server instead of asking the user.
FILLED_IN = {"--python", "--repo-root", "--r-worker-argv", "--help"}


def _options(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", text))


@pytest.mark.skipif(not SERVER.exists(), reason="openai4s-mcp is not built (make setup)")
def test_help_documents_every_server_option():
    server_help = subprocess.run(
        [str(SERVER), "--help"], capture_output=True, text=True, check=True
    ).stdout
    cli_help = subprocess.run(
        [sys.executable, "-m", "openai4s", "mcp", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    missing = _options(server_help) - FILLED_IN - _options(cli_help)
    assert not missing, f"openai4s mcp --help does not document {sorted(missing)}"


@pytest.mark.skipif(not SERVER.exists(), reason="openai4s-mcp is not built (make setup)")
def test_server_argv_hands_every_option_on(tmp_path):
    args = build_parser().parse_args(
        [
            "mcp",
            "--data-dir",
            str(tmp_path),
            "--workspace-root",
            str(tmp_path),
            "--max-kernels",
            "3",
            "--idle-timeout",
            "0",
            "--http",
            "127.0.0.1:0",
            "--token-file",
            str(tmp_path / "token"),
            "--allow-origin",
            "https://app.example",
            "--allow-remote",
            "--slurm",
            "--engine",
            "slurm",
        ]
    )
    argv = mcp.server_argv(args)
    assert argv[0] == str(SERVER)
    pairs = dict(zip(argv[1::1], argv[2::1]))
    assert pairs["--python"] == sys.executable or Path(pairs["--python"]).exists()
    assert pairs["--data-dir"] == str(tmp_path)
    assert pairs["--max-kernels"] == "3"
    assert pairs["--idle-timeout"] == "0"
    assert pairs["--http"] == "127.0.0.1:0"
    assert pairs["--token-file"] == str(tmp_path / "token")
    assert pairs["--allow-origin"] == "https://app.example"
    assert "--allow-remote" in argv
    assert "--slurm" in argv and pairs["--engine"] == "slurm"


def test_unknown_server_options_are_refused():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["mcp", "--no-such-option"])
    assert isinstance(build_parser(), argparse.ArgumentParser)
