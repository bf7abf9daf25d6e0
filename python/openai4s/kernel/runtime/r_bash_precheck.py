"""The R worker's ``host$bash`` precheck (r_bash.R): the Python SDK's own
static precheck (``openai4s.sdk.precheck``), run before any host call, as
``host.bash`` runs it in a Python worker. The command is read from stdin;
the reason it is blocked, if any, is written to stdout (nothing: it passes).

Run by path with ``python3 -I -S`` (isolated, no site: it needs only the
standard library and this package): the package root is found from this
file, not from the environment a cell may have changed.
"""

import os
import sys


def main():
    here = os.path.abspath(__file__)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(here))))
    sys.path.insert(0, root)
    from openai4s.sdk.precheck import precheck

    command = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    sys.stdout.write(precheck(command) or "")


if __name__ == "__main__":
    main()
