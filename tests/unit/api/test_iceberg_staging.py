"""What a create transaction's commit creates: the current schema, every spec and order added."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from api.iceberg.errors import IcebergError
from api.iceberg.staging import LAST_ADDED, CreateChanges
from api.iceberg.updates import TableUpdate

UPDATE: TypeAdapter[TableUpdate] = TypeAdapter(TableUpdate)


def _schema(schema_id: int, *names: str) -> TableUpdate:
    fields = [
        {"id": i, "name": n, "type": "long", "required": False} for i, n in enumerate(names, 1)
    ]
    schema = {"type": "struct", "schema-id": schema_id, "fields": fields}
    return UPDATE.validate_python({"action": "add-schema", "schema": schema})


def _spec(spec_id: int, *sources: int) -> TableUpdate:
    fields = [
        {"source-id": s, "field-id": 1000 + i, "name": f"p{s}", "transform": "identity"}
        for i, s in enumerate(sources)
    ]
    return UPDATE.validate_python(
        {"action": "add-spec", "spec": {"spec-id": spec_id, "fields": fields}}
    )


def _set(action: str, key: str, value: int) -> TableUpdate:
    body: dict[str, Any] = {"action": action, key: value}
    return UPDATE.validate_python(body)


def test_an_evolved_create_is_made_with_the_current_schema_and_every_spec() -> None:
    changes = CreateChanges(
        "T",
        [
            _schema(0, "a", "b"),
            _set("set-current-schema", "schema-id", LAST_ADDED),
            _spec(0, 1),
            _set("set-default-spec", "spec-id", LAST_ADDED),
            _schema(1, "a", "b", "c"),
            _set("set-current-schema", "schema-id", LAST_ADDED),
            _spec(1, 1, 3),
            _set("set-default-spec", "spec-id", LAST_ADDED),
        ],
    )
    assert [f.name for f in changes.schema.fields] == ["a", "b", "c"]
    later = changes.later_command("PUBLIC")
    assert later is not None and later.default_spec_id == LAST_ADDED
    assert [[f.source for f in s.fields] for s in later.add_specs] == [["a", "c"]]


def test_the_first_spec_stays_the_default_when_the_create_says_so() -> None:
    changes = CreateChanges(
        "T", [_schema(0, "a"), _spec(0, 1), _spec(1), _set("set-default-spec", "spec-id", 0)]
    )
    later = changes.later_command("PUBLIC")
    assert later is not None and later.default_spec_id is None


def test_a_default_spec_between_the_first_and_the_last_is_refused() -> None:
    updates = [
        _schema(0, "a"),
        _spec(0),
        _spec(1, 1),
        _spec(2),
        _set("set-default-spec", "spec-id", 1),
    ]
    with pytest.raises(IcebergError, match="default spec is its first or its last") as refused:
        CreateChanges("T", updates)
    assert refused.value.status == 400
