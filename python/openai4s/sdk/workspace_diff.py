"""Before/after snapshots of the workspace around a ``host.bash`` command."""

import os

MAX_FILES = 5000
MAX_LISTED = 100
SKIPPED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
_SECRET_NAMES = frozenset({".env", "id_rsa", "id_ed25519", ".netrc", ".pgpass"})


def snapshot(root):
    """({relative path: (mtime_ns, size)}, truncated); symlinks are skipped."""
    files, truncated = {}, False
    pending = [root]
    while pending and not truncated:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if entry.name not in SKIPPED_DIRS:
                        pending.append(entry.path)
                    continue
                status = entry.stat()
            except OSError:
                continue
            if len(files) >= MAX_FILES:
                truncated = True
                break
            files[os.path.relpath(entry.path, root)] = (status.st_mtime_ns, status.st_size)
    return files, truncated


def _looks_secret(path):
    name = os.path.basename(path).lower()
    return (
        name in _SECRET_NAMES
        or name.startswith(".env.")
        or name.endswith(".pem")
        or name.endswith(".key")
    )


def _listed(paths):
    shown = ["<secret-path>" if _looks_secret(path) else path for path in sorted(paths)]
    return shown[:MAX_LISTED], len(shown) > MAX_LISTED


def diff(before, after):
    """{created, modified, deleted (<= 100 paths each), truncated}."""
    (old, old_truncated), (new, new_truncated) = before, after
    created, cut_created = _listed(path for path in new if path not in old)
    deleted, cut_deleted = _listed(path for path in old if path not in new)
    modified, cut_modified = _listed(path for path in new if path in old and new[path] != old[path])
    truncated = old_truncated or new_truncated or cut_created or cut_deleted or cut_modified
    return {"created": created, "modified": modified, "deleted": deleted, "truncated": truncated}
