"""An independent check that the audit log cannot be made to lie either:
a cell's command with a carriage return, ESC sequences, backspaces, a C1
CSI and a bidi override is printed by `openai4s audit` with those escaped
(as every approval prompt shows them), so the row a person reads in a
terminal is the command that was asked for, not the one it paints."""

import json
import subprocess
import sys

from openai4s.kernel import Kernel

#: What the terminal would show in place of the real command.
_DECOY = "echo harmless"
_CELL = (
    "import sys\n"
    "try:\n"
    "    host.bash('rm -rf precious' + chr(13) + chr(27) + '[2K' + chr(8) * 3"
    " + chr(0x9B) + '1m' + chr(0x202E) + '" + _DECOY + "')\n"
    "except PermissionError as exc:\n"
    "    print('refused')\n"
)
_RAW = ("\r", "\x1b", "\x08", "\x9b", "\u202e")


def _audit(data_dir, *args):
    return subprocess.run(
        [sys.executable, "-m", "openai4s", "audit", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_audit_table_shows_a_commands_controls_as_escapes(dispatcher, workspace):
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        assert k.execute(_CELL)["stdout"] == "refused\n"
    table = _audit(dispatcher.cfg.data_dir, "--tool", "bash")
    assert table.returncode == 0, table.stderr
    rows = table.stdout.splitlines()[1:]
    assert len(rows) == 1, table.stdout
    assert not [c for c in _RAW if c in table.stdout], repr(table.stdout)
    assert "rm -rf precious \\x1b[2K\\x08\\x08\\x08\\x9b1m\\u202eecho harmless" in rows[0]
    # The JSON form keeps the stored summary as it is (json escapes C0).
    done = _audit(dispatcher.cfg.data_dir, "--tool", "bash", "--json")
    what = json.loads(done.stdout.splitlines()[0])["what"]
    assert what.startswith("rm -rf precious") and "\x1b[2K" in what and what.endswith(_DECOY)
