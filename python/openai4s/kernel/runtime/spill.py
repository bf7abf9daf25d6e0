"""Spill files: the whole text of a Cell stream that went over the cap.

The response keeps a bounded head (what an agent reads); the file keeps
everything the Cell wrote to that stream, head included, so a person can
open the complete output. A file exists only for a stream that overflowed:
it is created on the first write past the cap, never for a normal Cell, and
is bounded (MAX_SPILL_BYTES) so a Cell stuck in a print loop cannot fill
the disk.

The disk write is kept off the response's critical path: during the Cell
the overflow is only collected in memory (written early only past
MAX_PENDING_CHARS, to bound memory), and the worker calls ``finish()``
after it has sent the response. The file is written under a ``.part`` name
and renamed, so it appears under the name the response gives only once it
is complete, and always before the worker processes its next request (next
Cell, inspect, shutdown). A reader racing the response from outside the
kernel may briefly not find it.
"""

import os
import time

from openai4s.kernel.runtime import threads
from openai4s.kernel.runtime.forks import in_forked_child

#: Workspace-relative directory of spill files.
SPILL_DIR = ".openai4s/outputs"
#: Longest cell-id part of a file name; longer ids keep a prefix and a hash.
_MAX_NAME_CHARS = 64
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
#: Spill files kept per workspace: a new one removes the oldest beyond this,
#: so repeated floods (fresh cell ids each time) do not pile up.
MAX_SPILL_FILES = 16
#: Bound on one spill file. A Cell stuck in a print loop would otherwise fill
#: the workspace's disk at page-cache speed until someone interrupts it.
MAX_SPILL_BYTES = 1 << 30
#: Overflow held in memory before it is written during the Cell: a Cell that
#: prints gigabytes must not hold them all until its end.
MAX_PENDING_CHARS = 32 * 1024 * 1024
#: The same for many tiny writes, whose memory is per object, not per char.
MAX_PENDING_PIECES = 1 << 16
#: Characters joined into one write: few syscalls, a bounded extra copy.
_CHUNK_CHARS = 1 << 20
#: Suffix of a file still being written; renamed away when complete.
PART_SUFFIX = ".part"
_SPILL_ENDINGS = (".stdout.txt", ".stderr.txt")
# A killed worker's ".part" leftovers are pruned like finished files.
_PRUNED_ENDINGS = _SPILL_ENDINGS + tuple(end + PART_SUFFIX for end in _SPILL_ENDINGS)
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW


def safe_name(cell_id) -> str:
    """A file-name stem for ``cell_id``: distinct ids get distinct stems."""
    raw = str(cell_id)
    # Character by character, not re.sub: re (and enum with it) is not
    # imported at the worker's start; an id is a few dozen characters.
    name = "".join(c if c in _SAFE else "_" for c in raw).lstrip(".")
    if name != raw or len(name) > _MAX_NAME_CHARS or not name:
        # Rewritten ids could collide ("a/b" and "a_b"); the hash keeps them
        # apart. Imported here: rare, and off the worker's start-up path.
        import hashlib

        digest = hashlib.sha256(raw.encode("utf-8", "replace")).hexdigest()[:12]
        name = f"{name[:_MAX_NAME_CHARS]}-{digest}" if name else digest
    return name


#: Age after which a ".part" file counts as a killed worker's leftover.
PART_GRACE_NS = 3600 * 10**9


def _prune(directory: str, keep: int, current: str) -> None:
    """Remove all but the ``keep`` newest spill files; best effort.

    ``current`` (a name in ``directory``) is the file just finished: it
    counts as one of the ``keep`` and is never removed.
    """
    try:
        with os.scandir(directory) as entries:
            found = [
                (entry.stat().st_mtime_ns, entry.path)
                for entry in entries
                if entry.name.endswith(_PRUNED_ENDINGS)
                and entry.name != current
                and entry.is_file(follow_symlinks=False)
            ]
        # A recent ".part" may be another kernel's spill in progress (two
        # kernels can share a workspace); only a stale one is a leftover.
        recent = time.time_ns() - PART_GRACE_NS
        found = [
            (mtime, path)
            for mtime, path in found
            if not (path.endswith(PART_SUFFIX) and mtime > recent)
        ]
        found.sort(reverse=True)
        for _, path in found[max(keep - 1, 0) :]:
            os.unlink(path)
    except OSError:
        pass


def _call(action):
    return action()


class SpillFile:
    """One stream's spill file: created on overflow, completed by finish().

    Never raises into the Cell: a workspace that cannot take the file (read
    only, full disk) leaves the stream truncated as it was before spills.
    ``uninterrupted(action)`` runs each write made while the Cell runs; the
    worker's holds a stop until the write is whole, so that stopping a flood
    leaves no hole in its file (the stop is raised right after).
    """

    def __init__(self, root: str, cell_id, stream: str, uninterrupted=_call) -> None:
        self._root = root
        self._cell_id = cell_id
        self._stream = stream
        self._uninterrupted = uninterrupted
        self._fd = None
        self._part = None
        #: No more writes are taken (the Cell ended, or the file stopped).
        self._ended = False
        #: Nothing more goes to the file: it is full or the disk failed.
        self._stopped = False
        # Strs not yet written; appended to by write(), consumed from the
        # front under _lock (a Cell's other threads may write too).
        self._pending = []
        self._pending_chars = 0
        self._written = 0
        self._limit = MAX_SPILL_BYTES
        self._lock = threads.Lock()
        #: Workspace-relative final path once the file exists, else None.
        self.path = None

    def start(self, head: str) -> bool:
        """Create the file (under its ``.part`` name) and queue ``head``;
        False if it cannot be created."""
        if in_forked_child[0]:
            # A child a Cell forked shares this object with the Cell: its
            # own overflow must not create, truncate or write the Cell's file.
            self._ended = True
            self._fd = None
            return False
        if self._ended or self._fd is not None:
            return self._fd is not None
        rel = f"{SPILL_DIR}/{safe_name(self._cell_id)}.{self._stream}.txt"
        part = os.path.join(self._root, rel + PART_SUFFIX)
        try:
            # Synchronous: a workspace that cannot take the file is known now,
            # and the marker then stays plain.
            os.makedirs(os.path.join(self._root, SPILL_DIR), exist_ok=True)
            self._fd = os.open(part, _FLAGS, 0o644)
        except OSError:
            self._ended = True
            return False
        self._part = part
        self.path = rel
        self.write(head)
        return True

    def write(self, text: str) -> None:
        """Queue ``text``; no encoding and no syscall unless memory is due."""
        if self._ended or self._fd is None or not text or in_forked_child[0]:
            return
        pending = self._pending
        pending.append(text)
        self._pending_chars += len(text)
        if self._pending_chars > MAX_PENDING_CHARS or len(pending) > MAX_PENDING_PIECES:
            with self._lock:
                self._write_pending()

    def end(self) -> None:
        """The Cell is over: later writes (a lingering thread) are dropped."""
        self._ended = True

    def finish(self) -> None:
        """Write what is pending, close, rename into place, prune.

        Idempotent and never raises; the file keeps what fit on a full disk.
        """
        self._ended = True
        if in_forked_child[0]:
            return  # the file is the parent's to finish
        with self._lock:
            fd = self._fd
            if fd is None:
                return  # never created, or already finished
            try:
                self._write_pending()
            except Exception:
                pass  # e.g. no memory to encode: the file keeps what was written
            finally:
                self._fd = None
                try:
                    os.close(fd)
                except OSError:
                    pass
            final = os.path.join(self._root, self.path)
            try:
                # Atomic, and replaces the file of an earlier run of this id.
                os.rename(self._part, final)
            except OSError:
                return  # the ".part" file is left for a later prune
            _prune(os.path.dirname(final), MAX_SPILL_FILES, os.path.basename(final))

    def _write_pending(self) -> None:
        # Chunk by chunk, each one whole: a stop raised between two chunks
        # leaves the rest pending, to be written by the next call. The fd is
        # None once finished (a lingering thread may still get here).
        while self._pending and not self._stopped and self._fd is not None:
            self._uninterrupted(self._write_chunk)
        if not self._pending:
            self._pending_chars = 0

    def _write_chunk(self) -> None:
        pending = self._pending
        count = chars = 0
        for piece in pending:
            count += 1
            chars += len(piece)
            if chars >= _CHUNK_CHARS:
                break
        # "replace" as on the protocol stream: a lone surrogate is not UTF-8.
        data = "".join(pending[:count]).encode("utf-8", "replace")
        # Only appends happen elsewhere, so the first pieces are these.
        del pending[:count]
        self._pending_chars -= chars
        room = self._limit - self._written
        if len(data) > room:
            note = f"\n...(spill file truncated at {self._limit} bytes)\n".encode()
            data = data[:room] + note
            self._stop()
        self._written += len(data)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError:
            # Full disk: the file keeps what fit; the response says where.
            self._stop()

    def _stop(self) -> None:
        self._stopped = True
        self._ended = True
        self._pending.clear()
