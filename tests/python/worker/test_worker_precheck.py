"""The worker's static shell-safety precheck against the shared corpus
(tests/precheck/corpus.jsonl, also run by the host's C++ suite): one rule
table (openai4s/sdk/precheck_rules.json), one expected verdict per command."""

import json
import time
from pathlib import Path

import pytest

from openai4s.sdk import precheck as precheck_module
from openai4s.sdk.precheck import RM_ROOT, TOO_DEEP, precheck

CORPUS = Path(__file__).resolve().parents[2] / "precheck" / "corpus.jsonl"
ENTRIES = [json.loads(line) for line in CORPUS.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["command"][:60] for e in ENTRIES])
def test_the_shared_corpus(entry):
    expected = entry["refused"]
    reason = None if expected is None else precheck_module._REASONS[expected]
    assert precheck(entry["command"]) == reason


def test_every_row_of_the_table_is_in_the_corpus():
    rows = {entry["refused"] for entry in ENTRIES} - {None}
    assert rows >= set(precheck_module._ROW_ORDER) - {"unanalysable"}


def test_non_text_is_no_reason():
    assert precheck(None) is None and precheck(b"rm -rf /") is None


def test_nesting_past_the_depth_limit_is_refused_not_skipped():
    deep = "ls"
    for _ in range(50):
        deep = f"echo $({deep})"
    assert precheck(deep) == TOO_DEEP


def test_it_stays_linear_on_long_option_runs():
    started = time.perf_counter()
    # 20,000 repeats: under a second on an idle machine when linear, while
    # quadratic work would take many minutes (the bound is for a loaded
    # CI machine, not a speed target).
    assert precheck("rm " + "-f " * 20_000 + "-r /") == RM_ROOT
    assert precheck("echo " + "'" * 20_001) is None
    # The fail-closed rows of issue 27 scan each command once too.
    assert precheck("alias " + "a=b " * 20_000) == precheck_module.ALIAS_DEFINITION
    assert precheck("echo | " * 20_000 + "sh") == precheck_module.SHELL_FROM_PIPE
    assert precheck("IFS=,; " + "$c; " * 10_000) == precheck_module.UNRESOLVED_SCRIPT
    # Here-documents are rewritten in one pass, however many there are.
    heredocs = "cat <<A <<B\nx\nA\ny\nB\n" * 5_000 + 'bash <<< "$X"'
    assert precheck(heredocs) == precheck_module.UNRESOLVED_SCRIPT
    assert precheck("bash <<'EOF'\n" + "echo 'a' \"b\"\n" * 5_000 + "EOF") is None
    assert precheck("cat <<EOF\n" * 5_000) is None
    assert time.perf_counter() - started < 30


def test_the_fork_bomb_scan_finds_exactly_what_its_regex_finds():
    # The scan replaced a backtracking regex search (quadratic in a long
    # word); the regex stays here as the oracle.
    import random
    import re

    from openai4s.sdk import precheck

    oracle = re.compile(r"([\w:.]+)\(\)\{\1\|\1&\};\1")
    pieces = [":", "(){", "|", "&};", "a", "b", ".", "x:", "()", "{", "}", ";", "&", "é", "_"]
    samples = [":(){:|:&};:", "x:(){:|:&};:", "f(){f|f&};f;ls", "a(){b|b&};b", "(){|&};"]
    rng = random.Random(7)
    samples += [
        "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(20000)
    ]
    samples += ["echo" + "A" * 5000 + ":(){:|:&};:", "A" * 5000 + "(){" + "A" * 5000]
    found = 0
    for text in samples:
        expected = bool(oracle.search(text))
        assert precheck._has_fork_bomb(text) == expected, text[:80]
        found += expected
    assert found >= 4
