"""The benchmark suite's smoke mode (`python -m bench --smoke`: every metric
once, small sizes), run as CI does so the suite cannot rot. It checks that
the run succeeds, that every metric produced a row with samples for each
system it measures, and that the JSON report is valid. It says nothing
about speed."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import profiles  # noqa: E402
from bench.metrics import FAMILIES  # noqa: E402


def _expected_rows():
    return {row.key: family.SYSTEMS for family in FAMILIES for row in family.rows(profiles.SMOKE)}


def test_smoke_run_produces_every_row_and_valid_json(tmp_path):
    path = tmp_path / "smoke.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--json", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(path.read_text())
    assert report["errors"] == []
    rows = {row["key"]: row for row in report["rows"]}
    expected = _expected_rows()
    assert set(rows) == set(expected)
    for key, systems in expected.items():
        for system in systems:
            summary = rows[key]["systems"].get(system)
            assert summary is not None and summary["n"] >= 1, (key, system)
            assert summary["median"] >= 0, (key, system)
        assert rows[key]["label"] in done.stdout
    for row in report["rows"]:
        for target in row["targets"]:
            assert target["met"] in (True, False, None)
