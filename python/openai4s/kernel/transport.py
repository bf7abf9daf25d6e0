"""Local worker transport: a process spawned by the C++ supervisor thread.

`PipeTransport(command, *, cwd, env, stderr_tail_factory=None, pass_fds=(),
process_started=None)` starts the command in its own session with SIGINT and
SIGQUIT at their defaults, drains its stderr into a bounded tail, and exposes
`read_line`, `write_line`, `alive`, `interrupt`, `kill`, `close`, `process`
(Popen-like) and `stderr_tail`. The C++ side always keeps a 64 KiB stderr
tail, so `stderr_tail_factory` is accepted for compatibility only.
"""

from openai4s._core import PipeTransport

__all__ = ["PipeTransport"]
