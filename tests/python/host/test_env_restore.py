"""The workspace's active host.env survives the worker (issue 30): after
``host.env.create``/``use``, a restarted kernel, a new kernel on the same
workspace and a standby started before the choice all import from the
environment before any cell calls ``env.use`` again; ``use('system')``
leaves it for the next start too."""

import shutil

import pytest

from env_support import kernel_in, wheels  # noqa: F401

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="installs need bubblewrap")

_PROBE = "import tinypkg\nprint(tinypkg.VALUE)"


def _value(kernel):
    result = kernel.execute(_PROBE)
    if result["error"] is not None:
        return result["error"]
    return result["stdout"].strip()


@pytest.mark.parametrize("mode", ["off", "enforce"])
def test_a_restarted_and_a_new_kernel_start_in_the_active_environment(
    dispatcher, workspace, wheels, mode
):
    with kernel_in(workspace, dispatcher, mode) as k:
        made = k.execute("host.env.create(name='tiny', packages=['tinypkg==1.0'])")
        assert made["error"] is None, made["error"]
        k.restart()
        assert _value(k) == "one"
    with kernel_in(workspace, dispatcher, mode) as k:
        assert _value(k) == "one"
        # Leaving every environment holds for the next start as well.
        left = k.execute("host.env.use('system')")
        assert left["error"] is None, left["error"]
        k.restart()
        assert "ModuleNotFoundError" in _value(k)


def test_the_restored_environment_is_the_one_use_replaces(dispatcher, workspace, wheels):
    dispatcher("env_setup", [{"name": "one", "packages": ["tinypkg==1.0"]}])
    dispatcher("env_setup", [{"name": "two", "packages": ["tinypkg==2.0"]}])
    with kernel_in(workspace, dispatcher, "off") as k:
        switched = k.execute(
            "import sys\nhost.env.use('one')\n"
            "print(sum('/envs/' in p for p in sys.path))\n" + _PROBE
        )
        assert switched["error"] is None, switched["error"]
        assert switched["stdout"].split() == ["1", "one"]


@pytest.mark.parametrize("mode", ["off", "enforce"])
def test_a_standby_started_before_env_use_swaps_in_with_the_environment(
    dispatcher, workspace, wheels, mode
):
    with kernel_in(workspace, dispatcher, mode, standby=True) as k:
        assert "ModuleNotFoundError" in _value(k)
        assert k._core.wait_standby()
        standby = k._core.standby_pid
        made = k.execute("host.env.create(packages=['tinypkg==2.0'])")
        assert made["error"] is None, made["error"]
        k.restart()
        assert k.pid == standby  # the standby was used, not a fresh spawn
        assert _value(k) == "two"


def test_a_state_pointing_outside_the_library_is_not_put_on_sys_path(tmp_path):
    from openai4s.kernel.runtime import env_restore

    library = tmp_path / "library"
    library.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    inside = library / "tiny" / "1"
    inside.mkdir(parents=True)
    environ = {env_restore.LIBRARY_VARIABLE: str(library)}
    state = library / "state.json"
    state.write_text('{"active_paths": {"python_path": "%s"}}' % elsewhere)
    assert env_restore.active_python_path(environ) is None
    state.write_text('{"active_paths": {"python_path": "%s/../../../elsewhere"}}' % inside)
    assert env_restore.active_python_path(environ) is None
    state.write_text("not json")
    assert env_restore.active_python_path(environ) is None
    state.write_text('{"active_paths": {"python_path": "%s"}}' % inside)
    assert env_restore.active_python_path(environ) == str(inside)
