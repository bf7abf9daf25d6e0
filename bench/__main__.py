"""`python -m bench [--quick|--smoke] [--rounds N] [--json PATH] [--only A,B]`

Runs every metric for openai4s, Jupyter's ipykernel and plain Python in one
run, prints the table, and writes the report as JSON (by default to
bench/results/<timestamp>.json). Exits 1 if any measurement failed.
"""

import argparse
import dataclasses
import datetime
import os
import signal
import sys
import time

from bench import machine, profiles, report, runner

_RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[1])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer rounds; under two minutes")
    size.add_argument("--smoke", action="store_true", help="one repetition, small sizes (CI)")
    parser.add_argument("--rounds", type=int, help="override the profile's round count")
    parser.add_argument("--json", help="where to write the report (default bench/results/)")
    parser.add_argument("--only", help="comma-separated metric families to run")
    return parser.parse_args(argv)


def main(argv=None):
    args = _parse(argv)
    profile = profiles.SMOKE if args.smoke else profiles.QUICK if args.quick else profiles.FULL
    if args.rounds:
        profile = profiles.with_rounds(profile, args.rounds)
    families = runner.select(args.only.split(",") if args.only else None)
    # SIGTERM unwinds like Ctrl-C so every kernel is closed on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))

    began = time.monotonic()

    def log(message):
        print(f"[{time.monotonic() - began:6.1f}s] {message}", file=sys.stderr, flush=True)

    info = machine.describe()
    samples, duration = runner.run(profile, families, log)
    info["load_end"] = machine.load()
    row_specs = [row for family in families for row in family.rows(profile)]
    result = report.build(row_specs, samples, dataclasses.asdict(profile), info, duration)
    print(report.render(result))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = args.json or os.path.join(_RESULTS, f"{stamp}.json")
    report.write_json(result, path)
    print(f"report: {path}")
    return 1 if samples.errors else 0


if __name__ == "__main__":
    sys.exit(main())
