"""The raw-pipe physical limit: echo every read straight back, nothing else.

Run as `python -I echo_child.py`; the bench writes a short line to its stdin
and times until the same bytes come back on its stdout.
"""

import os


def main():
    while True:
        data = os.read(0, 65536)
        if not data:
            return
        os.write(1, data)


if __name__ == "__main__":
    main()
