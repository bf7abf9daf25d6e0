"""The Python kernel worker: a JSON-lines peer that runs Cells.

Launched as ``python -u <abs path>/openai4s/kernel/worker.py``; importing it
has no side effects (the host's tests import it to drive the SIGINT and frame
discipline directly).
"""

import os
import sys

if __name__ == "__main__":
    # As a script, sys.path[0] is this directory, which would expose sibling
    # modules under wrong top-level names. Swap it for the trusted package
    # parent (three levels above the real path, never an inherited PYTHONPATH)
    # and run the one importable copy of this module, so that there is a
    # single copy of its state.
    _here = os.path.dirname(os.path.realpath(__file__))
    if sys.path and os.path.realpath(sys.path[0] or os.curdir) == _here:
        del sys.path[0]
    _parent = os.path.dirname(os.path.dirname(_here))
    if os.path.isfile(os.path.join(_parent, "openai4s", "__init__.py")):
        if _parent not in sys.path:
            sys.path.insert(0, _parent)
    from openai4s.kernel import worker as _worker

    sys.exit(_worker.main())

import _signal
import ast
import builtins
import json
import signal
import threading

from openai4s.kernel.runtime import (
    channel,
    code_completeness,
    display,
    displayhook,
    figures,
    inspector,
    protocol,
)
from openai4s.kernel.runtime.capture import BoundedBuffer, StreamingStdout, cap_text
from openai4s.kernel.runtime.files_read import ReadObserver, _workspace_relative_read_path
from openai4s.kernel.runtime.guards import CellGuards
from openai4s.kernel.runtime.host_rpc import HostChannel
from openai4s.kernel.runtime.spill import SpillFile
from openai4s.kernel.runtime.stdin_channel import InputChannel
from openai4s.kernel.runtime.stdin_channel import install as install_input
from openai4s.kernel.runtime.tracebacks import cell_location, format_bounded, skip_frames_of
from openai4s.kernel.runtime.usage import CellClock

__all__ = ["main", "_workspace_relative_read_path"]

# SIGINT state: one-element lists mutated in place, so tests (and the
# handler) share the cells rather than rebinding names.
#: The handler may raise right now.
_in_user_code = [False]
#: A signal arrived when it could not be raised; it is owed to this Cell.
_sigint_pending = [False]
#: This Cell's KeyboardInterrupt came from a signal, not from user code.
_sigint_delivered = [False]
#: Python-level SIGINT handler runs, counted so the interrupt relay can tell
#: a signal that was acted on from one that fell into a blocking call's gap.
_sigint_handled = [0]
#: Which arming of the handler is live (a new number per Cell), None while
#: disarmed: the interrupt relay re-sends a signal only to the Cell it saw
#: armed, never to a later one.
_armed_cell = [None]
_arm_count = [0]
_MAIN_THREAD_IDENT = threading.main_thread().ident
_LINECACHE_CELLS = 128
_UNAVAILABLE = object()


def _proto_in():
    return sys._openai4s_protocol_stdin


def _proto_out():
    return sys._openai4s_protocol_stdout


def _write_lock():
    return sys._openai4s_protocol_lock


def _host_call_lock():
    return sys._openai4s_host_call_lock


def _sigint_swallow(signum, frame):
    _sigint_handled[0] += 1
    return None


# signal.signal wraps _signal.signal to turn the previous handler into an
# enum, which for a Python handler costs a raised-and-caught ValueError: two
# per Cell. The wrapper is skipped only while it is the module's attribute,
# so a replaced signal.signal (tests do that) is still the one called.
_STOCK_SIGNAL = signal.signal
_raw_signal = _signal.signal


def _set_sigint(handler):
    setter = signal.signal
    if setter is _STOCK_SIGNAL:
        _raw_signal(_signal.SIGINT, handler)
    else:
        setter(signal.SIGINT, handler)


def _disarm_sigint():
    _armed_cell[0] = None
    try:
        _set_sigint(_sigint_swallow)
    except (ValueError, OSError):
        pass


def _sigint_handler(signum, frame):
    _sigint_handled[0] += 1
    if _in_user_code[0]:
        # One-shot: a second SIGINT while the Cell unwinds is swallowed.
        _disarm_sigint()
        _sigint_delivered[0] = True
        raise KeyboardInterrupt
    # Too early (or inside a frame write) to raise: owed, and the handler
    # stays armed so the rest of the Cell can still be interrupted.
    _sigint_pending[0] = True


def _raise_if_sigint_pending():
    if _sigint_pending[0]:
        _sigint_pending[0] = False
        _disarm_sigint()
        _sigint_delivered[0] = True
        raise KeyboardInterrupt


def _arm_sigint():
    # A stop owed to a finished Cell must not hit this one.
    _sigint_delivered[0] = False
    _sigint_pending[0] = False
    try:
        _set_sigint(_sigint_handler)
    except (ValueError, OSError) as exc:
        try:
            _write_frame(
                {
                    "type": "log",
                    "msg": "SIGINT could not be armed for this cell "
                    f"({type(exc).__name__}: {exc}); it cannot be interrupted "
                    "and only the watchdog can end it",
                }
            )
        except Exception:
            pass
        return False
    _arm_count[0] += 1
    _armed_cell[0] = _arm_count[0]
    return True


def _sigint_held(action, *args):
    """``action(*args)``, with a SIGINT that lands in it held until it returns.

    On the main thread inside user code a SIGINT is latched for the duration
    and raised only afterwards: raised mid-way it would leave half a frame
    that the next one glues onto, or a hole in a spill file.
    """
    deferring = _in_user_code[0] and threading.get_ident() == _MAIN_THREAD_IDENT
    if deferring:
        _in_user_code[0] = False
    try:
        result = action(*args)
    finally:
        if deferring:
            _in_user_code[0] = True
    if deferring:
        _raise_if_sigint_pending()
    return result


def _write_line(line):
    """Write and flush one whole line under the protocol write lock; a
    SIGINT is raised only after the lock is released (_sigint_held)."""
    _sigint_held(_write_line_locked, line)


def _write_line_locked(line):
    with _write_lock():
        out = _proto_out()
        if isinstance(line, bytes):
            # Already UTF-8 (stdout chunks): straight to the byte stream,
            # skipping a decode and re-encode of up to a megabyte. Every
            # frame flushes, so the text layer holds nothing to go first.
            raw = getattr(out, "buffer", None)
            if raw is not None:
                raw.write(line)
                raw.flush()
                return
            line = line.decode("utf-8")
        out.write(line)
        out.flush()


def _write_frame(obj):
    _write_line(protocol.encode_frame(obj))


def _emit_frame(obj):
    # Resolved at call time so the frame writer stays replaceable.
    _write_frame(obj)


def _emit_line(line):
    _write_line(line)


def _log(msg):
    try:
        _write_frame({"type": "log", "msg": msg})
    except Exception:
        pass


_INVALID_JSON_RESPONSE = {
    "type": "response",
    "id": "unknown",
    "stdout": "",
    "stderr": "",
    "error": "invalid JSON request",
    "interrupted": False,
    "trace": {"error_lineno": None, "error_call": None},
    "usage": {},
}


class _Session:
    """One worker's namespace and the per-Cell machinery around it."""

    def __init__(self, mode, observer, sidecars, native=None):
        self.mode = mode
        #: fd 1/2 capture (native_output.py), None where it could not start.
        self.native = native
        self.namespace = {"__name__": "__openai4s__", "__builtins__": builtins}
        self.observer = observer
        self.sidecars = sidecars
        self.host = HostChannel(
            _write_line,
            channel.read_line,
            _host_call_lock,
            lambda: self.cell_id,
            channel.defer_request,
        )
        self.cell_id = None
        self.origin = None
        self._install_cell_io()
        self.files_read = []
        self._cell_seq = 0
        self._last_stdout = None
        self._cell_tags = []
        self._host_failed = False
        self._provenance = None
        self._legacy_seen = 0
        #: The last Cell's stdout/stderr, whose spill files are completed
        #: only after its response is sent.
        self._unfinished_spills = ()

    def serve(self):
        while True:
            # Under the host-call lock: a thread left running by a Cell that
            # calls the host between Cells must not read its answer here (or
            # we its next request); it waits until a Cell is running again.
            with _host_call_lock():
                line = channel.next_request_line()
            if line == "":
                return
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except (ValueError, RecursionError):
                # RecursionError: a line nested deeper than json's C stack
                # allows is malformed input, not the end of the worker.
                _write_frame(_INVALID_JSON_RESPONSE)
                continue
            if not isinstance(request, dict):
                continue
            kind = request.get("type", "execute")
            if kind == "shutdown":
                return
            if kind == "execute":
                cell_id = request.get("id")
                cell_id = "unknown" if cell_id is None else cell_id
                code = request.get("code", "")
                try:
                    response = self.run_cell(
                        code,
                        cell_id,
                        request.get("origin", "agent"),
                        as_result=request.get("last_value") == "result",
                    )
                    _write_line(_response_line(response))
                finally:
                    # After the response, so the host has the result before
                    # the disk write; before the next read, so the file is
                    # whole before any later request is processed.
                    self.finish_spills()
            elif kind == "inspect_variables":
                _write_frame(self.inspect(request))
            elif kind == "stdout_request":
                _write_frame(self.last_stdout(request.get("id")))
            elif kind == "is_complete":
                _write_frame(code_completeness.reply(request))
            elif kind in ("complete", "inspect"):
                _write_frame(self.code_help(kind, request))
            # Anything else -- notably the late answer to an RPC a SIGINT
            # abandoned -- is not a request.

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

    def last_stdout(self, cell_id):
        """The last Cell's captured stdout, for a host whose chunks did not
        add up (a lost frame, a forked child writing with the same id)."""
        last = self._last_stdout
        frame = {"type": "stdout_text", "id": cell_id, "text": ""}
        if last is not None and last[0] == cell_id:
            frame["text"] = last[1]
        else:
            frame["error"] = "no stdout kept for this cell"
        return frame

    def inspect(self, request):
        frame = {"type": "variables_response", "id": request.get("id")}
        limit = request.get("limit")
        try:
            frame.update(inspector.inspect_namespace(self.namespace, limit))
        except inspector.InvalidLimit:
            frame.update(variables=[], truncated=False, limit=0)
            frame["error"] = "invalid variable inspection limit"
        except Exception:
            frame.update(variables=[], truncated=False, limit=limit)
            frame["error"] = "variable inspection failed closed"
        return frame

    def _install_cell_io(self):
        """display() in builtins, input()/getpass() over the protocol."""
        builtins.display = display.display
        channel_ = InputChannel(
            _write_line,
            channel.read_line,
            _host_call_lock,
            lambda: self.cell_id,
            channel.defer_request,
            _interrupt_from_caller,
        )
        install_input(channel_, builtins)

    def code_help(self, kind, request):
        """Answer a complete / inspect request; never runs user code."""
        from openai4s.kernel.runtime import completion

        frame = {"type": kind + "_reply", "id": request.get("id")}
        code, cursor = request.get("code"), request.get("cursor")
        try:
            if kind == "complete":
                frame.update(completion.complete(self.namespace, code, cursor))
            else:
                level = request.get("detail_level", 0)
                frame.update(completion.inspect_code(self.namespace, code, cursor, level))
        except Exception as exc:
            if kind == "complete":
                frame.update(matches=[], cursor_start=0, cursor_end=0)
            else:
                frame.update(found=False, data={})
            frame["error"] = f"{kind} failed: {type(exc).__name__}"
        return frame

    def run_cell(self, code, cell_id, origin, as_result=False):
        tag = self._register_source(code)
        self.cell_id, self.origin = cell_id, origin
        display.begin_cell(cell_id, _emit_frame)
        # Armed before anything else, so a stop pressed early is latched.
        _arm_sigint()
        self._install_host()
        self._provenance_cell(cell_id)
        root = self.observer.root
        stdout_spill = SpillFile(root, cell_id, "stdout", _sigint_held)
        self._last_stdout = None
        native = self.native
        drain = None if native is None else native.drain
        stdout = StreamingStdout(
            cell_id, _emit_line, stdout_spill, stream=self._cell_seq, fd=1, before_write=drain
        )
        stderr_spill = SpillFile(root, cell_id, "stderr", _sigint_held)
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
        try:
            try:
                statements, shown = _compile_cell(code, tag)
                _in_user_code[0] = True
                _raise_if_sigint_pending()
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
                _in_user_code[0] = False
        finally:
            # Repeated: a signal landing on the first instruction of the inner
            # finally skips its store.
            _in_user_code[0] = False
            display.end_cell()
            self.files_read = self.observer.end()
            self._provenance_cell(None)
            _disarm_sigint()
            sys.stdout, sys.stderr = saved

    def _response(self, cell_id, tag, failure, stdout, stderr):
        error, interrupted, lineno, call = None, False, None, None
        if isinstance(failure, KeyboardInterrupt) and _sigint_delivered[0]:
            error, interrupted = "Interrupted", True
        elif isinstance(failure, (SystemExit, GeneratorExit)):
            try:
                message = str(failure)
            except Exception:
                message = ""
            error = f"{type(failure).__name__} trapped (worker kept alive): " + cap_text(message)
        elif failure is not None:
            tb = skip_frames_of(failure.__traceback__, self._execute.__code__.co_filename)
            error = format_bounded(failure, tb)
            lineno, call = cell_location(failure.__traceback__, tag)
        stdout_text, declaration, captured = stdout.response_text()
        # Kept until the next request: the host asks for it (stdout_request)
        # if the chunks it holds do not match the declaration.
        self._last_stdout = (cell_id, captured) if declaration is not None else None
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

    def _register_source(self, code):
        import linecache

        self._cell_seq += 1
        tag = protocol.cell_tag(self._cell_seq)
        if isinstance(code, str):
            lines = [line + "\n" for line in code.split("\n")]
            # mtime None: checkcache never discards a source with no file.
            linecache.cache[tag] = (len(code), None, lines, tag)
            self._cell_tags.append(tag)
            while len(self._cell_tags) > _LINECACHE_CELLS:
                linecache.cache.pop(self._cell_tags.pop(0), None)
        return tag

    def _install_host(self):
        if self.mode == "jupyter":
            return
        if "host" not in self.namespace and not self._host_failed:
            try:
                from openai4s.sdk import build_host

                facade = build_host(self.host.call, mode=self.mode)
            except Exception as exc:
                # Deterministic (unknown mode, broken install): say it once.
                self._host_failed = True
                _log(f"host sdk unavailable: {exc}")
            else:
                self.namespace["host"] = facade
                self.namespace["openai4s"] = facade
        if self._provenance is None:
            try:
                from openai4s.kernel.runtime import audit, provenance

                provenance.install(self.host.call)
                # Our audit hook reports every chdir, so provenance may cache
                # the working directory instead of asking per open().
                audit.chdir_listeners.append(provenance.cwd_changed)
                provenance.track_cwd()
                self._provenance = provenance
            except Exception as exc:
                self._provenance = _UNAVAILABLE
                _log(f"provenance unavailable: {exc}")

    def _provenance_cell(self, cell_id):
        if self._provenance is not None and self._provenance is not _UNAVAILABLE:
            try:
                self._provenance.set_cell_id(cell_id)
            except Exception:
                pass


def _compile_cell(code, tag):
    """``(statements, shown)``: code objects to exec, then to evaluate and
    show (IPython's rule: a last expression not ended by ``;``); either may
    be None. A SyntaxError is raised here, outside any ``except`` block, so
    its report carries no chained exception."""
    tree = compile(code, tag, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    body, last = displayhook.split_last_expression(tree, code)
    if last is None:
        # From the source, not the tree: converting a large tree back costs
        # more than parsing again.
        return compile(code, tag, "exec", dont_inherit=True), None
    if not body.body:
        return None, compile(code, tag, "eval", dont_inherit=True)
    return (
        compile(body, tag, "exec", dont_inherit=True),
        compile(last, tag, "eval", dont_inherit=True),
    )


def _interrupt_from_caller():
    """The caller interrupted while answering input(): this Cell's stop."""
    _disarm_sigint()
    _sigint_delivered[0] = True
    raise KeyboardInterrupt


def _response_line(response):
    """The response's line; without its optional extras if they do not
    serialise. One response per execute is the host's contract: an
    unserialisable diagnostic must not cost the Cell its answer."""
    try:
        return protocol.encode_frame(response)
    except (TypeError, ValueError):
        response.pop("skill_sidecar_loads", None)
        return protocol.encode_frame(response)


def _valid_key(key):
    hexdigits = "0123456789abcdefABCDEF"
    if len(key) != 64 or any(char not in hexdigits for char in key):
        return None
    return bytes.fromhex(key)


def _handshake(cell_identity):
    """Read ``initialize``; install the audit hook; answer. None = exit."""
    line = channel.read_line()
    if not line:
        return None
    try:
        frame = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(frame, dict):
        frame = {}
    init_id = frame.get("id")
    init_id = "unknown" if init_id is None else init_id
    key = frame.get("skill_attestation_key")
    if frame.get("type") != "initialize" or not isinstance(key, str):
        return _refuse(init_id, "missing manager attestation handshake")
    key = _valid_key(key)
    if key is None:
        return _refuse(init_id, "invalid manager attestation handshake")
    try:
        from openai4s.kernel.runtime import audit, sidecars
    except Exception as exc:
        _log(f"audit hook unavailable: {exc}")
        return _refuse(init_id, "invalid manager attestation handshake")
    observer = ReadObserver(os.getcwd())
    channel_ = sidecars.SidecarChannel(key, _emit_frame, cell_identity)
    try:
        audit.install(observer, channel_)
    except Exception as exc:
        _log(f"audit hook unavailable: {exc}")
        return _refuse(init_id, "invalid manager attestation handshake")
    _write_frame({"type": "initialized", "id": init_id})
    return observer, channel_


def _refuse(init_id, error):
    _write_frame({"type": "initialization_error", "id": init_id, "error": error})
    return None


def main():
    # Before anything else: an idle worker must survive a stop.
    _disarm_sigint()
    # The host's malloc settings for this process (read by glibc at exec);
    # a cell's environment and its subprocesses must not inherit them.
    os.environ.pop("GLIBC_TUNABLES", None)
    # Headless plotting; figures become displays (before any Cell runs).
    figures.force_headless(os.environ)
    figures.install()
    channel.setup_local()
    try:
        from openai4s.kernel.runtime.interrupt_relay import InterruptRelay

        InterruptRelay(lambda: _sigint_handled[0], lambda: _armed_cell[0])
    except Exception as exc:  # interrupts still work, minus the gap fix
        _log(f"interrupt relay unavailable: {exc}")
    native = _start_native_output()
    session = None
    installed = _handshake(lambda: (session.cell_id, session.origin) if session else (None, None))
    if installed is None:
        return 0
    # Captured once: a Cell editing os.environ cannot change request handling.
    mode = os.environ.get("OPENAI4S_KERNEL_MODE", "repl")
    session = _Session(mode, *installed, native=native)
    try:
        session.serve()
    except BrokenPipeError:
        return 0
    return _leave()


def _start_native_output():
    """fd 1/2 capture for Cells, and faulthandler on the worker's own
    stderr, so a crash inside a Cell still reaches the host's tail."""
    try:
        from openai4s.kernel.runtime.native_output import NativeOutput

        native = NativeOutput()
    except Exception as exc:
        _log(f"native output capture unavailable: {exc}")
        return None
    try:
        from openai4s.kernel.runtime import audit

        audit.native_output_listeners.append(native.expect)
    except Exception:
        pass
    try:
        import faulthandler

        faulthandler.enable(file=native.diagnostics_fd, all_threads=True)
    except Exception:
        pass
    return native


def _leave():
    # A Cell's non-daemon thread would keep a shut-down worker alive until the
    # host's kill ladder; the protocol is finished, so leave now.
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    if any(not thread.daemon for thread in others):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(0)
    return 0
