"""What a kernel's Slurm job runs on the compute node, before the kernel.

    python .../openai4s/slurm/node.py KERNEL_DIR -- KERNEL ARGV...

Reads the launcher's private `launch.json` (the key), chooses five free
ports on this node's address, writes the kernel's 0600 connection file,
starts the kernel with a data directory of its own on the node (`records`:
SQLite's locking holds there), reports the ports in `ready.json`, copies
the store to the launcher's data directory while the kernel runs and once
after it ended, and exits with the kernel's status.

Slurm's signals reach the kernel directly: the provisioner signals with
`scancel --full` and a job's cancel or time limit signals every process of
the job, so this process ignores what the kernel takes (SIGINT, SIGHUP,
SIGUSR1/2) and, on SIGTERM, only waits for the kernel to end before the last
copy of its store.

The ports are found by binding port 0 and closing; the kernel binds them a
few milliseconds later (the same window jupyter_client's local launcher
has). All five are held open together so they differ.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys

if not __package__:
    # Run by path (`python .../openai4s/slurm/node.py`): the job's interpreter
    # need not have the package installed, only the shared source tree.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from openai4s.cli.built_executables import missing_companion  # noqa: E402
from openai4s.slurm import handoff, lease, records  # noqa: E402

#: Seconds a kernel whose lease expired has to end after SIGTERM.
_TERM_WAIT = 10.0


def node_address(requested):
    """The address the kernel binds: the launcher's choice, else this
    node's name as the cluster resolves it (what the login node reaches)."""
    if requested:
        return requested
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


_PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


def free_ports(address, preferred=None):
    """Five ports free on `address`: the `preferred` ones when all of them
    are (a restart on the same node keeps its ports, so a client connected
    to the old kernel reaches the new one, as with a local restart), else
    any. SO_REUSEADDR as ZeroMQ sets it: a port whose last connections
    linger in TIME_WAIT is free for the kernel too."""
    for wanted in ([preferred] if preferred else []) + [[0] * len(_PORT_NAMES)]:
        sockets = []
        try:
            for port in wanted:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sockets.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((address, port))
            return [sock.getsockname()[1] for sock in sockets]
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    raise OSError(f"no free ports on {address}")


def connection_info(launch, address):
    previous = launch.get("previous") or {}
    preferred = None
    if previous.get("ip") == address:
        preferred = [previous.get(name) for name in _PORT_NAMES]
        if not all(isinstance(port, int) and port > 0 for port in preferred):
            preferred = None
    info = dict(zip(_PORT_NAMES, free_ports(address, preferred)))
    info.update(
        ip=address,
        transport="tcp",
        key=launch["key"],
        signature_scheme=launch.get("signature_scheme", "hmac-sha256"),
        kernel_name=launch.get("kernel_name", ""),
    )
    return info


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m openai4s.slurm.node KERNEL_DIR -- KERNEL ARGV...", file=sys.stderr)
        return 2
    directory, command = argv[0], argv[2:]
    # Checked before the ports are reported: a kernel that cannot run ends
    # the job, and the launcher's start fails with how, instead of handing
    # out ports nobody will bind.
    program = shutil.which(command[0])
    if program is None:
        print(f"openai4s.slurm.node: cannot run {command[0]}: not found", file=sys.stderr)
        return 127
    needed = missing_companion(program)
    if needed:
        print(
            f"openai4s.slurm.node: cannot run {command[0]}: {needed} is not beside it",
            file=sys.stderr,
        )
        return 127
    launch = handoff.read_private(os.path.join(directory, handoff.LAUNCH))
    info = connection_info(launch, node_address(launch.get("ip")))
    handoff.write_private(os.path.join(directory, handoff.CONNECTION), info)
    job_id = os.environ.get("SLURM_JOB_ID", "")
    shipper = store_shipper(launch, job_id)
    try:
        return run_kernel(command, info, directory, job_id, shipper, launch.get("lease") or 0)
    finally:
        if shipper is not None:
            shipper.finish()


def run_kernel(command, info, directory, job_id, shipper, lease_s=0):
    """Starts the kernel, reports it in ready.json, and waits for its end
    (or ends it when the launcher's lease expired); returns its exit status
    (128 + N for signal N, as a shell says)."""
    env = dict(os.environ)
    if shipper is not None:
        env["OPENAI4S_DATA_DIR"] = shipper.data_dir
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM):
        # A Python handler, not SIG_IGN: the kernel must not inherit it.
        signal.signal(signum, lambda *_: None)
    try:
        kernel = subprocess.Popen(command, env=env)
    except OSError as error:
        print(f"openai4s.slurm.node: cannot run {command[0]}: {error}", file=sys.stderr)
        return 127
    public = {name: value for name, value in info.items() if name != "key"}
    public.update(node=socket.gethostname(), job_id=job_id, pid=kernel.pid)
    if shipper is not None:
        public.update(record=shipper.record, node_data_dir=shipper.data_dir)
        shipper.start()
    handoff.write_private(os.path.join(directory, handoff.READY), public)
    code = wait_for_kernel(kernel, directory, float(lease_s))
    return code if code >= 0 else 128 - code


def wait_for_kernel(kernel, directory, lease_s):
    """The kernel's exit status. With a lease, a kernel whose launcher
    stopped renewing it (killed, its host lost) is ended: SIGTERM, then
    SIGKILL."""
    if lease_s <= 0:
        return kernel.wait()
    watcher = lease.Watcher(directory, lease_s)
    while True:
        try:
            return kernel.wait(timeout=lease_s / lease.RENEWALS_PER_LEASE)
        except subprocess.TimeoutExpired:
            pass
        if watcher.expired():
            break
    print(
        f"openai4s.slurm.node: the launcher has not renewed its lease for {lease_s:g} s "
        "(it is gone): ending the kernel",
        file=sys.stderr,
    )
    kernel.terminate()
    try:
        return kernel.wait(timeout=_TERM_WAIT)
    except subprocess.TimeoutExpired:
        kernel.kill()
        return kernel.wait()


def store_shipper(launch, job_id):
    """The shipper of this job's store, or None when the launcher keeps the
    store where OPENAI4S_DATA_DIR says (`records_dir` empty)."""
    records_base = launch.get("records_dir")
    if not records_base:
        return None
    return records.StoreShipper(
        records.node_data_dir(launch.get("node_data_base"), job_id),
        records.record_dir(records_base, job_id),
        float(launch.get("record_interval", 30)),
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
