"""A job's lease on its launcher: a kernel whose launcher died ends.

A Slurm job outlives the process that submitted it. When that process is
gone for good (the MCP server and its bridge killed outright, a Jupyter
server's host lost), nobody will ever shut the kernel down, and the job
would hold its node until its time limit. With a lease (the provisioner's
`lease`, in seconds), the launcher renews a file in the private kernel
directory a few times per lease, and the job's `node.py` ends the kernel
once the file has not changed for a whole lease.

The job judges change by its own clock (it compares the file's content,
a counter, not its mtime against the node's time), so the login and
compute nodes' clocks may disagree.

Stdlib only: the job side imports this module before anything else.
"""

import os
import threading
import time

LEASE = "lease"
#: Renewals per lease: several, so a late one or two do not end a kernel.
RENEWALS_PER_LEASE = 4


class Renewer:
    """The launcher's side: a daemon thread that renews the lease in
    whatever directory `directory()` names (a restart moves it), until
    `stop()` or the process ends (the point: a killed launcher renews
    nothing)."""

    def __init__(self, directory, lease):
        self.directory = directory
        self.interval = lease / RENEWALS_PER_LEASE
        self.stopped = threading.Event()
        self.count = 0
        self.thread = threading.Thread(target=self._run, name="slurm-lease", daemon=True)

    def start(self):
        self.renew()
        self.thread.start()

    def stop(self):
        self.stopped.set()

    def renew(self):
        directory = self.directory()
        if not directory or not os.path.isdir(directory):
            return
        self.count += 1
        path = os.path.join(directory, LEASE)
        temporary = path + ".new"
        try:
            with open(temporary, "w", encoding="ascii") as handle:
                handle.write(str(self.count))
            os.replace(temporary, path)
        except OSError:
            pass  # the directory went (a restart, the cleanup): next time

    def _run(self):
        while not self.stopped.wait(self.interval):
            self.renew()


class Watcher:
    """The job's side: `expired()` once the lease file has not changed for
    `lease` seconds of this node's clock (a missing file counts as
    unchanged: the launcher removes the directory only after the kernel
    was shut down)."""

    def __init__(self, directory, lease, clock=time.monotonic):
        self.path = os.path.join(directory, LEASE)
        self.lease = lease
        self.clock = clock
        self.seen = self._read()
        self.changed_at = clock()

    def _read(self):
        try:
            with open(self.path, encoding="ascii") as handle:
                return handle.read()
        except OSError:
            return None

    def expired(self):
        now = self._read()
        if now is not None and now != self.seen:
            self.seen = now
            self.changed_at = self.clock()
        return self.clock() - self.changed_at > self.lease
