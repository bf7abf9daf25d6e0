"""Inputs the REPL answers itself instead of sending them to the kernel.

`exit()` inside the kernel is trapped by the worker (the namespace must
outlive a stray SystemExit), so leaving the REPL is decided here, on the
exact text typed at an empty prompt.
"""

EXIT = "exit"
VARS = "vars"
RESTART = "restart"
HELP = "help"

_EXIT_WORDS = frozenset({"exit", "quit", "exit()", "quit()", "%exit", "%quit"})
_MAGICS = {"%vars": VARS, "%restart": RESTART, "%help": HELP}

HELP_TEXT = """\
Cells run in a persistent Python kernel; variables survive between cells.
The prompt number is the cell number tracebacks show (<kernel:N>).

  %vars        list the kernel's variables (name, type, size, value)
  %restart     replace the kernel with a fresh one (all variables are lost)
  %time stmt   run stmt as a cell and print its CPU and wall time
  %timeit stmt time stmt in the kernel (best of 5 runs)
  !cmd         run cmd with the shell in the kernel's directory
  obj? obj??   describe obj (its signature and docstring); runs no code
  %help        show this help
  %exit        leave (also: exit, quit, exit(), quit(), Ctrl-D)

host.* calls reach the host; one that needs approval asks here:
[y]es once / [a]lways this session (this exact target) / [N]o.

Keys:
  Enter      runs the cell when it is complete; inside a block (a line
             ending in ':') or an open bracket or string it starts a new
             line, and a blank line ends the block; pasted text never runs
             by itself
  Tab        indents at the start of a line, completes elsewhere
  Ctrl-C     at the prompt: discard the cell; while a cell runs: interrupt
             it (press three times to kill a kernel that does not respond)
  Ctrl-D     leave
"""


class UnknownMagic(ValueError):
    """A `%name` the REPL does not know."""


def classify(line):
    """The local command `line` names, or None for ordinary code.

    Raises UnknownMagic for `%anything-else`, which could never compile.
    """
    text = line.strip()
    if text in _EXIT_WORDS:
        return EXIT
    if text in _MAGICS:
        return _MAGICS[text]
    if text.startswith("%"):
        raise UnknownMagic(f"unknown magic {text.split()[0]} (try %help)")
    return None
