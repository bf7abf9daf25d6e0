"""Per-Cell wall, CPU and peak-RSS telemetry (best effort)."""

import os
import sys
import time

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None


def cpu_seconds() -> float:
    """Self plus reaped-children user and system time."""
    if resource is None:  # pragma: no cover
        return time.process_time()
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def reset_peak_rss() -> None:
    # Raw os calls, not open(): provenance may have wrapped the builtin, and
    # this runs twice per Cell, so a buffered text stream's setup shows up in
    # every round trip. Writing 5 to clear_refs resets VmHWM (Linux >= 4.0),
    # so the next read is this Cell's peak rather than the lifetime peak.
    try:
        fd = os.open("/proc/self/clear_refs", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.write(fd, b"5")
    except OSError:
        pass
    finally:
        os.close(fd)


def peak_rss_kb() -> int:
    try:
        fd = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        try:
            status = os.read(fd, 8192)
        finally:
            os.close(fd)
        start = status.index(b"VmHWM:") + 6
        return int(status[start : status.index(b"\n", start)].split()[0])
    except (OSError, ValueError, IndexError):
        pass
    if resource is None:  # pragma: no cover
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


class CellClock:
    """Measures one Cell: start() before compiling, stop() after its finally."""

    def start(self) -> None:
        reset_peak_rss()
        self._wall = time.perf_counter()
        self._cpu = cpu_seconds()

    def stop(self) -> dict:
        wall = time.perf_counter() - self._wall
        cpu = cpu_seconds() - self._cpu
        return {
            "wall_s": round(wall, 4),
            "cpu_s": round(cpu, 4),
            "peak_rss_kb": peak_rss_kb(),
        }
