"""The chaos tests' history checker, on hand-made histories: it must catch every violation."""

from __future__ import annotations

import pytest

from tests.chaos.history import (
    History,
    LoggedRequest,
    Observed,
    Operation,
    Outcome,
    Read,
    check,
)
from updatelog.log import RequestRecord

A, B, C = "http://a", "http://b", "http://c"


def _digests(n: int, *, at: dict[int, str] | None = None) -> dict[int, str]:
    found = {v: f"d{v}" for v in range(1, n + 1)}
    found.update(at or {})
    return found


def _healthy() -> tuple[History, Observed]:
    """Four versions; r1 acknowledged at 2, r2 at 3 (re-sent once), r3 refused, r4 unknown."""
    history = History()
    history.record(Operation("r1", A, ("create_table",), Outcome.OK, 2, (True,)))
    history.record(Operation("r2", B, ("add_columns",), Outcome.OK, 3, (True,)))
    history.record(Operation("r2", C, ("add_columns",), Outcome.OK, 3, (True,)))
    history.record(Operation("r3", C, ("drop_table",), Outcome.REFUSED, code="TABLE_NOT_FOUND"))
    history.record(Operation("r4", None, ("create_zone",), Outcome.UNKNOWN, code="UNREACHABLE"))
    for node in (A, B, C):
        history.record_read(Read(node, 1000, 3, "d3"))
    history.record_read(Read(B, 2000, 4, "d4", min_version=3))
    observed = Observed(
        log_earliest=1,
        log_latest=4,
        log_versions=[1, 2, 3, 4],
        requests_in_log={
            "r1": [LoggedRequest(2, (True,))],
            "r2": [LoggedRequest(3, (True,))],
            "r4": [LoggedRequest(4, (True,))],
        },
        request_keys={
            "r1": RequestRecord(2),
            "r2": RequestRecord(3),
            "r3": RequestRecord(3, b"refusal"),
            "r4": RequestRecord(4),
        },
        node_versions={n: [1, 2, 3, 4] for n in (A, B, C)},
        digests={n: _digests(4) for n in (A, B, C)},
    )
    return history, observed


def test_a_healthy_history_passes() -> None:
    history, observed = _healthy()
    report = check(history, observed)
    assert report.ok, report.summary()
    assert report.checked["acknowledged"] == 2
    assert report.checked["refused"] == 1
    assert report.checked["unknown_applied"] == 1
    assert "nothing lost" in report.summary()


def _problems(history: History, observed: Observed) -> str:
    report = check(history, observed)
    assert not report.ok
    return "\n".join(report.problems)


def test_a_request_applied_twice_is_a_duplicate() -> None:
    history, observed = _healthy()
    observed.requests_in_log["r2"].append(LoggedRequest(4, (True,)))
    assert "r2: applied more than once, in versions [3, 4]" in _problems(history, observed)


def test_an_unknown_outcome_applied_twice_is_a_duplicate() -> None:
    history, observed = _healthy()
    observed.requests_in_log["r4"].append(LoggedRequest(3, (True,)))
    assert "r4: outcome unknown, applied more than once" in _problems(history, observed)


def test_a_gap_in_the_log_is_found() -> None:
    history, observed = _healthy()
    observed.log_versions = [1, 2, 4]
    assert "missing [3]" in _problems(history, observed)


def test_a_node_that_skipped_a_version_is_found() -> None:
    history, observed = _healthy()
    observed.node_versions[B] = [1, 2, 4]
    del observed.digests[B][3]
    problems = _problems(history, observed)
    assert f"{B}: served versions are not contiguous" in problems
    assert f"{B}: lacks retained versions [3]" in problems


def test_a_node_behind_the_log_is_found() -> None:
    history, observed = _healthy()
    observed.node_versions[C] = [1, 2, 3]
    assert f"{C}: latest version 3, the log's is 4" in _problems(history, observed)


def test_a_lost_acknowledgement_is_found() -> None:
    history, observed = _healthy()
    del observed.requests_in_log["r1"]
    assert "r1: acknowledged with version 2, not in the log" in _problems(history, observed)


def test_a_request_that_changed_nothing_is_checked_by_its_request_key() -> None:
    history, observed = _healthy()
    history.record(Operation("r5", A, ("create_table",), Outcome.OK, 3, (False,)))
    observed.request_keys["r5"] = RequestRecord(3)
    assert check(history, observed).ok  # in no version, and its key names the version judged
    observed.request_keys["r5"] = RequestRecord(2)
    assert "r5: acknowledged as changing nothing at version 3" in _problems(history, observed)


def test_an_acknowledgement_with_the_wrong_version_is_found() -> None:
    history, observed = _healthy()
    observed.requests_in_log["r1"] = [LoggedRequest(3, (True,))]
    assert "r1: acknowledged with version 2, the log has it in version 3" in _problems(
        history, observed
    )


def test_a_lost_acknowledgement_behind_a_snapshot_is_found_by_its_request_key() -> None:
    history, observed = _healthy()
    observed.log_earliest, observed.log_versions = 3, [3, 4]  # 3 is now the snapshot
    del observed.requests_in_log["r1"], observed.requests_in_log["r2"]
    assert check(history, observed).ok  # compacted, and the request keys still name 2 and 3
    observed.request_keys["r1"] = None
    assert "r1: acknowledged with version 2 (compacted since)" in _problems(history, observed)


def test_acknowledged_twice_with_different_versions_is_found() -> None:
    history, observed = _healthy()
    history.record(Operation("r1", C, ("create_table",), Outcome.OK, 3, (True,)))
    assert "r1: acknowledged with different versions [2, 3]" in _problems(history, observed)


def test_a_refused_request_in_the_log_is_found() -> None:
    history, observed = _healthy()
    observed.requests_in_log["r3"] = [LoggedRequest(4, (True,))]
    assert "r3: refused (['TABLE_NOT_FOUND']) but applied in [4]" in _problems(history, observed)


def test_a_refused_request_whose_key_names_a_commit_is_found() -> None:
    history, observed = _healthy()
    observed.request_keys["r3"] = RequestRecord(4)
    assert "r3: refused (['TABLE_NOT_FOUND']) but applied in [4]" in _problems(history, observed)


def test_an_acknowledged_request_whose_key_records_a_refusal_is_found() -> None:
    history, observed = _healthy()
    observed.request_keys["r1"] = RequestRecord(2, b"refusal")
    assert "r1: catalog.request key names refused, acknowledged 2" in _problems(history, observed)


def test_a_refused_retry_of_an_acknowledged_request_is_found() -> None:
    history, observed = _healthy()
    history.record(Operation("r1", B, ("create_table",), Outcome.REFUSED, code="TABLE_EXISTS"))
    assert "r1: acknowledged, but a retry was refused" in _problems(history, observed)


def test_a_request_nobody_sent_is_found() -> None:
    history, observed = _healthy()
    observed.requests_in_log["ghost"] = [LoggedRequest(4, (True,))]
    assert "requests no client sent: ['ghost']" in _problems(history, observed)


def test_divergent_digests_are_found() -> None:
    history, observed = _healthy()
    observed.digests[C][2] = "other"
    assert "version 2: digests differ across nodes" in _problems(history, observed)


def test_reads_at_one_time_that_disagree_are_found() -> None:
    history, observed = _healthy()
    history.record_read(Read(C, 1000, 2, "d2"))
    assert "reads at 1000 disagree (invariant 5)" in _problems(history, observed)


def test_a_read_that_misses_an_acknowledged_change_is_found() -> None:
    history, observed = _healthy()
    history.record_read(Read(A, 3000, 2, "d2", min_version=3))
    assert "saw version 2, but version 3 had been acknowledged" in _problems(history, observed)


def test_a_read_whose_catalog_later_changed_is_found() -> None:
    history, observed = _healthy()
    history.record_read(Read(A, 4000, 4, "stale"))
    assert "the node now serves d4 for it" in _problems(history, observed)


@pytest.mark.parametrize("applied", [(False,), (True, True)])
def test_applied_flags_must_match_the_log(applied: tuple[bool, ...]) -> None:
    history, observed = _healthy()
    observed.requests_in_log["r1"] = [LoggedRequest(2, applied)]
    assert "r1: acknowledged applied=(True,)" in _problems(history, observed)
