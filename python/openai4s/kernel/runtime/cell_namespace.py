"""What a Cell's namespace is given before it runs: the ``host`` facade and
the provenance hooks, each installed once and, if it cannot be, announced
once and then left out (the Cell still runs)."""

_UNAVAILABLE = object()


class CellNamespace:
    def __init__(self, namespace, mode, host_call, log):
        self.namespace = namespace
        self.mode = mode
        self._host_call = host_call
        self._log = log
        self._host_failed = False
        self._provenance = None

    def install(self):
        """Before each Cell: the facade (unless Jupyter mode) and provenance."""
        if self.mode == "jupyter":
            return
        if "host" not in self.namespace and not self._host_failed:
            try:
                from openai4s.sdk import build_host

                facade = build_host(self._host_call, mode=self.mode)
            except Exception as exc:
                # Deterministic (unknown mode, broken install): say it once.
                self._host_failed = True
                self._log(f"host sdk unavailable: {exc}")
            else:
                self.namespace["host"] = facade
                self.namespace["openai4s"] = facade
        if self._provenance is None:
            try:
                from openai4s.kernel.runtime import audit, provenance

                provenance.install(self._host_call)
                # Our audit hook reports every chdir, so provenance may cache
                # the working directory instead of asking per open().
                audit.chdir_listeners.append(provenance.cwd_changed)
                provenance.track_cwd()
                self._provenance = provenance
            except Exception as exc:
                self._provenance = _UNAVAILABLE
                self._log(f"provenance unavailable: {exc}")

    def set_cell(self, cell_id):
        """Tell provenance which Cell runs now (None between Cells)."""
        if self._provenance is not None and self._provenance is not _UNAVAILABLE:
            try:
                self._provenance.set_cell_id(cell_id)
            except Exception:
                pass
