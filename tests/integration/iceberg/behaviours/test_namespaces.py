"""``CatalogTests``' namespace behaviours, through PyIceberg's RestCatalog.

Java's ``dropNamespace`` answers false for a namespace that does not exist: that is its
client reading the server's 404 ``NoSuchNamespaceException``; PyIceberg raises on the same
404, so these tests expect the raise.
"""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
)

from tests.integration.iceberg.behaviours.support import NS, SCHEMA, TABLE, raises_wire

pytestmark = pytest.mark.timeout(60)

NESTED = "the catalog's namespaces are its schemas, one level: a namespace has no children"
EMPTY = "the empty namespace is not a namespace here (a table lives in a schema)"
SLASH = (
    "a catalog name may not contain '/' (POST /v1/namespaces with namespace ['new/db'] answers"
    " 400 'a name must not contain '/''); the RCK does not run this either"
    " (supportsNamesWithSlashes() is false)"
)


def test_create_namespace(iceberg: RestCatalog) -> None:
    assert not iceberg.namespace_exists(NS)
    iceberg.create_namespace(NS)
    assert NS in iceberg.list_namespaces()
    assert iceberg.namespace_exists(NS)


def test_create_existing_namespace(iceberg: RestCatalog) -> None:
    assert not iceberg.namespace_exists(NS)
    iceberg.create_namespace(NS)
    assert iceberg.namespace_exists(NS)
    with pytest.raises(NamespaceAlreadyExistsError, match="Namespace already exists"):
        iceberg.create_namespace(NS)
    assert iceberg.namespace_exists(NS)


def test_create_namespace_with_properties(iceberg: RestCatalog) -> None:
    assert not iceberg.namespace_exists(NS)
    iceberg.create_namespace(NS, {"prop": "val"})
    assert iceberg.namespace_exists(NS)
    assert iceberg.load_namespace_properties(NS).items() >= {"prop": "val"}.items()


def test_load_namespace_metadata(iceberg: RestCatalog) -> None:
    assert not iceberg.namespace_exists(NS)
    with raises_wire(
        NoSuchNamespaceError, "NoSuchNamespaceException: Namespace does not exist: newdb"
    ):
        iceberg.load_namespace_properties(NS)
    iceberg.create_namespace(NS)
    assert iceberg.namespace_exists(NS)
    assert iceberg.load_namespace_properties(NS) is not None


def test_set_namespace_properties(iceberg: RestCatalog) -> None:
    properties = {"owner": "user", "created-at": "sometime"}
    iceberg.create_namespace(NS)
    iceberg.update_namespace_properties(NS, updates=properties)
    assert iceberg.load_namespace_properties(NS).items() >= properties.items()


def test_update_namespace_properties(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    iceberg.update_namespace_properties(NS, updates={"owner": "user"})
    assert iceberg.load_namespace_properties(NS).items() >= {"owner": "user"}.items()
    iceberg.update_namespace_properties(NS, updates={"owner": "newuser"})
    assert iceberg.load_namespace_properties(NS).items() >= {"owner": "newuser"}.items()


def test_update_and_set_namespace_properties(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    iceberg.update_namespace_properties(NS, updates={"owner": "user"})
    assert iceberg.load_namespace_properties(NS).items() >= {"owner": "user"}.items()
    updated = {"owner": "newuser", "last-modified-at": "now"}
    iceberg.update_namespace_properties(NS, updates=updated)
    assert iceberg.load_namespace_properties(NS).items() >= updated.items()


def test_set_namespace_properties_namespace_does_not_exist(iceberg: RestCatalog) -> None:
    with raises_wire(
        NoSuchNamespaceError, "NoSuchNamespaceException: Namespace does not exist: newdb"
    ):
        iceberg.update_namespace_properties(NS, updates={"test": "value"})


def test_remove_namespace_properties(iceberg: RestCatalog) -> None:
    properties = {"owner": "user", "created-at": "sometime"}
    iceberg.create_namespace(NS)
    iceberg.update_namespace_properties(NS, updates=properties)
    iceberg.update_namespace_properties(NS, removals={"created-at"})
    actual = iceberg.load_namespace_properties(NS)
    assert "created-at" not in actual
    assert dict(properties.items() & actual.items()) == {"owner": "user"}


def test_remove_namespace_properties_namespace_does_not_exist(iceberg: RestCatalog) -> None:
    with raises_wire(
        NoSuchNamespaceError, "NoSuchNamespaceException: Namespace does not exist: newdb"
    ):
        iceberg.update_namespace_properties(NS, removals={"a", "b"})


def test_drop_namespace(iceberg: RestCatalog) -> None:
    assert not iceberg.namespace_exists(NS)
    iceberg.create_namespace(NS)
    assert iceberg.namespace_exists(NS)
    iceberg.drop_namespace(NS)
    assert not iceberg.namespace_exists(NS)


def test_drop_nonexistent_namespace(iceberg: RestCatalog) -> None:
    with pytest.raises(NoSuchNamespaceError):
        iceberg.drop_namespace(NS)


def test_drop_non_empty_namespace(iceberg: RestCatalog) -> None:
    assert not iceberg.namespace_exists(NS)
    iceberg.create_namespace(NS)
    assert iceberg.namespace_exists(NS)
    iceberg.create_table(TABLE, SCHEMA)
    assert iceberg.table_exists(TABLE)
    with pytest.raises(NamespaceNotEmptyError, match="is not empty"):
        iceberg.drop_namespace(NS)
    iceberg.drop_table(TABLE)
    assert not iceberg.table_exists(TABLE)
    iceberg.drop_namespace(NS)
    assert not iceberg.namespace_exists(NS)


@pytest.mark.skip(reason=NESTED)
def test_drop_namespace_with_nested_namespace(iceberg: RestCatalog) -> None:
    parent, nested = ("parent",), ("parent", "child")
    iceberg.create_namespace(parent)
    iceberg.create_namespace(nested)
    with pytest.raises(NamespaceNotEmptyError, match="is not empty"):
        iceberg.drop_namespace(parent)
    iceberg.drop_namespace(nested)
    iceberg.drop_namespace(parent)
    assert not iceberg.namespace_exists(parent)


def test_list_namespaces(iceberg: RestCatalog) -> None:
    starting = iceberg.list_namespaces()  # the catalog may have a default namespace
    ns1, ns2 = ("newdb_1",), ("newdb_2",)
    iceberg.create_namespace(ns1)
    assert sorted(iceberg.list_namespaces()) == sorted([*starting, ns1])
    iceberg.create_namespace(ns2)
    assert sorted(iceberg.list_namespaces()) == sorted([*starting, ns1, ns2])
    iceberg.drop_namespace(ns1)
    assert sorted(iceberg.list_namespaces()) == sorted([*starting, ns2])
    iceberg.drop_namespace(ns2)
    assert set(starting) <= set(iceberg.list_namespaces())


@pytest.mark.skip(reason=NESTED)
def test_list_nested_namespaces(iceberg: RestCatalog) -> None:
    parent, child1, child2 = ("parent",), ("parent", "child1"), ("parent", "child2")
    iceberg.create_namespace(parent)
    assert iceberg.list_namespaces(parent) == []
    iceberg.create_namespace(child1)
    iceberg.create_namespace(child2)
    assert sorted(iceberg.list_namespaces(parent)) == [child1, child2]


@pytest.mark.skip(reason=SLASH)
def test_namespace_with_slash(iceberg: RestCatalog) -> None:
    with_slash = ("new/db",)
    assert not iceberg.namespace_exists(with_slash)
    iceberg.create_namespace(with_slash)
    assert iceberg.namespace_exists(with_slash)
    assert iceberg.load_namespace_properties(with_slash) is not None
    iceberg.drop_namespace(with_slash)
    assert not iceberg.namespace_exists(with_slash)


def test_namespace_with_dot(iceberg: RestCatalog) -> None:
    with_dot = ("new.db",)
    assert not iceberg.namespace_exists(with_dot)
    iceberg.create_namespace(with_dot)
    assert iceberg.namespace_exists(with_dot)
    assert with_dot in iceberg.list_namespaces()
    assert iceberg.load_namespace_properties(with_dot) is not None
    iceberg.drop_namespace(with_dot)
    assert not iceberg.namespace_exists(with_dot)


@pytest.mark.skip(reason=EMPTY)
def test_list_namespaces_with_empty_namespace(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(NS)
    assert not iceberg.namespace_exists(())
    assert NS in iceberg.list_namespaces(())


def test_list_non_existing_namespace(iceberg: RestCatalog) -> None:
    with raises_wire(
        NoSuchNamespaceError, "NoSuchNamespaceException: Namespace does not exist: non-existing"
    ):
        iceberg.list_namespaces(("non-existing",))


@pytest.mark.skip(reason=EMPTY)
def test_create_and_drop_empty_namespace(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(())
    assert iceberg.namespace_exists(())


@pytest.mark.skip(reason=EMPTY)
def test_namespace_properties_on_empty_namespace(iceberg: RestCatalog) -> None:
    iceberg.create_namespace(())
    iceberg.update_namespace_properties((), updates={"owner": "user"})


@pytest.mark.skip(reason=EMPTY)
def test_list_tables_in_empty_namespace(iceberg: RestCatalog) -> None:
    iceberg.create_table(((), "table_1"), SCHEMA)
