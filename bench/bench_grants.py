"""A1-A2: the cost of grants: a table load decided on grants, and who could, as of any time.

Both figures build the same catalog: 50 schemas, 2,000 tables, 1,000 roles in four levels
(500, 300, 150, 50; each role granted to two roles of the level above), 1,000 principals of
the role ``none`` (each holding one or two roles) and about 10,000 grants (SELECT, MODIFY
and USAGE on tables and schemas to the lowest roles, roles to roles and to principals), with
grants made and taken back between them (on random tables, a tenth of them on the watched
tables ``S0.T0``-``S0.T3``, and roles to principals). Each store is SQLite in ``/dev/shm``
(its build does not wait on fsync; the server only reads it at start): version 1 from a real
``CatalogNode``, then versions prepared, encoded and appended as the manager does
(``prepare``, ``VersionedUpdate`` with its origin, ``UpdateLog.append``). The manager itself
commits one command at a time at ~600 versions/s here, and groups concurrent ones into fewer
versions. Each figure then starts ``catalog serve`` (auth on) on its store, in its own process.

- A1: the catalog in 19 versions of 1,000 commands. The p99 of an Iceberg table load (``GET
  /iceberg/v1/namespaces/S7/tables/T7``, 8 concurrent requests, 600 a round) signed in as a
  principal of the role ``none`` holding SELECT on the table through a chain of four roles
  and USAGE on its schema through three ÷ the same load on the same server signed in as a
  principal of the role ``admin``, whose cluster role decides before any grant is read. Both
  are principals' JWTs from ``/iceberg/v1/oauth/tokens``, so both sides verify a signature
  and read a principal: the difference is the grant check alone (``sees`` and ``holds``); a
  server with auth off would also leave out signing in (A1s). Rounds alternate which side
  goes first; the figure is the median over rounds of each round's p99. Goal <= 1.2. The
  history is short on purpose: on A2's server a full collection of the cyclic garbage
  collector stalls every request for seconds (see docs/performance-access.md), which would
  decide the p99 of both sides whatever the grants cost.
- A2: 100,000 versions of one command each, every one changing something: the catalog grows
  over the first 30,000, grants change all along. Who could SELECT a watched table as of a
  time T (``GET /v1/access?at=T``, T a version's activation time), asked once at each of 100
  versions drawn at random over the history (the oldest with the table included) in each of
  three rounds: the first answer at that version, one request at a time, with the admin's
  token. The figure is the median over rounds of each round's p99 of those first answers ÷
  a 50 ms budget (goal <= 1). The same questions asked again (warm), the first question after
  the server started, its start (it replays the whole log), its memory and the size of the
  answers are in ``extra``. No catalog is rebuilt for an old T: ``catalog serve`` keeps every
  version since the last compaction in memory (structurally shared), and compacts only when
  an operator runs ``catalog compact``; after one, a T before the snapshot is refused (410
  VERSION_COMPACTED), so there is no slower path to measure.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import random
import secrets
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.harness import Figure, Sample, progress
from bench.servers import start, stop
from catalog import Catalog, ColumnType, prepare
from catalog import commands as c
from catalog.access import Caller, holds, sees
from catalog.commands.base import CommandBase
from catalog.commands.principals import CreatePrincipalCommand
from catalog.descriptors import PrincipalRole, Privilege, SecurableKind
from catalog.descriptors.principals import hash_secret
from catalog.marshalling import encode_update
from catalog.origin import in_process
from catalog.runtime.node import CatalogNode
from catalog.runtime.options import NodeOptions
from catalog.update import VersionedUpdate
from deploy.etcd_server import free_port
from schemasync.clock import HybridClock
from updatelog.sqlite import SqliteUpdateLog

SCHEMAS = 50
TABLES_PER_SCHEMA = 40
LEVELS = (500, 300, 150, 50)
"""Roles per level; each role is granted to two roles of the level above."""
PRINCIPALS = 1000
CHURN_LIVE = 1100
"""Grants made by the churn that stay live: past it, the churn takes one back for each made."""
GROWTH = 0.3
"""The share of the history over which the catalog's objects are created."""
WATCHED = ("T0", "T1", "T2", "T3")
"""Tables of schema S0 whose grants change often: who-can asks about them."""
MEASURED = ("S7", "T7")
MEASURED_LEAF = 414
"""The lowest role on the measured principal's chain (it alone of the chain holds SELECT)."""
CONCURRENCY = 8
REQUESTS = 600
ROUNDS = 7
A2_ROUNDS = 3
A2_PER_ROUND = 100
BUDGET_S = 0.05

Key = tuple[str, str, str, str, str, str]
"""A grant as the plan knows it: privilege, on, schema, name, to, grantee."""


def _role(level: int, i: int) -> str:
    return f"R{level}_{i}"


def _fields(key: Key) -> dict[str, object]:
    privilege, on, schema, name, to, grantee = key
    fields: dict[str, object] = {"privileges": [privilege], "on": on, "name": name}
    return fields | {"to": to, "grantee": grantee} | ({"schema": schema} if schema else {})


def _grant(key: Key) -> c.GrantCommand:
    return c.Grant.model_validate(_fields(key))


def _revoke(key: Key) -> c.RevokeCommand:
    return c.Revoke.model_validate(_fields(key))


def _table(schema: str, name: str) -> c.CreateTableCommand:
    columns = [
        c.Column(name="ID", type=ColumnType.INT64, nullable=False),
        c.Column(name="NAME", type=ColumnType.STRING, length=64),
    ]
    return c.CreateTable(schema=schema, name=name, columns=columns, primary_key=["ID"])


@dataclass
class Plan:
    """The history's commands, in order, and the credentials of the two measured principals."""

    secrets: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Principal name -> (client id, secret), for the two that sign in."""
    tables: list[tuple[str, str]] = field(default_factory=list)
    """Tables created so far (the churn picks among them)."""
    principals: list[str] = field(default_factory=list)
    churn: list[Key] = field(default_factory=list)
    held: set[Key] = field(default_factory=set)

    def growth(self) -> Iterator[CommandBase]:
        """Yield the commands that create the catalog's objects and its lasting grants."""
        yield from (
            c.CreateRole(name=_role(lv, i)) for lv, n in enumerate(LEVELS) for i in range(n)
        )
        for lv, n in enumerate(LEVELS[:-1]):
            above = LEVELS[lv + 1]
            for i in range(n):
                for j in dict.fromkeys((i % above, (i * 7 + 3) % above)):
                    yield self._held(("USAGE", "role", "", _role(lv, i), "role", _role(lv + 1, j)))
        yield self._principal("ADMIN", PrincipalRole.ADMIN)
        yield self._principal("MEASURED", PrincipalRole.NONE)
        chain = [MEASURED_LEAF]  # each role is granted to its id modulo the level above
        for n in LEVELS[1:]:
            chain.append(chain[-1] % n)
        yield self._held(("USAGE", "role", "", _role(3, chain[3]), "user", "MEASURED"))
        for s in range(SCHEMAS):
            schema = f"S{s}"
            yield c.CreateSchema(name=schema)
            for r in range(10):
                yield self._held(
                    ("USAGE", "schema", "", schema, "role", _role(0, (s * 10 + r) % 500))
                )
            if schema == MEASURED[0]:
                yield self._held(("USAGE", "schema", "", schema, "role", _role(1, chain[1])))
            for t in range(TABLES_PER_SCHEMA):
                name = f"T{t}"
                yield _table(schema, name)
                self.tables.append((schema, name))
                n = s * TABLES_PER_SCHEMA + t
                for r in dict.fromkeys((n * 2 % 500, (n * 2 + 1) % 500)):
                    yield self._held(("SELECT", "table", schema, name, "role", _role(0, r)))
                if n % 2 == 0:
                    yield self._held(("MODIFY", "table", schema, name, "role", _role(0, n % 500)))
                if (schema, name) == MEASURED:
                    yield self._held(("SELECT", "table", schema, name, "role", _role(0, chain[0])))
        for p in range(PRINCIPALS - 2):
            name = f"P{p}"
            yield self._principal(name, PrincipalRole.NONE)
            yield self._held(("USAGE", "role", "", _role(3, p % 50), "user", name))
            if p % 2 == 0:
                yield self._held(("USAGE", "role", "", _role(2, p * 3 % 150), "user", name))

    def _principal(self, name: str, role: PrincipalRole) -> CommandBase:
        client_id = f"bench-{name.lower()}-{secrets.token_hex(8)}"
        secret = secrets.token_urlsafe(24)
        if name in ("ADMIN", "MEASURED"):
            self.secrets[name] = (client_id, secret)
        self.principals.append(name)
        return CreatePrincipalCommand(
            name=name, role=role, client_id=client_id, secret_hash=hash_secret(secret)
        )

    def _held(self, key: Key) -> CommandBase:
        if key in self.held:  # the churn made it already: it stays, and this grant is a no-op
            self.churn.remove(key)
        self.held.add(key)
        return _grant(key)

    def churn_step(self, rng: random.Random) -> CommandBase | None:
        """Return a grant or a revoke that changes something, or None if none is possible yet."""
        if len(self.churn) >= CHURN_LIVE or (self.churn and rng.random() < 0.4):
            gone = self.churn.pop(rng.randrange(len(self.churn)))
            self.held.discard(gone)
            return _revoke(gone)
        for _ in range(20):
            key = self._churn_key(rng)
            if key is not None and key not in self.held:
                self.held.add(key)
                self.churn.append(key)
                return _grant(key)
        return None

    def _churn_key(self, rng: random.Random) -> Key | None:
        if rng.random() < 0.2:
            if len(self.principals) < 3:
                return None
            role = _role(rng.randrange(3), rng.randrange(LEVELS[2]))
            return ("USAGE", "role", "", role, "user", rng.choice(self.principals[2:]))
        if len(self.tables) < len(WATCHED):
            return None
        schema, name = (
            ("S0", rng.choice(WATCHED)) if rng.random() < 0.1 else rng.choice(self.tables)
        )
        privilege = rng.choice(("SELECT", "SELECT", "MODIFY"))
        return (privilege, "table", schema, name, "role", _role(0, rng.randrange(LEVELS[0])))


@dataclass
class History:
    """The store built, and when each version became active."""

    store: str
    activations: list[int]
    """``activations[v]``: the activation time of version v (index 0 unused)."""
    first_watched: int
    """The first version holding every watched table."""
    build_s: float
    counts: dict[str, int]
    catalog: Catalog
    """The latest version."""


def _stream(plan: Plan, total: int, growth_end: float) -> Iterator[CommandBase]:
    """Yield the plan's commands: its ``total`` growth over ``growth_end`` steps, churn between."""
    rng, growth, made, step = random.Random(7), plan.growth(), 0, 0
    while True:
        command = None
        if made >= total or made / total > step / growth_end:
            command = plan.churn_step(rng)
        if command is None:
            command, made = next(growth), made + 1
        step += 1
        yield command


async def _build(folder: Path, plan: Plan, *, versions: int, batch: int) -> History:
    """Write version 1 with a real node, then versions 2..``versions`` of the plan.

    With ``batch`` 1 every version is one command that changes something, the growth spread
    over ``GROWTH`` of them; otherwise each version holds ``batch`` commands and the growth
    takes nine tenths of them.
    """
    start = time.perf_counter()
    path = folder / "catalog.db"
    store = f"sqlite:///{path}"
    options = NodeOptions(
        delay_ms=0,
        max_clock_skew_ms=0,
        safe_time_ticker=False,
        registry_ttl_s=None,
        default_warehouse=str(folder / "warehouse"),
    )
    node = await CatalogNode.start(store, "bench-build", options)
    catalog: Catalog = node.service.latest_catalog()
    await node.close()
    total = sum(1 for _ in Plan().growth())
    growth_end = max(versions * GROWTH, total / 0.8) if batch == 1 else total / 0.9
    stream = _stream(plan, total, growth_end)
    skipped, first_watched, clock = 0, 0, HybridClock()
    activations = [0, catalog.activation_ts]
    log = SqliteUpdateLog(path)
    try:
        while catalog.version < versions:
            commands = list(itertools.islice(stream, batch))
            entries = prepare(catalog, commands).entries
            if not entries:  # a lasting grant the churn had made already
                skipped += 1
                continue
            version = catalog.version + 1
            update = VersionedUpdate(
                version=version,
                proposal_ts=clock.now(),
                delay_ms=0,
                entries=tuple(entries),
                origins=(in_process().model_copy(update={"entries": len(entries)}),),
                stamps=True,
            )
            result = await log.append(version, encode_update(update), update.proposal_ts)
            if not result.committed:
                raise RuntimeError(f"building the log lost a CAS: {result}")
            catalog = update.apply_to(catalog)
            activations.append(catalog.activation_ts)
            if not first_watched and catalog.find_table("S0", WATCHED[-1]) is not None:
                first_watched = version
            if version % 20_000 == 0:
                progress(f"built {version} versions")
    finally:
        await log.close()
    counts = {
        "versions": catalog.version,
        "grants": len(catalog.access.grants),
        "roles": len(catalog.access.roles),
        "principals": len(catalog.principals()),
        "tables": len(catalog.tables()),
        "no_op_commands_skipped": skipped,
    }
    return History(store, activations, first_watched, time.perf_counter() - start, counts, catalog)


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _sign_in(url: str, credentials: tuple[str, str]) -> str:
    form = {
        "grant_type": "client_credentials",
        "client_id": credentials[0],
        "client_secret": credentials[1],
    }
    answer = httpx.post(f"{url}/iceberg/v1/oauth/tokens", data=form, timeout=30)
    answer.raise_for_status()
    token: str = answer.json()["access_token"]
    return token


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- A2 ---------------------------------------------------------------------------------


def _who_can(
    http: httpx.Client, history: History, version: int, sizes: list[tuple[int, ...]]
) -> float:
    table = WATCHED[version % len(WATCHED)]
    params = {
        "privilege": "SELECT",
        "object": f"S0.{table}",
        "at": str(history.activations[version]),
    }
    start = time.perf_counter()
    answer = http.get("/v1/access", params=params)
    elapsed = time.perf_counter() - start
    answer.raise_for_status()
    body = answer.json()
    if body["version"] != version:
        raise RuntimeError(f"at the activation of {version} the server read {body['version']}")
    named = [i for h in body["holders"] for i in h["through"] + h["usage"]]
    sizes.append((len(body["holders"]), len(named), len(set(named)), len(answer.content)))
    return elapsed


def a2_who_can(url: str, admin: str, history: History, rounds: int, per_round: int) -> Figure:
    """Ask who could SELECT a watched table at fresh versions, then again; return A2."""
    rng = random.Random(11)
    latest = len(history.activations) - 1
    picked = rng.sample(range(history.first_watched + 1, latest + 1), rounds * per_round - 1)
    picked.insert(0, history.first_watched)  # the oldest T at which the question has an object
    first: list[list[float]] = []
    warm: list[float] = []
    sizes: list[tuple[int, ...]] = []  # per answer: holders, grants named, distinct, bytes
    headers = {"Authorization": f"Bearer {admin}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as http:
        for r in range(rounds):
            asked = picked[r * per_round : (r + 1) * per_round]
            first.append([_who_can(http, history, v, sizes) for v in asked])
            rng.shuffle(asked)
            warm.extend(_who_can(http, history, v, sizes) for v in asked)
            progress(f"A2: round {r + 1}: first p99 {_p(first[-1], 99) * 1000:.1f} ms")
    pooled = [s for round_ in first for s in round_]
    budget = Sample(BUDGET_S, BUDGET_S, BUDGET_S, "s")
    return Figure(
        "A2",
        f"who-can at T, first answer p99, {latest // 1000}k versions ÷ 50 ms budget",
        Sample.of([_p(round_, 99) for round_ in first], "s"),
        budget,
        "<= 1",
        {
            "first_p50_s": _p(pooled, 50),
            "first_p99_s": _p(pooled, 99),
            "first_max_s": max(pooled),
            "warm_p50_s": _p(warm, 50),
            "warm_p99_s": _p(warm, 99),
            "first_question_after_start_s": first[0][0],
            "questions_first": len(pooled),
            "versions_asked_from": history.first_watched,
            "versions_asked_to": max(picked),
            "holders_mean": statistics.mean(z[0] for z in sizes),
            "holders_max": max(z[0] for z in sizes),
            "grants_named_per_answer_mean": statistics.mean(z[1] for z in sizes),
            "distinct_grants_named_per_answer_mean": statistics.mean(z[2] for z in sizes),
            "answer_bytes_mean": statistics.mean(z[3] for z in sizes),
        },
    )


# -- A1 ---------------------------------------------------------------------------------


async def _loads(url: str, path: str, token: str, requests: int) -> list[float]:
    latencies: list[float] = []
    left = iter(range(requests))
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as client:

        async def worker() -> None:
            for _ in left:
                start = time.perf_counter()
                answer = await client.get(path)
                latencies.append(time.perf_counter() - start)
                answer.raise_for_status()

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return latencies


def _sees(url: str, token: str, tables: int) -> int:
    """Return how many of the first ``tables`` tables of S7.. the principal may load."""
    seen = 0
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=f"{url}/iceberg/v1", headers=headers, timeout=30) as http:
        for n in range(tables):
            s, t = 7 + n // TABLES_PER_SCHEMA, n % TABLES_PER_SCHEMA
            status = http.get(f"/namespaces/S{s}/tables/T{t}").status_code
            if status not in (200, 403, 404):
                raise RuntimeError(f"loading S{s}.T{t} answered {status}")
            seen += status == 200
    return seen


def _check_cost(catalog: Catalog, name: str, role: PrincipalRole) -> tuple[float, float]:
    """Return the seconds of the load's two checks (``sees``, ``holds`` SELECT) in-process.

    The first with the caller's roles not yet worked out (``Access.memo`` empty), then the
    mean over 20,000 with them remembered, as a server that answered before has them.
    """
    caller = Caller(catalog.principal(name).id, (), role)
    table = catalog.table(*MEASURED).id

    def check() -> None:
        if not (
            sees(catalog, caller, SecurableKind.TABLE, table)
            and holds(catalog, caller, Privilege.SELECT, SecurableKind.TABLE, table)
        ):
            raise RuntimeError(f"{name} may not load {MEASURED}")

    catalog.access.memo.clear()
    begin = time.perf_counter()
    check()
    first = time.perf_counter() - begin
    begin = time.perf_counter()
    for _ in range(20_000):
        check()
    return first, (time.perf_counter() - begin) / 20_000


def a1_load(url: str, granted: str, admin: str, rounds: int, requests: int) -> Figure:
    """Load the measured table as the principal holding it through roles, and as an admin."""
    path = f"/iceberg/v1/namespaces/{MEASURED[0]}/tables/{MEASURED[1]}"
    probed = 80
    seen = _sees(url, granted, probed)
    if seen in (0, probed):
        raise RuntimeError(f"the measured principal may load {seen} of {probed} tables")
    asyncio.run(_loads(url, path, granted, requests // 2))  # warm both
    asyncio.run(_loads(url, path, admin, requests // 2))
    kept: dict[str, list[list[float]]] = {"granted": [], "admin": []}
    for r in range(rounds):
        turns = [("granted", granted), ("admin", admin)]
        for side, token in turns if r % 2 == 0 else turns[::-1]:
            kept[side].append(asyncio.run(_loads(url, path, token, requests)))
        progress(
            f"A1: round {r + 1}: p99 granted {_p(kept['granted'][-1], 99) * 1000:.1f} ms,"
            f" admin {_p(kept['admin'][-1], 99) * 1000:.1f} ms"
        )
    granted_all = [s for round_ in kept["granted"] for s in round_]
    admin_all = [s for round_ in kept["admin"] for s in round_]
    return Figure(
        "A1",
        "table load p99, SELECT through 4 roles (10k grants, 1k roles) ÷ admin, same server",
        Sample.of([_p(round_, 99) for round_ in kept["granted"]], "s"),
        Sample.of([_p(round_, 99) for round_ in kept["admin"]], "s"),
        "<= 1.2",
        {
            "concurrency": CONCURRENCY,
            "requests_per_round": requests,
            "granted_p50_s": _p(granted_all, 50),
            "admin_p50_s": _p(admin_all, 50),
            "granted_p99_pooled_s": _p(granted_all, 99),
            "admin_p99_pooled_s": _p(admin_all, 99),
            "measured_principal_may_load": f"{seen} of {probed} tables probed",
        },
    )


def _built(folder: Path, plan: Plan, *, versions: int, batch: int) -> History:
    folder.mkdir()
    gc.disable()  # the build keeps one catalog growing; nothing it makes is garbage
    try:
        history = asyncio.run(_build(folder, plan, versions=versions, batch=batch))
    finally:
        gc.enable()
    gc.collect()
    progress(f"built in {history.build_s:.1f} s: {history.counts}")
    return history


def _serve(store: str) -> tuple[subprocess.Popen[bytes], str, float]:
    """Start ``catalog serve`` (auth on) on ``store``; return it, its URL and its start time."""
    from tests.integration.api.servers import TOKEN_SECRET_FILE

    port = free_port()
    argv = ["-m", "api.cli", "serve", "--store", store, "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--node-name", "bench", "--delay-ms", "0"]
    argv += ["--max-clock-skew-ms", "0", "--log-level", "error"]  # A1's probe logs denials
    env = {"CATALOG_TOKEN_SECRET_FILE": str(TOKEN_SECRET_FILE), "CATALOG_AUTH": "on"}
    begin = time.perf_counter()
    server, url = start(argv, port, "/readyz", env)
    started = time.perf_counter() - begin
    progress(f"server ready in {started:.1f} s, {_rss_mb(server.pid):.0f} MB")
    return server, url, started


def _measure_a1(folder: Path, quick: bool) -> Figure:
    plan = Plan()
    progress("A1: building the catalog, 1,000 commands a version")
    history = _built(folder, plan, versions=20, batch=1000)
    server, url, started = _serve(history.store)
    try:
        granted = _sign_in(url, plan.secrets["MEASURED"])
        admin = _sign_in(url, plan.secrets["ADMIN"])
        rounds, requests = (2, REQUESTS // 2) if quick else (ROUNDS, REQUESTS)
        figure = a1_load(url, granted, admin, rounds, requests)
    finally:
        stop(server)
    first, remembered = _check_cost(history.catalog, "MEASURED", PrincipalRole.NONE)
    _, admin_check = _check_cost(history.catalog, "ADMIN", PrincipalRole.ADMIN)
    figure.extra.update(
        history.counts,
        build_s=history.build_s,
        server_start_s=started,
        check_first_s=first,
        check_remembered_s=remembered,
        check_admin_s=admin_check,
    )
    return figure


def _measure_a2(folder: Path, quick: bool) -> Figure:
    plan = Plan()
    versions = 20_000 if quick else 100_000
    progress(f"A2: building {versions} versions of one command each")
    history = _built(folder, plan, versions=versions, batch=1)
    server, url, started = _serve(history.store)
    try:
        admin = _sign_in(url, plan.secrets["ADMIN"])
        figure = a2_who_can(url, admin, history, 2 if quick else A2_ROUNDS, A2_PER_ROUND)
        rss = _rss_mb(server.pid)
    finally:
        stop(server)
    figure.extra.update(
        history.counts, build_s=history.build_s, server_start_s=started, server_rss_mb=rss
    )
    return figure


def run(quick: bool) -> list[Figure]:
    """Build each figure's store in ``/dev/shm``, serve it, measure; A1, then A2."""
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(prefix="bench-grants-", dir=shm if shm.is_dir() else None))
    try:
        return [_measure_a1(folder / "a1", quick), _measure_a2(folder / "a2", quick)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
