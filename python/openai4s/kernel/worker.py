"""The Python kernel worker: a JSON-lines peer that runs Cells.

This file is the entry point, the SIGINT discipline and the frame writer;
everything else the worker runs is in ``runtime/`` (the session loop in
``runtime/session.py``, one Cell in ``runtime/cell_execution.py``).

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

from openai4s.kernel.runtime import channel, figures, frames, import_watch, protocol, threads
from openai4s.kernel.runtime.files_read import _workspace_relative_read_path
from openai4s.kernel.runtime.handshake import handshake
from openai4s.kernel.runtime.session import Session

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
#: The `seq` of the last `interrupt` frame read between Cells: the host
#: names the Cell it interrupted (src/kernel/cell_interrupts.h).
_owed_interrupt = [None]
#: _sigint_handled when the last Cell was armed; a count that moved since
#: means a signal came while no Cell was armed, so the interrupt frame sent
#: before it may be waiting in the pipe.
_handled_at_arm = [0]
_MAIN_THREAD_IDENT = threads.MAIN_IDENT


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


# _signal, not signal: signal.signal turns the previous handler into an enum
# (for a Python handler, a raised-and-caught ValueError, twice per Cell), and
# importing signal brings enum, a few milliseconds of every worker's start.
# A replaced signal.signal (the acceptance suite patches ``worker.signal``'s)
# is still the one called; only the stock one is skipped.
_raw_signal = _signal.signal
#: signal.signal as the signal module defined it, once signal is imported.
_stock_signal = [None]


def _record_stock_signal(module):
    _stock_signal[0] = module.signal


import_watch.when_imported("signal", _record_stock_signal)


def __getattr__(name):
    # ``worker.signal`` is the signal module, imported when asked for.
    if name == "signal":
        import signal

        return signal
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _set_sigint(handler):
    setter = getattr(sys.modules.get("signal"), "signal", None)
    if setter is None or setter is _stock_signal[0]:
        _raw_signal(_signal.SIGINT, handler)
    else:
        setter(_signal.SIGINT, handler)


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


def _note_interrupt_frame(request):
    _owed_interrupt[0] = request.get("seq")


def _take_owed_interrupt(seq):
    """Right after arming Cell `seq`: an interrupt the host sent for it whose
    signal came too early (the worker idle, or reading the Cell) is owed to
    it, and raised at its first statement like any early signal."""
    owed = {_owed_interrupt[0]}
    _owed_interrupt[0] = None
    if _sigint_handled[0] != _handled_at_arm[0]:
        _handled_at_arm[0] = _sigint_handled[0]
        owed |= frames.interrupts_waiting()
    if seq is not None and seq in owed:
        _sigint_pending[0] = True


def _sigint_held(action, *args):
    """``action(*args)``, with a SIGINT that lands in it held until it returns.

    On the main thread inside user code a SIGINT is latched for the duration
    and raised only afterwards: raised mid-way it would leave half a frame
    that the next one glues onto, or a hole in a spill file.
    """
    deferring = _in_user_code[0] and threads.current_ident() == _MAIN_THREAD_IDENT
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


def _interrupt_from_caller():
    """The caller interrupted while answering input(): this Cell's stop."""
    _disarm_sigint()
    _sigint_delivered[0] = True
    raise KeyboardInterrupt


class _Wire:
    """The frame writer and SIGINT discipline, as the runtime's session and
    cell machinery reach them. What this module used to hand over as a value
    is handed over as it is (each looks up what it calls when called); what
    it called by name is looked up per call here too, so a replaced one
    (tests monkeypatch them) is the one used. The state cells are shared."""

    in_user_code = _in_user_code
    sigint_delivered = _sigint_delivered
    emit_frame = staticmethod(_emit_frame)
    emit_line = staticmethod(_emit_line)
    sigint_held = staticmethod(_sigint_held)
    host_call_lock = staticmethod(_host_call_lock)
    interrupt_from_caller = staticmethod(_interrupt_from_caller)

    @staticmethod
    def write_line(line):
        _write_line(line)

    @staticmethod
    def write_frame(obj):
        _write_frame(obj)

    @staticmethod
    def log(msg):
        _log(msg)

    @staticmethod
    def arm_sigint():
        return _arm_sigint()

    @staticmethod
    def disarm_sigint():
        _disarm_sigint()

    @staticmethod
    def take_owed_interrupt(seq):
        _take_owed_interrupt(seq)

    @staticmethod
    def note_interrupt_frame(request):
        _note_interrupt_frame(request)

    @staticmethod
    def raise_if_sigint_pending():
        _raise_if_sigint_pending()


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
    installed = handshake(
        _Wire.write_frame,
        _Wire.emit_frame,
        _Wire.log,
        lambda: (session.cell_id, session.origin) if session else (None, None),
    )
    if installed is None:
        return 0
    # Captured once: a Cell editing os.environ cannot change request handling.
    mode = os.environ.get("OPENAI4S_KERNEL_MODE", "repl")
    session = Session(_Wire, mode, *installed, native=native)
    try:
        session.serve()
    except BrokenPipeError:
        _end_descendants()
        return 0
    return _leave()


def _end_descendants():
    """What the Cells started ends with the worker, also when the host is
    gone and never walked the tree (the worker read end of input): with the
    sandbox off nothing else would (runtime/descendants.py)."""
    try:
        from openai4s.kernel.runtime import descendants

        descendants.end_all()
    except Exception:
        pass


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


def _cell_threads_may_hold_the_exit():
    # Only threading's threads hold the exit, and only a Cell starts them
    # (the worker's own come from _thread); no threading, no such thread.
    threading = sys.modules.get("threading")
    if threading is None:
        return False
    try:
        current = threading.current_thread()
        return any(not t.daemon for t in threading.enumerate() if t is not current)
    except Exception:
        return True  # a Cell replaced threading: leave the hard way


def _leave():
    _end_descendants()
    # A Cell's non-daemon thread would keep a shut-down worker alive until the
    # host's kill ladder; the protocol is finished, so leave now.
    if _cell_threads_may_hold_the_exit():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(0)
    return 0
