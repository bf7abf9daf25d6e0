"""What a metric reports: rows of samples per system, and the targets the
issue sets on them (a ratio to another row's median, or a floor)."""

from dataclasses import dataclass
from typing import Optional, Tuple

# Units the report knows how to print.
TIME = "time"  # seconds
BYTES = "bytes"
CHARS = "chars"
RATE = "rate"  # samples are 1/0; reported as a percentage


@dataclass(frozen=True)
class Target:
    """openai4s's median must be <= `limit` times the median of row
    `vs_row` for system `vs_system`; or, with `at_least`, >= `limit`; or,
    with `at_most`, <= `limit` (an absolute bound, e.g. a 0% rate).
    An informative target prints its ratio but does not count as met/unmet."""

    limit: float
    vs_row: Optional[str] = None
    vs_system: Optional[str] = None
    at_least: bool = False
    at_most: bool = False
    informative: bool = False
    system: str = "openai4s"

    def describe(self, baseline_label):
        if self.at_least:
            return f">= {self.limit:g}%"
        if self.at_most:
            return f"<= {self.limit:g}%"
        return f"<= {self.limit:g}x {baseline_label}"


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    kind: str
    targets: Tuple[Target, ...] = ()
