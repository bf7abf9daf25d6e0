"""The physical limits, measured in the same run: a bare interpreter start
and a raw pipe round trip through a tiny echo child."""

from bench.rows import TIME, Row
from bench.systems import plain

NAME = "physical"
SYSTEMS = ("plain",)


def rows(profile):
    return (
        Row("bare_start", "bare `python -I -c pass` start", TIME),
        Row("pipe_rtt", "raw pipe round trip (echo child)", TIME),
    )


def measure(ctx, system):
    starts = [plain.bare_start_seconds() for _ in range(ctx.profile.bare_starts)]
    with plain.EchoChild() as echo:
        echo.round_trip_seconds()  # the child's first read is still start-up
        trips = [echo.round_trip_seconds() for _ in range(ctx.profile.pipe_round_trips)]
    return {"bare_start": starts, "pipe_rtt": trips}
