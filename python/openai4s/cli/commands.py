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

  %vars      list the kernel's variables (name, type, size, value)
  %restart   replace the kernel with a fresh one (all variables are lost)
  %help      show this help
  %exit      leave (also: exit, quit, exit(), quit(), Ctrl-D)

Keys:
  Enter      runs a complete statement; a block (a line ending in ':')
             continues on '...:' until a blank line, an open bracket or
             string until it closes
  Ctrl-C     at the prompt: discard the line; while a cell runs: interrupt it
             (press three times to kill a kernel that does not respond)
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
