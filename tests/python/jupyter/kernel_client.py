"""A started kernel and its blocking client, for tests that drive the
protocol message by message (jupyter_client's own KernelManager)."""

import time

from jupyter_client.manager import start_new_kernel


class RunningKernel:
    def __init__(self, environment):
        self.environment = environment
        with environment.applied():
            self.km, self.kc = start_new_kernel(
                kernel_name=environment.kernel_name,
                cwd=str(environment.workspace),
                startup_timeout=60,
            )

    def restart(self):
        # jupyter_client relaunches from the environment of the moment: without
        # the test's own, the new kernel would open the user's real data dir.
        with self.environment.applied():
            self.km.restart_kernel(now=False)
        self.kc.wait_for_ready(timeout=60)

    @property
    def pid(self):
        return self.km.provisioner.process.pid

    def execute(self, code, timeout=60, allow_stdin=False):
        """(reply content, [iopub messages of this request])."""
        msg_id = self.kc.execute(code, allow_stdin=allow_stdin)
        return self.collect(msg_id, timeout)

    def collect(self, msg_id, timeout=60):
        reply = self.kc.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=timeout)
        outputs = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            outputs.append(msg)
        return reply["content"], outputs

    def wait_busy(self, msg_id, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
                return msg
        raise AssertionError("the cell never started")

    def wait_busy_state(self, msg_id, timeout=30):
        """Until the request's busy status (its handler has begun)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            if (
                msg["parent_header"].get("msg_id") == msg_id
                and msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "busy"
            ):
                return
        raise AssertionError("the request never began")

    def shutdown(self):
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=False)


def stdout_of(outputs):
    return "".join(
        m["content"]["text"]
        for m in outputs
        if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"
    )
