"""Command-line interface: `python -m openai4s <command>`.

Only argument parsing lives here; each command is its own module, imported
when chosen so `--help` stays fast and never loads the C++ core.
"""

import argparse
import os

from openai4s import __version__

#: Kernel modes of the Python worker (`--lang r` runs the R worker instead).
_MODES = ("repl", "python", "analysis", "jupyter")
_LANGUAGES = ("python", "r")


def _directory(value):
    path = os.path.abspath(os.path.expanduser(value))
    if not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"not a directory: {value}")
    return path


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m openai4s",
        description="openai4s: a persistent code-execution kernel for agents.",
    )
    parser.add_argument("--version", action="version", version=f"openai4s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_repl(commands)
    _add_run(commands)
    _add_audit(commands)
    from openai4s.cli import jupyter

    jupyter.add_parser(commands)
    from openai4s.cli import mcp

    mcp.add_parser(commands)
    return parser


def _add_repl(commands):
    repl = commands.add_parser(
        "repl",
        help="interactive Python (or R) session on a kernel",
        description=(
            "Start a kernel and read cells from the terminal. When stdin is not "
            "a terminal, run every cell read from it without prompts and exit "
            "non-zero if any cell failed."
        ),
        epilog=(
            "Magics: %vars, %restart, %help, %exit. Ctrl-C interrupts the "
            "running cell (three presses kill the kernel); Ctrl-D leaves."
        ),
    )
    repl.add_argument(
        "--cwd",
        type=_directory,
        default=None,
        metavar="DIR",
        help="working directory of the kernel (default: the current directory)",
    )
    repl.add_argument(
        "--mode",
        choices=_MODES,
        default="repl",
        help="kernel mode of the Python worker (default: %(default)s)",
    )
    repl.add_argument(
        "--lang",
        choices=_LANGUAGES,
        default="python",
        help="the kernel's language: python, or r (Rscript on PATH) (default: %(default)s)",
    )
    repl.add_argument(
        "--no-standby",
        action="store_true",
        help="no standby worker kept ready (%%restart then starts a new one)",
    )


def _add_run(commands):
    run = commands.add_parser(
        "run",
        help="run a script's cells on a kernel, stopping at the first failure",
        description=(
            "Run FILE on a new kernel, one top-level statement per cell (blank "
            "lines inside a function are kept), as `openai4s repl < FILE` does, "
            "but stop at the first failing cell. The exit status is 0 when "
            "every cell succeeded, 1 when one failed."
        ),
    )
    run.add_argument("script", metavar="FILE", help="the script to run")
    run.add_argument(
        "--cwd",
        type=_directory,
        default=None,
        metavar="DIR",
        help="working directory of the kernel (default: the current directory)",
    )
    run.add_argument("--lang", choices=_LANGUAGES, default="python", help="python or r")


def _add_audit(commands):
    audit = commands.add_parser(
        "audit",
        help="list the recent host calls recorded in a store",
        description=(
            "List the newest host.* calls from the dispatcher's audit log "
            "(<data dir>/openai4s.db), one row per call: time, tool, what it was "
            "about (a command with secrets redacted, a path), who decided (a "
            "standing rule, the user, the unattended setting) and the outcome."
        ),
    )
    audit.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="the dispatcher's data directory (default: $OPENAI4S_DATA_DIR or ~/.openai4s)",
    )
    audit.add_argument("--limit", type=_positive, default=20, help="rows (default: 20)")
    audit.add_argument("--frame", default=None, help="only calls made in this frame id")
    audit.add_argument("--tool", default=None, help="only calls of this method, e.g. bash")
    audit.add_argument("--json", action="store_true", help="one JSON object per line")
    audit.add_argument(
        "--job",
        default=None,
        metavar="ID",
        help="only the record of this Slurm job (<data dir>/slurm-jobs/ID)",
    )
    audit.add_argument(
        "--all",
        action="store_true",
        help="every stored row, including each step of a host.bash",
    )


def _positive(value):
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {value}")
    return number


def main(argv=None):
    """Parse `argv` and run the chosen command; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "repl":
        from openai4s.cli.repl import run_repl

        return run_repl(
            cwd=args.cwd or os.getcwd(),
            mode=args.mode,
            lang=args.lang,
            standby=not args.no_standby,
        )
    if args.command == "run":
        from openai4s.cli.repl import run_repl

        return run_repl(cwd=args.cwd or os.getcwd(), lang=args.lang, script=args.script)
    if args.command == "audit":
        from openai4s.cli.audit import run_audit

        return run_audit(
            args.data_dir,
            limit=args.limit,
            frame_id=args.frame,
            method=args.tool,
            as_json=args.json,
            everything=args.all,
            job=args.job,
        )
    if args.command == "jupyter":
        from openai4s.cli import jupyter

        return jupyter.run(args)
    if args.command == "mcp":
        from openai4s.cli import mcp

        return mcp.run(args)
    raise AssertionError(f"unhandled command {args.command!r}")
