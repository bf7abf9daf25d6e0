"""The README is a user's guide that matches the code: its Python example
runs as written, its configuration table names every variable the code
reads, its dependency list every package setup installs, and it stays
short and self-contained."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()

#: Markers in generated code, not settings.
_NOT_SETTINGS = {"OPENAI4S_PY_ENV"}


def _section(title):
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else len(README)]


def test_the_python_example_runs_as_written(tmp_path):
    example = re.search(r"```python\n(.*?)```", _section("The Python API"), re.S).group(1)
    done = subprocess.run(
        [sys.executable, "-c", example],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, HOME=str(tmp_path)),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "12.566370614359172"
    assert lines[2] == "['math', 'radius']"
    assert lines[3] in ("enabled", "degraded", "disabled")


def test_every_environment_variable_the_code_reads_is_in_the_table():
    names = set()
    for folder in ("src", "python", "apps", "scripts"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".cpp", ".h", ".sh", ".R") and path.is_file():
                names |= set(re.findall(r"OPENAI4S_[A-Z0-9_]*[A-Z0-9]", path.read_text()))
    table = _section("Configuration")
    missing = []
    for name in sorted(names - _NOT_SETTINGS):
        # "OPENAI4S_LLM_PROVIDER, _MODEL, ..." names a family once.
        family = name.rsplit("_", 1)[0]
        if name not in table and f"_{name.rsplit('_', 1)[1]}" not in table.split(family)[-1]:
            missing.append(name)
    assert missing == []


def test_every_package_setup_installs_is_named():
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    lists = re.findall(r"_packages=\((.*?)\)", setup, re.S)
    packages = {word for block in lists for word in block.split()}
    assert len(packages) > 30
    dependencies = _section("Dependencies")
    assert [p for p in sorted(packages) if p not in dependencies] == []


def test_it_is_short_and_self_contained():
    assert len(README.splitlines()) <= 300
    assert not re.search(r"\bissues? \d", README, re.I)
    assert "../" not in README
    for link in re.findall(r"\]\(([^)]+)\)", README):
        assert (ROOT / link).exists(), link
