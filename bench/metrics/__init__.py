"""Metric families, in the order a round runs them.

Each module offers NAME, SYSTEMS, rows(profile) and measure(ctx, system) ->
{row key: [samples]}; optionally setup(ctx) (untimed, once per run),
warm_up(ctx, system) (untimed, before that system's first sample; retried
next round if it fails) and rounds(profile) (how many rounds it takes part
in, when not all).
"""

from bench.metrics import (
    cold_start,
    file_loop,
    host_rpc,
    host_rpc_stock,
    interrupt,
    memory,
    physical,
    round_trip,
    stdout_flood,
)

FAMILIES = (
    physical,
    cold_start,
    round_trip,
    host_rpc,
    host_rpc_stock,
    stdout_flood,
    interrupt,
    file_loop,
    memory,
)
