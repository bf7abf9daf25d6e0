"""``files_read``: workspace files a Cell actually opened for reading.

A runtime observation through the ``open`` audit event, not source analysis:
a dead branch reports nothing. Every ``open`` in the process reaches the
hook, so its fast path must stay a couple of comparisons.
"""

import os
import posixpath
import sys

MAX_ENTRIES = 256
MAX_PATH_CHARS = 1024
#: Caller frames searched for the Cell's own code before giving up.
MAX_FRAME_DEPTH = 128


def _workspace_relative_read_path(raw_path, *, root, cwd, isabs, normpath, relpath, separator):
    """``raw_path`` relative to ``root`` with ``/`` separators, or None.

    Path functions are injected so Windows rules can be exercised with
    ``ntpath`` on any host; nothing here may import a platform module.
    Symlinks are never resolved: the spelling actually opened is reported
    and the host resolves it.
    """
    if isabs(raw_path):
        absolute = normpath(raw_path)
    else:
        absolute = normpath(cwd.rstrip(separator) + separator + raw_path)
    try:
        rel = relpath(absolute, normpath(root))
    except (OSError, ValueError):
        return None
    if not rel or rel == "." or rel == ".." or isabs(rel):
        return None
    if rel.startswith(".." + separator):
        return None
    return rel.replace(separator, "/")


def _is_read(mode, flags) -> bool:
    if isinstance(mode, str):
        return "r" in mode or "+" in mode
    if isinstance(flags, int):
        return flags & os.O_ACCMODE != os.O_WRONLY
    return False


class ReadObserver:
    """Collects the reads of the Cell whose window is open."""

    def __init__(self, root: str) -> None:
        self.root = posixpath.normpath(root)
        self._root_prefix = self.root if self.root.endswith("/") else self.root + "/"
        self._tag = None
        self._paths = []
        self._seen = set()
        # Read by the audit hook on every event: a one-element list is the
        # cheapest "is a window open" test that stays mutable.
        self.open_window = [False]

    def begin(self, tag: str) -> None:
        self._tag = tag
        self._paths = []
        self._seen = set()
        self.open_window[0] = True

    def end(self) -> list:
        self.open_window[0] = False
        self._tag = None
        paths, self._paths = self._paths, []
        self._seen = set()
        return paths

    def on_open(self, args, _getframe=sys._getframe, _fsdecode=os.fsdecode) -> None:
        """Handle one ``open`` audit event; never raises into the Cell."""
        try:
            path, mode, flags = args
            if isinstance(path, bytes):
                path = _fsdecode(path)
            if not isinstance(path, str) or not path or "\x00" in path:
                return
            if not _is_read(mode, flags):
                return
            # Where first, who second: the path test is the cheaper one, and
            # reads outside the workspace (never recorded) then skip the
            # frame walk entirely.
            rel = self._relative(path)
            if rel is None or len(rel) > MAX_PATH_CHARS or rel in self._seen:
                return
            if not self._opened_by_cell(_getframe):
                return
            self._seen.add(rel)
            self._paths.append(rel)
            if len(self._paths) >= MAX_ENTRIES:
                # Full: nothing more can be recorded, so stop paying for the
                # rest of this Cell's opens.
                self.open_window[0] = False
        except Exception:
            return

    def _opened_by_cell(self, getframe) -> bool:
        # Synchronous attribution: background threads and worker housekeeping
        # never have the Cell's code on their stack.
        tag = self._tag
        frame = getframe(3)  # past this method, on_open and the audit hook
        depth = 0
        while frame is not None and depth < MAX_FRAME_DEPTH:
            if frame.f_code.co_filename == tag:
                return True
            frame = frame.f_back
            depth += 1
        return False

    def _relative(self, path: str):
        # Fast paths for the common spellings, identical to the general rule:
        # a "clean" path (no "//", no "." or ".." segment, no trailing "/")
        # joined to the already-normal cwd is itself normal, so a plain
        # prefix test decides it. Symlinks are never resolved either way.
        # This matters most for reads OUTSIDE the workspace: they record
        # nothing, so they never fill the list and close the window, and the
        # general rule (normpath + relpath) would cost every such open ~5 us.
        if "//" not in path and "/." not in path and not path.endswith("/") and path[0] != ".":
            prefix = self._root_prefix
            if path[0] != "/":
                # getcwd is a system call: paid only by relative paths.
                cwd = os.getcwd()
                if cwd == self.root:
                    return path
                path = cwd + "/" + path
            return path[len(prefix) :] if path.startswith(prefix) else None
        cwd = os.getcwd()
        return _workspace_relative_read_path(
            path,
            root=self.root,
            cwd=cwd,
            isabs=posixpath.isabs,
            normpath=posixpath.normpath,
            relpath=posixpath.relpath,
            separator="/",
        )
