"""Per-Cell wall, CPU and peak-RSS telemetry (best effort)."""

import io
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
    # io.open, not open: provenance may have wrapped the builtin.
    # Writing 5 to clear_refs resets VmHWM (Linux >= 4.0), so the next read is
    # this Cell's peak rather than the process's lifetime peak.
    try:
        with io.open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def peak_rss_kb() -> int:
    try:
        with io.open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
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
