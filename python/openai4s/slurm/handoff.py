"""The private per-kernel directory shared by the launcher and its job.

The launcher makes `<base>/<kernel id>-XXXX` (0700) on a filesystem the
compute node also sees (the user's home on a real cluster) and writes
`launch.json` (0600) with the HMAC key in it. The job reads it on the node,
chooses the kernel's ports there, writes the kernel's full connection file
(0600, for the kernel's `-f`) and then `ready.json` (0600, no key: the ports,
the address, the node) that the launcher polls for. So the key is never on a
command line and never in the job's environment, and the ports are the
node's own.

Stdlib only: the job side imports this module before anything else.
"""

import json
import os
import stat

LAUNCH = "launch.json"
CONNECTION = "connection.json"
READY = "ready.json"
JOB_SCRIPT = "job.sh"
JOB_LOG = "job.log"


class HandoffError(RuntimeError):
    """The directory or one of its files is not what the other side wrote."""


def default_base():
    """Where kernel directories go: $OPENAI4S_SLURM_DIR, else
    ~/.openai4s/slurm (home is shared with compute nodes on most clusters)."""
    explicit = os.environ.get("OPENAI4S_SLURM_DIR")
    if explicit:
        return os.path.abspath(explicit)
    return os.path.join(os.path.expanduser("~"), ".openai4s", "slurm")


def make_kernel_dir(base, kernel_id):
    """A fresh 0700 directory for one kernel start; returns its path."""
    import tempfile

    os.makedirs(base, mode=0o700, exist_ok=True)
    return tempfile.mkdtemp(prefix=f"{kernel_id}-", dir=base)


def write_private(path, document):
    """Writes JSON to a new file that only its owner can read, atomically
    (written beside it, then renamed): a poller never sees half a file."""
    staging = f"{path}.tmp"
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    os.rename(staging, path)


def read_private(path):
    """The JSON in `path`, refused when others could read or write it (a
    file someone else made or loosened is not ours to trust)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    with os.fdopen(fd, "r", encoding="utf-8") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise HandoffError(f"{path}: not private to this user (mode {info.st_mode & 0o777:o})")
        return json.load(handle)
