"""`openai4s-slurm`: a jupyter_client kernel provisioner that runs the
kernel as a Slurm batch job.

The kernelspec's `metadata.kernel_provisioner.config` sets the job's
resources (partition, time, cpus, mem, gres, extra sbatch arguments); what
it leaves unset, Slurm's own SBATCH_* environment variables and the
cluster's defaults decide. The kernel's lifecycle maps onto the job's:

- start: a private directory (see `handoff`), `sbatch`, then poll until the
  job reports its ports (or ends, or `start_timeout` passes: a dead start
  with the reason, and the job cancelled);
- alive: `scontrol show job` (then `sacct`), at most once a second;
- interrupt: by message (the kernelspec's `interrupt_mode`), so no signal
  has to cross to the node; other signals go through `scancel --signal`;
- shutdown: jupyter_client asks the kernel to exit, waits for the job, and
  only then falls back to `scancel` (terminate, kill);
- an end Slurm imposed (scancel, time limit, node failure, preemption) is a
  dead kernel whose reason is logged and kept in `exit_reason`;
- cleanup removes the directory and everything in it;
- with a `lease`, the job ends its kernel once this process stopped
  renewing it (see `lease`): a launcher killed outright leaves no job.
"""

import asyncio
import os
import re
import shlex
import sys
import time

from jupyter_client.provisioning.provisioner_base import KernelProvisionerBase
from traitlets import Float, List, Unicode

from openai4s.slurm import handoff, slurm_cli
from openai4s.slurm import lease as job_lease

_POLL_INTERVAL = 0.25
_STATUS_CACHE_SECONDS = 1.0


class SlurmProvisioner(KernelProvisionerBase):
    partition = Unicode("", config=True, help="sbatch --partition")
    time = Unicode("", config=True, help="sbatch --time (e.g. 1:00:00)")
    cpus = Unicode("", config=True, help="sbatch --cpus-per-task")
    mem = Unicode("", config=True, help="sbatch --mem (e.g. 4G)")
    gres = Unicode("", config=True, help="sbatch --gres (e.g. gpu:1)")
    sbatch_args = List(Unicode(), config=True, help="further sbatch arguments, verbatim")
    ip = Unicode("", config=True, help="address the kernel binds on the node (default: its name's)")
    base_dir = Unicode("", config=True, help="parent of the private per-kernel directories")
    python = Unicode("", config=True, help="interpreter that runs the node-side launcher")
    start_timeout = Float(300.0, config=True, help="seconds to wait for the job to report")
    records_dir = Unicode(
        "",
        config=True,
        help="where each job's store is copied (default: <data dir>/slurm-jobs); 'off': the "
        "kernel writes OPENAI4S_DATA_DIR as seen on the node",
    )
    node_data_base = Unicode(
        "", config=True, help="node-local parent of the job's live store (default: $TMPDIR or /tmp)"
    )
    record_interval = Float(30.0, config=True, help="seconds between copies of the job's store")
    lease = Float(
        0.0,
        config=True,
        help="seconds: the job ends its kernel when this launcher has not renewed its lease for "
        "this long (it was killed); 0: no lease, the job runs until shut down or its time limit",
    )

    job_id = None
    kernel_dir = None
    #: The directory the job copies its store into (see `records`).
    record = None
    exit_reason = None
    #: Seconds from the start of launch_kernel: sbatch returned, the job was
    #: first seen running (when the file did not come first), the job
    #: reported its ports (what bench/slurm_start.py prints).
    timings = None
    _last_status = None
    _last_status_at = 0.0
    _renewer = None

    @property
    def has_process(self):
        return self.job_id is not None

    async def pre_launch(self, **kwargs):
        km = self.parent
        self.exit_reason = None
        self._last_status = None
        base = self.base_dir or handoff.default_base()
        self.kernel_dir = handoff.make_kernel_dir(base, self.kernel_id or "kernel")
        if km is not None and not km.session.key:
            km.session.key = os.urandom(32).hex().encode()
        connection_file = os.path.join(self.kernel_dir, handoff.CONNECTION)
        cmd = self._kernel_argv(connection_file, kwargs.pop("extra_arguments", []))
        return await super().pre_launch(cmd=cmd, **kwargs)

    def _kernel_argv(self, connection_file, extra_arguments):
        values = {
            "connection_file": connection_file,
            "resource_dir": self.kernel_spec.resource_dir,
            "prefix": sys.prefix,
        }
        argv = list(self.kernel_spec.argv) + list(extra_arguments)
        # Only the names jupyter_client substitutes; other braces (a JSON
        # argument) stay as they are.
        pattern = re.compile(r"\{(" + "|".join(values) + r")\}")
        return [pattern.sub(lambda match: values[match.group(1)], arg) for arg in argv]

    async def launch_kernel(self, cmd, **kwargs):
        try:
            return await self._submit_and_wait(cmd, kwargs)
        except BaseException:
            # A start that failed leaves no job and no file behind.
            await self.cleanup()
            self.job_id = None
            raise

    async def _submit_and_wait(self, cmd, kwargs):
        km = self.parent
        handoff.write_private(
            os.path.join(self.kernel_dir, handoff.LAUNCH),
            {
                "key": km.session.key.decode(),
                "signature_scheme": km.session.signature_scheme,
                "kernel_name": getattr(km, "kernel_name", ""),
                "ip": self.ip,
                # A restart asks the node for the ports it had (see node.py).
                "previous": {name: self.connection_info.get(name) for name in ("ip", *_PORT_NAMES)},
                "lease": self.lease,
                **self._record_settings(),
            },
        )
        if self.lease > 0 and self._renewer is None:
            # One renewer for the kernel's life: a restart's new directory
            # is renewed by the same thread.
            self._renewer = job_lease.Renewer(lambda: self.kernel_dir, self.lease)
            self._renewer.start()
        elif self._renewer is not None:
            self._renewer.renew()
        script = self._write_job_script(cmd)
        started = time.monotonic()
        self.job_id = await slurm_cli.submit(
            self._sbatch_options(kwargs), script, kwargs.get("env")
        )
        self.timings = {"submission": time.monotonic() - started}
        self.log.info("openai4s-slurm: kernel %s is Slurm job %s", self.kernel_id, self.job_id)
        ready = await self._wait_until_ready(started)
        self.timings["until ports"] = time.monotonic() - started
        self.record = ready.get("record")
        self.connection_info = {
            **{name: ready[name] for name in _PORT_NAMES},
            "ip": ready["ip"],
            "transport": ready["transport"],
            "signature_scheme": ready["signature_scheme"],
            "kernel_name": ready.get("kernel_name", ""),
            "key": km.session.key,
        }
        return self.connection_info

    def _record_settings(self):
        if self.records_dir == "off":
            return {}
        from openai4s.slurm.records import JOBS_DIR

        data_dir = os.environ.get("OPENAI4S_DATA_DIR") or os.path.join(
            os.path.expanduser("~"), ".openai4s"
        )
        return {
            "records_dir": os.path.abspath(self.records_dir or os.path.join(data_dir, JOBS_DIR)),
            "node_data_base": self.node_data_base,
            "record_interval": self.record_interval,
        }

    def _write_job_script(self, cmd):
        python = self.python or sys.executable
        node = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node.py")
        launcher = [python, node, self.kernel_dir, "--", *cmd]
        path = os.path.join(self.kernel_dir, handoff.JOB_SCRIPT)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o700)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f"#!/bin/sh\nexec {shlex.join(launcher)}\n")
        return path

    def _sbatch_options(self, kwargs):
        options = [
            f"--job-name=openai4s-{(self.kernel_id or 'kernel')[:8]}",
            f"--output={os.path.join(self.kernel_dir, handoff.JOB_LOG)}",
            "--export=ALL",
        ]
        if kwargs.get("cwd"):
            options.append(f"--chdir={kwargs['cwd']}")
        for flag, value in (
            ("--partition", self.partition),
            ("--time", self.time),
            ("--cpus-per-task", self.cpus),
            ("--mem", self.mem),
            ("--gres", self.gres),
        ):
            if value:
                options.append(f"{flag}={value}")
        return options + list(self.sbatch_args)

    async def _wait_until_ready(self, started):
        ready_path = os.path.join(self.kernel_dir, handoff.READY)
        while True:
            if os.path.exists(ready_path):
                return handoff.read_private(ready_path)
            status = await self._status(fresh=True)
            if status.state == "RUNNING":
                self.timings.setdefault("running", time.monotonic() - started)
            if not status.active:
                self._record_end(status)
                raise RuntimeError(f"the kernel's job ended before it started: {self.exit_reason}")
            if time.monotonic() - started > self.start_timeout:
                await slurm_cli.cancel(self.job_id)
                raise RuntimeError(
                    f"Slurm job {self.job_id} did not start its kernel in {self.start_timeout:g} s "
                    f"(state {status.state}, reason {status.reason}); it was cancelled"
                )
            await asyncio.sleep(_POLL_INTERVAL)

    async def _status(self, fresh=False):
        now = time.monotonic()
        if fresh or self._last_status is None or now - self._last_status_at > _STATUS_CACHE_SECONDS:
            self._last_status = await slurm_cli.status(self.job_id)
            self._last_status_at = now
        return self._last_status

    def _record_end(self, status):
        if self.exit_reason is None:
            self.exit_reason = status.describe()
            log = self.log.info if status.state == "COMPLETED" else self.log.warning
            log("openai4s-slurm: kernel %s: %s", self.kernel_id, self.exit_reason)

    async def poll(self):
        if self.job_id is None:
            return 0
        status = await self._status()
        if status.active:
            return None
        self._record_end(status)
        return status.exit_status()

    async def wait(self):
        if self.job_id is None:
            return 0
        while (code := await self.poll()) is None:
            await asyncio.sleep(_POLL_INTERVAL)
        self.job_id = None
        return code

    async def send_signal(self, signum):
        if self.job_id is None:
            return
        if signum == 0:
            await self.poll()
            return
        await slurm_cli.cancel(self.job_id, signal=int(signum))

    async def kill(self, restart=False):
        if self.job_id is not None:
            await slurm_cli.cancel(self.job_id, signal="KILL")
            await slurm_cli.cancel(self.job_id)
            self._last_status = None

    async def terminate(self, restart=False):
        if self.job_id is not None:
            await slurm_cli.cancel(self.job_id)
            self._last_status = None

    async def cleanup(self, restart=False):
        if self.job_id is not None and await self.poll() is None:
            await slurm_cli.cancel(self.job_id)
        if not restart and self._renewer is not None:
            self._renewer.stop()
            self._renewer = None
        if self.kernel_dir:
            import shutil

            shutil.rmtree(self.kernel_dir, ignore_errors=True)
            self.kernel_dir = None

    def get_shutdown_wait_time(self, recommended=5.0):
        # A job's end is seen by polling slurmctld, not by a pidfd.
        return max(recommended, 10.0)

    def get_stable_start_time(self, recommended=10.0):
        return max(recommended, self.start_timeout)

    async def get_provisioner_info(self):
        info = await super().get_provisioner_info()
        info.update(job_id=self.job_id, kernel_dir=self.kernel_dir)
        return info

    async def load_provisioner_info(self, provisioner_info):
        await super().load_provisioner_info(provisioner_info)
        self.job_id = provisioner_info.get("job_id")
        self.kernel_dir = provisioner_info.get("kernel_dir")


_PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
