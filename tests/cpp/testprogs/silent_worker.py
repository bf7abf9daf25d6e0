"""A worker that starts and never answers the attestation handshake.

The KernelManager integration tests use it to run into the handshake
deadline with a real process: the manager must kill it and report the
deadline instead of waiting forever.
"""

import time

time.sleep(60)
