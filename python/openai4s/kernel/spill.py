"""Spill files: the whole text of a Cell stream that went over the cap.

The response keeps a bounded head (what an agent reads); the file keeps
everything the Cell wrote to that stream, head included, so a person can
open the complete output. A file exists only for a stream that overflowed:
it is created on the first write past the cap, never for a normal Cell, and
is bounded (MAX_SPILL_BYTES) so a Cell stuck in a print loop cannot fill
the disk.
"""

import os
import re

#: Workspace-relative directory of spill files.
SPILL_DIR = ".openai4s/outputs"
#: Longest cell-id part of a file name; longer ids keep a prefix and a hash.
_MAX_NAME_CHARS = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
#: Spill files kept per workspace: a new one removes the oldest beyond this,
#: so repeated floods (fresh cell ids each time) do not pile up.
MAX_SPILL_FILES = 16
#: Bound on one spill file. A Cell stuck in a print loop would otherwise fill
#: the workspace's disk at page-cache speed until someone interrupts it.
MAX_SPILL_BYTES = 1 << 30
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW


def safe_name(cell_id) -> str:
    """A file-name stem for ``cell_id``: distinct ids get distinct stems."""
    raw = str(cell_id)
    name = _UNSAFE.sub("_", raw).lstrip(".")
    if name != raw or len(name) > _MAX_NAME_CHARS or not name:
        # Rewritten ids could collide ("a/b" and "a_b"); the hash keeps them
        # apart. Imported here: rare, and off the worker's start-up path.
        import hashlib

        digest = hashlib.sha256(raw.encode("utf-8", "replace")).hexdigest()[:12]
        name = f"{name[:_MAX_NAME_CHARS]}-{digest}" if name else digest
    return name


def _prune(directory: str, keep: int) -> None:
    """Remove all but the ``keep`` newest spill files; best effort."""
    try:
        with os.scandir(directory) as entries:
            found = [
                (entry.stat().st_mtime_ns, entry.path)
                for entry in entries
                if entry.name.endswith((".stdout.txt", ".stderr.txt"))
                and entry.is_file(follow_symlinks=False)
            ]
        found.sort(reverse=True)
        for _, path in found[keep:]:
            os.unlink(path)
    except OSError:
        pass


class SpillFile:
    """One stream's spill file, opened lazily and written incrementally.

    Never raises into the Cell: a workspace that cannot take the file (read
    only, full disk) leaves the stream truncated as it was before spills.
    """

    def __init__(self, root: str, cell_id, stream: str) -> None:
        self._root = root
        self._cell_id = cell_id
        self._stream = stream
        self._fd = None
        self._ended = False
        self._written = 0
        self._limit = MAX_SPILL_BYTES
        #: Workspace-relative path once the file exists, else None.
        self.path = None

    def start(self, head: str) -> bool:
        """Create the file holding ``head``; False if it cannot be created."""
        if self._ended or self._fd is not None:
            return self._fd is not None
        rel = f"{SPILL_DIR}/{safe_name(self._cell_id)}.{self._stream}.txt"
        directory = os.path.join(self._root, SPILL_DIR)
        try:
            os.makedirs(directory, exist_ok=True)
            self._fd = os.open(os.path.join(self._root, rel), _FLAGS, 0o644)
        except OSError:
            self._ended = True
            return False
        _prune(directory, MAX_SPILL_FILES)
        self.path = rel
        self.write(head)
        return True

    def write(self, text: str) -> None:
        fd = self._fd
        if fd is None or not text:
            return
        # "replace" as on the protocol stream: a lone surrogate is not UTF-8.
        data = memoryview(text.encode("utf-8", "replace"))
        room = self._limit - self._written
        full = len(data) > room
        if full:
            note = f"\n...(spill file truncated at {self._limit} bytes)\n".encode()
            data = memoryview(bytes(data[:room]) + note)
        self._written += len(data)
        try:
            while data:
                data = data[os.write(fd, data) :]
        except OSError:
            # Full disk: the file keeps what fit; the response says where.
            self.end()
        if full:
            self.end()

    def end(self) -> None:
        """Close the file; later writes (a lingering thread) are dropped."""
        self._ended = True
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
