"""An Iceberg ``CreateTableRequest`` as one ``CreateTableCommand``.

The Iceberg schema's fields become the columns (required is NOT NULL) and its identifier
fields the primary key. The catalog gives the columns their own ids (0, 1, ... in field
order); the answer carries those. A table is unpartitioned and unsorted, lives where the
server's warehouse puts it, and is created at once (no staged creation).
"""

from __future__ import annotations

from api.iceberg.errors import bad_request
from api.iceberg.evolution import column_of
from api.iceberg.models import CreateTableRequest
from api.iceberg.properties import property_fields
from catalog.commands.tables import CreateTableCommand


def create_table_command(namespace: str, request: CreateTableRequest) -> CreateTableCommand:
    """Return the command creating the table ``request`` asks for in schema ``namespace``.

    Raises:
        IcebergError: BadRequestException for what the catalog does not do: a staged
            creation, a location, a partition spec or sort order, no identifier fields, an
            unknown property or a type with no counterpart.
        ValidationError: a name or column the catalog refuses.
    """
    name = request.name
    if request.stage_create:
        raise bad_request(
            f"table {name}: this catalog creates tables at once; staged creation (a create "
            "transaction) is not supported"
        )
    if request.location is not None:
        raise bad_request(
            f"table {name}: this catalog places each table's data in its warehouse folder "
            "(<warehouse>/table_<id>); create the table without a location"
        )
    if request.partition_spec is not None and request.partition_spec.fields:
        raise bad_request(
            f"table {name}: this catalog's tables are not partitioned by Iceberg (rows go to "
            "partitions by their colocation columns); give no partition spec"
        )
    if request.write_order is not None and request.write_order.fields:
        raise bad_request(f"table {name}: this catalog's tables are unsorted; give no sort order")
    schema = request.schema_
    if not schema.identifier_field_ids:
        raise bad_request(
            f"table {name} needs identifier fields: they are its primary key (mark the key "
            "fields required and list them in identifier-field-ids)"
        )
    by_id = {f.id: f for f in schema.fields}
    missing = [i for i in schema.identifier_field_ids if i not in by_id]
    if missing:
        raise bad_request(
            f"table {name}: identifier field ids {', '.join(map(str, missing))} are not "
            "fields of the schema"
        )
    if len(by_id) != len(schema.fields):
        raise bad_request(f"table {name}: the schema repeats a field id")
    return CreateTableCommand(
        **{
            "schema": namespace,
            "name": name,
            "columns": [column_of(name, f) for f in schema.fields],
            "primary_key": [by_id[i].name for i in schema.identifier_field_ids],
            **property_fields(request.properties),
        }
    )
