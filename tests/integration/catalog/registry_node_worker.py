"""A registered catalog node in its own OS process, to kill or pause from a test.

Usage: ``python -m tests.integration.catalog.registry_node_worker URL NAME TTL_S``. Starts a
``SyncCatalogNode`` (delay 20 ms, skew 10 ms) registered with a ttl of ``TTL_S`` seconds,
prints ``ready <applied version>``, and runs until its stdin closes (then it closes the node,
deregistering it) or for at most 120 s.
"""

from __future__ import annotations

import sys
import threading

from catalog.runtime.blocking import SyncCatalogNode
from catalog.runtime.options import NodeOptions

LIFETIME_S = 120.0


def main(url: str, name: str, ttl_s: float) -> None:
    node = SyncCatalogNode.open(
        url, name, NodeOptions(delay_ms=20, max_clock_skew_ms=10, registry_ttl_s=ttl_s)
    )
    try:
        print(f"ready {node.node.service.applied.value}", flush=True)
        stdin_closed = threading.Event()

        def wait_for_eof() -> None:
            sys.stdin.read()
            stdin_closed.set()

        # A daemon thread, so a blocked read never keeps the process alive.
        threading.Thread(target=wait_for_eof, daemon=True).start()
        stdin_closed.wait(LIFETIME_S)
    finally:
        node.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
