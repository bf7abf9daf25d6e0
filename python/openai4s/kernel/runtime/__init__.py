"""Everything that runs inside the worker interpreter, and nothing else.

The worker is started as ``kernel/worker.py`` (entry point, SIGINT
discipline, frame writer); every other module it loads lives here, plus
``sdk/``. Standard library only, and never the host side: not ``_core``,
not the manager, config, store or dispatcher (held by
tests/python/test_runtime_boundary.py). Nothing here is trusted by the host.
"""
