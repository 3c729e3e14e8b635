"""Commands that create, alter, rename and drop distribution zones."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, Self

from pydantic import Field, model_validator

from catalog.commands.base import CommandBase, ExistingObjectCommand, Name, UpdateContext, unique
from catalog.commands.zone_filter import check_filter
from catalog.descriptors import ZoneDescriptor
from catalog.descriptors.zones import (
    DEFAULT_FILTER,
    DEFAULT_PARTITIONS,
    DEFAULT_STORAGE_PROFILE,
    DEFAULT_ZONE_NAME,
    MAX_PARTITIONS,
    ConsistencyMode,
    default_quorum,
    default_zone,
    quorum_range,
)
from catalog.entries import (
    AlterZoneEntry,
    DropZoneEntry,
    EntryBase,
    NewZoneEntry,
    ObjectIdGenUpdateEntry,
    SetDefaultZoneEntry,
)
from catalog.errors import AlreadyExistsError, ErrorCode, NotFoundError, ValidationError


def _check_quorum(replicas: int, quorum: int) -> None:
    low, high = quorum_range(replicas)
    if not low <= quorum <= high:
        raise ValidationError(
            f"quorum {quorum} is out of range [{low}, {high}] for {replicas} replica(s)"
        )


def _ensure_zone_name_free(ctx: UpdateContext, name: str) -> None:
    if ctx.catalog.find_zone(name) is not None:
        raise AlreadyExistsError(f"zone {name} already exists", code=ErrorCode.ZONE_EXISTS)


def created_default_zone(ctx: UpdateContext) -> tuple[ZoneDescriptor, list[EntryBase]]:
    """Return the ``Default`` zone a table without a zone creates, and the entries creating it.

    A catalog starts without zones; the first table created without naming one creates
    ``Default`` (one replica, every node, the default storage profile) and makes it the
    default zone, in the same version. Any later such table finds it. A zone already named
    ``Default`` that is not the default zone is refused rather than taken over.
    """
    if ctx.catalog.find_zone(DEFAULT_ZONE_NAME) is not None:
        raise AlreadyExistsError(
            f"no default zone is set and a zone named {DEFAULT_ZONE_NAME} already exists; name "
            f'the table\'s zone (ZONE "{DEFAULT_ZONE_NAME}") or make it the default zone '
            f'(ALTER ZONE "{DEFAULT_ZONE_NAME}" SET DEFAULT)',
            code=ErrorCode.ZONE_EXISTS,
        )
    zone = default_zone(ctx.catalog.object_id_gen)
    return zone, [
        NewZoneEntry(zone=zone),
        SetDefaultZoneEntry(zone_id=zone.id),
        ObjectIdGenUpdateEntry(delta=1),
    ]


Timer = Annotated[int, Field(ge=0)] | Literal["OFF"]
"""An auto-adjust timer as commands give it: seconds (0 = at once), or ``"OFF"``."""


def _seconds(timer: int | str) -> int | None:
    return None if timer == "OFF" else int(timer)


class _ZoneCommand(ExistingObjectCommand[ZoneDescriptor]):
    """A command about the zone ``name``; with ``if_exists`` it may be missing."""

    if TYPE_CHECKING:
        # Each command declares these fields itself, where its wire form (its fields in
        # declaration order) has them; fields of a base class would come first.
        name: str
        if_exists: bool

    def find(self, ctx: UpdateContext) -> ZoneDescriptor | None:
        zone = ctx.catalog.find_zone(self.name)
        if zone is None and not self.if_exists:
            raise NotFoundError(f"zone {self.name} not found", code=ErrorCode.ZONE_NOT_FOUND)
        return zone


class CreateZoneCommand(CommandBase):
    """``CREATE ZONE``: partitions, replicas, quorum, profiles, filter, timers, consistency.

    Partitions and the consistency mode are fixed for the zone's life.
    """

    op: Literal["create_zone"] = "create_zone"
    name: Name
    partitions: int = Field(default=DEFAULT_PARTITIONS, ge=1, le=MAX_PARTITIONS)
    replicas: int = Field(default=1, ge=1)
    quorum: int | None = Field(default=None, ge=1)
    storage_profiles: tuple[Name, ...] = Field(default=(DEFAULT_STORAGE_PROFILE,), min_length=1)
    filter: str = DEFAULT_FILTER
    if_not_exists: bool = False
    auto_scale_up_s: Timer = 0
    auto_scale_down_s: Timer = "OFF"
    consistency_mode: ConsistencyMode = ConsistencyMode.STRONG_CONSISTENCY

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.quorum is not None:
            _check_quorum(self.replicas, self.quorum)
        unique(self.storage_profiles, "storage profile")
        check_filter(self.filter)
        return self

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        if ctx.catalog.find_zone(self.name) is not None and self.if_not_exists:
            return []
        _ensure_zone_name_free(ctx, self.name)
        zone = ZoneDescriptor(
            id=ctx.catalog.object_id_gen,
            name=self.name,
            partitions=self.partitions,
            replicas=self.replicas,
            quorum=self.quorum if self.quorum is not None else default_quorum(self.replicas),
            storage_profiles=self.storage_profiles,
            filter=self.filter,
            auto_scale_up_s=_seconds(self.auto_scale_up_s),
            auto_scale_down_s=_seconds(self.auto_scale_down_s),
            consistency_mode=self.consistency_mode,
        )
        return [NewZoneEntry(zone=zone), ObjectIdGenUpdateEntry(delta=1)]


class AlterZoneCommand(_ZoneCommand):
    """``ALTER ZONE ... SET``: replicas, quorum, storage profiles, node filter, timers.

    Partitions cannot change. When replicas change and no quorum is given, the current quorum
    is moved into the valid range for the new replica count.
    """

    op: Literal["alter_zone"] = "alter_zone"
    name: Name
    partitions: int | None = None
    replicas: int | None = Field(default=None, ge=1)
    quorum: int | None = Field(default=None, ge=1)
    storage_profiles: tuple[Name, ...] | None = Field(default=None, min_length=1)
    filter: str | None = None
    if_exists: bool = False
    auto_scale_up_s: Timer | None = None
    auto_scale_down_s: Timer | None = None

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.storage_profiles is not None:
            unique(self.storage_profiles, "storage profile")
        if self.filter is not None:
            check_filter(self.filter)
        return self

    def entries(self, ctx: UpdateContext) -> list[EntryBase]:  # noqa: D102
        # Checked here, not in ``_check``: a validator's error reaches the caller re-wrapped as
        # VALIDATION_ERROR, and this refusal must keep its UNSUPPORTED_CHANGE code.
        if self.partitions is not None:
            raise ValidationError(
                "the number of partitions of a zone cannot change",
                code=ErrorCode.UNSUPPORTED_CHANGE,
            )
        return super().entries(ctx)

    def entries_for(self, ctx: UpdateContext, zone: ZoneDescriptor) -> list[EntryBase]:  # noqa: D102
        replicas = zone.replicas if self.replicas is None else self.replicas
        if self.quorum is not None:
            _check_quorum(replicas, self.quorum)
            quorum = self.quorum
        else:
            low, high = quorum_range(replicas)
            quorum = min(max(zone.quorum, low), high)
        new = zone.model_copy(
            update={
                "replicas": replicas,
                "quorum": quorum,
                "storage_profiles": self.storage_profiles or zone.storage_profiles,
                "filter": self.filter if self.filter is not None else zone.filter,
                "auto_scale_up_s": zone.auto_scale_up_s
                if self.auto_scale_up_s is None
                else _seconds(self.auto_scale_up_s),
                "auto_scale_down_s": zone.auto_scale_down_s
                if self.auto_scale_down_s is None
                else _seconds(self.auto_scale_down_s),
            }
        )
        return [] if new == zone else [AlterZoneEntry(zone=new)]


class RenameZoneCommand(_ZoneCommand):
    """``ALTER ZONE ... RENAME TO``."""

    op: Literal["rename_zone"] = "rename_zone"
    name: Name
    new_name: Name
    if_exists: bool = False

    def entries_for(self, ctx: UpdateContext, zone: ZoneDescriptor) -> list[EntryBase]:  # noqa: D102
        _ensure_zone_name_free(ctx, self.new_name)
        return [AlterZoneEntry(zone=zone.model_copy(update={"name": self.new_name}))]


class DropZoneCommand(_ZoneCommand):
    """``DROP ZONE``: only a zone that holds no tables and is not the default."""

    op: Literal["drop_zone"] = "drop_zone"
    name: Name
    if_exists: bool = False

    def entries_for(self, ctx: UpdateContext, zone: ZoneDescriptor) -> list[EntryBase]:  # noqa: D102
        if ctx.catalog.default_zone_id == zone.id:
            raise ValidationError(
                f"zone {zone.name} is the default zone; set another default first",
                code=ErrorCode.ZONE_IN_USE,
            )
        if ctx.catalog.zone_has_tables(zone.id):
            held = [t.name for t in ctx.catalog.zone_tables(zone.id)]
            shown = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
            raise ValidationError(
                f"zone {zone.name} holds tables ({shown}); drop them first",
                code=ErrorCode.ZONE_IN_USE,
            )
        return [DropZoneEntry(zone_id=zone.id)]


class SetDefaultZoneCommand(_ZoneCommand):
    """``ALTER ZONE ... SET DEFAULT``: tables created without a zone go there.

    With ``if_exists``, a missing zone is no error (and the default stays).
    """

    op: Literal["set_default_zone"] = "set_default_zone"
    name: Name
    if_exists: bool = False

    def entries_for(self, ctx: UpdateContext, zone: ZoneDescriptor) -> list[EntryBase]:  # noqa: D102
        if ctx.catalog.default_zone_id == zone.id:
            return []
        return [SetDefaultZoneEntry(zone_id=zone.id)]
