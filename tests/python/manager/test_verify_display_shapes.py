"""An independent check of "host memory stays within the documented bound
for any display pattern" (docs/sandbox.md: a response keeps at most 10,000
displays and 64 MB of them). Not only many tiny displays: displays whose
bundles are made of many tiny entries (MIME keys, or nested metadata) cost
the host far more than their bytes, so they must be charged so too. Through
a real worker and the host in this process (its RSS is the host's)."""

import pytest

from openai4s.kernel import Kernel

#: The documented 64 MB, with room for the host's own allocator slack (the
#: tiny-display flood test allows 96 MiB the same way).
ALLOWED_GROWTH = 128 * 1024 * 1024

# 4,000 displays (under the 10,000 cap), each a bundle of 300 one-byte
# entries: 18 MB charged by their bytes alone, but about 270 MiB held
# (measured: 9,000 of them grew the host by 604 MiB, none dropped).
MANY_KEYS = """
for i in range(4_000):
    display({f"a/{j}": "x" for j in range(300)}, raw=True)
print("flooded")
"""
NESTED_METADATA = """
for i in range(4_000):
    display({"text/plain": "x"}, raw=True, metadata={"m": {str(j): 0 for j in range(300)}})
print("flooded")
"""


def _rss_bytes():
    import resource

    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


@pytest.mark.parametrize("cell", [MANY_KEYS, NESTED_METADATA], ids=["many-keys", "nested-metadata"])
def test_displays_of_many_tiny_entries_keep_the_host_bounded(tmp_path, cell):
    with Kernel(cwd=tmp_path) as k:
        k.execute("pass")
        base = _rss_bytes()
        result = k.execute(cell)
        assert result["error"] is None, result["error"]
        assert result["stdout"] == "flooded\n"
        # The response (held here, as a caller holds it) is within the bound.
        grew = _rss_bytes() - base
        assert grew < ALLOWED_GROWTH, (
            f"host RSS grew by {grew >> 20} MiB holding {len(result.get('displays', []))} "
            f"displays ({result.get('displays_dropped', 0)} dropped)"
        )
        assert k.execute("print('still aligned')")["stdout"] == "still aligned\n"
