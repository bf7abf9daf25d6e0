"""Line editing and history for the interactive REPL (best effort).

Everything here is optional: without readline, or with an unwritable home,
the REPL still works, just without history.
"""

import os

HISTORY_PATH = os.path.join("~", ".openai4s", "repl_history")
_HISTORY_LENGTH = 1000


class History:
    """Loads the history file on `start()` and saves it on `save()`."""

    def __init__(self, path=HISTORY_PATH):
        self.path = os.path.expanduser(path)
        self._readline = None

    def start(self):
        try:
            import readline
        except ImportError:
            return
        self._readline = readline
        # With no completer set, readline completes file names on Tab;
        # in a code prompt Tab should indent.
        readline.parse_and_bind("tab: tab-insert")
        readline.set_history_length(_HISTORY_LENGTH)
        try:
            readline.read_history_file(self.path)
        except OSError:
            pass

    def save(self):
        if self._readline is None:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self._readline.write_history_file(self.path)
        except OSError:
            pass
