"""An attacker's pass over host.web_download's destination (issue 30 part
3), with the sandbox off and enforced: links planted in the workspace that
point out of it (a directory, the file itself, a hard link, a dangling
link under missing directories), absolute and `..` paths, and a directory
swapped for a link while the body is still arriving. Nothing may be
written outside the workspace, and a refusal leaves nothing behind."""

import os

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

from attack_support import HostileServer, call


@pytest.fixture(scope="module")
def server():
    local = HostileServer("127.0.0.1")
    yield local
    local.stop()


@pytest.fixture
def outside(tmp_path):
    path = tmp_path / "outside"
    path.mkdir()
    (path / "target.csv").write_text("original\n")
    return path


@pytest.fixture
def kernel(dispatcher, workspace, sandbox_mode, monkeypatch):
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.1")
    k = Kernel(
        dispatcher=dispatcher,
        cwd=str(workspace),
        sandbox=sandbox_for(str(workspace), mode=sandbox_mode),
    )
    yield k
    k.shutdown()


def untouched(outside):
    assert sorted(p.name for p in outside.iterdir()) == ["target.csv"]
    assert (outside / "target.csv").read_text() == "original\n"


def test_links_planted_in_the_workspace_lead_nowhere_outside(kernel, server, workspace, outside):
    url = server.url + "/data.csv"
    os.symlink(outside, workspace / "away")
    os.symlink("../outside", workspace / "up")
    os.symlink(outside / "new", workspace / "dangling")
    for path in ["away/x.csv", "up/x.csv", "away/a/b/x.csv", "dangling/x.csv", "dangling/a/x.csv"]:
        result, error = call(kernel, f"web_download({url!r}, {path!r})")
        assert result is None and "web_download" in error, (path, result)
    for path in ["/tmp/x.csv", str(outside / "x.csv"), "../outside/x.csv", "a/../../x.csv"]:
        _, error = call(kernel, f"web_download({url!r}, {path!r})")
        assert "path escapes the workspace" in error, (path, error)
    untouched(outside)
    assert sorted(p.name for p in workspace.iterdir()) == ["away", "dangling", "up"]


def test_a_link_or_hard_link_as_the_file_is_replaced_not_written_through(
    kernel, server, workspace, outside
):
    os.symlink(outside / "target.csv", workspace / "soft.csv")
    os.link(outside / "target.csv", workspace / "hard.csv")
    for name in ["soft.csv", "hard.csv"]:
        result, error = call(kernel, f"web_download({server.url + '/data.csv'!r}, {name!r})")
        assert error is None, error
        assert not (workspace / name).is_symlink()
        assert (workspace / name).read_text() == "a,b\n1,2\n"
    untouched(outside)


SWAP = """
import json, os, threading, time
def swap():
    time.sleep(0.5)
    os.rename("sub", "sub_moved")
    os.symlink({outside!r}, "sub")
threading.Thread(target=swap).start()
try:
    print(json.dumps(host.web_download({url!r}, "sub/late.txt")))
except RuntimeError as e:
    print("ERROR: " + str(e))
"""


def test_a_directory_swapped_for_a_link_mid_download_keeps_the_file_inside(
    kernel, server, workspace, outside
):
    (workspace / "sub").mkdir()
    url = server.url + "/slow-body?secs=2"
    out = kernel.execute(SWAP.format(outside=str(outside), url=url))
    assert out["error"] is None, out
    assert (workspace / "sub").is_symlink(), "the swap did not happen"
    untouched(outside)
    landed = [p.name for p in (workspace / "sub_moved").iterdir()]
    assert landed in ([], ["late.txt"]), landed
    if landed:
        assert (workspace / "sub_moved" / "late.txt").read_text() == "first second"


# A thread of the cell swaps the directory `a` with `b`, a link to
# `outside` (renameat2 RENAME_EXCHANGE: `a` always exists, as one or the
# other), while the main thread asks for downloads into new directories
# below `a`: a directory the host makes by path, after proving its parent,
# would be made through the link.
FLIP = """
import ctypes, json, os, threading
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
stop = threading.Event()
flips = []
def flip():
    while not stop.is_set():
        if libc.renameat2(AT_FDCWD, b"a", AT_FDCWD, b"b", RENAME_EXCHANGE) == 0:
            flips.append(1)
threading.Thread(target=flip, daemon=True).start()
for n in range({tries}):
    try:
        host.web_download("http://127.0.0.1:9/x", "a/d%d/x.csv" % n, timeout=1)
    except RuntimeError:
        pass
stop.set()
print(json.dumps(len(flips)))
"""


def test_directories_made_for_a_download_are_never_made_through_a_swapped_link(
    kernel, workspace, outside, sandbox_mode
):
    if sandbox_mode == "off":
        pytest.skip("the race is the host's; the sandboxed cell runs it (200 tries take seconds)")
    (workspace / "a").mkdir()
    os.symlink(outside, workspace / "b")
    out = kernel.execute(FLIP.format(outside=str(outside), tries=200))
    assert out["error"] is None, out
    assert int(out["stdout"]) > 50, "the cell's thread did not flip the directory"
    made_outside = sorted(p.name for p in outside.iterdir() if p.name != "target.csv")
    assert made_outside == [], f"the host made {len(made_outside)} directories outside"


def test_a_download_is_bounded_by_the_kernels_file_size_limit(
    dispatcher, workspace, server, enforced, monkeypatch
):
    monkeypatch.setenv("OPENAI4S_KERNEL_FILE_SIZE_LIMIT", "1M")
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.1")
    sandbox = sandbox_for(str(workspace), mode=enforced)
    with Kernel(dispatcher=dispatcher, cwd=str(workspace), sandbox=sandbox) as kernel:
        own = kernel.execute("open('own.bin', 'wb').write(b'x' * (2 << 20))")
        assert own["error"] is not None, "the limit does not hold for the cell itself"
        url = f"{server.url}/bytes/{2 << 20}"
        _, error = call(kernel, f"web_download({url!r}, 'big.bin', max_bytes=4 << 20)")
    assert error is not None and not (workspace / "big.bin").exists()


def test_what_a_download_makes_belongs_to_the_kernel(dispatcher, workspace, server, enforced):
    if os.geteuid() != 0:
        pytest.skip("only a root host gives each kernel a uid of its own")
    sandbox = sandbox_for(str(workspace), mode=enforced)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
        patch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.1")
        with Kernel(dispatcher=dispatcher, cwd=str(workspace), sandbox=sandbox) as kernel:
            if kernel.execute("import os; print(os.getuid())")["stdout"] == "0\n":
                pytest.skip("this sandbox runs the kernel as root")
            for path in ("top.csv", "newdir/inner.csv"):
                _, error = call(kernel, f"web_download({server.url + '/data.csv'!r}, {path!r})")
                assert error is None, error
            out = kernel.execute(
                "open('top.csv', 'a').write('more')\nopen('newdir/beside.txt', 'w').write('x')"
            )
    assert out["error"] is None, out["error"]
