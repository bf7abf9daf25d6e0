"""A Slurm job's store: live on the node, its record in the user's data dir.

SQLite's locking holds on a local filesystem and not across hosts on a
network filesystem (NFS, Lustre, GPFS), so a kernel's job never writes the
user's shared store. The job's kernel gets a private data directory on the
node (`<node tmp>/openai4s-job-<id>-XXXX`, 0700) and writes its store there,
alone. Its record reaches the data directory the launcher uses, which on a
cluster is in the shared home:

    <data dir>/slurm-jobs/<job id>/openai4s.db     (and artifacts/)

a consistent copy taken with SQLite's online backup (never a byte copy of a
live database), written beside the record and renamed over it, so a reader
on the login node sees the previous copy or the next, never half of one.
Copies are taken every `interval` seconds while the kernel runs (a job
killed without warning, node failure or SIGKILL, leaves the last one) and
once more after the kernel ended (shutdown, scancel, a time limit: Slurm's
SIGTERM, then KillWait seconds before SIGKILL). Only the record file is
ever written on the shared side: one writer (the job), many readers
(`openai4s audit`), and a rename, which every network filesystem makes
atomic for its readers.

Stdlib only: the job side runs this before anything else.
"""

import os
import shutil
import sqlite3
import tempfile
import threading

#: Under the launcher's data directory: one directory per job.
JOBS_DIR = "slurm-jobs"
STORE = "openai4s.db"
ARTIFACTS = "artifacts"


def node_data_dir(base, job_id):
    """A fresh 0700 data directory for the job's kernel on this node."""
    base = base or os.environ.get("TMPDIR") or "/tmp"
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=f"openai4s-job-{job_id or 'local'}-", dir=base)


def record_dir(records_base, job_id):
    path = os.path.join(records_base, job_id or f"pid-{os.getpid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def _copy_store(source, target):
    """A consistent copy of the live store `source` at `target`."""
    staging = f"{target}.tmp"
    if os.path.exists(staging):
        os.unlink(staging)
    # Read-write, as the kernel's own connection: a store whose kernel was
    # killed may have to replay its write-ahead log first.
    live = sqlite3.connect(source, timeout=10)
    try:
        copy = sqlite3.connect(staging)
        try:
            live.backup(copy)
            # One file a reader can open read-only: no -wal beside it.
            copy.execute("PRAGMA journal_mode=DELETE")
        finally:
            copy.close()
    finally:
        live.close()
    os.chmod(staging, 0o600)
    os.rename(staging, target)


def _copy_new_artifacts(source, target):
    """Artifact files the record lacks (stored versions never change)."""
    for root, _dirs, files in os.walk(source):
        relative = os.path.relpath(root, source)
        for name in files:
            into = os.path.normpath(os.path.join(target, relative, name))
            if os.path.exists(into):
                continue
            os.makedirs(os.path.dirname(into), mode=0o700, exist_ok=True)
            shutil.copy2(os.path.join(root, name), f"{into}.tmp")
            os.rename(f"{into}.tmp", into)


class StoreShipper:
    """Copies the node's store to the job's record, now and every
    `interval` seconds, skipping copies when nothing changed."""

    def __init__(self, data_dir, record, interval):
        self.data_dir = data_dir
        self.record = record
        self.interval = interval
        self._seen = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None

    def _state(self):
        stamps = []
        for suffix in ("", "-wal"):
            try:
                info = os.stat(os.path.join(self.data_dir, STORE + suffix))
                stamps.append((info.st_mtime_ns, info.st_size))
            except FileNotFoundError:
                stamps.append(None)
        return tuple(stamps)

    def ship(self):
        """One copy if the store changed since the last; True if the record
        is now current. Failures are reported, never raised: the kernel
        must not die because the shared filesystem hiccupped."""
        with self._lock:
            state = self._state()
            if state[0] is None:
                return True  # no store yet: nothing to keep
            if state == self._seen:
                return True
            try:
                _copy_store(os.path.join(self.data_dir, STORE), os.path.join(self.record, STORE))
                _copy_new_artifacts(
                    os.path.join(self.data_dir, ARTIFACTS), os.path.join(self.record, ARTIFACTS)
                )
            except (OSError, sqlite3.Error) as error:
                print(f"openai4s.slurm: could not copy the store to {self.record}: {error}")
                return False
            self._seen = state
            return True

    def start(self):
        if self.interval > 0:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def _run(self):
        while not self._stop.wait(self.interval):
            self.ship()

    def finish(self):
        """The last copy; the node's directory goes only once it is taken."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.ship():
            shutil.rmtree(self.data_dir, ignore_errors=True)
        else:
            print(f"openai4s.slurm: the store stays on this node in {self.data_dir}")
