"""Running one Cell: compile, execute under the SIGINT discipline with its
stdout/stderr captured and its reads observed, and build its response.

The frame writer and the SIGINT discipline are the entry point's
(``kernel/worker.py``); they arrive here as ``wire`` (see ``worker._Wire``).
"""

# The parser's node classes themselves, without ast.py's visitors and
# unparser on top (about 2 ms of every kernel's start, for isinstance checks
# and two constructors).
import _ast
import sys

from openai4s.kernel.runtime import display, displayhook, figures, import_watch, protocol
from openai4s.kernel.runtime.capture import BoundedBuffer, StreamingStdout, cap_text
from openai4s.kernel.runtime.guards import CellGuards
from openai4s.kernel.runtime.spill import SpillFile
from openai4s.kernel.runtime.tracebacks import (
    cell_location,
    format_bounded,
    one_line,
    skip_frames_of,
)
from openai4s.kernel.runtime.usage import CellClock

_LINECACHE_CELLS = 128
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _plain_cell_name(name):
    """A cell name a traceback can show as is (``3``, ``silent-2``)."""
    return isinstance(name, str) and 0 < len(name) <= 32 and set(name) <= _NAME_CHARS


def _linecache_dict():
    """linecache's cache if linecache is imported; a Cell that replaced the
    module with something else only loses its own tracebacks' lines."""
    try:
        cache = sys.modules["linecache"].cache
    except Exception:
        return None
    return cache if type(cache) is dict else None


class CellExecution:
    """The per-Cell machinery around one worker's namespace."""

    def __init__(self, wire, namespace, observer, sidecars, cell_namespace, native=None):
        self.wire = wire
        self.namespace = namespace
        self.observer = observer
        self.sidecars = sidecars
        #: host facade and provenance (cell_namespace.py).
        self.cell_namespace = cell_namespace
        #: fd 1/2 capture (native_output.py), None where it could not start.
        self.native = native
        self.cell_id = None
        self.origin = None
        self.files_read = []
        self._cell_seq = 0
        #: The last Cell's (id, captured stdout), kept for stdout_request.
        self.last_stdout = None
        #: The last Cells' linecache entries, oldest first, so tracebacks and
        #: inspect.getsource show Cell code. linecache itself (with tokenize
        #: and re) is imported only when something reads it; it gets these
        #: entries at that import.
        self._cell_sources = {}
        import_watch.when_imported("linecache", self._publish_sources)
        self._legacy_seen = 0
        #: The last Cell's stdout/stderr, whose spill files are completed
        #: only after its response is sent.
        self._unfinished_spills = ()

    def finish_spills(self):
        """Write out the last Cell's spill files; never raises.

        Runs between Cells, where SIGINT is disarmed (_execute's finally), so
        an idle worker's stop cannot cut a file short either.
        """
        buffers, self._unfinished_spills = self._unfinished_spills, ()
        for buffer in buffers:
            try:
                buffer.finish_spill()
            except Exception:
                pass

    def run_cell(
        self, code, cell_id, origin, as_result=False, name=None, stream_all=False, seq=None
    ):
        wire = self.wire
        tag = self._register_source(code, name)
        self.cell_id, self.origin = cell_id, origin
        display.begin_cell(cell_id, wire.emit_frame)
        # Armed before anything else, so a stop pressed early is latched.
        wire.arm_sigint()
        wire.take_owed_interrupt(seq)
        self.cell_namespace.install()
        self.cell_namespace.set_cell(cell_id)
        root = self.observer.root
        stdout_spill = SpillFile(root, cell_id, "stdout", wire.sigint_held)
        self.last_stdout = None
        native = self.native
        drain = None if native is None else native.drain
        stdout = StreamingStdout(
            cell_id,
            wire.emit_line,
            stdout_spill,
            stream=self._cell_seq,
            fd=1,
            before_write=drain,
            unbounded=stream_all,
        )
        stderr_spill = SpillFile(root, cell_id, "stderr", wire.sigint_held)
        stderr = BoundedBuffer(spill=stderr_spill, fd=2, before_write=drain)
        saved = (sys.stdout, sys.stderr)
        sys.stdout, sys.stderr = stdout, stderr
        if native is not None:
            native.begin(stdout, stderr)
        guards = CellGuards()
        guards.before_cell()
        clock = CellClock()
        clock.start()
        self.observer.begin(tag)
        sidecar_frames = self.sidecars.frames_sent
        failure = None
        try:
            self._execute(code, tag, saved, as_result)
        except BaseException as exc:
            failure = exc
        if native is not None:
            native.end()
        usage = clock.stop()
        stdout.end_spill()
        stderr.end_spill()
        self._unfinished_spills = (stdout, stderr)
        response = self._response(cell_id, tag, failure, stdout, stderr)
        failure = None
        # Only on a spill: a normal Cell's response keeps its exact key set.
        if stdout.spill_path is not None:
            response["stdout_file"] = stdout.spill_path
        if stderr.spill_path is not None:
            response["stderr_file"] = stderr.spill_path
        response["guards"] = guards.after_cell()
        response["files_read"] = self.files_read
        response["usage"] = usage
        self._complete_cell(response, sidecar_frames)
        return response

    def _execute(self, code, tag, saved, as_result):
        wire = self.wire
        in_user_code = wire.in_user_code
        try:
            try:
                statements, shown = _compile_cell(code, tag)
                in_user_code[0] = True
                wire.raise_if_sigint_pending()
                try:
                    if statements is not None:
                        exec(statements, self.namespace)
                    if shown is not None:
                        # Still user code: a slow __repr__ stays interruptible.
                        value = eval(shown, self.namespace)
                        displayhook.show_result(value, as_result=as_result)
                except KeyboardInterrupt:
                    figures.cell_ended(show=False)
                    raise
                except BaseException:
                    # What a failing Cell drew is still shown (as inline
                    # backends do); its own error stays the Cell's error.
                    try:
                        figures.cell_ended()
                    except Exception:
                        pass
                    raise
                # As notebook inline backends: what the Cell drew is shown.
                figures.cell_ended()
            finally:
                in_user_code[0] = False
        finally:
            # Repeated: a signal landing on the first instruction of the inner
            # finally skips its store.
            in_user_code[0] = False
            display.end_cell()
            self.files_read = self.observer.end()
            self.cell_namespace.set_cell(None)
            wire.disarm_sigint()
            sys.stdout, sys.stderr = saved

    def _response(self, cell_id, tag, failure, stdout, stderr):
        error, interrupted, lineno, call = None, False, None, None
        if isinstance(failure, KeyboardInterrupt) and self.wire.sigint_delivered[0]:
            error, interrupted = "Interrupted", True
        elif isinstance(failure, (SystemExit, GeneratorExit)):
            try:
                message = str(failure)
            except Exception:
                message = ""
            error = f"{type(failure).__name__} trapped (worker kept alive): " + cap_text(message)
        elif failure is not None:
            # This file's frames (run_cell, _execute, _compile_cell) are the
            # worker's, not the researcher's.
            tb = skip_frames_of(failure.__traceback__, _THIS_FILE)
            error = one_line(failure) or format_bounded(failure, tb)
            lineno, call = cell_location(failure.__traceback__, tag)
        stdout_text, declaration, captured = stdout.response_text()
        # Kept until the next request: the host asks for it (stdout_request)
        # if the chunks it holds do not match the declaration.
        self.last_stdout = (cell_id, captured) if declaration is not None else None
        response = {
            "type": "response",
            "id": cell_id,
            "stdout": stdout_text,
            "stderr": stderr.captured(),
            "error": error,
            "interrupted": interrupted,
            "trace": {"error_lineno": lineno, "error_call": call},
        }
        if declaration is not None:
            # Host-internal (removed before the caller sees the response).
            response["stdout_stream"] = declaration
        return response

    def _complete_cell(self, response, sidecar_frames_before):
        try:
            sys.audit("openai4s.skill_cell_complete", self.cell_id, self.origin)
        except Exception:
            pass
        legacy = self._new_legacy_events()
        if legacy and self.sidecars.frames_sent == sidecar_frames_before:
            from openai4s.kernel.runtime.sidecars import legacy_events

            response["skill_sidecar_loads"] = legacy_events(legacy)
        self.cell_id = None
        self.origin = None

    def _new_legacy_events(self):
        events = self.namespace.get("__openai4s_skill_load_events__")
        if type(events) is not list:
            return []
        new = events[self._legacy_seen :]
        self._legacy_seen = len(events)
        return new

    def _register_source(self, code, name=None):
        self._cell_seq += 1
        # A front door names the cell by the number its client shows
        # (Jupyter's execution count); otherwise the worker counts.
        if not _plain_cell_name(name):
            name = self._cell_seq
        tag = protocol.cell_tag(name)
        if isinstance(code, str):
            lines = [line + "\n" for line in code.split("\n")]
            # mtime None: checkcache never discards a source with no file.
            self._cell_sources[tag] = (len(code), None, lines, tag)
            cache = _linecache_dict()
            if cache is not None:
                cache[tag] = self._cell_sources[tag]
            while len(self._cell_sources) > _LINECACHE_CELLS:
                oldest = next(iter(self._cell_sources))
                del self._cell_sources[oldest]
                if cache is not None:
                    cache.pop(oldest, None)
        return tag

    def _publish_sources(self, linecache):
        linecache.cache.update(self._cell_sources)


#: Up to this size a cell without a shown value compiles from its parsed tree.
_COMPILE_FROM_TREE_CHARS = 2000


def _compile_cell(code, tag):
    """``(statements, shown)``: code objects to exec, then to evaluate and
    show (IPython's rule: a last expression not ended by ``;``); either may
    be None. A SyntaxError is raised here, outside any ``except`` block, so
    its report carries no chained exception."""
    tree = compile(code, tag, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    body, last = displayhook.split_last_expression(tree, code)
    if last is None:
        # A large cell compiles from its source (converting a large tree
        # back costs more than parsing again), a small one from the tree it
        # already has (a few microseconds off every short cell).
        if len(code) > _COMPILE_FROM_TREE_CHARS:
            return compile(code, tag, "exec", dont_inherit=True), None
        return compile(tree, tag, "exec", dont_inherit=True), None
    if not body.body:
        return None, compile(code, tag, "eval", dont_inherit=True)
    return (
        compile(body, tag, "exec", dont_inherit=True),
        compile(last, tag, "eval", dont_inherit=True),
    )


def response_line(response):
    """The response's line; without its optional extras if they do not
    serialise. One response per execute is the host's contract: an
    unserialisable diagnostic must not cost the Cell its answer."""
    try:
        return protocol.encode_frame(response)
    except (TypeError, ValueError):
        response.pop("skill_sidecar_loads", None)
        return protocol.encode_frame(response)


_THIS_FILE = _compile_cell.__code__.co_filename
