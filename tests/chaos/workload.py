"""Client load for the chaos tests: random DDL from many threads, reads at fixed timestamps.

Every DDL goes through the REST client (``CatalogClient``: failover between nodes, retries
that reuse the request id); a recording transport notes every HTTP attempt, so the history
says which node answered and where a request was retried. Reads of the whole catalog go to
one node each, without failover, so a read records what that node served.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import httpx

from api.client import CatalogApiError, CatalogClient
from api.client.errors import (
    ResponseFormatError,
    ServerError,
    UnavailableError,
    UnreachableError,
    WaitTimeoutError,
)
from api.client.retries import RetryPolicy
from catalog.catalog import Catalog
from catalog.commands import CommandBase
from tests.chaos.history import Attempt, History, Operation, Outcome, Read
from tests.random_ddl import random_batch

# Failures after which the request may or may not have been applied.
_UNKNOWN = (UnreachableError, UnavailableError, WaitTimeoutError, ServerError, ResponseFormatError)
JOIN_TIMEOUT_S = 60.0


class RecordingTransport(httpx.HTTPTransport):
    """An HTTP transport that remembers every attempt's base URL and status or error."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts: list[Attempt] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request, noting where it went and how it ended."""
        base = f"{request.url.scheme}://{request.url.netloc.decode()}"
        try:
            response = super().handle_request(request)
        except httpx.TransportError as e:
            self.attempts.append(Attempt(base, type(e).__name__))
            raise
        self.attempts.append(Attempt(base, str(response.status_code)))
        return response

    def take(self) -> tuple[Attempt, ...]:
        """Return the attempts noted since the last call, and forget them."""
        taken, self.attempts = tuple(self.attempts), []
        return taken


def read_catalog(http: httpx.Client, url: str, params: dict[str, str]) -> tuple[int, str] | None:
    """Return ``(version, sha256 of the body)`` of ``GET /v1/catalog`` on one node.

    Returns None when the node cannot be reached (it may be down on purpose).

    Raises:
        AssertionError: the node answered with an error.
    """
    try:
        response = http.get(url + "/v1/catalog", params=params)
    except httpx.TransportError:
        return None
    if response.status_code in (503, 410):  # restarting or store unavailable; compacted
        return None
    assert response.status_code == 200, f"{url}/v1/catalog {params}: {response.text}"
    return int(json.loads(response.content)["version"]), hashlib.sha256(
        response.content
    ).hexdigest()


def node_now(http: httpx.Client, url: str) -> int | None:
    """Return the node's hybrid clock reading, None if it cannot be reached."""
    try:
        response = http.get(url + "/v1/time")
    except httpx.TransportError:
        return None
    if response.status_code != 200:
        return None
    return int(response.json()["now"])


@dataclass
class LoadSettings:
    """What the load does.

    Attributes:
        clients: DDL client threads.
        seed: seeds every client's random generator.
        resend_fraction: share of acknowledged requests re-sent (same request id) to
            another node, as a client would after losing the answer.
        visibility_fraction: share of acknowledged requests followed by a read at "now" on
            every other node, which must include the new version (invariant 6).
        read_interval_s: how often a reader pins a timestamp and reads it on every node.
        timeout_s: the client's timeout per attempt.
        retry: the client's retry policy.
    """

    clients: int = 16
    seed: int = 0
    resend_fraction: float = 0.05
    visibility_fraction: float = 0.0
    read_interval_s: float = 0.5
    timeout_s: float = 10.0
    retry: RetryPolicy = field(
        default_factory=lambda: RetryPolicy(max_attempts=10, backoff_s=0.1, backoff_cap_s=1.0)
    )


class Workload:
    """Client threads of random DDL plus a reader of fixed timestamps, until ``stop``.

    Use as a context manager: the threads start on entry and are stopped and joined on exit.

    Args:
        urls: every catalog node's base URL.
        history: where operations and reads are recorded.
        settings: what the load does.
    """

    def __init__(self, urls: Sequence[str], history: History, settings: LoadSettings) -> None:
        self.urls = list(urls)
        self.history = history
        self.settings = settings
        self._stop = threading.Event()
        self._latest: Catalog | None = None
        self._threads: list[threading.Thread] = []
        self._errors: list[BaseException] = []
        self.pinned: list[int] = []

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> Workload:
        """Start the catalog refresher, the reader and the client threads."""
        with CatalogClient(self.urls, retry=self.settings.retry) as client:
            self._latest = client.catalog()
        targets: list[tuple[Callable[[], None], str]] = [
            (self._refresh, "refresh"),
            (self._read_fixed_times, "reader"),
        ]
        targets += [(self._client_loop(k), f"client-{k}") for k in range(self.settings.clients)]
        for target, name in targets:
            thread = threading.Thread(target=self._guard(target), name=f"chaos-{name}")
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        """Stop every thread and wait for them (bounded).

        Raises:
            RuntimeError: a thread did not stop in time, or one failed (its error chained).
        """
        self._stop.set()
        deadline = time.monotonic() + JOIN_TIMEOUT_S
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in self._threads if t.is_alive()]
        if alive:
            raise RuntimeError(f"load threads did not stop: {alive}")
        if self._errors:
            raise RuntimeError(f"{len(self._errors)} load thread(s) failed") from self._errors[0]

    def sleep(self, seconds: float) -> None:
        """Let the load run for ``seconds`` (returns early if a thread failed)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self._errors:
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        if self._errors:
            raise RuntimeError("a load thread failed") from self._errors[0]

    def __enter__(self) -> Workload:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        if exc_info[1] is None:
            self.stop()
            return
        with contextlib.suppress(RuntimeError):  # the original failure says more
            self.stop()

    def _guard(self, target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as e:
                self._errors.append(e)
                self._stop.set()
                raise

        return run

    # -- threads --------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Keep a recent catalog for the clients to draw commands against."""
        with CatalogClient(self.urls, timeout=5.0, retry=self.settings.retry) as client:
            while not self._stop.wait(0.2):
                try:
                    self._latest = client.catalog()
                except CatalogApiError:
                    continue  # every node busy or down for a moment: keep the old one

    def _client_loop(self, k: int) -> Callable[[], None]:
        def loop() -> None:
            rng = random.Random(self.settings.seed * 1000 + k)
            rotated = self.urls[k % len(self.urls) :] + self.urls[: k % len(self.urls)]
            transport = RecordingTransport()
            with (
                CatalogClient(
                    rotated,
                    timeout=self.settings.timeout_s,
                    retry=self.settings.retry,
                    transport=transport,
                ) as client,
                httpx.Client(timeout=self.settings.timeout_s) as http,
            ):
                for i in range(1_000_000):
                    if self._stop.is_set():
                        return
                    assert self._latest is not None
                    batch = random_batch(rng, self._latest)
                    op = self._execute(client, transport, batch, f"c{k}-{i}")
                    if op.outcome is not Outcome.OK:
                        continue
                    if rng.random() < self.settings.resend_fraction:
                        self._resend(client, transport, batch, op)
                    if rng.random() < self.settings.visibility_fraction:
                        self._check_visible(http, op)

        return loop

    def _execute(
        self,
        client: CatalogClient,
        transport: RecordingTransport,
        batch: list[CommandBase],
        request_id: str,
    ) -> Operation:
        started = time.monotonic()
        ops = tuple(str(getattr(c, "op", type(c).__name__)) for c in batch)
        try:
            result = client.execute(batch, request_id=request_id)
        except _UNKNOWN as e:
            op = self._operation(request_id, ops, Outcome.UNKNOWN, started, transport, e.code)
        except CatalogApiError as e:
            op = self._operation(request_id, ops, Outcome.REFUSED, started, transport, e.code)
        except httpx.HTTPError as e:
            op = self._operation(request_id, ops, Outcome.UNKNOWN, started, transport, str(e))
        else:
            op = dataclasses.replace(
                self._operation(request_id, ops, Outcome.OK, started, transport),
                version=result.version,
                applied=tuple(result.applied),
            )
        self.history.record(op)
        return op

    @staticmethod
    def _operation(
        request_id: str,
        ops: tuple[str, ...],
        outcome: Outcome,
        started: float,
        transport: RecordingTransport,
        code: str | None = None,
    ) -> Operation:
        attempts = transport.take()
        answered = [a.url for a in attempts if a.result.isdigit()]
        return Operation(
            request_id=request_id,
            node=answered[-1] if answered else None,
            commands=ops,
            outcome=outcome,
            code=code,
            started=started,
            finished=time.monotonic(),
            attempts=attempts,
        )

    def _resend(
        self,
        client: CatalogClient,
        transport: RecordingTransport,
        batch: list[CommandBase],
        first: Operation,
    ) -> None:
        """Re-send an acknowledged request to another node first: it must not apply twice."""
        others = [u for u in self.urls if u != first.node] or self.urls
        with CatalogClient(
            [*others, first.node or self.urls[0]],
            timeout=self.settings.timeout_s,
            retry=self.settings.retry,
            transport=transport,
        ) as again:
            self._execute(again, transport, batch, first.request_id)

    def _check_visible(self, http: httpx.Client, op: Operation) -> None:
        """Read at "now" on every node after an acknowledgement (invariant 6)."""
        assert op.version is not None
        for url in self.urls:
            now = node_now(http, url)
            if now is None:
                continue
            seen = read_catalog(http, url, {"at": str(now)})
            if seen is not None:
                self.history.record_read(Read(url, now, seen[0], seen[1], op.version))

    def _read_fixed_times(self) -> None:
        """Pin a timestamp on one node, then read the catalog at it on every node."""
        rng = random.Random(self.settings.seed)
        with httpx.Client(timeout=self.settings.timeout_s) as http:
            while not self._stop.wait(self.settings.read_interval_s):
                now = node_now(http, rng.choice(self.urls))
                if now is None:
                    continue
                self.pinned.append(now)
                self.read_everywhere(http, now)

    def read_everywhere(self, http: httpx.Client, at: int) -> int:
        """Read the catalog at ``at`` on every reachable node; return how many answered."""
        answered = 0
        for url in self.urls:
            seen = read_catalog(http, url, {"at": str(at)})
            if seen is not None:
                self.history.record_read(Read(url, at, seen[0], seen[1]))
                answered += 1
        return answered

    def reread_pinned(self, limit: int = 50) -> int:
        """Read up to ``limit`` earlier pinned timestamps again on every node (after the run).

        Invariant 5 says a read at T never changes once complete, so these must agree with
        the reads made during the run. Returns the number of timestamps read again.
        """
        chosen = self.pinned[-limit:]
        with httpx.Client(timeout=self.settings.timeout_s) as http:
            for at in chosen:
                self.read_everywhere(http, at)
        return len(chosen)
