"""Access decisions on one catalog version: ``holds``, ``sees`` and ``who_can``."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import Catalog, VersionedUpdate
from catalog.access import AccessPath, Caller, holds, sees, who_can
from catalog.commands.base import CommandBase
from catalog.commands.roles import CreateRoleCommand
from catalog.descriptors import (
    CATALOG_ID,
    GrantDescriptor,
    GranteeKind,
    PrincipalRole,
    Privilege,
    SecurableKind,
)
from catalog.descriptors.grants import PRIVILEGES_ON
from catalog.errors import CatalogError, ErrorCode
from tests.unit.catalog.helpers import apply, create_table, run
from tests.unit.catalog.test_grants import base, grant, member, principal, revoke

ALL = frozenset(Privilege)
CLUSTER_HOLDS = {
    PrincipalRole.NONE: frozenset[Privilege](),
    PrincipalRole.READER: frozenset({Privilege.USAGE, Privilege.SELECT}),
    PrincipalRole.WRITER: frozenset(
        {
            Privilege.USAGE,
            Privilege.SELECT,
            Privilege.MODIFY,
            Privilege.CREATE,
            Privilege.ALTER,
            Privilege.DROP,
        }
    ),
    PrincipalRole.ADMIN: ALL,
}
"""What each cluster-wide role holds on every object, written out (not read from the code)."""

Object = tuple[str, ...]
"""An object as the tests name it: ``("catalog",)``, ``("schema", S)``, ``("table", S, T)``."""


@functools.cache
def people() -> Catalog:
    """``base()`` with carol (reader), dave (writer), erin (admin) and a role MARKETING."""
    return apply(
        base(),
        principal("carol", PrincipalRole.READER),
        principal("dave", PrincipalRole.WRITER),
        principal("erin", PrincipalRole.ADMIN),
        CreateRoleCommand(name="MARKETING"),
    )


def securable(cat: Catalog, obj: Object) -> tuple[SecurableKind, int]:
    kind = SecurableKind(obj[0])
    if kind is SecurableKind.CATALOG:
        return kind, CATALOG_ID
    if kind is SecurableKind.SCHEMA:
        return kind, cat.schema(obj[1]).id
    if kind is SecurableKind.ROLE:
        return kind, cat.role(obj[1]).id
    if kind is SecurableKind.TABLE:
        return kind, cat.table(obj[1], obj[2]).id
    return kind, cat.view(obj[1], obj[2]).id


def caller(cat: Catalog, name: str | None, *groups: str) -> Caller:
    """The caller a token of principal ``name`` (None: an outside user) and ``groups`` is."""
    if name is None:
        return Caller(None, groups)
    found = cat.principal(name)
    return Caller(found.id, groups, found.role)


def can(cat: Catalog, who: Caller, privilege: str, *obj: str) -> bool:
    return holds(cat, who, Privilege(privilege), *securable(cat, obj))


def seen(cat: Catalog, who: Caller, *obj: str) -> bool:
    return sees(cat, who, *securable(cat, obj))


ORDERS, DAILY, PAY = (
    ("table", "SALES", "ORDERS"),
    ("view", "SALES", "DAILY"),
    ("table", "HR", "PAY"),
)


def test_a_grant_on_the_catalog_holds_below_it_where_the_schema_is_reached() -> None:
    cat = apply(people(), grant("SELECT", on="catalog", grantee="alice"))
    alice = caller(cat, "alice")
    assert can(cat, alice, "SELECT", "catalog") and can(cat, alice, "SELECT", "schema", "SALES")
    assert not can(cat, alice, "SELECT", *ORDERS)  # no USAGE on SALES
    sales = apply(cat, grant("USAGE", on="schema", name="SALES", grantee="alice"))
    assert can(sales, alice, "SELECT", *ORDERS) and can(sales, alice, "SELECT", *DAILY)
    assert not can(sales, alice, "SELECT", *PAY) and not can(sales, alice, "MODIFY", *ORDERS)
    everywhere = apply(sales, grant("USAGE", on="catalog", grantee="alice"))
    assert can(everywhere, alice, "SELECT", *PAY)
    assert not can(everywhere, caller(everywhere, "bob"), "SELECT", *PAY)


def test_a_grant_on_a_schema_holds_on_what_is_in_it_made_before_or_after() -> None:
    cat = apply(people(), grant("USAGE", "SELECT", on="schema", name="SALES", grantee="alice"))
    alice = caller(cat, "alice")
    assert can(cat, alice, "SELECT", *ORDERS) and can(cat, alice, "SELECT", *DAILY)
    assert not can(cat, alice, "SELECT", *PAY)
    assert not can(cat, alice, "SELECT", "catalog")  # privileges flow down, never up
    later = apply(cat, create_table("LATER", schema="SALES"))
    assert can(later, alice, "SELECT", "table", "SALES", "LATER")


def test_ownership_holds_every_privilege_on_its_object_and_below() -> None:
    cat = apply(people(), grant("OWNERSHIP", on="schema", name="SALES", grantee="alice"))
    alice = caller(cat, "alice")
    for privilege in Privilege:
        assert can(cat, alice, privilege, "schema", "SALES")
        assert can(cat, alice, privilege, *ORDERS) and can(cat, alice, privilege, *DAILY)
        assert not can(cat, alice, privilege, *PAY) and not can(cat, alice, privilege, "catalog")
    table_only = apply(
        people(), grant("OWNERSHIP", on="table", schema="SALES", name="ORDERS", grantee="bob")
    )
    bob = caller(table_only, "bob")
    assert not can(table_only, bob, "DROP", *ORDERS)  # owning a table does not reach its schema
    reached = apply(table_only, grant("USAGE", on="schema", name="SALES", grantee="bob"))
    assert all(can(reached, bob, p, *ORDERS) for p in PRIVILEGES_ON[SecurableKind.TABLE])
    assert not can(reached, bob, "SELECT", *DAILY)


def test_usage_on_the_schema_gates_its_tables_and_views_and_what_is_seen() -> None:
    cat = apply(
        people(), grant("SELECT", on="table", schema="SALES", name="ORDERS", grantee="alice")
    )
    alice = caller(cat, "alice")
    assert not can(cat, alice, "SELECT", *ORDERS) and not seen(cat, alice, *ORDERS)
    usage_only = apply(people(), grant("USAGE", on="schema", name="SALES", grantee="alice"))
    assert seen(usage_only, alice, "schema", "SALES")
    assert not seen(usage_only, alice, *ORDERS) and not can(usage_only, alice, "SELECT", *ORDERS)
    both = apply(cat, grant("USAGE", on="schema", name="SALES", grantee="alice"))
    assert can(both, alice, "SELECT", *ORDERS) and seen(both, alice, *ORDERS)
    assert not seen(both, alice, *DAILY) and not seen(both, alice, "schema", "HR")
    modify = apply(
        usage_only, grant("MODIFY", on="table", schema="SALES", name="ORDERS", grantee="alice")
    )
    assert seen(modify, alice, *ORDERS) and not can(modify, alice, "SELECT", *ORDERS)
    create = apply(usage_only, grant("CREATE", on="schema", name="SALES", grantee="alice"))
    assert not seen(create, alice, *ORDERS)  # may make tables there, not know the others


def test_roles_hand_on_what_they_hold_through_other_roles() -> None:
    cat = apply(
        people(),
        member("ANALYSTS", "alice"),
        member("STAFF", "ANALYSTS", to="role"),
        grant("USAGE", on="schema", name="SALES", to="role", grantee="ANALYSTS"),
        grant("SELECT", on="schema", name="SALES", to="role", grantee="STAFF"),
    )
    alice, bob = caller(cat, "alice"), caller(cat, "bob")
    assert can(cat, alice, "SELECT", *ORDERS) and not can(cat, bob, "SELECT", *ORDERS)
    assert can(cat, alice, "USAGE", "role", "STAFF")  # a member of STAFF, through ANALYSTS
    cut = apply(cat, revoke("USAGE", on="role", name="STAFF", to="role", grantee="ANALYSTS"))
    assert not can(cut, alice, "SELECT", *ORDERS) and can(cut, alice, "USAGE", "schema", "SALES")


def test_an_outside_users_groups_are_the_roles_of_their_names() -> None:
    cat = apply(
        people(),
        grant("USAGE", "SELECT", on="schema", name="SALES", to="role", grantee="MARKETING"),
        member("ANALYSTS", "MARKETING", to="role"),
        grant("MODIFY", on="table", schema="SALES", name="ORDERS", to="role", grantee="ANALYSTS"),
    )
    outsider = caller(cat, None, "MARKETING")
    assert can(cat, outsider, "SELECT", *ORDERS) and can(cat, outsider, "MODIFY", *ORDERS)
    assert not can(cat, outsider, "SELECT", *PAY)
    for nobody in (caller(cat, None), caller(cat, None, "NOBODY"), caller(cat, None, "STAFF")):
        assert not can(cat, nobody, "SELECT", *ORDERS) and not seen(cat, nobody, *ORDERS)
    assert not can(cat, caller(cat, "bob"), "SELECT", *ORDERS)
    assert can(cat, caller(cat, "bob", "MARKETING"), "SELECT", *ORDERS)
    assert can(cat, caller(cat, None, "NOBODY", "MARKETING"), "MODIFY", *ORDERS)


@pytest.mark.parametrize("role", list(PrincipalRole))
def test_a_cluster_role_is_a_floor_under_the_grants(role: PrincipalRole) -> None:
    cat = people()
    who = Caller(cat.principal("alice").id, role=role)
    for obj in (("catalog",), ("schema", "SALES"), ORDERS, DAILY, PAY):
        held = {p for p in Privilege if can(cat, who, p, *obj)}
        assert held == CLUSTER_HOLDS[role], obj
        if obj[0] != "catalog":
            assert seen(cat, who, *obj) is (Privilege.SELECT in CLUSTER_HOLDS[role]), obj
    granted = apply(
        cat, grant("MODIFY", on="table", schema="SALES", name="ORDERS", grantee="alice")
    )
    # a reader reaches every schema, so a grant on a table is enough; nobody else does
    assert can(granted, who, "MODIFY", *ORDERS) is (role is not PrincipalRole.NONE)
    assert can(granted, who, "ALTER", *ORDERS) is (Privilege.ALTER in CLUSTER_HOLDS[role])


def _path(
    cat: Catalog,
    grantee: tuple[str, str],
    through: Iterable[GrantDescriptor] = (),
    usage: Iterable[GrantDescriptor] = (),
    cluster_role: PrincipalRole | None = None,
) -> AccessPath:
    kind, name = grantee
    found = cat.principal(name).id if kind == "user" else cat.role(name).id
    return AccessPath((GranteeKind(kind), found), tuple(through), tuple(usage), cluster_role)


def test_who_can_says_who_holds_a_privilege_and_through_which_grants() -> None:
    cat = apply(
        people(),
        grant("SELECT", "USAGE", on="schema", name="SALES", to="role", grantee="ANALYSTS"),
        member("ANALYSTS", "alice"),
        grant("SELECT", on="table", schema="SALES", name="ORDERS", grantee="bob"),
        grant("OWNERSHIP", on="table", schema="SALES", name="ORDERS", to="role", grantee="STAFF"),
        grant("USAGE", on="catalog", to="role", grantee="STAFF"),
        grant("MODIFY", on="table", schema="SALES", name="ORDERS", grantee="carol"),
    )
    select, usage, alice_in, _, owner, staff_usage, carol_modify = cat.grants()
    orders = securable(cat, ORDERS)
    assert who_can(cat, Privilege.SELECT, *orders) == [
        _path(cat, ("user", "alice"), [select, alice_in], [usage, alice_in]),
        _path(cat, ("user", "carol"), cluster_role=PrincipalRole.READER),
        _path(cat, ("user", "dave"), cluster_role=PrincipalRole.WRITER),
        _path(cat, ("user", "erin"), cluster_role=PrincipalRole.ADMIN),
        _path(cat, ("role", "ANALYSTS"), [select], [usage]),
        _path(cat, ("role", "STAFF"), [owner], [staff_usage]),
    ]  # bob holds SELECT on ORDERS but cannot reach SALES
    assert who_can(cat, Privilege.MODIFY, *orders) == [
        _path(cat, ("user", "carol"), [carol_modify]),  # a reader reaches SALES by its role
        _path(cat, ("user", "dave"), cluster_role=PrincipalRole.WRITER),
        _path(cat, ("user", "erin"), cluster_role=PrincipalRole.ADMIN),
        _path(cat, ("role", "STAFF"), [owner], [staff_usage]),
    ]
    assert who_can(cat, Privilege.USAGE, *securable(cat, ("schema", "SALES")))[0] == _path(
        cat, ("user", "alice"), [usage, alice_in]
    )


def test_a_later_revoke_leaves_what_an_earlier_version_answers() -> None:
    cat = apply(
        people(),
        member("ANALYSTS", "alice"),
        grant("USAGE", "SELECT", on="schema", name="SALES", to="role", grantee="ANALYSTS"),
    )
    alice, orders = caller(cat, "alice"), securable(cat, ORDERS)
    assert can(cat, alice, "SELECT", *ORDERS)  # asked first: what it works out is kept
    could = who_can(cat, Privilege.SELECT, *orders)
    entries = run(cat, revoke("USAGE", on="role", name="ANALYSTS", grantee="alice")).entries
    later = VersionedUpdate(
        version=cat.version + 1, proposal_ts=9 << 16, delay_ms=0, entries=entries, stamps=True
    ).apply_to(cat)
    assert not can(later, alice, "SELECT", *ORDERS)
    assert can(cat, alice, "SELECT", *ORDERS) and who_can(cat, Privilege.SELECT, *orders) == could
    alice_id = (GranteeKind.USER, alice.principal_id)
    assert alice_id in [p.grantee for p in could]
    assert [p.grantee for p in who_can(later, Privilege.SELECT, *orders)] == [
        p.grantee for p in could if p.grantee != alice_id
    ]


# --- one property: holds agrees with a brute-force reading of the grants ---------------------

_ROLES = ("ANALYSTS", "STAFF", "MARKETING")
_OBJECTS: tuple[Object, ...] = (
    ("catalog",),
    ("schema", "SALES"),
    ("schema", "HR"),
    ORDERS,
    PAY,
    DAILY,
    *(("role", r) for r in _ROLES),
)
_GRANTEES = (("user", "alice"), ("user", "bob"), ("user", "carol"), *(("role", r) for r in _ROLES))
_PRIVILEGED = [
    (privilege, obj)
    for obj in _OBJECTS
    if obj[0] != "role"
    for privilege in sorted(PRIVILEGES_ON[SecurableKind(obj[0])])
]


def _command(revoking: bool, privilege: str, obj: Object, grantee: tuple[str, str]) -> CommandBase:
    names = dict(zip(("name",) if len(obj) == 2 else ("schema", "name"), obj[1:], strict=False))
    make = revoke if revoking else grant
    return make(privilege, on=obj[0], to=grantee[0], grantee=grantee[1], **names)


_STEP = st.tuples(
    st.sampled_from([False, False, False, True]),  # a revoke now and then
    st.one_of(
        st.sampled_from(_PRIVILEGED),
        st.sampled_from(_ROLES).map(lambda r: (Privilege.USAGE, ("role", r))),
    ),
    st.sampled_from(_GRANTEES),
)


def _lineage(cat: Catalog, obj: Object) -> list[tuple[SecurableKind, int]]:
    """The object, its schema (for a table or view) and the catalog (for all but itself)."""
    up = [securable(cat, obj)]
    if len(obj) == 3:
        up.append((SecurableKind.SCHEMA, cat.schema(obj[1]).id))
    if obj[0] != "catalog":
        up.append((SecurableKind.CATALOG, CATALOG_ID))
    return up


class _Reference:
    """What ``who`` holds, read from every grant of ``cat`` one by one, roles by fixpoint."""

    def __init__(self, cat: Catalog, who: Caller) -> None:
        self.cat, self.floor, self.grants = cat, CLUSTER_HOLDS[who.role], cat.grants()
        mine = {(GranteeKind.ROLE, cat.role(g).id) for g in who.groups}
        if who.principal_id is not None:
            mine.add((GranteeKind.USER, who.principal_id))
        while True:  # the roles held by what is held, until nothing new
            more = {
                (GranteeKind.ROLE, g.on_id)
                for g in self.grants
                if g.on is SecurableKind.ROLE and g.grantee in mine
            }
            if more <= mine:
                break
            mine |= more
        self.mine = mine

    def granted(self, privileges: set[Privilege], on: list[tuple[SecurableKind, int]]) -> bool:
        return any(
            g.privilege in privileges and g.securable in on and g.grantee in self.mine
            for g in self.grants
        )

    def reaches(self, up: list[tuple[SecurableKind, int]]) -> bool:
        """Whether a table's or view's schema is reached (anything else needs not)."""
        usage = Privilege.USAGE in self.floor
        return len(up) < 3 or usage or self.granted({Privilege.USAGE, Privilege.OWNERSHIP}, up[1:])

    def holds(self, privilege: Privilege, obj: Object) -> bool:
        if privilege in self.floor:
            return True
        up = _lineage(self.cat, obj)
        return self.granted({privilege, Privilege.OWNERSHIP}, up) and self.reaches(up)

    def sees(self, obj: Object) -> bool:
        if obj[0] == "schema":
            return self.holds(Privilege.USAGE, obj)
        if Privilege.SELECT in self.floor:
            return True
        up = _lineage(self.cat, obj)
        anything = set(Privilege) - {Privilege.USAGE, Privilege.CREATE}
        return self.granted(anything, up) and self.reaches(up)


def _follows(
    chain: tuple[GrantDescriptor, ...], privilege: Privilege, on: list[tuple[SecurableKind, int]]
) -> tuple[GranteeKind, int]:
    """Check that ``chain`` grants ``privilege`` (or ownership) on ``on``, then hands it on
    from role to member; return whom it ends at."""
    first = chain[0]
    assert first.privilege in (privilege, Privilege.OWNERSHIP) and first.securable in on
    for earlier, later in itertools.pairwise(chain):
        assert earlier.to is GranteeKind.ROLE
        assert later.on is SecurableKind.ROLE and later.on_id == earlier.to_id
    return chain[-1].grantee


def _check_path(cat: Catalog, path: AccessPath, privilege: Privilege, obj: Object) -> None:
    if path.cluster_role is not None:
        assert not path.through and not path.usage
        assert privilege in CLUSTER_HOLDS[path.cluster_role]
        return
    up = _lineage(cat, obj)
    assert _follows(path.through, privilege, up) == path.grantee
    if path.usage:
        assert _follows(path.usage, Privilege.USAGE, up[1:]) == path.grantee


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STEP, max_size=14))
def test_holds_and_who_can_agree_with_a_brute_force_reading(
    steps: list[tuple[bool, tuple[Privilege, Object], tuple[str, str]]],
) -> None:
    cat = people()
    for revoking, (privilege, obj), grantee in steps:
        try:
            cat = apply(cat, _command(revoking, str(privilege), obj, grantee))
        except CatalogError as e:
            assert e.code in (ErrorCode.ROLE_CYCLE, ErrorCode.LAST_CATALOG_OWNER), e
    principals = cat.principals()
    callers = [
        *(Caller(p.id, (), p.role) for p in principals),
        *(caller(cat, None, r) for r in _ROLES),
        caller(cat, "alice", "MARKETING"),
        caller(cat, None, "STAFF", "ANALYSTS"),
    ]
    references = [_Reference(cat, who) for who in callers]
    for obj in _OBJECTS:
        kind, object_id = securable(cat, obj)
        if kind is not SecurableKind.ROLE:
            seeing = [sees(cat, who, kind, object_id) for who in callers]
            assert seeing == [r.sees(obj) for r in references]
        for privilege in Privilege:
            answers = [holds(cat, who, privilege, kind, object_id) for who in callers]
            assert answers == [r.holds(privilege, obj) for r in references]
            paths = who_can(cat, privilege, kind, object_id)
            users = {p.grantee[1] for p in paths if p.grantee[0] is GranteeKind.USER}
            roles = {p.grantee[1] for p in paths if p.grantee[0] is GranteeKind.ROLE}
            assert users == {p.id for p, yes in zip(principals, answers, strict=False) if yes}
            group_answers = answers[len(principals) : len(principals) + len(_ROLES)]
            assert roles == {
                cat.role(r).id for r, yes in zip(_ROLES, group_answers, strict=True) if yes
            }
            for path in paths:
                _check_path(cat, path, privilege, obj)
