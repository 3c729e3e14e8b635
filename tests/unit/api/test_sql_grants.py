"""Roles and grants in SQL: ``CREATE/DROP ROLE``, ``GRANT``, ``REVOKE`` and ``SHOW GRANTS``."""

from __future__ import annotations

import pytest

from api.sql import ShowGrants, parse_sql, show_grants
from catalog import Catalog, ErrorCode, NotFoundError, ValidationError, prepare
from catalog import commands as c
from catalog.access import Caller, holds
from catalog.commands import CommandBase
from catalog.commands.principals import CreatePrincipalCommand
from catalog.descriptors import GranteeKind, PrincipalRole, Privilege, SecurableKind
from catalog.descriptors.principals import hash_secret
from tests.unit.catalog.helpers import apply, catalog_with_default_zone

P = Privilege
ON = SecurableKind
TO = GranteeKind


def grant(*privileges: Privilege, on: SecurableKind = ON.TABLE, **kw: object) -> c.GrantCommand:
    object_ = {"schema": "PUBLIC", "name": "T"} if on is ON.TABLE else {}
    return c.GrantCommand(
        privileges=privileges, on=on, **{**object_, "to": TO.USER, "grantee": "U", **kw}
    )


def revoke(*privileges: Privilege, on: SecurableKind = ON.TABLE, **kw: object) -> c.RevokeCommand:
    object_ = {"schema": "PUBLIC", "name": "T"} if on is ON.TABLE else {}
    return c.RevokeCommand(
        privileges=privileges, on=on, **{**object_, "to": TO.USER, "grantee": "U", **kw}
    )


def dumps(commands: list[CommandBase]) -> list[dict[str, object]]:
    return [command.model_dump() for command in commands]


ACCEPTED: list[tuple[str, list[CommandBase]]] = [
    # --- roles
    ("CREATE ROLE analysts", [c.CreateRole(name="ANALYSTS")]),
    ('create role if not exists "Analysts"', [c.CreateRole(name="Analysts", if_not_exists=True)]),
    ("DROP ROLE analysts", [c.DropRole(name="ANALYSTS")]),
    ('DROP ROLE IF EXISTS "a b"', [c.DropRole(name="a b", if_exists=True)]),
    # --- GRANT on each kind of object
    ("GRANT CREATE ON CATALOG TO USER u", [grant(P.CREATE, on=ON.CATALOG)]),
    (
        "GRANT USAGE ON SCHEMA shop TO ROLE r",
        [grant(P.USAGE, on=ON.SCHEMA, name="SHOP", to=TO.ROLE, grantee="R")],
    ),
    ("GRANT SELECT ON t TO USER u", [grant(P.SELECT)]),
    ("GRANT SELECT ON TABLE t TO USER u", [grant(P.SELECT)]),
    ("GRANT SELECT ON shop.orders TO USER u", [grant(P.SELECT, schema="SHOP", name="ORDERS")]),
    (
        "GRANT SELECT ON TABLE shop.orders TO USER u",
        [grant(P.SELECT, schema="SHOP", name="ORDERS")],
    ),
    ("GRANT SELECT ON VIEW v TO USER u", [grant(P.SELECT, on=ON.VIEW, schema="PUBLIC", name="V")]),
    ("GRANT SELECT ON VIEW s.v TO USER u", [grant(P.SELECT, on=ON.VIEW, schema="S", name="V")]),
    # --- several privileges, in the order written; MANAGE GRANTS in either spelling
    (
        "GRANT select, modify, alter, drop, manage grants, ownership ON t TO USER u",
        [grant(P.SELECT, P.MODIFY, P.ALTER, P.DROP, P.MANAGE_GRANTS, P.OWNERSHIP)],
    ),
    ("GRANT MANAGE_GRANTS, SELECT ON t TO USER u", [grant(P.MANAGE_GRANTS, P.SELECT)]),
    # --- a table or schema that is named CATALOG or ROLE
    ("GRANT SELECT ON catalog.t TO USER u", [grant(P.SELECT, schema="CATALOG")]),
    ("GRANT SELECT ON TABLE catalog TO USER u", [grant(P.SELECT, name="CATALOG")]),
    ('GRANT SELECT ON "CATALOG" TO USER u', [grant(P.SELECT, name="CATALOG")]),
    # --- roles granted to users and roles
    ("GRANT ROLE r TO USER u", [grant(P.USAGE, on=ON.ROLE, name="R")]),
    ("GRANT ROLE r TO ROLE r2", [grant(P.USAGE, on=ON.ROLE, name="R", to=TO.ROLE, grantee="R2")]),
    # --- REVOKE, the same shapes with FROM
    ("REVOKE SELECT, MODIFY ON s.t FROM USER u", [revoke(P.SELECT, P.MODIFY, schema="S")]),
    (
        "REVOKE DROP ON CATALOG FROM ROLE r",
        [revoke(P.DROP, on=ON.CATALOG, to=TO.ROLE, grantee="R")],
    ),
    ("REVOKE USAGE ON SCHEMA s FROM USER u", [revoke(P.USAGE, on=ON.SCHEMA, name="S")]),
    (
        "REVOKE SELECT ON VIEW v FROM USER u",
        [revoke(P.SELECT, on=ON.VIEW, schema="PUBLIC", name="V")],
    ),
    ("REVOKE ROLE r FROM USER u", [revoke(P.USAGE, on=ON.ROLE, name="R")]),
    (
        "REVOKE ROLE r FROM ROLE r2",
        [revoke(P.USAGE, on=ON.ROLE, name="R", to=TO.ROLE, grantee="R2")],
    ),
]


@pytest.mark.parametrize(("sql", "expected"), ACCEPTED, ids=[s for s, _ in ACCEPTED])
def test_each_form_parses_into_its_command(sql: str, expected: list[CommandBase]) -> None:
    assert dumps(parse_sql(sql)) == dumps(expected)


def test_unquoted_names_are_upper_cased_and_quoted_ones_kept() -> None:
    sql = 'GRANT SELECT ON "Shop"."Orders" TO USER "alice"; GRANT ROLE "Ops" TO ROLE "Dev Team"'
    assert dumps(parse_sql(sql)) == dumps(
        [
            grant(P.SELECT, schema="Shop", name="Orders", grantee="alice"),
            grant(P.USAGE, on=ON.ROLE, name="Ops", to=TO.ROLE, grantee="Dev Team"),
        ]
    )
    # A principal's name is an identifier like any other: unquoted, it is upper-cased.
    (unquoted,) = parse_sql("GRANT SELECT ON t TO USER alice")
    assert isinstance(unquoted, c.GrantCommand)
    assert unquoted.grantee == "ALICE"
    (dashed,) = parse_sql('REVOKE ROLE r FROM USER "etl-job"')
    assert isinstance(dashed, c.RevokeCommand)
    assert dashed.grantee == "etl-job"


ALL_ON: list[tuple[str, SecurableKind, tuple[Privilege, ...]]] = [
    ("CATALOG", ON.CATALOG, tuple(Privilege)),
    ("SCHEMA s", ON.SCHEMA, tuple(Privilege)),
    ("TABLE t", ON.TABLE, (P.SELECT, P.MODIFY, P.ALTER, P.DROP, P.MANAGE_GRANTS, P.OWNERSHIP)),
    ("VIEW v", ON.VIEW, (P.SELECT, P.ALTER, P.DROP, P.MANAGE_GRANTS, P.OWNERSHIP)),
]


@pytest.mark.parametrize(("target", "kind", "privileges"), ALL_ON, ids=[t for t, *_ in ALL_ON])
@pytest.mark.parametrize("all_", ["ALL", "ALL PRIVILEGES", "all privileges"])
def test_all_privileges_are_every_one_the_kind_of_object_may_be_granted(
    all_: str, target: str, kind: SecurableKind, privileges: tuple[Privilege, ...]
) -> None:
    for verb, to in (("GRANT", "TO"), ("REVOKE", "FROM")):
        (command,) = parse_sql(f"{verb} {all_} ON {target} {to} ROLE r")
        assert isinstance(command, c.GrantCommand | c.RevokeCommand)
        assert command.on is kind
        assert command.privileges == privileges


REFUSED: list[tuple[str, str]] = [
    # roles
    ("CREATE ROLE", "CREATE ROLE: expected a role name, found end of statement"),
    ("CREATE ROLE s.r", "CREATE ROLE: expected end of statement, found '.'"),
    ("DROP ROLE IF EXISTS", "DROP ROLE: expected a role name"),
    ("CREATE ROLE r WITH LOGIN", "CREATE ROLE: expected end of statement, found 'WITH'"),
    # privileges
    (
        "GRANT INSERT ON t TO USER u",
        "GRANT: unknown privilege 'INSERT': the privileges are USAGE, SELECT, MODIFY, CREATE, "
        "ALTER, DROP, MANAGE GRANTS, OWNERSHIP, or ALL PRIVILEGES",
    ),
    ("GRANT analysts TO USER u", "a role is granted with GRANT ROLE r"),
    ("REVOKE analysts FROM USER u", "a role is revoked with REVOKE ROLE r"),
    ("GRANT", "GRANT: expected a privilege or ROLE r, found end of statement"),
    ("GRANT ON t TO USER u", "GRANT: expected a privilege or ROLE r, found 'ON'"),
    ("GRANT MANAGE ON t TO USER u", "unknown privilege 'MANAGE'"),
    ('GRANT "SELECT" ON t TO USER u', "unknown privilege 'SELECT'"),
    ("GRANT SELECT, SELECT ON t TO USER u", "GRANT: privilege SELECT is listed twice"),
    ("GRANT ALL, SELECT ON t TO USER u", "ALL PRIVILEGES stands alone"),
    ("GRANT SELECT, ALL ON t TO USER u", "ALL PRIVILEGES stands alone"),
    (
        "GRANT USAGE ON t TO USER u",
        "GRANT: USAGE does not apply to a table; a table's privileges are SELECT, MODIFY, "
        "ALTER, DROP, MANAGE GRANTS, OWNERSHIP",
    ),
    ("GRANT MODIFY, CREATE ON VIEW v TO USER u", "MODIFY and CREATE do not apply to a view"),
    # objects
    ("GRANT SELECT t TO USER u", "GRANT: expected ON and the object after the privileges"),
    ("GRANT SELECT ON TO USER u", "GRANT: expected the object after ON (CATALOG, SCHEMA s"),
    ("GRANT SELECT ON a.b.c TO USER u", "only [schema.]name is supported for a table"),
    ("GRANT USAGE ON SCHEMA a.b TO USER u", "a schema name takes no qualifier"),
    ("GRANT SELECT ON DATABASE d TO USER u", "GRANT: ON DATABASE ... is not supported"),
    ("GRANT SELECT ON ALL TABLES IN SCHEMA s TO USER u", "ON ALL ... is not supported"),
    ("GRANT USAGE ON ROLE r TO USER u", "a role itself is granted with GRANT ROLE r TO"),
    ("REVOKE USAGE ON ROLE r FROM USER u", "a role itself is revoked with REVOKE ROLE r FROM"),
    ("GRANT ROLE TO USER u", "GRANT: expected TO USER u or TO ROLE r, found 'USER'"),
    # grantees
    ("GRANT SELECT ON t", "GRANT: expected TO USER u or TO ROLE r, found end of statement"),
    ("GRANT ROLE r", "GRANT: expected TO USER u or TO ROLE r, found end of statement"),
    ("GRANT SELECT ON t FROM USER u", "GRANT: a grant names its grantee with TO, not FROM"),
    ("REVOKE SELECT ON t TO USER u", "REVOKE: a revoke names its grantee with FROM, not TO"),
    ("REVOKE ROLE r TO ROLE q", "REVOKE: a revoke names its grantee with FROM, not TO"),
    ("REVOKE SELECT ON t", "REVOKE: expected FROM USER u or FROM ROLE r, found end of statement"),
    ("GRANT SELECT ON t TO alice", "GRANT: expected USER or ROLE after TO"),
    ("GRANT SELECT ON t TO PUBLIC", "expected USER or ROLE after TO"),
    ("GRANT SELECT ON t TO USER", "GRANT: expected a user name, found end of statement"),
    (
        "GRANT SELECT ON t TO USER etl-job",
        "a user name holding '-' must be quoted, as in USER \"etl-job\"",
    ),
    ("GRANT SELECT ON t TO USER a, USER b", "one grantee per statement"),
    ("GRANT SELECT ON t TO USER u WITH GRANT OPTION", "WITH ... OPTION is not supported"),
    ("GRANT ROLE r TO ROLE q WITH ADMIN OPTION", "WITH ... OPTION is not supported"),
    ("REVOKE SELECT ON t FROM USER u CASCADE", "expected end of statement, found 'CASCADE'"),
    # a read is no part of a batch
    ("SHOW GRANTS", "SHOW GRANTS: it reads grants and changes nothing"),
    ("CREATE ROLE r; SHOW GRANTS TO ROLE r", "statement 2"),
]


@pytest.mark.parametrize(("sql", "message"), REFUSED, ids=[s for s, _ in REFUSED])
def test_refusals_name_the_statement_and_what_is_wrong(sql: str, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_sql(sql)
    assert info.value.code is ErrorCode.VALIDATION_ERROR
    assert message in info.value.message
    assert info.value.message.startswith("statement ")


def test_a_refusal_of_the_command_itself_is_named_too() -> None:
    with pytest.raises(ValidationError) as info:
        parse_sql('CREATE ROLE "a/b"')
    assert info.value.message.startswith('statement 1 "CREATE ROLE "a/b"": CREATE ROLE: invalid ')
    assert "a name must not contain '/'" in info.value.message


SCRIPT = """
CREATE SCHEMA shop;
CREATE TABLE shop.orders (id BIGINT PRIMARY KEY, total DECIMAL(10, 2));
CREATE ROLE analysts;
GRANT USAGE ON SCHEMA shop TO ROLE analysts;
GRANT SELECT ON shop.orders TO ROLE analysts;
GRANT ROLE analysts TO USER "alice";
"""


def test_a_script_of_schemas_tables_roles_and_grants_is_one_batch_in_order() -> None:
    commands = parse_sql(SCRIPT)
    assert [type(command) for command in commands] == [
        c.CreateSchemaCommand,
        c.CreateTableCommand,
        c.CreateRoleCommand,
        c.GrantCommand,
        c.GrantCommand,
        c.GrantCommand,
    ]
    assert dumps(commands[2:]) == dumps(
        [
            c.CreateRole(name="ANALYSTS"),
            grant(P.USAGE, on=ON.SCHEMA, name="SHOP", to=TO.ROLE, grantee="ANALYSTS"),
            grant(P.SELECT, schema="SHOP", name="ORDERS", to=TO.ROLE, grantee="ANALYSTS"),
            grant(P.USAGE, on=ON.ROLE, name="ANALYSTS", grantee="alice"),
        ]
    )


def _with_alice() -> tuple[Catalog, int]:
    alice = CreatePrincipalCommand(
        name="alice",
        role=PrincipalRole.NONE,
        client_id="client-id-0000000001",
        secret_hash=hash_secret("s3cret"),
    )
    cat = apply(catalog_with_default_zone(), alice)
    return cat, cat.principal("alice").id


def test_the_script_applies_to_a_catalog_end_to_end() -> None:
    cat, alice_id = _with_alice()
    prepared = prepare(cat, parse_sql(SCRIPT))
    assert all(prepared.applied)
    after = prepared.catalog
    orders = after.table("SHOP", "ORDERS")
    role = after.role("ANALYSTS")
    alice = Caller(alice_id)
    assert holds(after, alice, P.SELECT, ON.TABLE, orders.id)  # through the role, with USAGE
    assert not holds(after, alice, P.MODIFY, ON.TABLE, orders.id)
    assert {(g.privilege, g.on, g.on_id, g.to) for g in after.access.grants.values()} == {
        (P.USAGE, ON.SCHEMA, after.schema("SHOP").id, TO.ROLE),
        (P.SELECT, ON.TABLE, orders.id, TO.ROLE),
        (P.USAGE, ON.ROLE, role.id, TO.USER),
    }

    revoked = prepare(after, parse_sql('REVOKE ROLE analysts FROM USER "alice"')).catalog
    assert not holds(revoked, alice, P.SELECT, ON.TABLE, orders.id)


def test_an_unquoted_principal_name_is_upper_cased_and_so_not_found() -> None:
    cat, _ = _with_alice()
    commands = parse_sql("CREATE ROLE r; GRANT ROLE r TO USER alice")
    with pytest.raises(NotFoundError) as info:
        prepare(cat, commands)
    assert info.value.code is ErrorCode.PRINCIPAL_NOT_FOUND


SHOWN: list[tuple[str, ShowGrants]] = [
    ("SHOW GRANTS", ShowGrants()),
    ("show grants;", ShowGrants()),
    ("  SHOW GRANTS -- every grant\n", ShowGrants()),
    ("SHOW GRANTS ON CATALOG", ShowGrants(on=ON.CATALOG)),
    ("SHOW GRANTS ON SCHEMA shop", ShowGrants(on=ON.SCHEMA, name="SHOP")),
    ("SHOW GRANTS ON TABLE shop.orders", ShowGrants(on=ON.TABLE, schema="SHOP", name="ORDERS")),
    ("SHOW GRANTS ON TABLE orders", ShowGrants(on=ON.TABLE, schema="PUBLIC", name="ORDERS")),
    ("SHOW GRANTS ON orders", ShowGrants(on=ON.TABLE, schema="PUBLIC", name="ORDERS")),
    ('SHOW GRANTS ON VIEW "S"."v"', ShowGrants(on=ON.VIEW, schema="S", name="v")),
    ('SHOW GRANTS TO USER "alice"', ShowGrants(to=TO.USER, grantee="alice")),
    ("SHOW GRANTS TO USER alice", ShowGrants(to=TO.USER, grantee="ALICE")),
    ('SHOW GRANTS TO USER "a;b"', ShowGrants(to=TO.USER, grantee="a;b")),
    ("SHOW GRANTS TO ROLE analysts", ShowGrants(to=TO.ROLE, grantee="ANALYSTS")),
]


@pytest.mark.parametrize(("sql", "expected"), SHOWN, ids=[s for s, _ in SHOWN])
def test_show_grants_reads_what_to_list(sql: str, expected: ShowGrants) -> None:
    assert show_grants(sql) == expected


@pytest.mark.parametrize(
    "sql",
    [
        "",
        "SHOW",
        "SHOW TABLES",
        "SELECT 1",
        "GRANT SELECT ON t TO USER u",
        "SHOW GRANTS; SHOW GRANTS",
        "SHOW GRANTS; DROP TABLE t",
        "CREATE ROLE r; SHOW GRANTS",
        "SHOW GRANTS TO USER 'unterminated",
    ],
)
def test_show_grants_is_none_for_anything_but_one_show_grants(sql: str) -> None:
    assert show_grants(sql) is None


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SHOW GRANTS FOR u", "SHOW GRANTS: expected ON object"),
        ("SHOW GRANTS ON", "SHOW GRANTS: expected a table name, found end of statement"),
        ("SHOW GRANTS ON ROLE r", "SHOW GRANTS: ON ROLE ... is not supported"),
        ("SHOW GRANTS TO alice", "SHOW GRANTS: expected USER or ROLE after TO"),
        ("SHOW GRANTS TO USER", "SHOW GRANTS: expected a user name"),
        ("SHOW GRANTS TO USER etl-job", "must be quoted"),
        ("SHOW GRANTS ON SCHEMA s TO ROLE r", "SHOW GRANTS: expected end of statement"),
    ],
)
def test_a_show_grants_outside_the_grammar_is_refused(sql: str, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        show_grants(sql)
    assert info.value.message.startswith("SHOW GRANTS: ")
    assert message in info.value.message
