"""import_watch: a callback on a module's first import, never an import itself."""

import importlib.util
import pkgutil
import sys

import pytest

from openai4s.kernel.runtime import import_watch


@pytest.fixture
def module_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    # Alone with the watch: whatever this process watched before comes back.
    earlier = dict(import_watch._watch.pending)
    import_watch._watch.pending.clear()
    yield tmp_path
    for name in [name for name in sys.modules if name.startswith("watched_")]:
        del sys.modules[name]
    import_watch._watch.pending.clear()
    import_watch._watch.pending.update(earlier)


def test_the_callback_runs_after_the_body_and_only_once(module_dir):
    (module_dir / "watched_a.py").write_text("value = 1\n")
    seen = []
    import_watch.when_imported("watched_a", lambda module: seen.append(module.value))
    assert seen == [] and "watched_a" not in sys.modules
    import watched_a

    assert seen == [1]
    # The module looks as if imported normally.
    assert type(watched_a.__loader__).__name__ == "SourceFileLoader"
    assert watched_a.__spec__.loader is watched_a.__loader__
    assert "watched_a" not in import_watch._watch.pending
    # Idle, the finder stays: leaving mid-import could make another
    # thread's import skip a finder.
    assert import_watch._watch in sys.meta_path


def test_an_imported_module_gets_the_callback_at_once(module_dir):
    (module_dir / "watched_b.py").write_text("value = 2\n")
    import watched_b  # noqa: F401

    seen = []
    import_watch.when_imported("watched_b", lambda module: seen.append(module.value))
    assert seen == [2] and "watched_b" not in import_watch._watch.pending


def test_a_failing_callback_never_breaks_the_import(module_dir):
    (module_dir / "watched_c.py").write_text("value = 3\n")
    seen = []

    def broken(module):
        raise RuntimeError("adjusting failed")

    import_watch.when_imported("watched_c", broken)
    import_watch.when_imported("watched_c", lambda module: seen.append(module.value))
    import watched_c

    assert watched_c.value == 3 and seen == [3]


def test_a_forgotten_callback_does_not_run(module_dir):
    (module_dir / "watched_d.py").write_text("value = 4\n")
    seen = []

    def record(module):
        seen.append(module.value)

    import_watch.when_imported("watched_d", record)
    import_watch.forget("watched_d", record)
    import watched_d  # noqa: F401

    assert seen == []


def test_a_spec_looked_up_but_never_loaded_leaves_the_watch_armed(module_dir):
    (module_dir / "watched_e.py").write_text("value = 5\n")
    seen = []
    import_watch.when_imported("watched_e", lambda module: seen.append(module.value))
    spec = importlib.util.find_spec("watched_e")
    # What pkgutil and runpy ask of a spec's loader is the real loader's.
    assert spec.loader.get_source("watched_e") == "value = 5\n"
    assert pkgutil.get_data("watched_e", "watched_e.py") == b"value = 5\n"
    import watched_e  # noqa: F401

    assert seen == [5]


def test_a_failed_first_import_keeps_the_callback_for_the_retry(module_dir):
    source = module_dir / "watched_f.py"
    source.write_text("raise KeyboardInterrupt\n")
    seen = []
    import_watch.when_imported("watched_f", lambda module: seen.append(module.value))
    with pytest.raises(KeyboardInterrupt):
        import watched_f  # noqa: F401
    source.write_text("value = 6\n")
    importlib.invalidate_caches()
    sys.modules.pop("watched_f", None)
    import watched_f  # noqa: F401, F811

    assert seen == [6]
