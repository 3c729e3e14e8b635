"""A second OS process for the CAS race: ``python -m tests.integration.updatelog.race_worker``.

Arguments: store URL, worker name, number of versions to win. Prints ``ready`` once the log is
open, waits for a line on stdin (the start signal), races, then prints its ``RaceOutcome``.
"""

from __future__ import annotations

import asyncio
import sys

from tests.integration.updatelog.support import append_until_won, opened, within


async def main(url: str, worker: str, wins: int) -> None:
    async with opened(url) as log:
        await log.latest_version()
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        outcome = await within(append_until_won(log, worker, wins))
    print(outcome.to_json(), flush=True)


if __name__ == "__main__":
    url, worker, wins = sys.argv[1], sys.argv[2], int(sys.argv[3])
    asyncio.run(main(url, worker, wins))
