"""The run's report: a dict (written as JSON) and the table printed from it.

Per row: median and p90 per system, the openai4s/Jupyter ratio of medians,
and each target the issue sets with the ratio it compares and whether it is
met.
"""

import json
import os

from bench.rows import BYTES, CHARS, RATE, TIME
from bench.stats import summarize

SYSTEM_COLUMNS = ("openai4s", "o4s-sandbox", "jupyter", "plain")


def _median(values, row_key, system):
    summary = values.get(row_key, {}).get(system)
    return None if summary is None else summary["median"]


def _evaluate(target, row, summaries):
    value = _median(summaries, row.key, target.system)
    baseline_label = (
        target.vs_system if target.vs_row == row.key else f"{target.vs_system} {target.vs_row}"
    )
    entry = {
        "text": target.describe(baseline_label),
        "system": target.system,
        "limit": target.limit,
        "informative": target.informative,
        "ratio": None,
        "met": None,
    }
    if value is None:
        return entry
    if target.at_least:
        entry["met"] = value >= target.limit
        return entry
    if target.at_most:
        entry["met"] = value <= target.limit
        return entry
    baseline = _median(summaries, target.vs_row, target.vs_system)
    if baseline:
        entry["ratio"] = value / baseline
        if not target.informative:
            entry["met"] = entry["ratio"] <= target.limit
    return entry


def build(row_specs, samples, profile, machine, duration_s):
    summaries = {
        row.key: {
            system: summarize(row.kind, values)
            for system, values in samples.values.get(row.key, {}).items()
            if values
        }
        for row in row_specs
    }
    rows = []
    for row in row_specs:
        here = summaries[row.key]
        project, jupyter = here.get("openai4s"), here.get("jupyter")
        ratio = None
        if project and jupyter and jupyter["median"] and row.kind != RATE:
            ratio = project["median"] / jupyter["median"]
        rows.append(
            {
                "key": row.key,
                "label": row.label,
                "kind": row.kind,
                "systems": {
                    system: dict(summary, samples=samples.values[row.key][system])
                    for system, summary in here.items()
                },
                "ratio": ratio,
                "targets": [_evaluate(t, row, summaries) for t in row.targets],
            }
        )
    judged = [t for row in rows for t in row["targets"] if not t["informative"]]
    return {
        "profile": profile,
        "machine": machine,
        "duration_s": duration_s,
        "rows": rows,
        "targets_met": sum(1 for t in judged if t["met"]),
        "targets_total": len(judged),
        "errors": samples.errors,
    }


def _scale(kind, reference):
    """(divisor, unit) for printing values of this size."""
    if kind == TIME:
        if reference < 1e-3:
            return 1e-6, "us"
        return (1e-3, "ms") if reference < 1 else (1.0, "s")
    if kind == BYTES:
        return (2**20, "MiB") if reference >= 2**20 else (2**10, "KiB")
    if kind == CHARS:
        return (1e6, "M") if reference >= 1e6 else (1e3, "k")
    return 1.0, "%"


def _cell(kind, summary):
    if summary is None:
        return "-"
    if kind == RATE:
        return f"{summary['median']:.0f}% (n={summary['n']})"
    divisor, unit = _scale(kind, summary["median"])
    median, p90 = summary["median"] / divisor, summary["p90"] / divisor
    digits = 0 if kind == BYTES and unit == "KiB" else (1 if median >= 100 else 2)
    return f"{median:.{digits}f} / {p90:.{digits}f} {unit}"


def _verdict(target):
    if target["informative"]:
        ratio = "-" if target["ratio"] is None else f"{target['ratio']:.2f}x"
        return f"(info) {target['text']}: {ratio}"
    if target["met"] is None:
        return f"{target['text']}: not measured"
    shown = "" if target["ratio"] is None else f" {target['ratio']:.3g}x"
    return f"{target['text']}:{shown} {'met' if target['met'] else 'NOT MET'}"


def render(report):
    header = ["metric (median / p90)", *SYSTEM_COLUMNS, "o4s/jup", "target"]
    lines = []
    for row in report["rows"]:
        cells = [row["label"]]
        cells += [_cell(row["kind"], row["systems"].get(s)) for s in SYSTEM_COLUMNS]
        cells.append("-" if row["ratio"] is None else f"{row['ratio']:.3f}x")
        verdicts = [_verdict(t) for t in row["targets"]] or [""]
        lines.append(cells + [verdicts[0]])
        lines.extend([[""] * (len(cells)) + [v] for v in verdicts[1:]])
    widths = [max(len(line[i]) for line in [header] + lines) for i in range(len(header))]

    def fmt(line):
        return "  ".join(text.ljust(width) for text, width in zip(line, widths)).rstrip()

    machine = report["machine"]
    out = [
        f"openai4s bench, profile {report['profile']['name']}, {machine['timestamp']}, "
        f"{machine['cores']} cores, load {machine['load_start']} -> {machine['load_end']}, "
        f"{report['duration_s']:.0f} s",
        fmt(header),
        fmt(["-" * w for w in widths]),
    ]
    out += [fmt(line) for line in lines]
    out.append(f"targets met: {report['targets_met']} of {report['targets_total']}")
    for error in report["errors"]:
        out.append(
            f"ERROR {error['family']} {error['system']} ({error['where']}): {error['error']}"
        )
    return "\n".join(out)


def write_json(report, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as out:
        json.dump(report, out, indent=1)
        out.write("\n")
