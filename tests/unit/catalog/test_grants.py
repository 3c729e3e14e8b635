"""Roles and grants as catalog commands: what they make, what they refuse, what drops take."""

from __future__ import annotations

from typing import Any

import pytest

from catalog import Catalog, VersionedUpdate
from catalog import commands as c
from catalog.commands.grants import GrantCommand, RevokeCommand
from catalog.commands.principals import CreatePrincipalCommand, DropPrincipalCommand
from catalog.commands.roles import CreateRoleCommand, DropRoleCommand
from catalog.descriptors import CATALOG_ID, GranteeKind, Privilege, SecurableKind
from catalog.descriptors.principals import PrincipalRole, hash_secret
from catalog.entries import DropGrantEntry, DropRoleEntry, NewGrantEntry, NewRoleEntry
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError
from catalog.grant_names import grantee_name, securable_name
from tests.unit.catalog.helpers import (
    apply,
    bad_shape,
    catalog_with_default_zone,
    create_table,
    create_view,
    entry_types,
    refused,
    run,
)

Grant = tuple[str, str, str, str]
"""A grant as the tests read it: privilege, object kind, object name, grantee name."""


def principal(name: str, role: PrincipalRole = PrincipalRole.NONE) -> CreatePrincipalCommand:
    return CreatePrincipalCommand(
        name=name,
        role=role,
        client_id=f"client-{name}".ljust(20, "0"),
        secret_hash=hash_secret("s3cret"),
    )


def grant(*privileges: str, on: str, to: str = "user", **names: Any) -> GrantCommand:
    """``GRANT privileges ON on [schema.]name TO to grantee``."""
    return GrantCommand(privileges=privileges, on=on, to=to, **names)


def revoke(*privileges: str, on: str, to: str = "user", **names: Any) -> RevokeCommand:
    """``REVOKE privileges ON on [schema.]name FROM to grantee``."""
    return RevokeCommand(privileges=privileges, on=on, to=to, **names)


def member(role: str, grantee: str, to: str = "user") -> GrantCommand:
    """``GRANT ROLE role TO to grantee``."""
    return grant("USAGE", on="role", name=role, to=to, grantee=grantee)


def base() -> Catalog:
    """SALES (ORDERS, view DAILY) and HR (PAY); principals alice and bob; two roles."""
    return apply(
        catalog_with_default_zone(),
        c.CreateSchema(name="SALES"),
        create_table("ORDERS", schema="SALES"),
        create_view("DAILY", "SELECT ID FROM ORDERS", schema="SALES"),
        c.CreateSchema(name="HR"),
        create_table("PAY", schema="HR"),
        principal("alice"),
        principal("bob"),
        CreateRoleCommand(name="ANALYSTS"),
        CreateRoleCommand(name="STAFF"),
    )


def held(cat: Catalog) -> set[Grant]:
    """Return every grant of ``cat`` by the names of what it is on and to."""
    return {
        (
            str(g.privilege),
            str(g.on),
            securable_name(g.on, g.on_id, cat) or "?",
            grantee_name(g.to, g.to_id, cat) or "?",
        )
        for g in cat.grants()
    }


def test_create_role_and_drop_it() -> None:
    cat = catalog_with_default_zone()
    prepared = run(cat, CreateRoleCommand(name="ANALYSTS"))
    assert entry_types(prepared) == ["new_role", "object_id_gen"]
    made = prepared.catalog
    role = made.role("ANALYSTS")
    assert (role.id, made.object_id_gen) == (cat.object_id_gen, cat.object_id_gen + 1)
    assert made.roles() == [role] and made.role_by_id(role.id) == role
    dropped = run(made, DropRoleCommand(name="ANALYSTS"))
    assert list(dropped.entries) == [DropRoleEntry(role_id=role.id)]
    assert dropped.catalog.roles() == [] and dropped.catalog.find_role("ANALYSTS") is None


def test_a_role_name_is_taken_once_and_a_missing_one_is_named() -> None:
    cat = base()
    exists = refused(cat, ErrorCode.ROLE_EXISTS, CreateRoleCommand(name="ANALYSTS"))
    assert isinstance(exists, AlreadyExistsError) and "ANALYSTS" in exists.message
    again = run(cat, CreateRoleCommand(name="ANALYSTS", if_not_exists=True))
    assert again.entries == () and again.applied == (False,)
    missing = refused(cat, ErrorCode.ROLE_NOT_FOUND, DropRoleCommand(name="NOBODY"))
    assert isinstance(missing, NotFoundError) and "NOBODY" in missing.message
    assert run(cat, DropRoleCommand(name="NOBODY", if_exists=True)).applied == (False,)
    # names are case-sensitive, like every other name in the catalog
    assert apply(cat, CreateRoleCommand(name="analysts")).find_role("analysts") is not None


def test_one_grant_gives_several_privileges_and_again_gives_nothing() -> None:
    cat = base()
    first = grant(
        "SELECT", "MODIFY", "SELECT", on="table", schema="SALES", name="ORDERS", grantee="alice"
    )
    prepared = run(cat, first)
    assert entry_types(prepared) == ["new_grant", "new_grant", "object_id_gen"]
    made = prepared.catalog
    orders_id, alice_id = made.table("SALES", "ORDERS").id, made.principal("alice").id
    orders, alice = (SecurableKind.TABLE, orders_id), (GranteeKind.USER, alice_id)
    assert [(g.id, g.privilege, g.securable, g.grantee) for g in made.grants()] == [
        (cat.object_id_gen, Privilege.SELECT, orders, alice),
        (cat.object_id_gen + 1, Privilege.MODIFY, orders, alice),
    ]
    assert made.object_id_gen == cat.object_id_gen + 2
    again = run(made, first)
    assert again.entries == () and again.applied == (False,)
    more = run(
        made, grant("ALTER", "SELECT", on="table", schema="SALES", name="ORDERS", grantee="alice")
    )
    assert [e.grant.privilege for e in more.entries if isinstance(e, NewGrantEntry)] == [
        Privilege.ALTER
    ]


def test_a_revoke_takes_several_privileges_and_what_is_not_held_is_left_alone() -> None:
    cat = apply(base(), grant("USAGE", "CREATE", "DROP", on="schema", name="SALES", grantee="bob"))
    ids = {g.privilege: g.id for g in cat.grants()}
    prepared = run(cat, revoke("CREATE", "DROP", "ALTER", on="schema", name="SALES", grantee="bob"))
    assert list(prepared.entries) == [
        DropGrantEntry(grant_id=ids[Privilege.CREATE]),
        DropGrantEntry(grant_id=ids[Privilege.DROP]),
    ]
    assert held(prepared.catalog) == {("USAGE", "schema", "SALES", "bob")}
    nothing = run(prepared.catalog, revoke("CREATE", on="schema", name="SALES", grantee="bob"))
    assert nothing.entries == () and nothing.applied == (False,)
    assert run(cat, revoke("USAGE", on="schema", name="HR", grantee="bob")).entries == ()


_MISSING: list[tuple[dict[str, str], ErrorCode, str]] = [
    ({"on": "catalog", "grantee": "nobody"}, ErrorCode.PRINCIPAL_NOT_FOUND, "nobody"),
    ({"on": "catalog", "to": "role", "grantee": "NOBODY"}, ErrorCode.ROLE_NOT_FOUND, "NOBODY"),
    ({"on": "role", "name": "NOBODY", "grantee": "alice"}, ErrorCode.ROLE_NOT_FOUND, "NOBODY"),
    ({"on": "schema", "name": "GONE", "grantee": "alice"}, ErrorCode.SCHEMA_NOT_FOUND, "GONE"),
    (
        {"on": "table", "schema": "GONE", "name": "ORDERS", "grantee": "alice"},
        ErrorCode.SCHEMA_NOT_FOUND,
        "GONE",
    ),
    (
        {"on": "table", "schema": "SALES", "name": "GONE", "grantee": "alice"},
        ErrorCode.TABLE_NOT_FOUND,
        "GONE",
    ),
    (
        {"on": "view", "schema": "SALES", "name": "ORDERS", "grantee": "alice"},
        ErrorCode.VIEW_NOT_FOUND,
        "ORDERS",
    ),
    (
        {"on": "table", "schema": "SALES", "name": "ORDERS", "grantee": "nobody"},
        ErrorCode.PRINCIPAL_NOT_FOUND,
        "nobody",
    ),
]


@pytest.mark.parametrize("make", [grant, revoke])
@pytest.mark.parametrize(("names", "code", "named"), _MISSING)
def test_an_unknown_object_or_grantee_is_refused_by_name(
    make: Any, names: dict[str, str], code: ErrorCode, named: str
) -> None:
    privilege = "USAGE" if names["on"] in ("role", "schema") else "SELECT"
    assert named in refused(base(), code, make(privilege, **names)).message


@pytest.mark.parametrize(
    ("privilege", "on", "names", "allowed"),
    [
        (
            "CREATE",
            "table",
            {"schema": "SALES", "name": "ORDERS"},
            "ALTER, DROP, MANAGE_GRANTS, MODIFY, OWNERSHIP, SELECT",
        ),
        (
            "USAGE",
            "table",
            {"schema": "SALES", "name": "ORDERS"},
            "ALTER, DROP, MANAGE_GRANTS, MODIFY, OWNERSHIP, SELECT",
        ),
        (
            "MODIFY",
            "view",
            {"schema": "SALES", "name": "DAILY"},
            "ALTER, DROP, MANAGE_GRANTS, OWNERSHIP, SELECT",
        ),
        ("SELECT", "role", {"name": "ANALYSTS"}, "USAGE"),
    ],
)
def test_a_privilege_an_object_cannot_have_is_refused_saying_what_it_can(
    privilege: str, on: str, names: dict[str, str], allowed: str
) -> None:
    error = bad_shape(lambda: grant(privilege, on=on, grantee="alice", **names))
    assert f"{privilege} cannot be granted on a {on}; it may be granted {allowed}" in error.message
    bad_shape(lambda: revoke("SELECT", privilege, on=on, grantee="alice", **names))


@pytest.mark.parametrize(
    ("on", "names", "words"),
    [
        ("catalog", {"name": "X"}, "a grant on catalog takes no name"),
        ("schema", {}, "a grant on schema needs name"),
        ("schema", {"name": "SALES", "schema": "SALES"}, "a grant on schema takes no schema"),
        ("table", {"name": "ORDERS"}, "a grant on table needs schema"),
        ("role", {"name": "R", "schema": "S"}, "a grant on role takes no schema"),
    ],
)
def test_an_object_is_named_as_its_kind_needs(on: str, names: dict[str, str], words: str) -> None:
    assert words in bad_shape(lambda: grant("USAGE", on=on, grantee="alice", **names)).message


def test_a_grant_names_at_least_one_privilege_and_a_known_kind() -> None:
    bad_shape(lambda: GrantCommand(privileges=(), on="catalog", to="user", grantee="alice"))
    bad_shape(lambda: grant("SELECT", on="index", name="I", grantee="alice"))
    bad_shape(lambda: grant("SELECT", on="catalog", to="group", grantee="alice"))
    bad_shape(lambda: grant("READ", on="catalog", grantee="alice"))


def test_roles_granted_in_a_circle_are_refused() -> None:
    cat = apply(base(), CreateRoleCommand(name="ADMINS"), member("ANALYSTS", "STAFF", to="role"))
    itself = refused(cat, ErrorCode.ROLE_CYCLE, member("ANALYSTS", "ANALYSTS", to="role"))
    assert "a role cannot hold itself" in itself.message
    direct = refused(cat, ErrorCode.ROLE_CYCLE, member("STAFF", "ANALYSTS", to="role"))
    assert "granting role STAFF to role ANALYSTS would make a cycle: STAFF holds ANALYSTS" in (
        direct.message
    )
    chained = apply(cat, member("STAFF", "ADMINS", to="role"))  # ADMINS ⊃ STAFF ⊃ ANALYSTS
    transitive = refused(chained, ErrorCode.ROLE_CYCLE, member("ADMINS", "ANALYSTS", to="role"))
    assert "ADMINS holds ANALYSTS" in transitive.message
    # a role held twice, along two paths, is no cycle; nor is a role given to a user
    assert run(chained, member("ANALYSTS", "ADMINS", to="role")).applied == (True,)
    assert run(chained, member("ADMINS", "alice")).applied == (True,)


def test_the_last_owner_of_the_catalog_stays() -> None:
    cat = apply(base(), grant("OWNERSHIP", "SELECT", on="catalog", to="role", grantee="STAFF"))
    owner = revoke("SELECT", "OWNERSHIP", on="catalog", to="role", grantee="STAFF")
    error = refused(cat, ErrorCode.LAST_CATALOG_OWNER, owner)
    assert "grant OWNERSHIP ON CATALOG to another principal or role first" in error.message
    refused(cat, ErrorCode.LAST_CATALOG_OWNER, DropRoleCommand(name="STAFF"))
    assert run(cat, revoke("SELECT", on="catalog", to="role", grantee="STAFF")).applied == (True,)
    # with a second owner, either may go, but not both
    two = apply(cat, grant("OWNERSHIP", on="catalog", grantee="alice"))
    assert not any(g.to is GranteeKind.ROLE for g in apply(two, owner).grants())
    assert apply(two, DropRoleCommand(name="STAFF")).find_role("STAFF") is None
    refused(
        two,
        ErrorCode.LAST_CATALOG_OWNER,
        DropRoleCommand(name="STAFF"),
        DropPrincipalCommand(name="alice"),
    )
    only_alice = apply(two, owner)
    refused(only_alice, ErrorCode.LAST_CATALOG_OWNER, DropPrincipalCommand(name="alice"))
    # a catalog nobody was made owner of may stay so; ownership of a schema is no owner
    plain = apply(base(), grant("OWNERSHIP", on="schema", name="SALES", grantee="alice"))
    assert run(plain, DropPrincipalCommand(name="alice")).applied == (True,)


def _grants_taken(cat: Catalog, command: c.CommandBase) -> tuple[list[str], set[Grant]]:
    """Return the entry types the drop makes and the grants left after it."""
    prepared = run(cat, command)
    return entry_types(prepared), held(prepared.catalog)


def test_a_drop_takes_the_grants_on_its_object_before_it_in_the_same_batch() -> None:
    cat = apply(
        base(),
        grant("SELECT", "MODIFY", on="table", schema="SALES", name="ORDERS", grantee="alice"),
        grant("SELECT", on="view", schema="SALES", name="DAILY", grantee="alice"),
        grant("USAGE", on="schema", name="SALES", to="role", grantee="ANALYSTS"),
        grant("SELECT", on="table", schema="HR", name="PAY", grantee="bob"),
    )
    types, left = _grants_taken(cat, c.DropTable(schema="SALES", name="ORDERS"))
    assert types[:2] == ["drop_grant", "drop_grant"] and types[-1] == "drop_table"
    assert ("SELECT", "table", "SALES.ORDERS", "alice") not in left and len(left) == 3
    types, left = _grants_taken(cat, c.DropView(schema="SALES", name="DAILY"))
    assert types == ["drop_grant", "drop_view"] and len(left) == 4
    types, left = _grants_taken(cat, c.DropSchema(name="SALES", cascade=True))
    assert types.index("drop_grant") < types.index("drop_schema") and types.count("drop_grant") == 4
    assert left == {("SELECT", "table", "HR.PAY", "bob")}


def test_a_dropped_principal_or_role_takes_its_grants_and_its_memberships() -> None:
    cat = apply(
        base(),
        member("ANALYSTS", "alice"),
        member("ANALYSTS", "STAFF", to="role"),
        grant("SELECT", on="table", schema="SALES", name="ORDERS", grantee="alice"),
        grant("SELECT", on="schema", name="HR", to="role", grantee="ANALYSTS"),
        grant("SELECT", on="schema", name="HR", to="role", grantee="STAFF"),
    )
    prepared = run(cat, DropPrincipalCommand(name="alice"))
    assert entry_types(prepared) == ["drop_grant", "drop_grant", "drop_principal"]
    assert {g[3] for g in held(prepared.catalog)} == {"ANALYSTS", "STAFF"}
    prepared = run(cat, DropRoleCommand(name="ANALYSTS"))
    assert entry_types(prepared) == ["drop_grant", "drop_grant", "drop_grant", "drop_role"]
    assert held(prepared.catalog) == {
        ("SELECT", "table", "SALES.ORDERS", "alice"),
        ("SELECT", "schema", "HR", "STAFF"),
    }


def test_a_rename_keeps_the_grants_which_then_name_the_new_name() -> None:
    cat = apply(
        base(),
        grant("SELECT", on="table", schema="SALES", name="ORDERS", grantee="alice"),
        grant("SELECT", on="view", schema="SALES", name="DAILY", grantee="alice"),
    )
    renamed = apply(
        cat,
        c.RenameTable(schema="SALES", name="ORDERS", new_name="SOLD"),
        c.RenameView(schema="SALES", name="DAILY", new_name="DAILY_PAY", new_schema="HR"),
    )
    assert renamed.grants() == cat.grants()
    assert held(renamed) == {
        ("SELECT", "table", "SALES.SOLD", "alice"),
        ("SELECT", "view", "HR.DAILY_PAY", "alice"),
    }


def test_a_batch_creates_a_schema_its_tables_and_their_grants_as_one_version() -> None:
    cat = base()
    batch: list[c.CommandBase] = [
        c.CreateSchema(name="LAKE"),
        create_table("EVENTS", schema="LAKE"),
        create_table("USERS", schema="LAKE"),
        CreateRoleCommand(name="READERS"),
        grant("USAGE", on="schema", name="LAKE", to="role", grantee="READERS"),
        grant("SELECT", on="table", schema="LAKE", name="EVENTS", to="role", grantee="READERS"),
        grant("SELECT", "MODIFY", on="table", schema="LAKE", name="USERS", grantee="bob"),
        member("READERS", "alice"),
    ]
    prepared = run(cat, *batch)
    update = VersionedUpdate(
        version=cat.version + 1, proposal_ts=5 << 16, delay_ms=0, entries=prepared.entries
    )
    after = update.apply_to(cat)
    assert after.version == cat.version + 1
    assert (
        after.digest() == prepared.catalog.with_version(after.version, after.activation_ts).digest()
    )
    assert held(after) - held(cat) == {
        ("USAGE", "schema", "LAKE", "READERS"),
        ("SELECT", "table", "LAKE.EVENTS", "READERS"),
        ("SELECT", "table", "LAKE.USERS", "bob"),
        ("MODIFY", "table", "LAKE.USERS", "bob"),
        ("USAGE", "role", "READERS", "alice"),
    }
    ids = [g.id for g in after.grants()]
    assert len(set(ids)) == len(ids) and after.object_id_gen > max(ids)
    # all or nothing: the last command fails, and nothing of the batch is made
    error = refused(cat, ErrorCode.ROLE_NOT_FOUND, *batch, member("NOBODY", "alice"))
    assert error.position is not None and error.position.statement == len(batch) + 1


def test_grants_are_found_by_object_and_by_grantee_oldest_first() -> None:
    cat = apply(
        base(),
        grant("USAGE", on="schema", name="SALES", grantee="bob"),
        grant("SELECT", on="schema", name="SALES", to="role", grantee="STAFF"),
        grant("USAGE", on="schema", name="HR", grantee="bob"),
    )
    sales, bob = cat.schema("SALES").id, cat.principal("bob").id
    on_sales = cat.access.grants_on((SecurableKind.SCHEMA, sales))
    assert [(g.privilege, g.to) for g in on_sales] == [
        (Privilege.USAGE, GranteeKind.USER),
        (Privilege.SELECT, GranteeKind.ROLE),
    ]
    to_bob = cat.access.grants_to((GranteeKind.USER, bob))
    assert [g.on_id for g in to_bob] == [sales, cat.schema("HR").id]
    assert [g.id for g in to_bob] == sorted(g.id for g in to_bob)
    assert cat.access.grants_on((SecurableKind.CATALOG, CATALOG_ID)) == []
    with pytest.raises(NotFoundError) as gone:
        cat.grant_by_id(10_000)
    assert gone.value.code is ErrorCode.GRANT_NOT_FOUND
    with pytest.raises(NotFoundError):
        cat.role_by_id(10_000)


def test_entries_change_roles_and_grants_by_id() -> None:
    cat = base()
    role = cat.role("STAFF")
    renamed = NewRoleEntry(role=role.model_copy(update={"name": "TEAM"})).apply(cat)
    assert renamed.find_role("STAFF") is None and renamed.role("TEAM").id == role.id
    made = apply(cat, member("STAFF", "alice"))
    (g,) = made.grants()
    assert DropGrantEntry(grant_id=g.id).apply(made).grants() == []
    with pytest.raises(NotFoundError):
        DropGrantEntry(grant_id=g.id + 1).apply(made)
    with pytest.raises(NotFoundError):
        DropRoleEntry(role_id=10_000).apply(made)
