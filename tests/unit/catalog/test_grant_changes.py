"""Roles and grants as catalog objects: snapshots, diffs, words, events and stamps."""

from __future__ import annotations

from typing import Any

import pytest

from catalog import Catalog, VersionedUpdate
from catalog import commands as c
from catalog.access import who_can
from catalog.change_words import describe
from catalog.commands.roles import CreateRoleCommand, DropRoleCommand
from catalog.descriptors import GrantDescriptor, Privilege, SecurableKind
from catalog.diff import ChangeKind, diff
from catalog.event_feed import CatalogEventParameters
from catalog.events import CatalogEvent
from catalog.snapshots import decode_snapshot, encode_snapshot
from tests.unit.catalog.helpers import apply, catalog_with_default_zone, run
from tests.unit.catalog.test_grants import base, grant, member, principal, revoke


def _version(cat: Catalog, *commands: c.CommandBase, stamps: bool = True) -> VersionedUpdate:
    """Return the next version's update: ``commands`` as one batch on ``cat``."""
    return VersionedUpdate(
        version=cat.version + 1,
        proposal_ts=((cat.activation_ts >> 16) + 1_000) << 16,
        delay_ms=0,
        entries=run(cat, *commands).entries,
        stamps=stamps,
    )


def _applied(
    cat: Catalog, *commands: c.CommandBase
) -> tuple[Catalog, list[CatalogEventParameters]]:
    """Return the next version, made of ``commands``, and the events it fired."""
    events: list[CatalogEventParameters] = []
    return _version(cat, *commands).apply_to(cat, events), events


def _granted() -> Catalog:
    """``base()`` with a role held by alice and grants on every kind of object."""
    cat, _ = _applied(
        base(),
        member("ANALYSTS", "alice"),
        grant("USAGE", "SELECT", on="schema", name="SALES", to="role", grantee="ANALYSTS"),
        grant("MODIFY", on="table", schema="SALES", name="ORDERS", grantee="alice"),
        grant("SELECT", on="view", schema="SALES", name="DAILY", grantee="bob"),
        grant("OWNERSHIP", on="catalog", to="role", grantee="STAFF"),
    )
    return cat


def _parts(cat: Catalog) -> dict[str, Any]:
    return {
        "version": cat.version,
        "activation_ts": cat.activation_ts,
        "object_id_gen": cat.object_id_gen,
        "default_zone_id": cat.default_zone_id,
        "schemas": cat.schemas(),
        "zones": cat.zones(),
        "tables": cat.tables(),
        "indexes": cat.indexes(),
        "views": cat.views(),
        "principals": cat.principals(),
    }


def test_a_snapshot_keeps_roles_and_grants_and_every_lookup_of_them() -> None:
    cat = _granted()
    back = decode_snapshot(encode_snapshot(cat))
    assert back.digest() == cat.digest()
    assert back.roles() == cat.roles() and back.grants() == cat.grants()
    assert back.access == cat.access  # by id, by object, by grantee, by meaning
    assert len(cat.grants()) == 6 and all(g.update_ts == cat.activation_ts for g in cat.grants())
    only_grants = apply(base(), grant("SELECT", on="catalog", grantee="bob"))
    for role in only_grants.roles():
        only_grants = only_grants.without_role(role.id)
    again = decode_snapshot(encode_snapshot(only_grants))
    assert again.roles() == [] and again.grants() == only_grants.grants()


def test_a_catalog_without_roles_and_grants_encodes_as_it_did_before_them() -> None:
    plain = apply(catalog_with_default_zone(), principal("alice"))
    gone = apply(
        plain,
        CreateRoleCommand(name="ANALYSTS"),
        member("ANALYSTS", "alice"),
        DropRoleCommand(name="ANALYSTS"),
    )
    assert gone.roles() == [] and gone.grants() == []
    assert encode_snapshot(gone) == encode_snapshot(plain.with_object_id_gen(gone.object_id_gen))
    with_role = apply(plain, CreateRoleCommand(name="ANALYSTS"))
    assert encode_snapshot(with_role) != encode_snapshot(
        plain.with_object_id_gen(with_role.object_id_gen)
    )


def test_from_parts_takes_roles_and_grants_and_refuses_duplicates() -> None:
    cat = _granted()
    roles, grants = cat.roles(), cat.grants()
    assert Catalog.from_parts(**_parts(cat), roles=roles, grants=grants).digest() == cat.digest()
    first, second = roles
    clashes: list[tuple[list[Any], list[Any], str]] = [
        ([first, second.model_copy(update={"id": first.id})], grants, "duplicate role"),
        ([first, second.model_copy(update={"name": first.name})], grants, "duplicate role"),
        (roles, [*grants, grants[0].model_copy(update={"id": 999})], "duplicate grant"),
        (roles, [*grants, grants[0].model_copy(update={"privilege": "ALTER"})], "duplicate grant"),
    ]
    for clash_roles, clash_grants, message in clashes:
        with pytest.raises(ValueError, match=message):
            Catalog.from_parts(**_parts(cat), roles=clash_roles, grants=clash_grants)


def test_a_diff_names_roles_and_grants_in_words() -> None:
    cat = base()
    after = apply(
        cat,
        CreateRoleCommand(name="READERS"),
        member("READERS", "alice"),
        grant("SELECT", on="table", schema="SALES", name="ORDERS", grantee="alice"),
        grant("OWNERSHIP", on="catalog", to="role", grantee="READERS"),
        grant("USAGE", on="schema", name="HR", to="role", grantee="READERS"),
    )
    changes = diff(cat, after)
    assert [(ch.object_type, ch.name, ch.change) for ch in changes] == [
        ("role", "READERS", ChangeKind.ADDED),
        ("grant", "ROLE READERS TO USER alice", ChangeKind.ADDED),
        ("grant", "SELECT ON TABLE SALES.ORDERS TO USER alice", ChangeKind.ADDED),
        ("grant", "OWNERSHIP ON CATALOG TO ROLE READERS", ChangeKind.ADDED),
        ("grant", "USAGE ON SCHEMA HR TO ROLE READERS", ChangeKind.ADDED),
    ]
    assert all(isinstance(ch.after, GrantDescriptor) for ch in changes[1:])
    dropped = diff(after, apply(after, c.DropTable(schema="SALES", name="ORDERS")))
    assert [
        (ch.object_type, ch.name, ch.change) for ch in dropped if ch.object_type == "grant"
    ] == [("grant", "SELECT ON TABLE SALES.ORDERS TO USER alice", ChangeKind.DROPPED)]


def test_role_and_grant_changes_in_words() -> None:
    cat = base()
    made_update = _version(
        cat,
        CreateRoleCommand(name="READERS"),
        member("READERS", "alice"),
        grant(
            "SELECT",
            "MODIFY",
            on="table",
            schema="SALES",
            name="ORDERS",
            to="role",
            grantee="READERS",
        ),
        grant("CREATE", on="catalog", grantee="bob"),
    )
    made = made_update.apply_to(cat)
    assert describe(made_update.entries, cat, made) == [
        "created role READERS",
        "granted ROLE READERS TO USER alice",
        "granted SELECT ON TABLE SALES.ORDERS TO ROLE READERS",
        "granted MODIFY ON TABLE SALES.ORDERS TO ROLE READERS",
        "granted CREATE ON CATALOG TO USER bob",
    ]
    taken = _version(
        made,
        revoke("CREATE", on="catalog", grantee="bob"),
        DropRoleCommand(name="READERS"),
    )
    assert describe(taken.entries, made, taken.apply_to(made)) == [
        "revoked CREATE ON CATALOG TO USER bob",
        "revoked ROLE READERS TO USER alice",
        "revoked SELECT ON TABLE SALES.ORDERS TO ROLE READERS",
        "revoked MODIFY ON TABLE SALES.ORDERS TO ROLE READERS",
        "dropped role READERS",
    ]


def _said(events: list[CatalogEventParameters]) -> list[tuple[Any, ...]]:
    return [(e.event, e.subject.type, e.subject.name, e.subject.schema_) for e in events]


def test_role_and_grant_changes_fire_their_events() -> None:
    cat = base()
    made, events = _applied(
        cat,
        CreateRoleCommand(name="READERS"),
        member("READERS", "alice"),
        grant("SELECT", on="view", schema="SALES", name="DAILY", to="role", grantee="READERS"),
        grant("USAGE", on="schema", name="HR", grantee="bob"),
        grant("OWNERSHIP", on="catalog", grantee="bob"),
    )
    assert _said(events) == [
        (CatalogEvent.ROLE_CREATE, "role", "READERS", None),
        (CatalogEvent.GRANT, "grant", "ROLE READERS TO USER alice", None),
        (CatalogEvent.GRANT, "grant", "SELECT ON VIEW SALES.DAILY TO ROLE READERS", "SALES"),
        (CatalogEvent.GRANT, "grant", "USAGE ON SCHEMA HR TO USER bob", "HR"),
        (CatalogEvent.GRANT, "grant", "OWNERSHIP ON CATALOG TO USER bob", None),
    ]
    readers = made.role("READERS")
    assert events[0].subject.id == readers.id
    assert [e.subject.id for e in events[1:]] == [g.id for g in made.grants()]
    assert all(e.version == made.version for e in events)
    _, events = _applied(
        made,
        revoke("USAGE", on="schema", name="HR", grantee="bob"),
        DropRoleCommand(name="READERS"),
    )
    assert _said(events)[:3] == [
        (CatalogEvent.REVOKE, "grant", "USAGE ON SCHEMA HR TO USER bob", "HR"),
        (CatalogEvent.REVOKE, "grant", "ROLE READERS TO USER alice", None),
        (CatalogEvent.REVOKE, "grant", "SELECT ON VIEW SALES.DAILY TO ROLE READERS", "SALES"),
    ]
    assert _said(events)[3:] == [(CatalogEvent.ROLE_DROP, "role", "READERS", None)]
    assert [e.subject.id for e in events[1:]] == [*(g.id for g in made.grants()[:2]), readers.id]
    assert events[0].to_json()["event"] == "REVOKE"


def test_a_stamped_version_stamps_the_roles_and_grants_it_makes() -> None:
    cat = base()
    first, _ = _applied(cat, member("ANALYSTS", "alice"))
    second, _ = _applied(
        first,
        CreateRoleCommand(name="READERS"),
        grant("SELECT", on="catalog", to="role", grantee="READERS"),
    )
    assert first.activation_ts < second.activation_ts
    old, new = second.grants()
    assert old.update_ts == first.activation_ts and new.update_ts == second.activation_ts
    assert second.role("READERS").update_ts == second.activation_ts
    assert second.role("ANALYSTS").update_ts == 0  # granted, not changed
    unstamped = _version(first, CreateRoleCommand(name="READERS"), stamps=False).apply_to(first)
    assert unstamped.role("READERS").update_ts == 0


def test_a_stamp_keeps_each_grant_in_its_place_so_a_restored_node_answers_alike() -> None:
    # Ids 31..33 land in a set's slots out of order: stamping them must not reorder grants.
    cat = base().with_object_id_gen(31)
    stamped, _ = _applied(
        cat, grant("SELECT", "OWNERSHIP", "USAGE", on="schema", name="SALES", grantee="alice")
    )
    restored = decode_snapshot(encode_snapshot(stamped))
    sales = stamped.schema("SALES").id
    on_sales = stamped.access.grants_on((SecurableKind.SCHEMA, sales))
    assert [g.id for g in on_sales] == [31, 32, 33]
    assert restored.access == stamped.access
    orders = stamped.table("SALES", "ORDERS").id
    live = who_can(stamped, Privilege.SELECT, SecurableKind.TABLE, orders)
    assert live == who_can(restored, Privilege.SELECT, SecurableKind.TABLE, orders)
    assert [g.privilege for g in live[0].through] == [Privilege.SELECT]


def test_a_grant_made_and_taken_back_in_one_version_is_said_both_ways() -> None:
    cat = base()
    update = _version(
        cat,
        grant("SELECT", on="table", schema="SALES", name="ORDERS", grantee="alice"),
        c.DropTable(schema="SALES", name="ORDERS"),
    )
    assert describe(update.entries, cat, update.apply_to(cat)) == [
        "granted SELECT ON TABLE SALES.ORDERS TO USER alice",
        "revoked SELECT ON TABLE SALES.ORDERS TO USER alice",
        "dropped table SALES.ORDERS",
    ]


def test_the_revokes_a_drop_fires_name_what_was_dropped() -> None:
    cat = apply(
        base(),
        grant("SELECT", on="table", schema="SALES", name="ORDERS", grantee="bob"),
        member("ANALYSTS", "alice"),
    )
    _, events = _applied(
        cat, c.DropTable(schema="SALES", name="ORDERS"), DropRoleCommand(name="ANALYSTS")
    )
    assert [said for said in _said(events) if said[0] is CatalogEvent.REVOKE] == [
        (CatalogEvent.REVOKE, "grant", "SELECT ON TABLE SALES.ORDERS TO USER bob", "SALES"),
        (CatalogEvent.REVOKE, "grant", "ROLE ANALYSTS TO USER alice", None),
    ]
