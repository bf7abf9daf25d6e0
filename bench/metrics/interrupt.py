"""Interrupt latency: a warm kernel runs `time.sleep(30)`; another thread
calls interrupt() after a short delay. The sample is the time from that call
to the cell's result. The attempt is clean when the result says it was
interrupted, it came well before the sleep would have ended, and the
namespace survived (a variable set before is still there).

ipykernel may abort the next request outright (stop_on_error, racing the
interrupted cell's reply); that is counted in its own row and the check is
sent once more, so it does not read as a lost namespace."""

import threading
import time

from bench.rows import RATE, TIME, Row, Target
from bench.systems import KERNEL_SYSTEMS, SANDBOXED

NAME = "interrupt"
SYSTEMS = KERNEL_SYSTEMS + (SANDBOXED,)

_SLEEP_S = 30
# A result later than this means the interrupt did not cut the sleep short.
_CUT_SHORT_S = 20.0


def rows(profile):
    return (
        Row(
            "interrupt_latency",
            "interrupt latency, `time.sleep(30)`",
            TIME,
            (Target(0.1, "interrupt_latency", "jupyter"),),
        ),
        Row(
            "interrupt_clean",
            "interrupt clean, namespace survives",
            RATE,
            (Target(100.0, at_least=True),),
        ),
        Row("interrupt_next_aborted", "next cell aborted after interrupt", RATE),
    )


def _interrupt_later(session, delay_s, fired):
    session.prepare_interrupt_thread()
    try:
        time.sleep(delay_s)
        fired.append(time.perf_counter())
        session.interrupt()
    finally:
        session.release_interrupt_thread()


def _attempt(ctx, system):
    session = ctx.warm(system)
    setup = session.execute("import time\nsurvivor = 42")
    if setup.error:
        raise RuntimeError(f"setup cell failed: {setup.error}")
    fired = []
    interrupter = threading.Thread(
        target=_interrupt_later, args=(session, ctx.profile.interrupt_delay_s, fired), daemon=True
    )
    interrupter.start()
    try:
        result = session.execute(f"time.sleep({_SLEEP_S})", timeout=_SLEEP_S + 15)
        returned = time.perf_counter()
    except TimeoutError:
        ctx.discard(system)
        return None, False, False
    finally:
        interrupter.join()
    latency = returned - fired[0]
    check = session.execute("print(survivor)")
    aborted = check.aborted
    if aborted:
        check = session.execute("print(survivor)")
    clean = (
        result.interrupted
        and latency < _CUT_SHORT_S
        and check.error is None
        and check.stdout.strip() == "42"
    )
    if not clean:
        ctx.log(f"  {system}: unclean interrupt: {result}, then {check}")
        ctx.discard(system)
    return latency, clean, aborted


def measure(ctx, system):
    latencies, clean, aborted = [], [], []
    for _ in range(ctx.profile.interrupts):
        latency, ok, next_aborted = _attempt(ctx, system)
        if latency is not None:
            latencies.append(latency)
        clean.append(1.0 if ok else 0.0)
        aborted.append(1.0 if next_aborted else 0.0)
    return {
        "interrupt_latency": latencies,
        "interrupt_clean": clean,
        "interrupt_next_aborted": aborted,
    }
