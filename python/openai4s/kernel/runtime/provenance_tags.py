"""The tag store: which artifact versions an object was derived from.

Tags are frozensets stored on the object (attribute ``_openai4s_src``) or,
for objects that refuse attributes, in a bounded side table; a read is
tagged with a *pending source* resolved to a version id (one
``prov_resolve_path`` RPC) only when the tag is needed. The leaf of the
provenance modules: ``provenance_files`` and ``lineage_hooks`` read and
write tags through it, and ``provenance`` installs them.
"""

import os
import sys

_ATTR = "_openai4s_src"
_SIDE_MAX_ENTRIES = 2048
_SIDE_MAX_BYTES = 64 * 1024 * 1024
_EMPTY = frozenset()


class _State:
    host_call = None
    cell_id = None
    root = None
    installed = False
    real_open = None
    real_loads = None
    resolved = {}


state = _State()
_side = {}  # id(obj) -> (obj, tags, approximate bytes)
_side_bytes = [0]


def _off_check():
    name = "OPENAI4S_PROVENANCE_OFF"
    data = getattr(os.environ, "_data", None)
    if isinstance(data, dict):
        key, on = os.environ.encodekey(name), os.environ.encodevalue("1")
        # The raw mapping: read on every wrapped call, where os.environ.get
        # (encode, look up, decode) would be a measurable share of an open().
        return lambda: data.get(key) == on
    return lambda: os.environ.get(name) == "1"


is_off = _off_check()

# The working directory, cached while the worker's audit hook reports every
# os.chdir/os.fchdir (see track_cwd); one getcwd() per open was a measurable
# share of reading a small file. A stale value could only make a relative
# read resolve to another file, which the inode/mtime/size check then drops.
cwd_cache = [None]
_cwd_tracked = [False]
# Whether a Cell is running: the open() wrapper's first, cheapest test.
cell_active = [False]


def track_cwd() -> None:
    """Called once the caller guarantees cwd_changed() on every chdir."""
    cwd_cache[0] = None
    _cwd_tracked[0] = True


def cwd_changed(*_args) -> None:
    cwd_cache[0] = None


def current_cwd() -> str:
    if not _cwd_tracked[0]:
        return os.getcwd()
    cwd = cwd_cache[0]
    if cwd is None:
        cwd = cwd_cache[0] = os.getcwd()
    return cwd


class TaggedStr(str):
    __slots__ = (_ATTR,)


class TaggedBytes(bytes):
    # bytes is variable-size: no non-empty __slots__, so the tag lives in
    # the instance __dict__.
    pass


def _approx_size(obj) -> int:
    nbytes = getattr(type(obj), "nbytes", None)
    try:
        if nbytes is not None:
            return int(obj.nbytes)
        return sys.getsizeof(obj)
    except Exception:
        return 0


def _side_store(obj, tags) -> None:
    key = id(obj)
    old = _side.pop(key, None)
    if old is not None:
        _side_bytes[0] -= old[2]
    size = _approx_size(obj)
    _side[key] = (obj, tags, size)
    _side_bytes[0] += size
    while _side and (len(_side) > _SIDE_MAX_ENTRIES or _side_bytes[0] > _SIDE_MAX_BYTES):
        oldest = next(iter(_side))
        _side_bytes[0] -= _side.pop(oldest)[2]


def store(obj, tags) -> None:
    try:
        object.__setattr__(obj, _ATTR, tags)
    except (AttributeError, TypeError):
        _side_store(obj, tags)


def _as_set(tags) -> frozenset:
    # A file and what was read from it hold their one pending source bare:
    # building a frozenset per read was a measurable share of a small read.
    if type(tags) is frozenset:
        return tags
    if type(tags) is tuple:
        return frozenset((tags,))
    return _EMPTY


def raw_tags(obj) -> frozenset:
    """Tags as stored: version ids and unresolved pending sources."""
    cls = type(obj)
    if cls is TaggedStr or cls is TaggedBytes:
        return _as_set(obj._openai4s_src)
    if cls is not str and cls is not bytes:
        try:
            tags = object.__getattribute__(obj, _ATTR)
        except Exception:
            tags = None
        if tags is not None:
            return _as_set(tags)
    if _side:
        entry = _side.get(id(obj))
        # ids are reused as soon as an object dies: check it is the same one.
        if entry is not None and entry[0] is obj:
            return entry[1]
    return _EMPTY


def _pending_source(path):
    """A not-yet-resolved source: where the file is and what it holds now."""
    raw = os.fsdecode(os.fspath(path))
    status = os.stat(raw)
    cwd = "" if os.path.isabs(raw) else current_cwd()
    return ("file", raw, cwd, status.st_ino, status.st_mtime_ns, status.st_size)


def _resolve(source):
    if isinstance(source, str):
        return source
    _kind, raw, cwd, ino, mtime, size = source
    path = os.path.realpath(os.path.join(cwd, raw) if cwd else raw)
    try:
        status = os.stat(path)
    except OSError:
        return None
    if (status.st_ino, status.st_mtime_ns, status.st_size) != (ino, mtime, size):
        return None
    key = (path, ino, mtime, size)
    if key not in state.resolved:
        version = None
        host_call = state.host_call
        if host_call is not None:
            try:
                version = host_call("prov_resolve_path", [path])
            except Exception:
                version = None
        state.resolved[key] = version if isinstance(version, str) and version else None
    return state.resolved[key]


def _resolved(tags) -> frozenset:
    out = set()
    for source in tags:
        version = _resolve(source)
        if version is not None:
            out.add(version)
    return frozenset(out)


def get_tags(obj) -> frozenset:
    """Version ids ``obj`` was derived from (resolving pending reads)."""
    try:
        return _resolved(raw_tags(obj))
    except Exception:
        return _EMPTY


def set_tags(obj, tags):
    """Tag ``obj`` with version ids; returns ``obj``. Empty tags are a no-op."""
    tags = frozenset(tags or ())
    if tags:
        store(obj, tags)
    return obj


def merge_tags(*objs) -> frozenset:
    merged = set()
    for obj in objs:
        merged |= get_tags(obj)
    return frozenset(merged)


def propagate(result, *sources):
    """Give ``result`` the union of its sources' stored tags, unresolved."""
    tags = _EMPTY
    for source in sources:
        tags = tags | raw_tags(source)
    if tags:
        try:
            store(result, tags)
        except Exception:
            pass
    return result


def set_cell_id(cell_id) -> None:
    """The Cell now running (None between Cells, when nothing is tagged)."""
    state.cell_id = cell_id
    cell_active[0] = cell_id is not None


def _canonical_path(path):
    raw = os.fsdecode(os.fspath(path))
    absolute = os.path.realpath(raw)
    root = os.path.abspath(state.root or os.getcwd())
    display = os.path.relpath(os.path.abspath(raw), root)
    if display == "." or display == ".." or display.startswith(".." + os.sep):
        display = os.path.basename(absolute)
    return absolute, display


def record_write(path, tags) -> None:
    """Tell the host that ``path`` was written from ``tags`` (never raises)."""
    try:
        host_call = state.host_call
        if host_call is None or is_off():
            return
        versions = _resolved(tags)
        if not versions:
            return
        absolute, display = _canonical_path(path)
        record = {
            "path": absolute,
            "filename": display,
            "input_version_ids": sorted(versions),
            "producing_cell_id": state.cell_id,
        }
        host_call("prov_record", [record])
    except Exception:
        return


def tag_read_result(result, path_or_buf):
    """Tag what a reader returned from a path or a proxied file."""
    try:
        if is_off():
            return result
        if raw_tags(path_or_buf):
            return propagate(result, path_or_buf)
        if isinstance(path_or_buf, (str, bytes, os.PathLike)):
            store(result, frozenset((_pending_source(path_or_buf),)))
    except Exception:
        pass
    return result
