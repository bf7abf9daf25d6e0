"""host.env (issue 30 part 2): the host installs packages into a workspace
environment outside the sandbox, the running kernel imports them at once,
every install is an audit row and the environment exports as a lock; a
failed install leaves the environment as it was, and install scripts run in
a sandbox of their own. Everything is offline: the packages are built here."""

import functools
import hashlib
import http.server
import shutil
import socket
import threading

import pytest


from env_support import kernel_in, make_r_package, make_sdist, make_wheel, wheels  # noqa: F401

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="installs need bubblewrap")


def setup_env(dispatcher, packages, name=None):
    return dispatcher("env_setup", [{"name": name, "packages": packages}])


def env_state(dispatcher):
    return dispatcher("env_list", [{}])


@pytest.mark.parametrize("mode", ["off", "enforce"])
def test_an_installed_wheel_imports_in_the_running_kernel(dispatcher, workspace, wheels, mode):
    with kernel_in(workspace, dispatcher, mode) as k:
        before = k.execute("import tinypkg")
        assert "ModuleNotFoundError" in before["error"]
        done = k.execute("r = host.env.create(packages=['tinypkg==1.0'])\nprint(r['generation'])")
        assert done["error"] is None, done["error"]
        imported = k.execute("import tinypkg\nprint(tinypkg.VALUE, tinypkg.__file__)")
        assert imported["error"] is None, imported["error"]
        value, where = imported["stdout"].split()
        assert value == "one" and where.startswith(str(dispatcher.cfg.data_dir))
        # The environment is the host's: the cell may read it, never change it.
        if mode == "enforce":
            write = k.execute("open(tinypkg.__file__, 'a').write('VALUE = 0')")
            assert "OSError" in write["error"] or "PermissionError" in write["error"]
        # A failed install is a clear error in the cell; the kernel and the
        # environment stay as they were.
        failed = k.execute("host.env.create(packages=['nosuchpkg'])")
        assert "env_setup" in failed["error"] and "nosuchpkg" in failed["error"]
        again = k.execute("import tinypkg\nprint(tinypkg.VALUE)")
        assert again["stdout"].strip() == "one"
    rows = dispatcher.store._conn.execute(
        "SELECT ok, decided_by, args_preview, result_preview FROM host_call_log "
        "WHERE method = 'env_setup' ORDER BY created_at"
    ).fetchall()
    assert [(ok, decided_by) for ok, decided_by, _, _ in rows] == [(1, "rule"), (0, "rule")]
    assert "tinypkg==1.0" in rows[0][2] and '"installed"' in rows[0][3]
    assert "nosuchpkg" in rows[1][2] and "error" in rows[1][3]


def test_list_shows_when_where_from_and_by_which_decision(dispatcher, wheels):
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="env_setup",
        pattern="*",
        decision="ask",
    )
    asked = []
    dispatcher.approver = lambda request: asked.append(request["target"]) or "once"
    result = setup_env(dispatcher, ["tinypkg"], name="analysis")
    assert asked == ["tinypkg"]
    assert result.get("ok"), result
    listed = env_state(dispatcher)
    assert listed["active"] == "analysis"
    (env,) = listed["environments"]
    (install,) = env["installs"]
    assert install["packages"] == ["tinypkg"]
    assert install["installed"]["python"]["tinypkg"]["version"] == "2.0"
    assert str(wheels) in install["source"] and install["at"].endswith("Z")
    assert install["decision_id"].startswith("perm") and install["decided_by"] == "user"


def test_the_lock_carries_versions_and_the_archives_sha256(dispatcher, wheels):
    assert setup_env(dispatcher, ["tinypkg==1.0"]).get("ok")
    lock = dispatcher("env_lock", [{}])
    archive = (wheels / "tinypkg-1.0-py3-none-any.whl").read_bytes()
    digest = hashlib.sha256(archive).hexdigest()
    assert lock["python"]["tinypkg"] == {
        "version": "1.0",
        "sha256": digest,
        "source": (wheels / "tinypkg-1.0-py3-none-any.whl").as_uri(),
    }
    assert lock["requirements"] == f"tinypkg==1.0 --hash=sha256:{digest}\n"


def test_use_switches_between_environments(dispatcher, workspace, wheels):
    assert setup_env(dispatcher, ["tinypkg==1.0"], name="old").get("ok")
    assert setup_env(dispatcher, ["tinypkg==2.0"], name="new").get("ok")
    with kernel_in(workspace, dispatcher, "off") as k:
        out = k.execute(
            "host.env.use('old')\nimport tinypkg\nprint(tinypkg.VALUE)\n"
            "import sys\nsys.modules.pop('tinypkg')\n"
            "host.env.use('new')\nimport tinypkg\nprint(tinypkg.VALUE)"
        )
        assert out["error"] is None, out["error"]
        assert out["stdout"].split() == ["one", "two"]
        missing = k.execute("host.env.use('nope')")
        assert "no environment named 'nope'" in missing["error"]
    assert env_state(dispatcher)["active"] == "new"


def assert_unchanged(dispatcher, before, result, *words):
    assert "error" in result, result
    for word in words:
        assert word in result["error"], result["error"]
    assert "unchanged" in result["error"] or "env_setup" in result["error"]
    assert env_state(dispatcher) == before


@pytest.fixture
def installed(dispatcher, wheels):
    """An environment with tinypkg 1.0 in it, and the list as it stands."""
    assert setup_env(dispatcher, ["tinypkg==1.0"]).get("ok")
    return env_state(dispatcher)


def test_an_unknown_package_leaves_the_environment_as_it_was(dispatcher, installed):
    result = setup_env(dispatcher, ["nosuchpkg"])
    assert_unchanged(dispatcher, installed, result, "nosuchpkg", "unchanged")


def test_a_conflict_leaves_the_environment_as_it_was(dispatcher, installed):
    result = setup_env(dispatcher, ["tinypkg==1.0", "tinypkg==2.0"])
    assert_unchanged(dispatcher, installed, result, "conflict", "unchanged")


def test_an_unreachable_source_leaves_the_environment_as_it_was(
    dispatcher, installed, monkeypatch, tmp_path
):
    monkeypatch.setenv("OPENAI4S_ENV_FIND_LINKS", str(tmp_path / "gone"))
    result = setup_env(dispatcher, ["tinypkg"])
    assert_unchanged(dispatcher, installed, result, "not reachable", "unchanged")


def test_url_sources_pass_the_private_address_and_egress_checks(dispatcher, wheels, monkeypatch):
    monkeypatch.setenv("OPENAI4S_ENV_PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    result = setup_env(dispatcher, ["tinypkg"])
    assert "loopback or private" in result["error"]
    monkeypatch.setenv("OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES", "1")
    monkeypatch.setenv("OPENAI4S_EGRESS", "allowlist")
    result = setup_env(dispatcher, ["tinypkg"])
    assert "egress allowlist" in result["error"]
    assert env_state(dispatcher)["environments"] == []


@pytest.fixture
def http_links(wheels, monkeypatch):
    """The wheels directory served on 127.0.0.1 (its listing is pip's
    find-links page), allowed as a private source; no local directory."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(wheels))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES", "1")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")  # the egress policy's extras
    monkeypatch.setenv("OPENAI4S_ENV_FIND_LINKS", f"http://127.0.0.1:{server.server_port}/")
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def test_a_url_source_on_127_0_0_1_installs_when_allowed(dispatcher, http_links):
    result = setup_env(dispatcher, ["tinypkg==1.0"])
    assert result.get("ok"), result
    facts = result["installed"]["python"]["tinypkg"]
    assert facts["source"].startswith("http://127.0.0.1:") and len(facts["sha256"]) == 64


def test_an_unreachable_url_source_leaves_the_environment_as_it_was(
    dispatcher, installed, monkeypatch
):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES", "1")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
    monkeypatch.setenv("OPENAI4S_ENV_PIP_INDEX_URL", f"http://127.0.0.1:{closed}/simple")
    monkeypatch.setenv("OPENAI4S_ENV_FIND_LINKS", "")
    result = setup_env(dispatcher, ["tinypkg==2.0"])
    assert_unchanged(dispatcher, installed, result, "tinypkg", "unchanged")


def test_the_time_budget_stops_an_install(dispatcher, installed, wheels, monkeypatch):
    make_sdist(wheels, "slowpkg", "1.0", "import time\ntime.sleep(120)")
    monkeypatch.setenv("OPENAI4S_ENV_TIMEOUT", "3")
    result = setup_env(dispatcher, ["slowpkg"])
    assert_unchanged(dispatcher, installed, result, "time budget", "unchanged")


def test_the_size_budget_refuses_a_large_environment(dispatcher, installed, wheels, monkeypatch):
    make_wheel(wheels, "bigpkg", "1.0", {"bigpkg/__init__.py": "#" * 200_000})
    monkeypatch.setenv("OPENAI4S_ENV_MAX_BYTES", "100K")
    result = setup_env(dispatcher, ["bigpkg"])
    assert_unchanged(dispatcher, installed, result, "OPENAI4S_ENV_MAX_BYTES", "unchanged")


@pytest.mark.parametrize(
    "packages",
    [["--index-url=http://example.org"], ["../wheels/x.whl"], ["pkg @ http://x"], [], "r:../x"],
)
def test_a_package_that_is_not_a_name_is_refused(dispatcher, wheels, packages):
    result = setup_env(dispatcher, packages)
    assert result["error"].startswith("env_setup: ")
    assert env_state(dispatcher)["environments"] == []


def test_a_rule_on_env_setup_matches_the_packages(dispatcher, wheels):
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="env_setup",
        pattern="*tinypkg*",
        decision="deny",
    )
    result = setup_env(dispatcher, ["other", "tinypkg"])
    assert result["error"].startswith("Permission denied")
    assert env_state(dispatcher)["environments"] == []


def test_an_environment_name_is_not_a_path(dispatcher, wheels):
    result = setup_env(dispatcher, ["tinypkg"], name="../../escape")
    assert "environment name" in result["error"]


class OneListener:
    """A TCP listener on 127.0.0.1 that counts the connections it gets."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
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


def test_an_install_script_reaches_neither_network_nor_host_files(
    dispatcher, installed, wheels, tmp_path, monkeypatch
):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("the host's own file")
    listener = OneListener()
    body = (
        "import os, socket\n"
        "seen = []\n"
        f"for path in ({str(secret)!r}, {str(dispatcher.cfg.db_path)!r}, os.path.expanduser('~root')):\n"
        "    seen.append(path) if os.path.exists(path) else None\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {listener.port}), timeout=5).close()\n"
        "    seen.append('network')\n"
        "except OSError:\n"
        "    pass\n"
        "raise SystemExit('SANDBOX-REPORT reached=' + ','.join(seen or ['nothing']))\n"
    )
    make_sdist(wheels, "nosypkg", "1.0", body)
    try:
        result = setup_env(dispatcher, ["nosypkg"])
    finally:
        listener.close()
    assert listener.connections == 0
    assert "SANDBOX-REPORT reached=nothing" in result["error"], result["error"]
    assert env_state(dispatcher) == installed


def r_repo(tmp_path, monkeypatch):
    repo = tmp_path / "rrepo"
    repo.mkdir()
    monkeypatch.setenv("OPENAI4S_ENV_R_REPOS", str(repo))
    return repo


@pytest.mark.skipif(shutil.which("R") is None, reason="R is not installed")
def test_an_r_package_installs_into_the_environments_library(
    dispatcher, workspace, wheels, tmp_path, monkeypatch
):
    repo = r_repo(tmp_path, monkeypatch)
    make_r_package(repo, "hellor", "0.1", 'hello <- function() "hello from hellor"\n')
    result = setup_env(dispatcher, ["r:hellor"])
    assert result.get("ok"), result
    library = result["r_library"]
    assert result["installed"]["r"]["hellor"]["version"] == "0.1"
    code = (
        "import subprocess\n"
        "out = subprocess.run(['Rscript', '-e', "
        f"'library(hellor, lib.loc=\"{library}\"); cat(hello())'], "
        "capture_output=True, text=True)\nprint(out.stdout, out.stderr)"
    )
    with kernel_in(workspace, dispatcher, "enforce") as k:
        out = k.execute(code)
    assert "hello from hellor" in out["stdout"], out


@pytest.mark.skipif(shutil.which("R") is None, reason="R is not installed")
def test_an_r_configure_script_cannot_read_host_files(dispatcher, installed, tmp_path, monkeypatch):
    repo = r_repo(tmp_path, monkeypatch)
    secret = tmp_path / "host-secret.txt"
    secret.write_text("the host's own file")
    configure = (
        f'#!/bin/sh\ncat "{secret}" && echo R-REACHED-HOST && exit 1\necho R-BLOCKED\nexit 1\n'
    )
    make_r_package(repo, "nosyr", "0.1", "f <- function() 1\n", configure=configure)
    result = setup_env(dispatcher, ["r:nosyr"])
    assert "R-BLOCKED" in result["error"] and "R-REACHED-HOST" not in result["error"]
    assert env_state(dispatcher) == installed
