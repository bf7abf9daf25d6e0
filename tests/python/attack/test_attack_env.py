"""An attacker's pass over host.env (issue 30 part 2): a requirement that
carries pip options after a space, a wheel whose members climb out of the
prefix, and an install script that plants set-user-ID files and links to
host secrets in the environment a kernel will mount. Nothing lands outside
the environment, and nothing in it runs with the host's privileges."""

import functools
import http.server
import os
import shutil
import socket
import stat
import threading
import zipfile

import pytest

from env_support import make_sdist, make_wheel

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="installs need bubblewrap")


@pytest.fixture
def wheels(tmp_path, monkeypatch):
    directory = tmp_path / "wheels"
    directory.mkdir()
    make_wheel(directory, "tinypkg", "1.0", {"tinypkg/__init__.py": "VALUE = 'one'\n"})
    for name in ("OPENAI4S_ENV_PIP_INDEX_URL", "OPENAI4S_ENV_R_REPOS", "OPENAI4S_EGRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI4S_ENV_FIND_LINKS", str(directory))
    return directory


def setup_env(dispatcher, packages, name=None):
    return dispatcher("env_setup", [{"name": name, "packages": packages}])


def env_state(dispatcher):
    return dispatcher("env_list", [{}])


def files_named(root, name):
    return [os.path.join(d, name) for d, _, files in os.walk(root) if name in files]


@pytest.mark.parametrize(
    "packages",
    [["tinypkg --no-index --find-links=. --prefix=.. --pre"], ["tinypkg", "tinypkg[x] --user"]],
)
def test_options_after_a_space_are_never_options(dispatcher, wheels, packages):
    result = setup_env(dispatcher, packages)
    assert result.get("error", "").startswith("env_setup: "), result
    assert env_state(dispatcher)["environments"] == []


@pytest.mark.parametrize("name", ["..", "a/b", "/abs", ".hidden", "a\nb", "x" * 65, "é"])
def test_an_environment_name_names_nothing_else(dispatcher, wheels, name):
    result = setup_env(dispatcher, ["tinypkg"], name=name)
    assert "environment name" in result["error"], result
    assert env_state(dispatcher)["environments"] == []


def test_a_wheel_that_climbs_out_of_the_prefix_writes_nothing_outside(dispatcher, wheels, tmp_path):
    path = make_wheel(wheels, "climber", "1.0", {"climber/__init__.py": ""})
    with zipfile.ZipFile(path, "a") as wheel:
        wheel.writestr("../../../../../../climbed.txt", "out")
        wheel.writestr("climber-1.0.data/data/../../../../../../climbed.txt", "out")
        wheel.writestr("climber-1.0.data/scripts/../../../../../climbed.txt", "out")
    result = setup_env(dispatcher, ["climber"])
    assert files_named(tmp_path, "climbed.txt") == [] and not os.path.exists("/climbed.txt")
    if "error" in result:
        assert env_state(dispatcher)["environments"] == []


PLANT = """
import os, shutil
stage = os.environ["R_LIBS_USER"]
planted = os.path.join(stage, "planted-suid")
shutil.copy("/bin/true", planted)
try:
    os.chmod(planted, 0o6755)  # refused in the install sandbox; the check below holds either way
except OSError:
    os.chmod(planted, 0o755)
link = os.path.join(stage, "planted-link")
if not os.path.lexists(link):  # setup.py runs twice (metadata, then install)
    os.symlink({secret!r}, link)
"""


def test_an_install_script_plants_no_privilege_and_no_host_file(dispatcher, wheels, tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("the host's own file")
    make_sdist(wheels, "planter", "1.0", PLANT.format(secret=str(secret)))
    result = setup_env(dispatcher, ["planter"])
    assert "error" not in result, result["error"][-3000:]
    # A second install copies the generation: the link stays a link.
    make_wheel(wheels, "later", "1.0", {"later/__init__.py": ""})
    assert "error" not in setup_env(dispatcher, ["later"])
    envs = os.path.join(str(dispatcher.cfg.data_dir), "envs")
    links = files_named(envs, "planted-link")
    assert links and all(os.path.islink(link) for link in links), links
    for directory, _, files in os.walk(envs):
        for name in files:
            info = os.lstat(os.path.join(directory, name))
            if stat.S_ISREG(info.st_mode):
                assert not info.st_mode & (stat.S_ISUID | stat.S_ISGID), (name, oct(info.st_mode))
                with open(os.path.join(directory, name), "rb") as f:
                    assert b"the host's own file" not in f.read(), name


class Listener:
    """A TCP listener that counts the connections it gets."""

    def __init__(self, address):
        self.sock = socket.create_server((address, 0))
        self.sock.settimeout(0.2)
        self.address, self.port = address, self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def http_source(wheels, monkeypatch):
    """The wheels directory served on 127.0.0.1 as the only (URL) source."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(wheels))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES", "1")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
    monkeypatch.setenv("OPENAI4S_ENV_FIND_LINKS", f"http://127.0.0.1:{server.server_port}/")
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


REACH_OUT = """
import socket
reached = []
for address, port in {targets!r}:
    try:
        socket.create_connection((address, port), timeout=3).close()
        reached.append(address + ":" + str(port))
    except OSError:
        pass
raise SystemExit("SANDBOX-REPORT reached=" + ",".join(reached or ["nothing"]))
"""


def test_an_install_script_with_a_url_source_reaches_only_that_source(
    dispatcher, wheels, http_source
):
    elsewhere = Listener("127.0.0.2")
    same_host = Listener("127.0.0.1")
    targets = [(elsewhere.address, elsewhere.port), (same_host.address, same_host.port)]
    make_sdist(wheels, "reacher", "1.0", REACH_OUT.format(targets=targets))
    try:
        result = setup_env(dispatcher, ["reacher"])
    finally:
        elsewhere.close()
        same_host.close()
    assert "SANDBOX-REPORT" in result.get("error", ""), result
    assert "SANDBOX-REPORT reached=nothing" in result["error"], result["error"][:1500]
    assert elsewhere.connections == 0 and same_host.connections == 0
