"""`openai4s jupyter install|export|describe`: the `openai4s-python` and
`openai4s-r` kernelspecs.

The kernel itself is the C++ executable `openai4s-jupyter-kernel` (xeus over
the C++ kernel manager); a kernelspec only tells Jupyter clients how to start
it: the executable, the worker's interpreter and where the `openai4s`
package lives (for R, also the R worker's argv, built by
`r_kernel.r_argv` so the spec's shell line has one definition). Installing over an existing spec fails unless `--replace` is
given, so a spec someone else wrote is never lost silently.
"""

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

from openai4s.cli.built_executables import (
    PACKAGE_SOURCE_ROOT,
    find_built,
    is_executable,
    missing_companion,
)

#: kernelspec name and display name per worker language.
KERNELS = {
    "python": ("openai4s-python", "openai4s (Python)"),
    "r": ("openai4s-r", "openai4s (R)"),
}
#: The `--slurm` flags and the provisioner settings they fill (sbatch's
#: --partition, --time, --cpus-per-task, --mem, --gres).
SLURM_RESOURCES = ("partition", "time", "cpus", "mem", "gres")
_EXECUTABLE_NAME = "openai4s-jupyter-kernel"


class JupyterSetupError(RuntimeError):
    """What the user has to fix, said plainly."""


def find_executable(explicit=None):
    """The kernel executable: explicit, $OPENAI4S_JUPYTER_KERNEL, or the
    project's own build (`make setup` builds it when xeus-dev is present)."""
    if explicit:
        if is_executable(explicit):
            return _with_companion(os.path.abspath(explicit))
        raise JupyterSetupError(f"not an executable: {explicit}")
    found = find_built(_EXECUTABLE_NAME, "jupyter_kernel", "OPENAI4S_JUPYTER_KERNEL")
    if found:
        return _with_companion(found)
    raise JupyterSetupError(
        f"{_EXECUTABLE_NAME} was not found; build it with `make setup` "
        "(needs Debian's xeus-dev) or pass --executable"
    )


def _with_companion(path):
    needed = missing_companion(path)
    if needed:
        raise JupyterSetupError(
            f"{path} needs {needed} beside it (both are built by `make jupyter`)"
        )
    return path


def _version_reported_by(argv):
    """What `argv` prints (a version), or None when it cannot say (the
    kernel then asks its worker before answering kernel_info)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    version = done.stdout.strip()
    return version if done.returncode == 0 and version else None


def python_version_of(python):
    """The version `python` runs ("3.11.2"), or None."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return platform.python_version()
    return _version_reported_by([python, "-c", "import platform; print(platform.python_version())"])


def r_version_of(rscript):
    """The version `rscript` runs ("4.2.2"), or None."""
    return _version_reported_by(
        [rscript, "--vanilla", "-e", "cat(R.version$major, R.version$minor, sep = '.')"]
    )


def spec_name(lang, slurm=None):
    """(kernelspec name, display name): `openai4s-python`, or with Slurm
    resources `openai4s-python-slurm`."""
    name, display_name = KERNELS[lang]
    if slurm is None:
        return name, display_name
    return f"{name}-slurm", f"{display_name[:-1]}, Slurm)"


def slurm_provisioner(slurm, python):
    """The kernelspec stanza that makes jupyter_client start the kernel as a
    Slurm job (python/openai4s/slurm); only the resources given are set."""
    config = {key: str(value) for key, value in slurm.items() if value not in (None, "")}
    # The job's node-side launcher runs under the worker's interpreter, a
    # path the compute node must have anyway.
    config["python"] = python
    return {"provisioner_name": "openai4s-slurm", "config": config}


def kernelspec(
    executable=None, python=None, workspace=None, lang="python", rscript=None, slurm=None
):
    """The kernel.json document for `lang` ("python" or "r"); `slurm` (a
    dict of SLURM_RESOURCES, possibly empty) makes it a Slurm kernel."""
    if lang not in KERNELS:
        raise JupyterSetupError(f"unknown language {lang!r}; expected one of {sorted(KERNELS)}")
    python = os.path.abspath(python or sys.executable)
    argv = [
        find_executable(executable),
        "-f",
        "{connection_file}",
        "--python",
        python,
        "--repo-root",
        PACKAGE_SOURCE_ROOT,
    ]
    if lang == "python":
        # Lets the kernel answer kernel_info while its worker still starts;
        # once the worker is up, the kernel reports the worker's own version.
        version = python_version_of(python)
        if version:
            argv += ["--language-version", version]
    if workspace:
        argv += ["--workspace", os.path.abspath(workspace)]
    worker = "openai4s.kernel.worker"
    if lang == "r":
        from openai4s.kernel.r_kernel import find_rscript, r_argv

        try:
            selection = find_rscript(rscript=rscript)
        except RuntimeError as error:
            raise JupyterSetupError(str(error)) from None
        argv += ["--lang", "r", "--worker-argv", json.dumps(r_argv(selection.rscript))]
        version = r_version_of(selection.rscript)
        if version:
            argv += ["--language-version", version]
        worker = "openai4s/kernel/runtime/r_worker.R"
    _, display_name = spec_name(lang, slurm)
    metadata = {"openai4s": {"kind": lang, "worker": worker}}
    if slurm is not None:
        metadata["kernel_provisioner"] = slurm_provisioner(slurm, python)
    return {
        "argv": argv,
        "display_name": display_name,
        "language": "R" if lang == "r" else "python",
        # Both work; the message is the one that reaches a kernel behind a
        # gateway (or on a Slurm node), and it is what this kernel answers on
        # its control channel.
        "interrupt_mode": "message",
        "metadata": metadata,
    }


def kernels_dir(prefix=None, user=False):
    """Where a spec goes: <prefix>/share/jupyter/kernels, the user's Jupyter
    data dir, or (neither) this interpreter's prefix."""
    if prefix and user:
        raise JupyterSetupError("--prefix and --user are exclusive")
    if user:
        from jupyter_core.paths import jupyter_data_dir

        return os.path.join(jupyter_data_dir(), "kernels")
    return os.path.join(os.path.abspath(prefix or sys.prefix), "share", "jupyter", "kernels")


def write_spec_dir(directory, spec):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "kernel.json"), "w", encoding="utf-8") as handle:
        json.dump(spec, handle, indent=2)
        handle.write("\n")


def install(
    prefix=None,
    user=False,
    replace=False,
    executable=None,
    python=None,
    workspace=None,
    lang="python",
    rscript=None,
    slurm=None,
):
    """Installs the spec for `lang`; returns its directory."""
    spec = kernelspec(executable, python, workspace, lang, rscript, slurm)
    name = spec_name(lang, slurm)[0]
    parent = kernels_dir(prefix, user)
    target = os.path.join(parent, name)
    if os.path.lexists(target) and not replace:
        raise JupyterSetupError(
            f"a kernelspec already exists at {target}; pass --replace to overwrite it"
        )
    os.makedirs(parent, exist_ok=True)
    # Written beside the target and renamed into place, so a reader never
    # sees half a spec and a failed write leaves the old one.
    staging = tempfile.mkdtemp(prefix=f".{name}-", dir=parent)
    try:
        write_spec_dir(staging, spec)
        os.chmod(staging, 0o755)
        if os.path.lexists(target):
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            else:
                os.unlink(target)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def jupyter_path_hint(spec_dir):
    """What to export so Jupyter finds a spec installed under a prefix it
    does not search (a `--prefix` install, or this venv's), else None."""
    data_dir = os.path.dirname(os.path.dirname(os.path.abspath(spec_dir)))
    try:
        from jupyter_core.paths import jupyter_path

        searched = {os.path.realpath(path) for path in jupyter_path()}
    except ImportError:
        searched = set()
    if os.path.realpath(data_dir) in searched:
        return None
    return (
        f"Jupyter does not look in {data_dir} by default; to use this kernel run\n"
        f"    export JUPYTER_PATH={data_dir}${{JUPYTER_PATH:+:$JUPYTER_PATH}}\n"
        "or install it for this user instead (--user, as `make jupyter` does)."
    )


def installed_specs():
    """{name: resource dir} of every openai4s kernelspec Jupyter would find."""
    from jupyter_client.kernelspec import KernelSpecManager

    found = KernelSpecManager().find_kernel_specs()
    return {name: path for name, path in found.items() if name.startswith("openai4s")}


def run(args):
    """The `jupyter` command; returns the exit status."""
    try:
        slurm = slurm_resources(args)
        name = spec_name(args.lang, slurm)[0]
        if args.action == "install":
            path = install(
                prefix=args.prefix,
                user=args.user,
                replace=args.replace,
                executable=args.executable,
                python=args.python,
                workspace=args.workspace,
                lang=args.lang,
                rscript=args.rscript,
                slurm=slurm,
            )
            print(f"installed kernelspec {name} in {path}")
            hint = jupyter_path_hint(path)
            if hint:
                print(hint)
        elif args.action == "export":
            spec = kernelspec(
                args.executable, args.python, args.workspace, args.lang, args.rscript, slurm
            )
            if args.output:
                target = os.path.join(args.output, name)
                if os.path.lexists(target) and not args.replace:
                    raise JupyterSetupError(f"{target} exists; pass --replace to overwrite it")
                write_spec_dir(target, spec)
                print(target)
            else:
                json.dump(spec, sys.stdout, indent=2)
                sys.stdout.write("\n")
        elif args.action == "describe":
            describe = {"name": name, "installed": installed_specs()}
            try:
                describe["spec"] = kernelspec(
                    args.executable, args.python, args.workspace, args.lang, args.rscript, slurm
                )
            except JupyterSetupError as error:
                describe["spec_error"] = str(error)
            json.dump(describe, sys.stdout, indent=2)
            sys.stdout.write("\n")
    except JupyterSetupError as error:
        print(f"openai4s jupyter {args.action}: {error}", file=sys.stderr)
        return 1
    return 0


def slurm_resources(args):
    """None without --slurm, else the resources given (a dict, maybe empty)."""
    if not getattr(args, "slurm", False):
        given = [f"--{key}" for key in SLURM_RESOURCES if getattr(args, key, None)]
        if given:
            raise JupyterSetupError(f"{', '.join(given)} only apply with --slurm")
        return None
    return {key: getattr(args, key) for key in SLURM_RESOURCES if getattr(args, key, None)}


def add_slurm_arguments(action):
    action.add_argument(
        "--slurm",
        action="store_true",
        help="run the kernel as a Slurm job (kernelspec openai4s-python-slurm / openai4s-r-slurm)",
    )
    action.add_argument("--partition", help="with --slurm: sbatch --partition")
    action.add_argument("--time", help="with --slurm: sbatch --time (e.g. 2:00:00)")
    action.add_argument("--cpus", help="with --slurm: sbatch --cpus-per-task")
    action.add_argument("--mem", help="with --slurm: sbatch --mem (e.g. 8G)")
    action.add_argument("--gres", help="with --slurm: sbatch --gres (e.g. gpu:1)")


def add_parser(commands):
    jupyter = commands.add_parser(
        "jupyter",
        help="the openai4s Jupyter kernel (kernelspec install/export/describe)",
        description="Install, export or describe the openai4s-python or openai4s-r "
        "Jupyter kernelspec.",
    )
    actions = jupyter.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (
        ("install", "install the kernelspec where Jupyter finds it"),
        ("export", "print the kernel.json (or write a spec dir with --output)"),
        ("describe", "the spec this install would write and the installed ones"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument("--executable", help="the openai4s-jupyter-kernel binary")
        action.add_argument("--python", help="the worker's interpreter (default: this one)")
        action.add_argument("--workspace", help="a fixed workspace (default: the notebook's dir)")
        action.add_argument(
            "--lang",
            choices=sorted(KERNELS),
            default="python",
            help="the worker's language: python (openai4s-python) or r (openai4s-r)",
        )
        action.add_argument("--rscript", help="with --lang r: the Rscript to run (default: found)")
        add_slurm_arguments(action)
        if name == "install":
            where = action.add_mutually_exclusive_group()
            where.add_argument("--prefix", help="install under PREFIX/share/jupyter/kernels")
            where.add_argument("--user", action="store_true", help="install for this user")
        if name in ("install", "export"):
            action.add_argument("--replace", action="store_true", help="overwrite an existing spec")
        if name == "export":
            action.add_argument("--output", help="write DIR/<kernel name>/kernel.json")
    return jupyter
