"""Service principals as catalog objects: commands, storage, snapshots, diffs, words, events."""

from __future__ import annotations

from typing import Any

import pytest

from catalog import Catalog, VersionedUpdate
from catalog.change_words import describe
from catalog.commands.principals import (
    AlterPrincipalCommand,
    CreatePrincipalCommand,
    DropPrincipalCommand,
)
from catalog.descriptors.principals import (
    PrincipalDescriptor,
    PrincipalRole,
    hash_secret,
    secret_matches,
)
from catalog.diff import ChangeKind, FieldChange, diff
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError, ValidationError
from catalog.event_feed import CatalogEventParameters
from catalog.events import CatalogEvent
from catalog.snapshots import decode_snapshot, encode_snapshot
from tests.unit.catalog.helpers import catalog_with_default_zone, run


def _create(name: str = "etl", client_id: str = "client-id-0000000001", **kw: Any) -> Any:
    return CreatePrincipalCommand(
        name=name,
        role=kw.pop("role", PrincipalRole.WRITER),
        client_id=client_id,
        secret_hash=hash_secret(kw.pop("secret", "s3cret")),
    )


def _with_etl() -> Catalog:
    cat = catalog_with_default_zone()
    return _applied(cat, _create())


def _applied(cat: Catalog, *commands: Any) -> Catalog:
    for entry in run(cat, *commands).entries:
        cat = entry.apply(cat)
    return cat


def test_a_principal_keeps_only_a_salted_hash_of_its_secret() -> None:
    etl = _with_etl().principal("etl")
    assert secret_matches(etl, "s3cret")
    assert not secret_matches(etl, "s3cret ")
    assert "s3cret" not in etl.secret_hash
    assert etl.secret_hash != hash_secret("s3cret")  # a fresh salt each time
    assert "secret_hash" not in etl.model_dump()
    assert "secret_hash" not in repr(etl)
    broken = etl.model_copy(update={"secret_hash": "md5$00$00"})
    assert not secret_matches(broken, "s3cret")


def test_names_and_client_ids_are_unique() -> None:
    cat = _with_etl()
    with pytest.raises(AlreadyExistsError) as named:
        run(cat, _create(client_id="another-client-00002"))
    assert named.value.code == ErrorCode.PRINCIPAL_EXISTS
    with pytest.raises(AlreadyExistsError, match="client id"):
        run(cat, _create(name="other"))
    with pytest.raises(ValidationError):
        _create(client_id="short")


def test_a_rotation_counts_the_secrets_and_replaces_the_hash() -> None:
    cat = _with_etl()
    rotated = _applied(cat, AlterPrincipalCommand(name="etl", secret_hash=hash_secret("new")))
    etl = rotated.principal("etl")
    assert etl.credential_version == 2
    assert secret_matches(etl, "new") and not secret_matches(etl, "s3cret")
    assert run(rotated, AlterPrincipalCommand(name="etl", role=PrincipalRole.WRITER)).entries == ()
    changes = diff(cat, rotated)
    assert [(ch.object_type, ch.change, ch.fields) for ch in changes] == [
        ("principal", ChangeKind.ALTERED, (FieldChange("credential_version", 1, 2),))
    ]


def test_dropping_a_missing_principal_names_it() -> None:
    cat = _with_etl()
    with pytest.raises(NotFoundError) as missing:
        run(cat, DropPrincipalCommand(name="nobody"))
    assert missing.value.code == ErrorCode.PRINCIPAL_NOT_FOUND
    assert "nobody" in missing.value.message
    assert run(cat, DropPrincipalCommand(name="nobody", if_exists=True)).entries == ()
    dropped = _applied(cat, DropPrincipalCommand(name="etl"))
    assert dropped.principals() == []
    assert dropped.find_principal_by_client("client-id-0000000001") is None


def test_a_snapshot_keeps_principals_and_a_catalog_without_them_encodes_as_before() -> None:
    plain = catalog_with_default_zone()
    cat = _with_etl()
    back = decode_snapshot(encode_snapshot(cat))
    assert back.digest() == cat.digest()
    assert back.principal("etl") == cat.principal("etl")
    assert back.find_principal_by_client("client-id-0000000001") == cat.principal("etl")
    dropped = _applied(cat, DropPrincipalCommand(name="etl"))
    assert encode_snapshot(dropped.with_version(plain.version, plain.activation_ts)) == (
        encode_snapshot(plain.with_object_id_gen(dropped.object_id_gen))
    )


def test_from_parts_refuses_two_principals_of_one_client_id() -> None:
    cat = _applied(_with_etl(), _create(name="b", client_id="client-id-0000000002"))
    a, b = cat.principals()
    parts: dict[str, Any] = {
        "version": cat.version,
        "activation_ts": cat.activation_ts,
        "object_id_gen": cat.object_id_gen,
        "default_zone_id": cat.default_zone_id,
        "schemas": cat.schemas(),
        "zones": cat.zones(),
        "tables": [],
        "indexes": [],
    }
    assert Catalog.from_parts(**parts, principals=[a, b]).digest() == cat.digest()
    clash = b.model_copy(update={"client_id": a.client_id})
    with pytest.raises(ValueError, match="duplicate principal"):
        Catalog.from_parts(**parts, principals=[a, clash])


def test_principal_changes_in_words_events_and_stamps() -> None:
    cat = catalog_with_default_zone()
    commands = [
        _create(),
        AlterPrincipalCommand(name="etl", role=PrincipalRole.ADMIN),
    ]
    prepared = run(cat, *commands)
    update = VersionedUpdate(
        version=cat.version + 1,
        proposal_ts=7 << 16,
        delay_ms=0,
        entries=prepared.entries,
        stamps=True,
    )
    events: list[CatalogEventParameters] = []
    after = update.apply_to(cat, events)
    assert describe(update.entries, cat, after) == [
        "created principal etl (writer)",
        "altered principal etl: admin, secret 1",
    ]
    assert [(e.event, e.subject.type, e.subject.name) for e in events] == [
        (CatalogEvent.PRINCIPAL_CREATE, "principal", "etl"),
        (CatalogEvent.PRINCIPAL_ALTER, "principal", "etl"),
    ]
    etl = after.principal("etl")
    assert etl.update_ts == after.activation_ts > 0
    dropped = _applied(after, DropPrincipalCommand(name="etl"))
    assert describe(run(after, DropPrincipalCommand(name="etl")).entries, after, dropped) == [
        "dropped principal etl"
    ]


def test_a_principal_descriptor_needs_every_field() -> None:
    with pytest.raises(ValidationError):
        PrincipalDescriptor(id=1, name="x", role="owner", client_id="c" * 20, secret_hash="h")
