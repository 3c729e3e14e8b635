"""Node options are checked when built: a wrong one names itself and what it accepts."""

from __future__ import annotations

import math
from typing import Any

import pytest

from catalog.runtime.options import CompactionPolicy, NodeOptions


def test_the_defaults_are_valid() -> None:
    options = NodeOptions()
    assert (options.delay_ms, options.max_clock_skew_ms) == (500, 500)
    assert options.registry_ttl_s is not None and options.registry_interval_s is None


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"delay_ms": -1}, "delay_ms"),
        ({"max_clock_skew_ms": -5}, "max_clock_skew_ms"),
        ({"follow_interval_s": 0}, "follow_interval_s"),
        ({"follow_interval_s": math.inf}, "follow_interval_s"),
        ({"registry_ttl_s": 0}, "registry_ttl_s"),
        ({"registry_ttl_s": 3, "registry_interval_s": 3}, "registry_interval_s"),
        ({"registry_interval_s": -1}, "registry_interval_s"),
        ({"descriptor_cache": 0}, "descriptor_cache"),
    ],
)
def test_an_option_out_of_range_is_refused_by_name(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=f"node {named} must be"):
        NodeOptions(**fields)


def test_no_registry_needs_no_interval_bound() -> None:
    assert NodeOptions(registry_ttl_s=None, registry_interval_s=30).registry_interval_s == 30


@pytest.mark.parametrize(
    "fields", [{"retain_versions": 0}, {"retain_ms": -1}, {"check_interval_s": 0}]
)
def test_a_compaction_policy_out_of_range_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"^compaction \w+ must be"):
        CompactionPolicy(**fields)
