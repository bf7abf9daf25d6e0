"""host.env for R kernels (issue 30): an R package built here is installed
by the host through the R cell's `host$env_create`, loads in the same
kernel at once and in a restarted one, read-only to the cell; and R
sources may be CRAN-like URLs that pass the egress policy, served here
from 127.0.0.1. Real Rscript workers, a real dispatcher and store, real
bubblewrap for the install."""

import functools
import http.server
import json
import os
import shutil
import sys
import threading

import pytest

from openai4s.config import Config, LLMConfig
from openai4s.host_dispatch import build_dispatcher

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "host"))
from env_support import make_r_package  # noqa: E402  (the host tests' package builder)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="installs need bubblewrap")

HELLO = 'hello <- function() "hello from hellor"\n'


@pytest.fixture
def sources(monkeypatch):
    """No package source but what the test sets; the default egress policy."""
    for name in (
        "OPENAI4S_ENV_PIP_INDEX_URL",
        "OPENAI4S_ENV_FIND_LINKS",
        "OPENAI4S_ENV_R_REPOS",
        "OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES",
        "OPENAI4S_EGRESS",
        "OPENAI4S_EGRESS_ALLOW",
        "OPENAI4S_UNATTENDED_APPROVAL",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def dispatcher(tmp_path, workspace, sources):
    cfg = Config(data_dir=tmp_path / "data", llm=LLMConfig(provider="deepseek", api_key="x"))
    d = build_dispatcher(cfg, workspace=workspace)
    d.frame_id = d.store.new_frame(kind="turn")
    yield d
    d.store.close()


def run(kernel, code):
    out = kernel.execute(code)
    assert out["error"] is None, (out["error"], out["stderr"])
    return out["stdout"]


def env_rows(dispatcher):
    return dispatcher.store._conn.execute(
        "SELECT ok, decided_by, args_preview FROM host_call_log WHERE method = 'env_setup'"
        " ORDER BY created_at"
    ).fetchall()


def test_an_r_package_loads_at_once_and_after_a_restart(
    start_r, dispatcher, sources, tmp_path, sandbox_mode
):
    repo = tmp_path / "rrepo"
    repo.mkdir()
    make_r_package(repo, "hellor", "0.1", HELLO)
    sources.setenv("OPENAI4S_ENV_R_REPOS", str(repo))
    k = start_r(dispatcher=dispatcher)
    missing = k.execute("library(hellor)")
    assert "there is no package called" in missing["error"]
    out = run(
        k,
        "r <- host$env_create(packages = 'hellor'); library(hellor)\n"
        "cat(hello(), r$installed$r$hellor$version, .libPaths()[[1]] == r$r_library, sep = '|')",
    )
    assert out == "hello from hellor|0.1|TRUE"
    assert [(ok, by) for ok, by, _ in env_rows(dispatcher)] == [(1, "rule")]
    assert "r:hellor" in env_rows(dispatcher)[0][2]
    if sandbox_mode == "enforce":
        # The library is the host's: the cell reads it and cannot change it.
        denied = run(k, "cat(file.access(find.package('hellor'), 2) == 0)")
        assert denied == "FALSE"
    k.restart()
    assert run(k, "library(hellor); cat(hello())") == "hello from hellor"
    # The fresh worker read the host's state: no host call, no audit row.
    assert dispatcher.store._conn.execute(
        "SELECT count(*) FROM host_call_log WHERE method = 'env_list'"
    ).fetchone() == (0,)
    # Leaving every environment takes the library off the path again.
    k.restart()
    gone = k.execute("host$env_use('system'); library(hellor)")
    assert "there is no package called" in gone["error"]


def test_a_state_naming_a_library_elsewhere_is_not_put_on_the_path(start_r, dispatcher, tmp_path):
    (library,) = dispatcher.env_paths
    inside = os.path.join(library, "mine", "1", "r-library")
    os.makedirs(inside)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state = os.path.join(library, "state.json")
    first = "cat(.libPaths()[[1]])"
    for named in (str(elsewhere), inside + "/../../../../elsewhere"):
        with open(state, "w") as handle:
            json.dump({"active": "x", "active_paths": {"r_library": named}}, handle)
        assert run(start_r(dispatcher=dispatcher), first) != os.path.realpath(named)
    with open(state, "w") as handle:
        handle.write("not json")
    assert run(start_r(dispatcher=dispatcher), first) != inside
    with open(state, "w") as handle:
        json.dump({"active": "mine", "active_paths": {"r_library": inside}}, handle)
    out = start_r(dispatcher=dispatcher).execute(first)
    # The host's state is no file the cell read.
    assert (out["stdout"], out["files_read"]) == (inside, [])


def test_a_failed_r_install_is_an_r_error_and_changes_nothing(
    start_r, dispatcher, sources, tmp_path
):
    repo = tmp_path / "rrepo"
    repo.mkdir()
    sources.setenv("OPENAI4S_ENV_R_REPOS", str(repo))
    k = start_r(dispatcher=dispatcher)
    failed = k.execute("host$env_create(packages = 'nosuchr')")
    assert "host.env_setup error: env_setup: unknown R package nosuchr" in failed["error"]
    assert run(k, "cat(length(host$env_list()$environments))") == "0"
    unknown = k.execute("host$env_use('nope')")
    assert "no environment named 'nope' (host$env_list() shows them)" in unknown["error"]


class CranLike:
    """A CRAN-like repository (src/contrib/PACKAGES and the tarball) served
    on 127.0.0.1; `paths` are the requests it answered."""

    def __init__(self, root):
        contrib = root / "src" / "contrib"
        contrib.mkdir(parents=True)
        make_r_package(contrib, "hellor", "0.2", HELLO)
        # hellor's index entry names a dependency the repository also has.
        make_r_package(contrib, "helperr", "1.0", "shout <- function(x) toupper(x)\n")
        (contrib / "PACKAGES").write_text(
            "Package: other\nVersion: 1.0\n\n"
            "Package: hellor\nVersion: 0.2\nDepends: R (>= 3.0), methods\n"
            "Imports: helperr (>= 0.5),\n    jsonlite\nNeedsCompilation: no\n\n"
            "Package: helperr\nVersion: 1.0\n"
        )
        self.paths = []
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                outer.paths.append(self.path)

        handler = functools.partial(Handler, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def cran(tmp_path, sources):
    repo = CranLike(tmp_path / "cran")
    sources.setenv("OPENAI4S_ENV_R_REPOS", repo.url + "/")
    yield repo
    repo.close()


def test_a_cran_like_url_installs_when_the_egress_policy_allows_it(
    start_r, dispatcher, sources, cran
):
    sources.setenv("OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES", "1")
    sources.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
    k = start_r(dispatcher=dispatcher)
    out = run(
        k,
        "r <- host$env_create(name = 'web', packages = 'hellor'); library(hellor)\n"
        "f <- r$installed$r$hellor; cat(hello(), f$version, f$source, nchar(f$sha256), sep = '|')",
    )
    assert out == f"hello from hellor|0.2|{cran.url}/src/contrib/hellor_0.2.tar.gz|64"
    # The dependency came first and from the same index; what R already has
    # (methods, jsonlite) was not fetched.
    assert cran.paths == [
        "/src/contrib/PACKAGES",
        "/src/contrib/helperr_1.0.tar.gz",
        "/src/contrib/hellor_0.2.tar.gz",
    ]
    assert run(k, "cat(helperr::shout('ok'))") == "OK"
    lock = run(k, "cat(host$env_lock()$r$hellor$source)")
    assert lock == f"{cran.url}/src/contrib/hellor_0.2.tar.gz"


def test_a_cran_like_url_the_policy_refuses_is_never_fetched(start_r, dispatcher, sources, cran):
    k = start_r(dispatcher=dispatcher)
    private = k.execute("host$env_create(packages = 'hellor')")
    assert "loopback or private" in private["error"] and "ALLOW_PRIVATE_SOURCES" in private["error"]
    sources.setenv("OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES", "1")
    unlisted = k.execute("host$env_create(packages = 'hellor')")
    assert "egress allowlist" in unlisted["error"], unlisted["error"]
    assert cran.paths == []
    assert [ok for ok, _, _ in env_rows(dispatcher)] == [0, 0]
    assert run(k, "cat(length(host$env_list()$environments))") == "0"
