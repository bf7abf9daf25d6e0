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


class _ProcFile:
    """One /proc/self file kept open across Cells.

    Opening /proc/self/status and clear_refs twice per Cell was a tenth of
    a ``pass`` round trip. Raw os calls, not open(): provenance may have
    wrapped the builtin. A Cell may close the descriptor and reuse its
    number for a file of its own, so the identity recorded at open is
    checked before each use (a write to someone else's file would be
    corruption); on a mismatch the file is opened afresh.
    """

    def __init__(self, path: str, flags: int) -> None:
        self._path = path
        self._flags = flags | os.O_CLOEXEC
        self._fd = -1
        self._identity = None

    def fd(self) -> int:
        fd = self._fd
        if fd >= 0:
            try:
                status = os.fstat(fd)
                if (status.st_dev, status.st_ino) == self._identity:
                    return fd
            except OSError:
                pass
            # Not ours any more: forget it without closing someone else's.
            self._fd = -1
        fd = os.open(self._path, self._flags)
        status = os.fstat(fd)
        self._fd, self._identity = fd, (status.st_dev, status.st_ino)
        return fd


_CLEAR_REFS = _ProcFile("/proc/self/clear_refs", os.O_WRONLY)
_STATUS = _ProcFile("/proc/self/status", os.O_RDONLY)


def reset_peak_rss() -> None:
    # Writing 5 to clear_refs resets VmHWM (Linux >= 4.0), so the next read
    # is this Cell's peak rather than the lifetime peak.
    try:
        os.write(_CLEAR_REFS.fd(), b"5")
    except OSError:
        pass


def peak_rss_kb() -> int:
    try:
        # pread at offset 0 makes procfs render the file anew.
        status = os.pread(_STATUS.fd(), 8192, 0)
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
