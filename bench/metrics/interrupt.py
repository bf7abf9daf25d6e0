"""Interrupt latency: a warm kernel runs `time.sleep(30)`; another thread
calls interrupt() after a short delay. The sample is the time from that call
to the cell's result. The attempt is clean when the result says it was
interrupted, it came well before the sleep would have ended, and the
namespace survived (a variable set before is still there).

After each interrupt a cell that sleeps runs next: it must sleep in full.
One cut short (reported interrupted, failed, or back early) means the
interrupt leaked past the cell it was aimed at; its rate must be 0%.

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
#: The sleep of the cell that runs after each interrupt.
_NEXT_SLEEP_S = 0.3


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
        Row(
            "interrupt_next_sleep_cut",
            "next sleeping cell cut short after interrupt",
            RATE,
            (Target(0.0, at_most=True),),
        ),
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
        return None, False, False, False
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
    next_cut = False
    if clean:
        started = time.perf_counter()
        sleeper = session.execute(f"time.sleep({_NEXT_SLEEP_S})\nprint('slept')")
        slept = time.perf_counter() - started
        next_cut = (
            sleeper.aborted
            or sleeper.interrupted
            or sleeper.error is not None
            or sleeper.stdout.strip() != "slept"
            or slept < _NEXT_SLEEP_S
        )
        if next_cut:
            ctx.log(f"  {system}: the cell after an interrupt was cut short: {sleeper}")
    if not clean:
        ctx.log(f"  {system}: unclean interrupt: {result}, then {check}")
        ctx.discard(system)
    return latency, clean, aborted, next_cut


def measure(ctx, system):
    latencies, clean, aborted, cut = [], [], [], []
    for _ in range(ctx.profile.interrupts):
        latency, ok, next_aborted, next_cut = _attempt(ctx, system)
        if latency is not None:
            latencies.append(latency)
        clean.append(1.0 if ok else 0.0)
        aborted.append(1.0 if next_aborted else 0.0)
        if ok:
            cut.append(1.0 if next_cut else 0.0)
    return {
        "interrupt_latency": latencies,
        "interrupt_clean": clean,
        "interrupt_next_aborted": aborted,
        "interrupt_next_sleep_cut": cut,
    }
