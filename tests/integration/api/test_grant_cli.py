"""Grants from the Python client and the ``catalog`` command line, against a real server.

A server with auth on, an admin token, and a principal ``ann`` of the role ``none``: roles
are made, privileges granted through them and taken back, and who could is answered at any
version or moment, with the chain of grants that hands each holder its privilege.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from api.client import AsyncCatalogClient, CatalogClient, NotFoundError
from api.wire.roles import Role
from catalog import commands as c
from schemasync.clock import physical_of, rfc3339
from tests.integration.api.servers import ServerFactory, issue_token
from tests.integration.api.support import create_table
from tests.integration.api.test_cli import run, run_json


class Site:
    """A server with auth on, the admin's token, and ``ann``, a principal of the role none."""

    def __init__(self, api_servers: ServerFactory, tmp_path: Path) -> None:
        store = f"sqlite:///{tmp_path}/catalog.db"
        self.url = api_servers.start(store, auth="on").url
        self.admin = issue_token(store, Role.ADMIN)
        with self.client() as client:
            client.create_principal("ann", Role.NONE)
            client.execute([c.CreateSchema(name="SALES"), create_table("ORDERS", "SALES")])

    def client(self) -> CatalogClient:
        return CatalogClient(self.url, token=self.admin)

    def cli(self, *argv: str) -> list[str]:
        """Return ``argv`` with the server's URL and the admin's token."""
        return [*argv, "--url", self.url, "--token", self.admin]


@pytest.fixture
def site(api_servers: ServerFactory, tmp_path: Path) -> Site:
    return Site(api_servers, tmp_path)


def _holders(body: object) -> dict[tuple[str, str], list[str]]:
    """Return each holder of a who-can answer with the words of its chain of grants."""
    assert isinstance(body, dict)
    words = {g["id"]: g["words"] for g in body["grants"]}
    return {(h["kind"], h["name"]): [words[i] for i in h["through"]] for h in body["holders"]}


ANN_THROUGH_ROLES = [
    "SELECT ON SCHEMA SALES TO ROLE ANALYSTS",
    "ROLE ANALYSTS TO ROLE MARKETING",
    "ROLE MARKETING TO USER ann",
]


def test_the_client_grants_revokes_and_answers_who_could_at_any_version(site: Site) -> None:
    with site.client() as client:
        assert client.create_role("ANALYSTS").applied == (True,)
        client.create_role("MARKETING")
        assert client.create_role("MARKETING", if_not_exists=True).applied == (False,)
        client.grant(["USAGE", "SELECT"], "schema", "SALES", to="role", grantee="ANALYSTS")
        client.grant("USAGE", "role", "ANALYSTS", to="role", grantee="MARKETING")
        before = client.grant("USAGE", "role", "MARKETING", to="user", grantee="ann")
        again = client.grant("USAGE", "role", "MARKETING", to="user", grantee="ann")
        assert again.applied == (False,)  # already held: nothing changes

        # Reads name objects and roles as SQL does.
        to_marketing = client.grants(to="role", grantee="marketing")
        assert [g.words for g in to_marketing.grants] == ["ROLE ANALYSTS TO ROLE MARKETING"]
        on_sales = client.grants(on="schema", object="sales").grants
        assert [g.words for g in on_sales] == [
            "USAGE ON SCHEMA SALES TO ROLE ANALYSTS",
            "SELECT ON SCHEMA SALES TO ROLE ANALYSTS",
        ]
        roles = {r.name: r for r in client.roles().roles}
        assert roles["MARKETING"].holds == ["ANALYSTS"]
        assert roles["MARKETING"].members == ["USER ann"]

        who = client.who_can("SELECT", "sales.orders")
        assert (who.version, who.on, who.object) == (before.version, "table", "SALES.ORDERS")
        ann = {(str(h.kind), h.name): h for h in who.holders}[("user", "ann")]
        assert [g.words for g in who.chain(ann.through)] == ANN_THROUGH_ROLES

        after = client.revoke("USAGE", "role", "MARKETING", to="user", grantee="ann")
        assert after.version == before.version + 1
        now = client.who_can("SELECT", "SALES.ORDERS")
        assert ("user", "ann") not in {(h.kind, h.name) for h in now.holders}
        then = client.who_can("SELECT", "SALES.ORDERS", version=before.version)
        assert then.holders == who.holders  # the past does not change
        pinned = client.who_can("SELECT", "SALES.ORDERS", at=before.activation_ts)
        assert pinned.version == before.version and pinned.holders == who.holders
        only_ann = client.who_can("SELECT", "SALES.ORDERS", principal="ann", version=before.version)
        assert [(h.kind, h.name) for h in only_ann.holders] == [("user", "ann")]

        diff = client.access_diff(from_version=before.version, to_version=after.version)
        assert (diff.from_version, diff.to_version) == (before.version, after.version)
        assert [g.words for g in diff.revoked] == ["ROLE MARKETING TO USER ann"]
        assert diff.granted == []
        by_moment = client.access_diff(before.activation_ts, after.activation_ts)
        assert by_moment == diff
        with pytest.raises(ValueError, match="either from= or from_version="):
            client.access_diff(before.activation_ts, from_version=before.version)

        # A dropped role takes the grants to it and its own grants along, in one version.
        client.drop_role("MARKETING")
        assert client.drop_role("MARKETING", if_exists=True).applied == (False,)
        assert [g.words for g in client.grants().grants] == [
            "USAGE ON SCHEMA SALES TO ROLE ANALYSTS",
            "SELECT ON SCHEMA SALES TO ROLE ANALYSTS",
        ]


def test_the_async_client_answers_the_same(site: Site) -> None:
    with site.client() as client:
        client.create_role("ANALYSTS")
        client.grant("SELECT", "table", "ORDERS", "SALES", to="role", grantee="ANALYSTS")
        expected = client.who_can("SELECT", "SALES.ORDERS")

    async def from_the_async_client() -> list[str]:
        async with AsyncCatalogClient(site.url, token=site.admin) as client:
            assert await client.who_can("SELECT", "SALES.ORDERS") == expected
            made = await client.grant("USAGE", "schema", "SALES", to="role", grantee="ANALYSTS")
            assert made.applied == (True,)
            listed = await client.grants(to="role", grantee="ANALYSTS")
            return [g.words for g in listed.grants]

    assert asyncio.run(from_the_async_client()) == [
        "SELECT ON TABLE SALES.ORDERS TO ROLE ANALYSTS",
        "USAGE ON SCHEMA SALES TO ROLE ANALYSTS",
    ]


def test_the_client_refuses_in_plain_words(site: Site) -> None:
    with site.client() as client:
        with pytest.raises(NotFoundError, match="role NOBODY not found") as refused:
            client.grant("SELECT", "table", "ORDERS", "SALES", to="role", grantee="NOBODY")
        assert refused.value.code == "ROLE_NOT_FOUND"
        assert client.grants().grants == []


def test_the_command_line_grants_revokes_and_answers_who_could(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    def cli(*argv: str) -> object:
        return run_json(capsys, *site.cli(*argv))

    cli("role", "create", "analysts")
    cli("role", "create", "marketing")
    cli("grant", "usage,select", "--on", "schema", "sales", "--to", "role", "analysts")
    cli("grant", "USAGE", "--on", "role", "analysts", "--to", "role", "marketing")
    made = cli("grant", "USAGE", "--on", "role", "marketing", "--to", "user", "ann")
    assert isinstance(made, dict) and made["applied"] == [True]
    before = made["version"]
    again = cli("grant", "USAGE", "--on", "role", "marketing", "--to", "user", "ann")
    assert again == {**made, "applied": [False]}

    listed = cli("grants", "--to", "role", "marketing")
    assert isinstance(listed, dict)
    assert [g["words"] for g in listed["grants"]] == ["ROLE ANALYSTS TO ROLE MARKETING"]
    on_sales = cli("grants", "--on", "schema", "sales")
    assert isinstance(on_sales, dict) and len(on_sales["grants"]) == 2
    roles = cli("role", "list")
    assert isinstance(roles, dict)
    assert {r["name"]: r["members"] for r in roles["roles"]} == {
        "ANALYSTS": ["ROLE MARKETING"],
        "MARKETING": ["USER ann"],
    }

    who = cli("access", "who-can", "select", "sales.orders")
    assert _holders(who)[("user", "ann")] == ANN_THROUGH_ROLES
    code, out, err = run(
        capsys, *site.cli("access", "who-can", "SELECT", "SALES.ORDERS", "-o", "table")
    )
    assert code == 0, err
    assert "USER ann" in out and "ROLE MARKETING TO USER ann" in out
    assert f"who could SELECT on table SALES.ORDERS at version {before}" in out

    revoked = cli("revoke", "USAGE", "--on", "role", "marketing", "--to", "user", "ann")
    assert isinstance(revoked, dict) and revoked["applied"] == [True]
    after = revoked["version"]
    assert ("user", "ann") not in _holders(cli("access", "who-can", "SELECT", "SALES.ORDERS"))
    then = cli("access", "who-can", "select", "sales.orders", "--version", str(before))
    assert then == who  # the earlier version still lists ann, through the same grants
    alone = cli("access", "who-can", "SELECT", "SALES.ORDERS", "--principal", "ann")
    assert isinstance(alone, dict) and alone["holders"] == []

    diff = cli("access", "diff", str(before), str(after))
    assert isinstance(diff, dict)
    assert [g["words"] for g in diff["revoked"]] == ["ROLE MARKETING TO USER ann"]
    assert diff["granted"] == []
    # The same ends as moments (RFC 3339 times): each reads the version active then.
    with site.client() as client:
        moments = [
            rfc3339(physical_of(client.versions().versions[v - 1].activation_ts))
            for v in (before, after)
        ]
    assert cli("access", "diff", *moments) == diff
    code, out, err = run(
        capsys, *site.cli("access", "diff", str(before), str(after), "-o", "table")
    )
    assert code == 0 and "revoked" in out and "ROLE MARKETING TO USER ann" in out, err


def test_the_command_line_refuses_in_plain_words(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, *site.cli("grant", "SELEC", "--on", "table", "SALES.ORDERS", "--to", "user", "ann")
    )
    assert (code, out) == (2, "")
    assert err.startswith("error: unknown privilege SELEC: one of USAGE, SELECT, MODIFY"), err

    code, out, err = run(
        capsys,
        *site.cli("grant", "SELECT", "--on", "table", "SALES.ORDERS", "--to", "role", "nobody"),
    )
    assert (code, out) == (1, "")
    assert err == "error: ROLE_NOT_FOUND: statement 1: role NOBODY not found\n"

    code, out, err = run(capsys, *site.cli("role", "drop", "nobody", "-o", "json"))
    assert code == 1 and err == ""
    failure = json.loads(out)
    assert failure["code"] == "ROLE_NOT_FOUND"
    assert failure["detail"] == "statement 1: role NOBODY not found"

    code, _, err = run(capsys, *site.cli("grants", "--on", "table"))
    assert code == 2 and err == "error: --on table needs the object's NAME\n"
    with site.client() as client:
        assert client.grants().grants == []
