"""Kernels as Slurm jobs: the `openai4s-slurm` Jupyter kernel provisioner.

Registered under jupyter_client's `jupyter_client.kernel_provisioners` entry
point, so every jupyter_client application (Jupyter Server, nbclient,
papermill, `jupyter console`) starts an `openai4s-*-slurm` kernelspec as an
`sbatch` job. The pieces, one job each:

- `provisioner`: the provisioner (submit, poll, signal, shut down, clean up);
- `slurm_cli`: the Slurm commands it runs and how their output is read;
- `handoff`: the private per-kernel directory through which the HMAC key
  goes to the job and the kernel's ports come back;
- `node`: what the job runs on the compute node before the kernel itself.

Imported lazily: `import openai4s.slurm` loads neither jupyter_client nor the
C++ core.
"""

__all__ = ["SlurmProvisioner"]


def __getattr__(name):
    if name == "SlurmProvisioner":
        from openai4s.slurm.provisioner import SlurmProvisioner

        return SlurmProvisioner
    raise AttributeError(f"module 'openai4s.slurm' has no attribute {name!r}")
