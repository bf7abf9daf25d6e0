"""Helpers for the REPL tests: process probes and a tmux-driven terminal."""

import os
import subprocess
import time


def gone(pid, timeout=10.0):
    """True once `pid` no longer exists (or is a zombie awaiting its reaper)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def descendants(pid):
    """Every live process under `pid`. Host pids: the worker may sit in a
    sandbox's pid namespace, where its own `os.getpid()` means nothing here."""
    found, pending = [], [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as children:
                    pids = [int(child) for child in children.read().split()]
            except FileNotFoundError:
                continue
            found.extend(pids)
            pending.extend(pids)
    return found


class TmuxPane:
    """One tmux server on a private socket running one program.

    The program runs under `sh`, which writes its exit status to a file: on
    this machine tmux now and then never reaps a pane's exited process
    (seen with a bare `python3 -c input()` too), so `pane_dead_status` is
    not a reliable witness.
    """

    def __init__(self, directory):
        self.socket = str(directory / "tmux.sock")
        self.status_path = directory / "exit-status"

    def tmux(self, *args):
        return subprocess.run(
            ["tmux", "-S", self.socket, *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout

    def start(self, argv, width=120, height=50):
        # The trap keeps sh alive through the test's Ctrl-C (it shares the
        # program's process group); a handler, unlike an ignored signal, is
        # not inherited, so the program still gets SIGINT as usual.
        script = 'trap : INT; "$@"; echo "$?" > "$STATUS_PATH"'
        command = ["env", f"STATUS_PATH={self.status_path}", "sh", "-c", script, "sh", *argv]
        # -f /dev/null: the user's tmux configuration stays out of the test.
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "repl")
        self.tmux("resize-window", "-t", "repl", "-x", str(width), "-y", str(height))
        self.tmux("respawn-pane", "-k", "-t", "repl", *command)

    def program_pid(self):
        """The pid of the program `sh` runs (its only child)."""
        shell = self.tmux("display-message", "-p", "-t", "repl", "#{pane_pid}").strip()
        children = f"/proc/{shell}/task/{shell}/children"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(children) as listing:
                pids = listing.read().split()
            if pids:
                return int(pids[0])
            time.sleep(0.05)
        raise AssertionError("the program under tmux never started")

    def exit_status(self):
        try:
            return int(self.status_path.read_text())
        except (FileNotFoundError, ValueError):
            return None

    def send(self, *keys):
        self.tmux("send-keys", "-t", "repl", *keys)

    def text(self):
        return self.tmux("capture-pane", "-p", "-J", "-S", "-500", "-t", "repl")

    def wait_for(self, predicate, what, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text()
            if predicate(text):
                return text
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; the pane shows:\n{self.text()}")

    def wait_for_text(self, needle, timeout=15.0):
        return self.wait_for(lambda text: needle in text, repr(needle), timeout)

    def kill_server(self):
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=10)
