"""Ports of Ignite's ``CreateZoneCommandValidationTest``, ``AlterZoneCommandValidationTest`` and
``CatalogZoneTest``: zones in both of Ignite's DDL styles, node filters checked as JSONPath."""

from __future__ import annotations

import pytest

from catalog import Catalog, ErrorCode
from catalog import commands as c
from catalog.descriptors.zones import ConsistencyMode
from tests.unit.catalog.helpers import bad_shape
from tests.unit.catalog.ignite.support import applied, not_applied, sql_refused

IGNITE_FILTER = "['nodeAttributes'][?(@.['region'] == 'EU')]"


def test_zone_filter() -> None:
    """Ignite refuses ``not a JsonPath`` and an unclosed bracket, and takes its own example."""
    for bad in ("not a JsonPath", "['nodeAttributes'[?(@.['region'] == 'EU')]"):
        error = bad_shape(lambda b=bad: c.CreateZone(name="Z", filter=b))  # type: ignore[misc]
        assert "node filter" in str(error)
    for good in (IGNITE_FILTER, "$..*", "$[?(@.region == 'EU' && @.storage == 'SSD')]"):
        zone = applied(
            Catalog.initial(), f"CREATE ZONE Z WITH DATA_NODES_FILTER = '{_quoted(good)}'"
        )
        assert zone.zone("Z").filter == good


@pytest.mark.parametrize(
    "bad",
    ["$[?(@.region == 'EU')", "$..", "$[?(@.a == )]", "$[?(@.a == 'x' &&)]", "$ and more"],
)
def test_zone_filter_is_refused_naming_where_it_breaks(bad: str) -> None:
    error = bad_shape(lambda: c.AlterZone(name="Z", filter=bad))
    assert "is not a valid JSONPath: expected" in str(error) and "at character" in str(error)


def test_alter_zone_filter() -> None:
    cat = applied(Catalog.initial(), "CREATE ZONE Z STORAGE PROFILES ['default']")
    cat = applied(cat, f"ALTER ZONE Z SET (NODES FILTER '{_quoted(IGNITE_FILTER)}')")
    assert cat.zone("Z").filter == IGNITE_FILTER
    bad_shape(lambda: applied(cat, "ALTER ZONE Z SET NODES FILTER 'not a JsonPath'"))


def test_create_zone_in_ignite_3_1_syntax() -> None:
    cat = applied(
        Catalog.initial(),
        "CREATE ZONE Z (PARTITIONS 10, REPLICAS 3, QUORUM SIZE 2, NODES FILTER '$..*') "
        "STORAGE PROFILES ['default', 'ssd']",
    )
    zone = cat.zone("Z")
    assert (zone.partitions, zone.replicas, zone.quorum) == (10, 3, 2)
    assert zone.storage_profiles == ("default", "ssd")
    not_applied(cat, "CREATE ZONE IF NOT EXISTS Z STORAGE PROFILES ['default']")


def test_zone_storage_profiles() -> None:
    """``zoneStorageProfiles``: at least one profile, none empty, none twice."""
    for text in (
        "CREATE ZONE Z STORAGE PROFILES ['']",
        "CREATE ZONE Z STORAGE PROFILES []",
        "CREATE ZONE Z STORAGE PROFILES ['a', 'a']",
        "CREATE ZONE Z WITH STORAGE_PROFILES = 'a' STORAGE PROFILES ['b']",
    ):
        bad_shape(lambda t=text: applied(Catalog.initial(), t))  # type: ignore[misc]


def test_alter_zone_in_ignite_3_1_syntax() -> None:
    cat = applied(Catalog.initial(), "CREATE ZONE Z (REPLICAS 5) STORAGE PROFILES ['default']")
    cat = applied(cat, "ALTER ZONE Z SET (REPLICAS 3, QUORUM SIZE 2)")
    assert (cat.zone("Z").replicas, cat.zone("Z").quorum) == (3, 2)
    cat = applied(cat, "ALTER ZONE Z SET REPLICAS 1")
    assert (cat.zone("Z").replicas, cat.zone("Z").quorum) == (1, 1)
    sql_refused(cat, ErrorCode.UNSUPPORTED_CHANGE, "ALTER ZONE Z SET PARTITIONS 4")


def test_zone_invalid_quorum_size() -> None:
    error = bad_shape(
        lambda: applied(
            Catalog.initial(),
            "CREATE ZONE Z (REPLICAS 3, QUORUM SIZE 4) STORAGE PROFILES ['default']",
        )
    )
    assert "quorum 4 is out of range [2, 2] for 3 replica(s)" in str(error)


@pytest.mark.parametrize(
    ("element", "named"),
    [
        ("DISTRIBUTION ALGORITHM 'rendezvous'", "DISTRIBUTION ALGORITHM"),
        ("REPLICAS ALL", "REPLICAS ALL"),
    ],
)
def test_zone_settings_this_catalog_does_not_hold_are_refused(element: str, named: str) -> None:
    """Settings the zones here do not hold are refused by name, with those accepted."""
    error = bad_shape(
        lambda: applied(
            Catalog.initial(), f"CREATE ZONE Z ({element}) STORAGE PROFILES ['default']"
        )
    )
    assert named in str(error)


@pytest.mark.parametrize("direction", ["UP", "DOWN"])
def test_zone_auto_adjust_scale(direction: str) -> None:
    """``zoneAutoAdjustScaleUp`` / ``zoneAutoAdjustScaleDown``: seconds from 0, or OFF."""
    field = f"auto_scale_{direction.lower()}_s"
    bad_shape(lambda: c.CreateZone(name="Z", **{field: -1}))
    bad_shape(lambda: c.AlterZone(name="Z", **{field: -1}))
    for written, stored in (("0", 0), ("10", 10), ("OFF", None)):
        text = f"CREATE ZONE Z (AUTO SCALE {direction} {written}) STORAGE PROFILES ['default']"
        assert getattr(applied(Catalog.initial(), text).zone("Z"), field) == stored


def test_zone_auto_adjust_defaults_and_changes() -> None:
    """As in Ignite: scale up at once, scale down off; ALTER changes either or both."""
    cat = applied(Catalog.initial(), "CREATE ZONE Z STORAGE PROFILES ['default']")
    zone = cat.zone("Z")
    assert (zone.auto_scale_up_s, zone.auto_scale_down_s) == (0, None)
    cat = applied(cat, "ALTER ZONE Z SET (AUTO SCALE UP 30, AUTO SCALE DOWN 300)")
    assert (cat.zone("Z").auto_scale_up_s, cat.zone("Z").auto_scale_down_s) == (30, 300)
    cat = applied(cat, "ALTER ZONE Z SET AUTO SCALE OFF")
    assert (cat.zone("Z").auto_scale_up_s, cat.zone("Z").auto_scale_down_s) == (None, None)
    cat = applied(cat, "ALTER ZONE Z SET DATA_NODES_AUTO_ADJUST_SCALE_UP = 5")
    assert cat.zone("Z").auto_scale_up_s == 5
    error = bad_shape(lambda: applied(cat, "ALTER ZONE Z SET (AUTO SCALE UP 1, AUTO SCALE OFF)"))
    assert "AUTO SCALE UP given twice" in str(error)


def test_zone_consistency_mode() -> None:
    """``zoneConsistencyMode``: either mode, STRONG_CONSISTENCY when none is given; fixed."""
    cat = applied(Catalog.initial(), "CREATE ZONE Z STORAGE PROFILES ['default']")
    assert cat.zone("Z").consistency_mode is ConsistencyMode.STRONG_CONSISTENCY
    cat = applied(
        cat, "CREATE ZONE H (CONSISTENCY MODE 'HIGH_AVAILABILITY') STORAGE PROFILES ['default']"
    )
    assert cat.zone("H").consistency_mode is ConsistencyMode.HIGH_AVAILABILITY
    cat = applied(cat, "CREATE ZONE S WITH CONSISTENCY_MODE = 'strong_consistency'")
    assert cat.zone("S").consistency_mode is ConsistencyMode.STRONG_CONSISTENCY
    bad_shape(
        lambda: applied(cat, "CREATE ZONE X (CONSISTENCY MODE 'MAYBE') STORAGE PROFILES ['a']")
    )
    error = bad_shape(
        lambda: applied(cat, "ALTER ZONE H SET CONSISTENCY MODE 'STRONG_CONSISTENCY'")
    )
    assert "fixed when the zone is created" in str(error)


def test_set_default_zone_if_exists() -> None:
    not_applied(Catalog.initial(), "ALTER ZONE IF EXISTS NOPE SET DEFAULT")
    sql_refused(Catalog.initial(), ErrorCode.ZONE_NOT_FOUND, "ALTER ZONE NOPE SET DEFAULT")
    cat = applied(Catalog.initial(), "CREATE ZONE Z STORAGE PROFILES ['default']")
    cat = applied(cat, "ALTER ZONE IF EXISTS Z SET DEFAULT")
    assert cat.default_zone() == cat.zone("Z")


def _quoted(text: str) -> str:
    return text.replace("'", "''")
