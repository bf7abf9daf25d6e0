"""The frame types src/proto/frame_types.h lists, read from the header, so a
worker's table (Python or R) can be held to the host's set."""

import re
from pathlib import Path

HEADER = Path(__file__).resolve().parents[3] / "src" / "proto" / "frame_types.h"


def listed(array: str) -> set:
    """The type strings of one of the header's arrays (kHostToWorker, ...)."""
    header = HEADER.read_text(encoding="utf-8")
    constants = dict(re.findall(r'std::string_view (k\w+) = "(\w+)";', header))
    body = re.search(rf"{array} = \{{(.*?)\}};", header, re.S).group(1)
    return {constants[name] for name in re.findall(r"k\w+", body)}
