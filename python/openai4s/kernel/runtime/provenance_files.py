"""The provenance ``open``: files opened by Cell code carry lineage tags.

Read-only opens are built the way ``io.open`` builds them (FileIO, a buffered
reader, a text wrapper) but from subclasses whose reads return tagged
``str``/``bytes``. They are real io objects -- ``isinstance`` checks, ``with``,
``seek`` all behave -- and building them costs what ``io.open`` costs plus
one ``fstat`` (the identity that keeps a lazily resolved tag honest): a
Cell reading thousands of small files runs within about 1.2x of plain
Python, with no host call. Write-mode opens are
wrapped in a small proxy that reports the tags of what was written when the
file is closed. Between Cells everything gets the plain builtin.
"""

import io
import os

from openai4s.kernel.runtime import provenance_tags

_READ_MODES = frozenset({"r", "rt", "tr", "rb", "br"})
_TaggedStr = provenance_tags.TaggedStr
_TaggedBytes = provenance_tags.TaggedBytes
_text_read = io.TextIOWrapper.read
_text_readline = io.TextIOWrapper.readline
_text_readlines = io.TextIOWrapper.readlines
_text_next = io.TextIOWrapper.__next__
_buffer_read = io.BufferedReader.read
_buffer_read1 = io.BufferedReader.read1
_buffer_readline = io.BufferedReader.readline
_buffer_readlines = io.BufferedReader.readlines
_buffer_next = io.BufferedReader.__next__


def _tag_str(data, source):
    if data:
        data = _TaggedStr(data)
        data._openai4s_src = source
    return data


def _tag_bytes(data, source):
    if data:
        data = _TaggedBytes(data)
        data._openai4s_src = source
    return data


class _TaggedText(io.TextIOWrapper):
    """A read-only text file whose reads are tagged with their source.

    ``_openai4s_src`` holds one pending source (see provenance).
    """

    # A slot, not the instance dict: one allocation fewer per open.
    __slots__ = ("_openai4s_src",)
    # io.open sets ``mode`` on every text file; a class default spares the
    # common case an instance-dict write.
    mode = "r"

    def read(self, size=-1):
        data = _text_read(self, size)
        if data:
            data = _TaggedStr(data)
            data._openai4s_src = self._openai4s_src
        return data

    def readline(self, size=-1):
        return _tag_str(_text_readline(self, size), self._openai4s_src)

    def readlines(self, hint=-1):
        source = self._openai4s_src
        return [_tag_str(line, source) for line in _text_readlines(self, hint)]

    def __next__(self):
        return _tag_str(_text_next(self), self._openai4s_src)


class _TaggedReader(io.BufferedReader):
    """A read-only binary file whose reads are tagged with their source."""

    __slots__ = ("_openai4s_src",)

    def read(self, size=-1):
        data = _buffer_read(self, size)
        if data:
            data = _TaggedBytes(data)
            data._openai4s_src = self._openai4s_src
        return data

    def read1(self, size=-1):
        return _tag_bytes(_buffer_read1(self, size), self._openai4s_src)

    def readline(self, size=-1):
        return _tag_bytes(_buffer_readline(self, size), self._openai4s_src)

    def readlines(self, hint=-1):
        source = self._openai4s_src
        return [_tag_bytes(line, source) for line in _buffer_readlines(self, hint)]

    def __next__(self):
        return _tag_bytes(_buffer_next(self), self._openai4s_src)


try:
    from openai4s.kernel import _fast_open
except ImportError:  # not built: the Python read() above, same behaviour
    _fast_open = None
else:
    # read() is the hot call of a small file; the C one skips a Python frame.
    # The Python ones stay reachable: they define what the C ones must do.
    python_reads = (_TaggedText.read, _TaggedReader.read)
    _fast_open.install_tagged_reads(
        _TaggedText, _text_read, _TaggedStr, _TaggedReader, _buffer_read, _TaggedBytes
    )


class _WriteProxy:
    """A write-mode file that reports the tags of what was written on close."""

    __slots__ = ("_handle", "_path", "_tags", "_done")

    def __init__(self, handle, path) -> None:
        self._handle = handle
        self._path = path
        self._tags = frozenset()
        self._done = False

    def write(self, data):
        tags = provenance_tags.raw_tags(data)
        if tags:
            self._tags = self._tags | tags
        return self._handle.write(data)

    def writelines(self, lines):
        lines = list(lines)
        for line in lines:
            tags = provenance_tags.raw_tags(line)
            if tags:
                self._tags = self._tags | tags
        return self._handle.writelines(lines)

    def _report(self) -> None:
        if not self._done:
            self._done = True
            if self._tags:
                provenance_tags.record_write(self._path, self._tags)

    def close(self):
        try:
            return self._handle.close()
        finally:
            self._report()

    def __enter__(self):
        self._handle.__enter__()
        return self

    def __exit__(self, *exc):
        try:
            return self._handle.__exit__(*exc)
        finally:
            self._report()

    def __iter__(self):
        return iter(self._handle)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __repr__(self):
        return repr(self._handle)


def make_open(real_open, is_off, active=provenance_tags.cell_active, accelerated=True):
    """The builtin ``open`` replacement: tags what Cells read and write.

    Only while a Cell runs (``active``); worker housekeeping and threads left
    running between Cells get the plain builtin, and so does any argument
    combination the tagging path could not reproduce exactly.

    A read-only open is built as ``io.open`` builds it, from the tagging
    subclasses. Its tag is one pending source: the spelling opened plus the
    identity of what the file holds now, resolved to a version id only if
    the data is ever written out.
    """
    python_open = _python_open(real_open, is_off, active)
    if not accelerated:
        return python_open
    return _accelerated(python_open, real_open, is_off, active)


def _python_open(real_open, is_off, active):
    """The wrapper in Python, which defines the rules. Inline and flat on
    purpose: this runs once per file a Cell opens, and a call more is
    measurable on a small file."""
    cached_cwd = provenance_tags.cwd_cache
    current_cwd = provenance_tags.current_cwd
    state = provenance_tags.state
    fstat = os.fstat
    FileIO = io.FileIO
    default_buffer = io.DEFAULT_BUFFER_SIZE

    def open(
        file,
        mode="r",
        buffering=-1,
        encoding=None,
        errors=None,
        newline=None,
        closefd=True,
        opener=None,
    ):
        if not active[0] or type(mode) is not str or isinstance(file, int) or is_off():
            return real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
        if mode not in _READ_MODES:
            handle = real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
            if "w" in mode or "a" in mode or "x" in mode:
                return _WriteProxy(handle, file)
            return handle
        binary = "b" in mode
        if (
            type(buffering) is not int
            or buffering == 0
            or (
                binary
                and (
                    buffering == 1
                    or encoding is not None
                    or errors is not None
                    or newline is not None
                )
            )
        ):
            return real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
        if type(file) is str and file[:1] == "/":
            # An absolute, already-normal path outside the execution root
            # can hold no version of this session (artifacts and provenance
            # records are workspace files), so its reads carry no tag: the
            # plain builtin, at plain speed. Dropping a tag is allowed,
            # inventing one is not.
            root = state.root
            if root and not file.startswith(root + "/") and "/." not in file and "//" not in file:
                return real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
        raw = FileIO(file, "r", closefd, opener)
        try:
            path = file if type(file) is str else os.fsdecode(os.fspath(file))
            status = fstat(raw.fileno())
            cwd = "" if path[:1] == "/" else (cached_cwd[0] or current_cwd())
            source = ("file", path, cwd, status.st_ino, status.st_mtime_ns, status.st_size)
            size = buffering
            if size < 0 or size == 1:
                size = raw._blksize
                if size <= 1:
                    size = default_buffer
            if binary:
                handle = _TaggedReader(raw, size)
            else:
                # encoding None: the wrapper picks the locale encoding just
                # as io.open does.
                handle = _TaggedText(io.BufferedReader(raw, size), encoding, errors, newline)
                if mode != "r":
                    handle.mode = mode
            handle._openai4s_src = source
            return handle
        except BaseException:
            raw.close()
            raise

    open.__doc__ = real_open.__doc__
    open._openai4s_wrapped = real_open
    return open


def _accelerated(python_open, real_open, is_off, active):
    """The common case (a str path, "r"/"rt"/"rb", nothing else) in C; every
    other call goes to the Python wrapper, which defines the rules."""
    try:
        from openai4s.kernel._fast_open import FastOpen
    except ImportError:  # not built: the Python wrapper alone, same behaviour
        return python_open
    return FastOpen(
        fallback=python_open,
        real_open=real_open,
        is_off=is_off,
        active=active,
        state=provenance_tags.state,
        cwd_cache=provenance_tags.cwd_cache,
        current_cwd=provenance_tags.current_cwd,
        text_class=_TaggedText,
        reader_class=_TaggedReader,
        file_io=io.FileIO,
        buffered_reader=io.BufferedReader,
        default_buffer=io.DEFAULT_BUFFER_SIZE,
    )
