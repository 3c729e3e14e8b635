"""``ViewCatalogTests``' replaces, renames, property and location changes, conflicts, ``sqlFor``.

Through Iceberg's Java ``RESTCatalog``, as ``test_views`` (whose module doc has the settings
and the suite's fixtures). Java's client builds a replace client-side from the loaded view
(``ViewMetadata.buildFrom(base).setProperties(..).setCurrentVersion(version, schema)``) and
commits its changes as one request: ``assert-view-uuid``, then ``set-properties``,
``add-schema`` (a schema the view lacks), ``add-view-version`` and
``set-current-view-version -1`` (and ``set-location``). ``replaceVersion()``,
``updateProperties()`` and ``updateLocation()`` send their part of that. The server applies
the changes to the view as it is (``supportsServerSideRetry()``): a version added from a
stale base gets the next id.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from py4j.java_gateway import JavaObject

from tests.integration.iceberg.behaviours.java_client import JavaCatalog, assert_equal
from tests.integration.iceberg.behaviours.test_views import (
    SQL,
    assert_versions,
    builder,
    create_namespace,
    drop,
    exists,
    expected_version,
    full_name,
    history_ids,
    metadata,
    namespace_with_table,
    representation,
    schema_ids,
    schemas,
    throws,
    view_location,
)

pytestmark = pytest.mark.timeout(120)

DROP_DIALECT = {"replace.drop-dialect.allowed": "true"}
TRINO = ("trino", SQL)
DUPLICATE = "Invalid view version: Cannot add multiple queries for dialect trino"


def representations(java: JavaCatalog, version: JavaObject, *queries: tuple[str, str]) -> None:
    """``assertThat(version.representations()).containsExactly(queries...)``."""
    found = list(version.representations())
    assert len(found) == len(queries), [r.toString() for r in found]
    for actual, (dialect, sql) in zip(found, queries, strict=True):
        assert_equal(actual, representation(java, dialect, sql))


def load(java: JavaCatalog, name: str = "ns.view") -> JavaObject:
    """``loadView``."""
    return java.catalog.loadView(java.side.identifier(name))


@pytest.mark.parametrize("use_create_or_replace", [False, True])
def test_create_or_replace_view(java: JavaCatalog, use_create_or_replace: bool) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    first = builder(java, properties={"prop1": "val1", "prop2": "val2"})
    view = first.createOrReplace() if use_create_or_replace else first.create()
    assert exists(java, "ns.view")
    assert metadata(view).metadataFileLocation() is not None
    version = view.currentVersion()
    representations(java, version, ("spark", SQL))

    replacing = builder(
        java,
        queries=[("trino", "select count(*) from ns.tbl")],
        other_schema=True,
        properties={"replacedProp1": "val1", "replacedProp2": "val2", **DROP_DIALECT},
    )
    replaced = replacing.createOrReplace() if use_create_or_replace else replacing.replace()
    assert replaced.name() == full_name(java, "ns.view")
    assert metadata(replaced).metadataFileLocation() is not None
    expected = {"prop1": "val1", "prop2": "val2", "replacedProp1": "val1", "replacedProp2": "val2"}
    assert dict(replaced.properties()).items() >= expected.items()
    assert history_ids(replaced) == [1, 2]
    assert replaced.schema().schemaId() == 1
    assert_equal(replaced.schema().asStruct(), schemas(java)[1].asStruct())
    assert schema_ids(replaced) == [0, 1]
    current = replaced.currentVersion()
    assert_versions(replaced, version, current)
    assert current is not None
    assert current.versionId() == 2
    assert current.schemaId() == 1
    assert current.operation() == "replace"
    representations(java, current, ("trino", "select count(*) from ns.tbl"))
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")


def test_replace_view_that_already_exists_as_table(java: JavaCatalog) -> None:
    namespace_with_table(java)
    message = "Table with same name already exists: ns.table"
    with throws(java, "AlreadyExistsException", message, "contains"):
        builder(java, "ns.table", other_schema=True).replace()


def test_create_or_replace_view_that_already_exists_as_table(java: JavaCatalog) -> None:
    namespace_with_table(java)
    message = "Table with same name already exists: ns.table"
    with throws(java, "AlreadyExistsException", message):
        builder(java, "ns.table", other_schema=True).createOrReplace()


def test_replace_view_error_cases(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    builder(java, queries=[TRINO]).create()
    assert exists(java, "ns.view")
    identifier = java.side.identifier("ns.view")
    message = "Cannot replace view without specifying a query"
    with throws(java, "IllegalStateException", message, "exact"):
        java.catalog.buildView(identifier).replace()
    message = "Cannot replace view without specifying schema"
    with throws(java, "IllegalStateException", message, "exact"):
        java.catalog.buildView(identifier).withQuery(*TRINO).replace()
    message = "Cannot replace view without specifying a default namespace"
    with throws(java, "IllegalStateException", message, "exact"):
        java.catalog.buildView(identifier).withQuery(*TRINO).withSchema(schemas(java)[0]).replace()
    with throws(java, "NoSuchViewException", "View does not exist: ns.non_existing"):
        builder(java, "ns.non_existing", queries=[TRINO]).replace()
    with throws(java, "IllegalArgumentException", DUPLICATE, "exact"):
        builder(java, queries=[TRINO, TRINO]).replace()


def test_update_view_properties(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    view = builder(java).create()
    version = view.currentVersion()
    view.updateProperties().set("key1", "val1").set("key2", "val2").remove("non-existing").commit()
    updated = load(java)
    assert dict(updated.properties()).items() >= {"key1": "val1", "key2": "val2"}.items()
    assert len(list(updated.history())) == 1
    assert_equal(updated.history(), view.history())
    assert_versions(updated, version)
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")


def test_update_view_properties_error_cases(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    builder(java).create()
    assert exists(java, "ns.view")
    with throws(java, "IllegalArgumentException", "Invalid key: null", "exact"):
        load(java).updateProperties().set(None, "new-val1").commit()
    with throws(java, "IllegalArgumentException", "Invalid value: null", "exact"):
        load(java).updateProperties().set("key1", None).commit()
    with throws(java, "IllegalArgumentException", "Invalid key: null", "exact"):
        load(java).updateProperties().remove(None).commit()
    message = "Cannot remove and update the same key: key2"
    with throws(java, "IllegalArgumentException", message, "exact"):
        update = load(java).updateProperties().set("key1", "x").set("key3", "y")
        update.remove("key2").set("key2", "z").commit()


def test_replace_view_version(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    spark = ("spark", SQL)
    view = builder(java, queries=[TRINO, spark], properties=DROP_DIALECT).create()
    assert exists(java, "ns.view")
    version = view.currentVersion()
    representations(java, version, TRINO, spark)

    (
        view.replaceVersion()
        .withSchema(schemas(java)[1])
        .withQuery(*TRINO)
        .withDefaultCatalog("default")
        .withDefaultNamespace(java.side.namespace("ns"))
        .commit()
    )
    updated = load(java)
    current = updated.currentVersion()
    assert history_ids(updated) == [version.versionId(), current.versionId()]
    assert schema_ids(updated) == [0, 1]
    assert_versions(updated, version, current)
    assert current is not None
    assert current.versionId() == version.versionId() + 1
    assert current.operation() == "replace"
    representations(java, current, TRINO)
    assert current.schemaId() == 1
    assert current.defaultCatalog() == "default"
    assert_equal(current.defaultNamespace(), java.side.namespace("ns"))
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")


def test_replace_view_version_by_updating_sql_for_dialect(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    view = builder(java).create()
    assert exists(java, "ns.view")
    version = view.currentVersion()
    representations(java, version, ("spark", SQL))

    updated_spark = ("spark", "select * from ns.updated_tbl")
    (
        view.replaceVersion()
        .withSchema(schemas(java)[0])
        .withDefaultNamespace(java.side.namespace("ns"))
        .withQuery(*updated_spark)
        .commit()
    )
    updated = load(java)
    current = updated.currentVersion()
    assert history_ids(updated) == [version.versionId(), current.versionId()]
    assert_versions(updated, version, current)
    representations(java, current, updated_spark)
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")


def test_replace_view_version_error_cases(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    view = builder(java, queries=[TRINO]).create()
    assert exists(java, "ns.view")
    ns, schema = java.side.namespace("ns"), schemas(java)[0]
    message = "Cannot replace view without specifying a query"
    with throws(java, "IllegalStateException", message, "exact"):
        view.replaceVersion().commit()
    message = "Cannot replace view without specifying schema"
    with throws(java, "IllegalStateException", message, "exact"):
        view.replaceVersion().withQuery(*TRINO).withDefaultNamespace(ns).commit()
    message = "Cannot replace view without specifying a default namespace"
    with throws(java, "IllegalStateException", message, "exact"):
        view.replaceVersion().withQuery(*TRINO).withSchema(schema).commit()
    with throws(java, "IllegalArgumentException", DUPLICATE, "exact"):
        replace = view.replaceVersion().withQuery(*TRINO).withSchema(schema)
        replace.withDefaultNamespace(ns).withQuery(*TRINO).commit()


def created_then_dropped(java: JavaCatalog, change: str) -> JavaObject:
    """Create ``ns.view`` (trino), begin ``change`` of it, drop the view; the change."""
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    view = builder(java, queries=[TRINO]).create()
    assert exists(java, "ns.view")
    if change == "properties":
        begun = view.updateProperties()
    elif change == "version":
        begun = view.replaceVersion()
    elif change == "location":
        begun = view.updateLocation()
    else:
        begun = java.catalog.buildView(java.side.identifier("ns.view"))
    java.catalog.dropView(java.side.identifier("ns.view"))
    assert not exists(java, "ns.view")
    return begun


def test_update_view_properties_conflict(java: JavaCatalog) -> None:
    update = created_then_dropped(java, "properties")
    with throws(java, "NoSuchViewException", "View does not exist: ns.view", "contains"):
        update.set("key1", "val1").commit()


def test_replace_view_version_conflict(java: JavaCatalog) -> None:
    replace = created_then_dropped(java, "version")
    with throws(java, "NoSuchViewException", "View does not exist: ns.view", "contains"):
        replace = replace.withQuery(*TRINO).withSchema(schemas(java)[0])
        replace.withDefaultNamespace(java.side.namespace("ns")).commit()


def test_create_view_conflict(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    identifier = java.side.identifier("ns.view")
    pending = java.catalog.buildView(identifier)
    builder(java, queries=[TRINO]).create()
    assert exists(java, "ns.view")
    with throws(java, "AlreadyExistsException", "View already exists: ns.view", "contains"):
        pending = pending.withQuery(*TRINO).withSchema(schemas(java)[0])
        pending.withDefaultNamespace(identifier.namespace()).create()


def test_replace_view_conflict(java: JavaCatalog) -> None:
    pending = created_then_dropped(java, "builder")
    with throws(java, "NoSuchViewException", "View does not exist: ns.view"):
        pending = pending.withQuery(*TRINO).withSchema(schemas(java)[0])
        pending.withDefaultNamespace(java.side.namespace("ns")).replace()


def test_create_and_replace_view_with_location(java: JavaCatalog, tmp_path: Path) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    location = view_location(tmp_path, "ns", "view")
    view = builder(java, queries=[TRINO], location=location).create()
    assert exists(java, "ns.view")
    assert view.location() == location
    updated_location = view_location(tmp_path, "updated", "ns", "view")
    view = builder(java, queries=[TRINO], location=updated_location).replace()
    assert view.location() == updated_location
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")


def test_update_view_location(java: JavaCatalog, tmp_path: Path) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    location = view_location(tmp_path, "ns", "view")
    view = builder(java, queries=[TRINO], location=location).create()
    assert exists(java, "ns.view")
    assert view.location() == location
    updated_location = view_location(tmp_path, "updated", "ns", "view")
    view.updateLocation().setLocation(updated_location).commit()
    updated = load(java)
    assert updated.location() == updated_location
    assert len(list(updated.history())) == 1
    assert_equal(updated.history(), view.history())
    assert_versions(updated, view.currentVersion())
    assert drop(java, "ns.view")
    assert not exists(java, "ns.view")


def test_update_view_location_conflict(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    view = builder(java, queries=[TRINO]).create()
    assert exists(java, "ns.view")
    with throws(java, "IllegalStateException", "Invalid view location: null", "exact"):
        view.updateLocation().setLocation(None).commit()
    update = view.updateLocation()
    java.catalog.dropView(java.side.identifier("ns.view"))
    assert not exists(java, "ns.view")
    with throws(java, "NoSuchViewException", "View does not exist: ns.view", "contains"):
        update.setLocation("new-location").commit()


def internal_apply(java: JavaCatalog, replace: JavaObject) -> JavaObject:
    """``((ViewVersionReplace) replace).internalApply()``: the metadata the replace would
    commit (a package-private method, reached by reflection)."""
    jvm, gateway = java.jvm, java.side.gateway
    replace_class = jvm.java.lang.Class.forName("org.apache.iceberg.view.ViewVersionReplace")
    method = replace_class.getDeclaredMethod(
        "internalApply", gateway.new_array(jvm.java.lang.Class, 0)
    )
    method.setAccessible(True)
    return method.invoke(replace, gateway.new_array(jvm.java.lang.Object, 0))


def test_concurrent_replace_view_version(java: JavaCatalog) -> None:
    """With ``supportsServerSideRetry()``: the second commit, from the same base, is applied
    to the view as the first left it, its version numbered 3."""
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    view = builder(java, queries=[TRINO], properties=DROP_DIALECT).create()
    assert exists(java, "ns.view")
    schema, other = schemas(java)
    ns = java.side.namespace("ns")
    count_id = ("trino", "select count(id) from ns.tbl")
    count_some_id = ("spark", "select count(some_id) from ns.tbl")
    one = view.replaceVersion().withQuery(*count_id).withSchema(schema).withDefaultNamespace(ns)
    two = view.replaceVersion().withQuery(*count_some_id).withSchema(other)
    two = two.withDefaultNamespace(ns)

    operations = view.operations()
    current = operations.current()
    trino_update = internal_apply(java, two)
    spark_update = internal_apply(java, one)
    operations.commit(current, trino_update)
    operations.commit(current, spark_update)  # the server applies it to the view as it is

    updated = load(java)
    assert updated.currentVersion().versionId() == 3
    assert len(list(updated.versions())) == 3
    for version_id, schema_id, query in ((1, 0, TRINO), (2, 1, count_some_id), (3, 0, count_id)):
        found = updated.version(version_id)
        assert_equal(found, expected_version(java, found, version_id, schema_id, [query]))


def sql_view(java: JavaCatalog, *queries: tuple[str, str]) -> JavaObject:
    """Create ``ns.view`` of ``queries``, its default catalog the catalog's name."""
    create_namespace(java, "ns")
    return builder(java, queries=queries, default_catalog=java.catalog.name()).create()


def test_sql_for_multiple_dialects(java: JavaCatalog) -> None:
    view = sql_view(java, ("spark", SQL), ("trino", "select * from ns.tbl using X"))
    assert view.sqlFor("spark").sql() == SQL
    assert view.sqlFor("trino").sql() == "select * from ns.tbl using X"
    assert view.sqlFor("unknown-dialect").sql() == SQL


def test_sql_for_case_insensitive(java: JavaCatalog) -> None:
    view = sql_view(java, ("spark", SQL), ("trino", "select * from ns.tbl using X"))
    assert view.sqlFor("SPARK").sql() == SQL
    assert view.sqlFor("TRINO").sql() == "select * from ns.tbl using X"


def test_sql_for_invalid_arguments(java: JavaCatalog) -> None:
    view = sql_view(java, ("spark", SQL))
    with throws(java, "IllegalArgumentException", "Invalid dialect: null", "exact"):
        view.sqlFor(None)
    with throws(java, "IllegalArgumentException", "Invalid dialect: (empty string)", "exact"):
        view.sqlFor("")


def metadata_json(java: JavaCatalog, view: JavaObject) -> str:
    """The view's metadata as Iceberg writes it (everything but the metadata file's name)."""
    return str(java.jvm.org.apache.iceberg.view.ViewMetadataParser.toJson(metadata(view)))


def check_rename(java: JavaCatalog, target: str) -> None:
    """``renameView``: ``ns.view`` becomes ``target``, its metadata unchanged."""
    assert not exists(java, "ns.view")
    view = builder(java).create()
    assert exists(java, "ns.view")
    assert metadata(view).metadataFileLocation() is not None
    java.catalog.renameView(java.side.identifier("ns.view"), java.side.identifier(target))
    assert not exists(java, "ns.view")
    assert exists(java, target)
    renamed = java.catalog.loadView(java.side.identifier(target))
    assert metadata_json(java, renamed) == metadata_json(java, view)
    assert not drop(java, "ns.view")
    assert drop(java, target)
    assert not exists(java, target)


def test_rename_view(java: JavaCatalog) -> None:
    """The suite compares the metadata recursively, its file's name too. A view's metadata
    file is named by the catalog version that last changed it, and a rename is such a change:
    here everything the file holds (``ViewMetadataParser.toJson``) is compared, not its name."""
    create_namespace(java, "ns")
    check_rename(java, "ns.renamedView")


def test_rename_view_using_different_namespace(java: JavaCatalog) -> None:
    """As ``test_rename_view``: everything the metadata file holds, not its name."""
    create_namespace(java, "ns", "other_ns")
    check_rename(java, "other_ns.renamedView")


def test_rename_view_namespace_missing(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.view")
    builder(java).create()
    assert exists(java, "ns.view")
    message = "Namespace does not exist: non_existing"
    with throws(java, "NoSuchNamespaceException", message, "contains"):
        java.catalog.renameView(
            java.side.identifier("ns.view"), java.side.identifier("non_existing.renamedView")
        )


def test_rename_view_source_missing(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    assert not exists(java, "ns.non_existing")
    with throws(java, "NoSuchViewException", "View does not exist", "contains"):
        java.catalog.renameView(
            java.side.identifier("ns.non_existing"), java.side.identifier("ns.renamedView")
        )


def test_rename_view_target_already_exists_as_view(java: JavaCatalog) -> None:
    create_namespace(java, "ns")
    for name in ("ns.viewOne", "ns.viewTwo"):
        assert not exists(java, name)
        builder(java, name).create()
        assert exists(java, name)
    message = "Cannot rename ns.viewOne to ns.viewTwo. View already exists"
    with throws(java, "AlreadyExistsException", message, "contains"):
        java.catalog.renameView(
            java.side.identifier("ns.viewOne"), java.side.identifier("ns.viewTwo")
        )


def view_and_table(java: JavaCatalog) -> None:
    """Table ``ns.table`` and view ``ns.view``."""
    namespace_with_table(java)
    assert not exists(java, "ns.view")
    builder(java).create()
    assert exists(java, "ns.view")


def test_rename_view_target_already_exists_as_table(java: JavaCatalog) -> None:
    view_and_table(java)
    message = "Cannot rename ns.view to ns.table. Table already exists"
    with throws(java, "AlreadyExistsException", message, "contains"):
        java.catalog.renameView(java.side.identifier("ns.view"), java.side.identifier("ns.table"))


def test_rename_table_target_already_exists_as_view(java: JavaCatalog) -> None:
    view_and_table(java)
    message = "Cannot rename ns.table to ns.view. View already exists"
    with throws(java, "AlreadyExistsException", message, "contains"):
        java.catalog.renameTable(java.side.identifier("ns.table"), java.side.identifier("ns.view"))
