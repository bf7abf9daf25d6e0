"""How much of each metric a run takes: full (the default), --quick (under
two minutes) and --smoke (one repetition of everything, small sizes; CI)."""

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Profile:
    name: str
    rounds: int  # each round measures every metric once per system, alternating order
    cold_starts: int  # per system per round
    round_trips: int  # per cell (pass, x = 1, print) per system per round
    rpc_calls: int  # host calls (or input() answers) in the host-RPC cell
    stdout_chars: int  # written by the stdout-flood cell
    stdout_write: int  # characters per write in that cell
    interrupts: int  # per system per round
    interrupt_delay_s: float  # how long the cell runs before interrupt()
    files: int  # small files the file-loop cell reads
    file_reps: int  # per system per round
    kernels: int  # live kernels in the memory probe
    memory_rounds: int  # rounds that run the memory probe (it is slow for Jupyter)
    settle_s: float  # idle time before memory is read
    bare_starts: int  # `python -I -c pass` per round
    pipe_round_trips: int  # raw pipe round trips per round


FULL = Profile(
    name="full",
    rounds=7,
    cold_starts=2,
    round_trips=200,
    rpc_calls=1000,
    stdout_chars=20_000_000,
    stdout_write=10_000,
    interrupts=1,
    interrupt_delay_s=0.3,
    files=2000,
    file_reps=3,
    kernels=10,
    memory_rounds=3,
    settle_s=1.0,
    bare_starts=20,
    pipe_round_trips=2000,
)

QUICK = replace(
    FULL,
    name="quick",
    rounds=3,
    cold_starts=1,
    round_trips=50,
    file_reps=2,
    memory_rounds=1,
    settle_s=0.5,
    bare_starts=10,
    pipe_round_trips=1000,
)

SMOKE = replace(
    FULL,
    name="smoke",
    rounds=1,
    cold_starts=1,
    round_trips=1,
    rpc_calls=20,
    stdout_chars=200_000,
    interrupt_delay_s=0.3,
    files=50,
    file_reps=1,
    kernels=2,
    memory_rounds=1,
    settle_s=0.1,
    bare_starts=1,
    pipe_round_trips=10,
)

PROFILES = {p.name: p for p in (FULL, QUICK, SMOKE)}


def with_rounds(profile, rounds):
    return replace(profile, rounds=rounds, memory_rounds=min(profile.memory_rounds, rounds))
