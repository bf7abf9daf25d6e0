"""`openai4s mcp`: the MCP server, for agents (Claude Code, Codex, Cursor, ...).

The server is the C++ executable `openai4s-mcp` (no Python in its
process); this command only finds it and passes what it cannot know: the
workers' interpreter, where the `openai4s` package lives, and the R
worker's argv (built by `r_kernel.r_argv`, its one definition).
"""

import json
import os
import shutil
import sys

from openai4s.cli.built_executables import PACKAGE_SOURCE_ROOT, find_built, is_executable

_EXECUTABLE_NAME = "openai4s-mcp"


def find_executable(explicit=None):
    """The server: explicit, $OPENAI4S_MCP_SERVER, the project's build, or PATH."""
    if is_executable(explicit):
        return os.path.abspath(explicit)
    return find_built(_EXECUTABLE_NAME, "mcp_server", "OPENAI4S_MCP_SERVER")


def add_parser(commands):
    mcp = commands.add_parser(
        "mcp",
        help="serve kernels to agents over the Model Context Protocol (stdio or HTTP)",
        description=(
            "Run the openai4s MCP server on stdin/stdout (the protocol only on "
            "stdout, logs on stderr). Tools: create_kernel, list_kernels, execute, "
            "get_execution, interrupt, list_variables, read_file, write_file, "
            "restart_kernel, shutdown_kernel. End of input, SIGTERM or SIGINT "
            "shuts every kernel down."
        ),
    )
    mcp.add_argument("--executable", help="the openai4s-mcp binary (default: the build's)")
    mcp.add_argument("--python", help="the workers' interpreter (default: this one)")
    mcp.add_argument("--rscript", help="the Rscript R kernels run (default: found; none: no R)")
    mcp.add_argument(
        "--data-dir",
        help="store, audit log, artifacts and default workspaces "
        "(default: $OPENAI4S_DATA_DIR or ~/.openai4s)",
    )
    mcp.add_argument(
        "--workspace-root",
        metavar="DIR",
        help="a workspace given to create_kernel must lie under DIR "
        "(default: <data dir>/agent-workspaces)",
    )
    mcp.add_argument(
        "--max-kernels", type=int, default=32, help="kernels at once (default: %(default)s)"
    )
    mcp.add_argument(
        "--idle-timeout",
        type=int,
        default=3600,
        metavar="SECONDS",
        help="shut a kernel down after this long unused; 0 = never (default: %(default)s)",
    )
    mcp.add_argument(
        "--pool",
        metavar="LANG=N[,LANG=N]",
        help="started workers kept ready for create_kernel, per language (python, r); "
        "counted against --max-kernels (default: python=2; python=0 turns it off)",
    )
    mcp.add_argument(
        "--no-standby",
        action="store_true",
        help="no standby worker per kernel (restart_kernel then starts a new one)",
    )
    _add_http_arguments(mcp)
    _add_slurm_arguments(mcp)
    return mcp


def _add_http_arguments(mcp):
    mcp.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio "
        "(HOST default 127.0.0.1)",
    )
    mcp.add_argument(
        "--token-file",
        metavar="FILE",
        help="the bearer token HTTP clients send (created, mode 0600, with a random "
        "token when missing; default <data dir>/mcp-token)",
    )
    mcp.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="an HTTP Origin accepted besides the loopback ones (repeatable)",
    )
    mcp.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --http bind an address other than loopback",
    )


def _add_slurm_arguments(mcp):
    mcp.add_argument(
        "--slurm",
        action="store_true",
        help='create_kernel may ask for engine "slurm": the kernel runs as a Slurm job '
        "(kernelspecs from `openai4s jupyter install --slurm`)",
    )
    mcp.add_argument(
        "--engine",
        choices=("local", "slurm"),
        help="create_kernel's engine when it names none (default: local)",
    )


def server_argv(args):
    """The executable's argv for parsed `args`; raises SystemExit if it is missing."""
    executable = find_executable(args.executable)
    if executable is None:
        raise SystemExit(f"{_EXECUTABLE_NAME} was not found; build it with `make setup`")
    argv = [
        executable,
        "--python",
        os.path.abspath(args.python or sys.executable),
        "--repo-root",
        PACKAGE_SOURCE_ROOT,
        "--max-kernels",
        str(args.max_kernels),
        "--idle-timeout",
        str(args.idle_timeout),
    ]
    for flag, value in (("--data-dir", args.data_dir), ("--workspace-root", args.workspace_root)):
        if value:
            argv += [flag, os.path.abspath(os.path.expanduser(value))]
    if args.pool:
        argv += ["--pool", args.pool]
    if args.no_standby:
        argv.append("--no-standby")
    if args.http:
        argv += ["--http", args.http]
    if args.token_file:
        argv += ["--token-file", os.path.abspath(os.path.expanduser(args.token_file))]
    for origin in args.allow_origin:
        argv += ["--allow-origin", origin]
    if args.allow_remote:
        argv.append("--allow-remote")
    if args.slurm:
        argv.append("--slurm")
    if args.engine:
        argv += ["--engine", args.engine]
    from openai4s.kernel.r_kernel import find_rscript, r_argv

    try:
        selection = find_rscript(rscript=args.rscript)
    except RuntimeError:
        selection = None  # no R: create_kernel(language="r") says so
    if selection is not None:
        argv += ["--r-worker-argv", json.dumps(r_argv(selection.rscript))]
    return argv


def run(args):
    argv = server_argv(args)
    # The server replaces this process: the client's pipes and signals
    # reach it directly, and no Python stays in between.
    os.execv(argv[0], argv)
