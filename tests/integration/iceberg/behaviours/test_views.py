"""Apache Iceberg's ``ViewCatalogTests``, through Iceberg's own Java ``RESTCatalog``.

One pytest test per Java test method, named after it in snake case, written anew from the
Java's semantics (``core/src/test/java/org/apache/iceberg/view/ViewCatalogTests.java`` at
apache/iceberg HEAD 7f879b1), driven against a real server through the ``RESTCatalog`` of
Iceberg's Spark runtime jar (a ``ViewCatalog``; ``java_client``). ``catalog()`` and
``tableCatalog()`` are that one client. This module has the creates, loads, lists, the
names views share with tables, the namespace drop and the registers; ``test_view_changes``
the replaces, renames, property and location changes, conflicts and ``sqlFor``.

The settings of Iceberg's own REST run of the suite (``TestRESTViewCatalog``) hold here:
``requiresNamespaceCreate()`` (a view needs its schema), ``supportsServerSideRetry()``,
``overridesRequestedLocation()`` false and ``supportsEmptyNamespace()`` false.
Namespaces are the catalog's schemas (one level): ``ns``, ``ns1``... work as they are.
Iceberg's run gives its *server* ``view-default.*`` and ``view-override.*`` properties; here
the *client* is initialized with them (``VIEW_PROPERTIES``): Java's ``RESTViewBuilder`` merges
them into what it sends, so the server keeps them as any other property.

``SCHEMA`` and ``OTHER_SCHEMA`` are the suite's own (schema ids 5 and 7, which a view must
renumber from 0). A location a test asks for is under ``tmp_path``, a ``file:`` URI as the
suite's ``viewLocation`` makes it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import pytest
from py4j.java_gateway import JavaObject
from py4j.protocol import Py4JJavaError

from tests.integration.iceberg.behaviours.java_client import JavaCatalog, assert_equal

pytestmark = pytest.mark.timeout(120)

SQL = "select * from ns.tbl"
EXCEPTIONS = "org.apache.iceberg.exceptions."
VIEW_PROPERTIES = {
    "view-default.key1": "catalog-default-key1",
    "view-default.key2": "catalog-default-key2",
    "view-default.key3": "catalog-default-key3",
    "view-override.key3": "catalog-override-key3",
    "view-override.key4": "catalog-override-key4",
}
"""The view defaults and overrides of ``TestRESTViewCatalog``'s backend catalog."""
NOT_REGISTERED = (
    "register-view is not served (the catalog keeps a view's state itself, not in a metadata "
    "file it could adopt): the client refuses the call, as the endpoint is not advertised"
)
CUSTOM_METADATA_PATH = (
    "a view's metadata files are written under the warehouse's own metadata folder "
    "(<warehouse>/metadata/view_<id>/), as a table's are: write.metadata.path is kept as a "
    "property but names no folder the server writes to"
)
EMPTY = "no empty namespace: every view is in a schema (the suite skips it too)"

Match = Literal["start", "exact", "contains"]


def schemas(java: JavaCatalog) -> tuple[JavaObject, JavaObject]:
    """The suite's ``SCHEMA`` (id 5: ``id`` 3, ``data`` 4) and ``OTHER_SCHEMA`` (id 7)."""
    iceberg = java.jvm.org.apache.iceberg
    types = iceberg.types.Types
    field = types.NestedField
    schema = iceberg.Schema(
        5,
        [
            field.required(3, "id", types.IntegerType.get(), "unique ID"),
            field.required(4, "data", types.StringType.get()),
        ],
    )
    other = iceberg.Schema(7, [field.required(1, "some_id", types.IntegerType.get())])
    return schema, other


def builder(
    java: JavaCatalog,
    name: str = "ns.view",
    *,
    queries: Sequence[tuple[str, str]] = (("spark", SQL),),
    other_schema: bool = False,
    default_catalog: str | None = None,
    properties: Mapping[str, str] | None = None,
    location: str | None = None,
) -> JavaObject:
    """A ``ViewBuilder`` of view ``name``: a schema, its namespace as the default one, queries."""
    identifier = java.side.identifier(name)
    schema, other = schemas(java)
    built = (
        java.catalog.buildView(identifier)
        .withSchema(other if other_schema else schema)
        .withDefaultNamespace(identifier.namespace())
    )
    if default_catalog is not None:
        built = built.withDefaultCatalog(default_catalog)
    for dialect, sql in queries:
        built = built.withQuery(dialect, sql)
    for key, value in (properties or {}).items():
        built = built.withProperty(key, value)
    if location is not None:
        built = built.withLocation(location)
    return built


def create_namespace(java: JavaCatalog, *names: str) -> None:
    """``requiresNamespaceCreate()``: create each namespace first."""
    for name in names:
        java.catalog.createNamespace(java.side.namespace(name))


def view_location(tmp_path: Path, *parts: str) -> str:
    """The suite's ``viewLocation``: a ``file:`` URI under the test's folder."""
    return "/".join([f"file:{tmp_path}", *parts])


def exists(java: JavaCatalog, name: str) -> bool:
    """``viewExists``."""
    found: bool = java.catalog.viewExists(java.side.identifier(name))
    return found


def table_exists(java: JavaCatalog, name: str) -> bool:
    """``tableExists``."""
    found: bool = java.catalog.tableExists(java.side.identifier(name))
    return found


def drop(java: JavaCatalog, name: str) -> bool:
    """``dropView``."""
    dropped: bool = java.catalog.dropView(java.side.identifier(name))
    return dropped


def create_table(java: JavaCatalog, name: str) -> JavaObject:
    """``tableCatalog().buildTable(ident, SCHEMA).create()``."""
    return java.catalog.buildTable(java.side.identifier(name), schemas(java)[0]).create()


def namespace_with_table(java: JavaCatalog) -> None:
    """Namespace ``ns`` holding table ``ns.table`` (which did not exist before)."""
    create_namespace(java, "ns")
    assert not table_exists(java, "ns.table")
    create_table(java, "ns.table")
    assert table_exists(java, "ns.table")


def metadata(view: JavaObject) -> JavaObject:
    """The view's ``ViewMetadata`` (``((BaseView) view).operations().current()``)."""
    return view.operations().current()


def full_name(java: JavaCatalog, name: str) -> str:
    """``ViewUtil.fullViewName(catalog().name(), ident)``."""
    return str(
        java.jvm.org.apache.iceberg.view.ViewUtil.fullViewName(
            java.catalog.name(), java.side.identifier(name)
        )
    )


def history_ids(view: JavaObject) -> list[int]:
    """The version ids of the view's history, in order."""
    return [entry.versionId() for entry in view.history()]


def schema_ids(view: JavaObject) -> list[int]:
    """The ids of the view's schemas, sorted."""
    return sorted(view.schemas().keySet())


def listed(java: JavaCatalog, namespace: str, *, tables: bool = False) -> list[str]:
    """``listViews`` (or ``listTables``) of ``namespace`` as dotted names, in order."""
    found = java.side.namespace(namespace)
    names = java.catalog.listTables(found) if tables else java.catalog.listViews(found)
    return [str(n.toString()) for n in names]


def representation(java: JavaCatalog, dialect: str, sql: str) -> JavaObject:
    """An ``ImmutableSQLViewRepresentation``."""
    built = java.jvm.org.apache.iceberg.view.ImmutableSQLViewRepresentation.builder()
    return built.sql(sql).dialect(dialect).build()


def expected_version(
    java: JavaCatalog,
    like: JavaObject,
    version_id: int,
    schema_id: int,
    queries: Sequence[tuple[str, str]],
    default_catalog: str | None = None,
) -> JavaObject:
    """The suite's ``ImmutableViewVersion`` of namespace ``ns`` (time and summary of ``like``)."""
    built = (
        java.jvm.org.apache.iceberg.view.ImmutableViewVersion.builder()
        .timestampMillis(like.timestampMillis())
        .versionId(version_id)
        .schemaId(schema_id)
        .summary(like.summary())
        .defaultNamespace(java.side.namespace("ns"))
    )
    if default_catalog is not None:
        built = built.defaultCatalog(default_catalog)
    for dialect, sql in queries:
        built = built.addRepresentations(representation(java, dialect, sql))
    return built.build()


def assert_versions(view: JavaObject, *expected: JavaObject) -> None:
    """``assertThat(view.versions()).containsExactly(expected...)``."""
    versions = list(view.versions())
    assert len(versions) == len(expected), [v.toString() for v in versions]
    for actual, wanted in zip(versions, expected, strict=True):
        assert_equal(actual, wanted)


@contextmanager
def throws(java: JavaCatalog, error: str, message: str, match: Match = "start") -> Iterator[None]:
    """Expect Java's ``error`` (a class in ``org.apache.iceberg.exceptions``, or ``java.lang``'s
    ``IllegalStateException`` / ``IllegalArgumentException``) with ``message``: its start
    (``hasMessageStartingWith``), all of it (``hasMessage``) or a part (``hasMessageContaining``).
    """
    with pytest.raises(Py4JJavaError) as caught:
        yield
    thrown = caught.value.java_exception
    said = str(thrown.getMessage())
    described = f"{thrown.getClass().getName()}: {said}"
    name = f"java.lang.{error}" if error.startswith("Illegal") else EXCEPTIONS + error
    assert java.jvm.java.lang.Class.forName(name).isInstance(thrown), described
    if match == "start":
        assert said.startswith(message), described
    elif match == "exact":
        assert said == message, described
    else:
        assert message in said, described


def test_load_view_with_non_existing_namespace(java: JavaCatalog) -> None:
    assert not exists(java, "non-existing.view")
    with throws(java, "NoSuchViewException", "View does not exist: non-existing.view"):
        java.catalog.loadView(java.side.identifier("non-existing.view"))


def test_load_view_that_already_exists_as_table(java: JavaCatalog) -> None:
    namespace_with_table(java)
    assert not exists(java, "ns.table")
    with throws(java, "NoSuchViewException", "View does not exist"):
        java.catalog.loadView(java.side.identifier("ns.table"))


def test_load_table_that_already_exists_as_view(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.table")
    builder(java, "ns.table").create()
    assert exists(java, "ns.table")
    assert not table_exists(java, "ns.table")
    with throws(java, "NoSuchTableException", "Table does not exist"):
        java.catalog.loadTable(java.side.identifier("ns.table"))


def test_basic_create_view(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    view = builder(java).create()
    assert view is not None
    assert exists(java, "ns.view")
    assert metadata(view).metadataFileLocation() is not None
    assert view.name() == full_name(java, "ns.view")
    assert history_ids(view) == [1]
    assert view.schema().schemaId() == 0
    assert_equal(view.schema().asStruct(), schemas(java)[0].asStruct())
    assert view.currentVersion().operation() == "create"
    assert schema_ids(view) == [0]
    assert_versions(view, view.currentVersion())
    current = view.currentVersion()
    assert_equal(current, expected_version(java, current, 1, 0, [("spark", SQL)]))
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")


def check_view_properties(
    java: JavaCatalog, key: str, value: str, expected: dict[str, str]
) -> None:
    """``defaultViewProperties`` / ``overrideViewProperties``: a create with ``key`` and
    ``prop1`` holds ``expected`` (the catalog's defaults under it, its overrides over it)."""
    catalog = java.side.rest_catalog(java.server_url, **VIEW_PROPERTIES)
    try:
        catalog.createNamespace(java.side.namespace("ns"))
        identifier = java.side.identifier("ns.view")
        assert not catalog.viewExists(identifier)
        view = (
            catalog.buildView(identifier)
            .withSchema(schemas(java)[0])
            .withDefaultNamespace(identifier.namespace())
            .withDefaultCatalog(catalog.name())
            .withQuery("spark", SQL)
            .withProperty(key, value)
            .withProperty("prop1", "val1")
            .create()
        )
        assert view is not None
        assert dict(view.properties()).items() >= {**expected, "prop1": "val1"}.items()
        assert dict(catalog.loadView(identifier).properties()).items() >= expected.items()
        assert catalog.dropView(identifier)
        assert not catalog.viewExists(identifier)
    finally:
        catalog.close()


def test_default_view_properties(java: JavaCatalog) -> None:
    """The catalog's ``view-default.*`` are the client's (Java merges them): see the module."""
    check_view_properties(
        java,
        "key2",
        "catalog-overridden-key2",
        {"key1": "catalog-default-key1", "key2": "catalog-overridden-key2"},
    )


def test_override_view_properties(java: JavaCatalog) -> None:
    """The catalog's ``view-override.*`` are the client's (Java merges them): see the module."""
    check_view_properties(
        java,
        "key4",
        "catalog-overridden-key4",
        {
            "key1": "catalog-default-key1",
            "key2": "catalog-default-key2",
            "key3": "catalog-override-key3",
            "key4": "catalog-override-key4",
        },
    )


def test_complete_create_view(java: JavaCatalog, tmp_path: Path) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    location = view_location(tmp_path, "ns", "view")
    queries = [("spark", SQL), ("trino", "select * from ns.tbl using X")]
    view = builder(
        java,
        queries=queries,
        default_catalog=java.catalog.name(),
        properties={"prop1": "val1", "prop2": "val2"},
        location=location,
    ).create()
    assert view is not None
    assert exists(java, "ns.view")
    assert metadata(view).metadataFileLocation() is not None
    assert view.location() == location
    assert view.uuid().toString() == metadata(view).uuid()
    assert view.name() == full_name(java, "ns.view")
    assert dict(view.properties()).items() >= {"prop1": "val1", "prop2": "val2"}.items()
    assert history_ids(view) == [1]
    assert view.currentVersion().operation() == "create"
    assert view.schema().schemaId() == 0
    assert_equal(view.schema().asStruct(), schemas(java)[0].asStruct())
    assert schema_ids(view) == [0]
    assert_versions(view, view.currentVersion())
    current = view.currentVersion()
    expected = expected_version(java, current, 1, 0, queries, java.catalog.name())
    assert_equal(current, expected)
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")


@pytest.mark.xfail(strict=True, reason=CUSTOM_METADATA_PATH)
def test_create_view_with_custom_metadata_location(java: JavaCatalog, tmp_path: Path) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    custom = view_location(tmp_path, "custom-location")
    view = builder(
        java,
        default_catalog=java.catalog.name(),
        properties={"write.metadata.path": custom},
        location=view_location(tmp_path),
    ).create()
    assert view is not None
    assert exists(java, "ns.view")
    assert view.properties().get("write.metadata.path") == custom
    assert str(metadata(view).metadataFileLocation()).startswith(custom)


def test_create_view_error_cases(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    identifier = java.side.identifier("ns.view")
    message = "Cannot create view without specifying a query"
    with throws(java, "IllegalStateException", message, "exact"):
        java.catalog.buildView(identifier).create()
    message = "Cannot create view without specifying schema"
    with throws(java, "IllegalStateException", message, "exact"):
        java.catalog.buildView(identifier).withQuery("trino", SQL).create()
    message = "Cannot create view without specifying a default namespace"
    with throws(java, "IllegalStateException", message, "exact"):
        java.catalog.buildView(identifier).withQuery("trino", SQL).withSchema(
            schemas(java)[0]
        ).create()
    message = "Invalid view version: Cannot add multiple queries for dialect trino"
    with throws(java, "IllegalArgumentException", message, "contains"):
        builder(java, queries=[("trino", SQL), ("trino", SQL)]).create()


def test_create_view_that_already_exists(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    assert builder(java).create() is not None
    assert exists(java, "ns.view")
    with throws(java, "AlreadyExistsException", "View already exists: ns.view"):
        builder(java, other_schema=True).create()


def test_create_view_that_already_exists_as_table(java: JavaCatalog) -> None:
    namespace_with_table(java)
    message = "Table with same name already exists: ns.table"
    with throws(java, "AlreadyExistsException", message):
        builder(java, "ns.table", other_schema=True).create()


def view_then_table(java: JavaCatalog, how: str) -> None:
    """Create view ``ns.view``, then a table of its name (``how``): refused, the view's."""
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    table = java.catalog.buildTable(java.side.identifier("ns.view"), schemas(java)[0])
    staged = table.createTransaction() if how == "staged create" else None
    builder(java).create()
    assert exists(java, "ns.view")
    with throws(java, "AlreadyExistsException", "View with same name already exists: ns.view"):
        if staged is not None:
            staged.commitTransaction()
        elif how == "create":
            table.create()
        elif how == "replace":
            table.replaceTransaction().commitTransaction()
        else:
            table.createOrReplaceTransaction().commitTransaction()


def test_create_table_that_already_exists_as_view(java: JavaCatalog) -> None:
    view_then_table(java, "create")


def test_create_table_via_transaction_that_already_exists_as_view(java: JavaCatalog) -> None:
    view_then_table(java, "staged create")


def test_replace_table_via_transaction_that_already_exists_as_view(java: JavaCatalog) -> None:
    view_then_table(java, "replace")


def test_create_or_replace_table_via_transaction_that_already_exists_as_view(
    java: JavaCatalog,
) -> None:
    view_then_table(java, "create or replace")


def test_list_views(java: JavaCatalog) -> None:
    create_namespace(java, "ns1", "ns2")
    assert listed(java, "ns1") == []
    assert listed(java, "ns2") == []
    builder(java, "ns1.view1", queries=[("spark", "select * from ns1.tbl")]).create()
    assert listed(java, "ns1") == ["ns1.view1"]
    assert listed(java, "ns2") == []
    builder(java, "ns2.view2", queries=[("spark", "select * from ns1.tbl")]).create()
    assert listed(java, "ns1") == ["ns1.view1"]
    assert listed(java, "ns2") == ["ns2.view2"]
    builder(java, "ns2.view3").create()
    assert listed(java, "ns1") == ["ns1.view1"]
    assert sorted(listed(java, "ns2")) == ["ns2.view2", "ns2.view3"]
    assert drop(java, "ns2.view2")
    assert listed(java, "ns1") == ["ns1.view1"]
    assert listed(java, "ns2") == ["ns2.view3"]
    assert drop(java, "ns2.view3")
    assert listed(java, "ns1") == ["ns1.view1"]
    assert listed(java, "ns2") == []
    assert drop(java, "ns1.view1")
    assert listed(java, "ns1") == []
    assert listed(java, "ns2") == []


@pytest.mark.skip(reason=EMPTY)
def test_list_views_in_empty_namespace(java: JavaCatalog) -> None:
    pass


def test_list_views_and_tables(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert listed(java, "ns") == []
    assert listed(java, "ns", tables=True) == []
    create_table(java, "ns.table")
    assert listed(java, "ns") == []
    assert listed(java, "ns", tables=True) == ["ns.table"]
    builder(java, queries=[("spark", "select * from ns1.tbl")]).create()
    assert listed(java, "ns") == ["ns.view"]
    assert listed(java, "ns", tables=True) == ["ns.table"]
    assert java.catalog.dropTable(java.side.identifier("ns.table"))
    assert listed(java, "ns") == ["ns.view"]
    assert listed(java, "ns", tables=True) == []
    assert drop(java, "ns.view")
    assert listed(java, "ns") == []
    assert listed(java, "ns", tables=True) == []


def test_drop_non_empty_namespace(java: JavaCatalog) -> None:
    ns = java.side.namespace("ns")
    assert not java.catalog.namespaceExists(ns)
    create_namespace(java, "ns")
    assert java.catalog.namespaceExists(ns)
    create_table(java, "ns.tbl")
    assert table_exists(java, "ns.tbl")
    builder(java, default_catalog=java.catalog.name()).create()
    assert exists(java, "ns.view")
    with throws(java, "NamespaceNotEmptyException", "is not empty", "contains"):
        java.catalog.dropNamespace(ns)
    java.catalog.dropTable(java.side.identifier("ns.tbl"))
    assert not table_exists(java, "ns.tbl")
    with throws(java, "NamespaceNotEmptyException", "is not empty", "contains"):
        java.catalog.dropNamespace(ns)
    drop(java, "ns.view")
    assert not exists(java, "ns.view")
    assert java.catalog.dropNamespace(ns)
    assert not java.catalog.namespaceExists(ns)


def test_register_table_that_already_exists_as_view(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    tbl = java.side.identifier("ns.tbl")
    java.catalog.createTable(tbl, schemas(java)[0])
    assert table_exists(java, "ns.tbl")
    location = java.catalog.loadTable(tbl).operations().current().metadataFileLocation()
    java.catalog.dropTable(tbl, False)  # the metadata file stays
    assert not table_exists(java, "ns.tbl")
    builder(java, "ns.tbl").create()
    assert exists(java, "ns.tbl")
    with throws(java, "AlreadyExistsException", "View with same name already exists: ns.tbl"):
        java.catalog.registerTable(tbl, location)
    assert not table_exists(java, "ns.tbl")
    assert drop(java, "ns.tbl")


def created_for_register(java: JavaCatalog, *, keep_files: bool) -> tuple[JavaObject, str]:
    """View ``ns.view`` (``gc.enabled=false`` when ``keep_files``), and its metadata file."""
    create_namespace(java, "ns")
    properties = {"gc.enabled": "false"} if keep_files else {}
    view = builder(java, default_catalog=java.catalog.name(), properties=properties).create()
    return view, str(metadata(view).metadataFileLocation())


@pytest.mark.xfail(strict=True, reason=NOT_REGISTERED)
def test_register_view(java: JavaCatalog) -> None:
    original, location = created_for_register(java, keep_files=True)
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")
    registered = java.catalog.registerView(java.side.identifier("ns.view"), location)
    assert registered is not None
    assert exists(java, "ns.view")
    assert registered.name() == full_name(java, "ns.view")
    assert history_ids(registered) == [1]
    assert schema_ids(registered) == [0]
    assert_equal(registered.schema().asStruct(), schemas(java)[0].asStruct())
    assert registered.currentVersion().operation() == "create"
    assert_versions(registered, *original.versions())
    current = registered.currentVersion()
    expected = expected_version(java, current, 1, 0, [("spark", SQL)], java.catalog.name())
    assert_equal(current, expected)
    assert java.catalog.loadView(java.side.identifier("ns.view")) is not None
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")


@pytest.mark.xfail(strict=True, reason=NOT_REGISTERED)
def test_register_existing_view(java: JavaCatalog) -> None:
    _, location = created_for_register(java, keep_files=False)
    with throws(java, "AlreadyExistsException", "View already exists: ns.view"):
        java.catalog.registerView(java.side.identifier("ns.view"), location)
    assert drop(java, "ns.view")


@pytest.mark.xfail(strict=True, reason=NOT_REGISTERED)
def test_register_view_that_already_exists_as_table(java: JavaCatalog) -> None:
    _, location = created_for_register(java, keep_files=True)
    assert drop(java, "ns.view")
    create_table(java, "ns.view")
    with throws(java, "AlreadyExistsException", "Table with same name already exists: ns.view"):
        java.catalog.registerView(java.side.identifier("ns.view"), location)
    assert java.catalog.dropTable(java.side.identifier("ns.view"))
