"""Small packages built by the tests themselves (no network): a wheel, an
sdist whose setup.py runs code, and an R source package; the find-links
directory the env tests install from, and a kernel in a sandbox mode."""

import base64
import hashlib
import io
import tarfile
import zipfile

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import SandboxUnavailableError, sandbox_for


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def make_wheel(directory, name, version, files, requires=()):
    """A pure-Python wheel holding `files` ({path: text}) in `directory`."""
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    entries = {path: text.encode() for path, text in files.items()}
    entries[f"{info}/METADATA"] = metadata.encode()
    entries[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: openai4s-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    record = [_record_line(p, d) for p, d in entries.items()] + [f"{info}/RECORD,,"]
    entries[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for member, data in entries.items():
            wheel.writestr(member, data)
    return path


def _add(tar, member, text, mode=0o644):
    data = text.encode()
    info = tarfile.TarInfo(member)
    info.size = len(data)
    info.mode = mode
    tar.addfile(info, io.BytesIO(data))


def make_sdist(directory, name, version, setup_body):
    """An sdist whose setup.py runs `setup_body` before setup()."""
    root = f"{name}-{version}"
    path = directory / f"{root}.tar.gz"
    setup = f"{setup_body}\nfrom setuptools import setup\n"
    setup += f"setup(name={name!r}, version={version!r}, packages=[{name!r}])\n"
    with tarfile.open(path, "w:gz") as tar:
        _add(tar, f"{root}/PKG-INFO", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        _add(tar, f"{root}/setup.py", setup)
        _add(tar, f"{root}/{name}/__init__.py", "")
    return path


def make_r_package(directory, name, version, body, configure=None):
    """An R source package `<name>_<version>.tar.gz` with R code `body`."""
    path = directory / f"{name}_{version}.tar.gz"
    description = (
        f"Package: {name}\nVersion: {version}\nTitle: Test\nDescription: A test package.\n"
        "License: MIT\nAuthor: tests\nMaintainer: tests <tests@example.org>\n"
    )
    with tarfile.open(path, "w:gz") as tar:
        _add(tar, f"{name}/DESCRIPTION", description)
        _add(tar, f"{name}/NAMESPACE", 'exportPattern("^[a-z]")\n')
        _add(tar, f"{name}/R/code.R", body)
        if configure is not None:
            _add(tar, f"{name}/configure", configure, mode=0o755)
    return path


@pytest.fixture
def wheels(tmp_path, monkeypatch):
    """A find-links directory with tinypkg 1.0 and 2.0, the only source."""
    directory = tmp_path / "wheels"
    directory.mkdir()
    make_wheel(directory, "tinypkg", "1.0", {"tinypkg/__init__.py": "VALUE = 'one'\n"})
    make_wheel(directory, "tinypkg", "2.0", {"tinypkg/__init__.py": "VALUE = 'two'\n"})
    for name in ("OPENAI4S_ENV_PIP_INDEX_URL", "OPENAI4S_ENV_R_REPOS", "OPENAI4S_EGRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI4S_ENV_FIND_LINKS", str(directory))
    return directory


def kernel_in(workspace, dispatcher, mode, **options):
    try:
        sandbox = sandbox_for(str(workspace), mode=mode)
        return Kernel(dispatcher=dispatcher, cwd=workspace, sandbox=sandbox, **options)
    except SandboxUnavailableError as exc:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {exc}")
