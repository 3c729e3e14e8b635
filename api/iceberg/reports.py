"""Metrics reports of Iceberg clients (``POST .../tables/{table}/metrics``).

A client reports what a scan or a commit of a table cost it (a ``ScanReport`` or a
``CommitReport``, told apart by ``report-type``). The server counts them, by report type, in
its Prometheus ``/metrics`` (``catalog_iceberg_metrics_reports``) and keeps nothing else:
the counts say which engines scan and commit, the reports' numbers belong to the client's
own monitoring. A report of a type this server does not know is counted as such, as long
as it has a report's shape; a body of neither shape is refused with 400.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError

from api.iceberg.errors import bad_request
from api.iceberg.models import IcebergModel

SCAN_REPORT = "scan-report"
COMMIT_REPORT = "commit-report"


class ScanReport(IcebergModel):
    """What a scan planned: the table, snapshot, filter, projection and its metrics."""

    report_type: str = Field(alias="report-type")
    table_name: str = Field(alias="table-name")
    snapshot_id: int = Field(alias="snapshot-id")
    filter: Any
    schema_id: int = Field(alias="schema-id")
    projected_field_ids: list[int] = Field(alias="projected-field-ids")
    projected_field_names: list[str] = Field(alias="projected-field-names")
    metrics: dict[str, Any]
    metadata: dict[str, str] = Field(default_factory=dict)


class CommitReport(IcebergModel):
    """What a commit made: the table, snapshot, sequence number, operation and its metrics."""

    report_type: str = Field(alias="report-type")
    table_name: str = Field(alias="table-name")
    snapshot_id: int = Field(alias="snapshot-id")
    sequence_number: int = Field(alias="sequence-number")
    operation: str
    metrics: dict[str, Any]
    metadata: dict[str, str] = Field(default_factory=dict)


def report_type(body: Any) -> str:
    """Return the report type of a ``ReportMetricsRequest`` body, checking its shape.

    Raises:
        IcebergError: 400 for a body that is neither a scan report nor a commit report.
    """
    if not isinstance(body, dict) or not isinstance(body.get("report-type"), str):
        raise bad_request("a metrics report is a JSON object with a string report-type")
    kind: str = body["report-type"]
    shapes: dict[str, tuple[type[IcebergModel], ...]] = {
        SCAN_REPORT: (ScanReport,),
        COMMIT_REPORT: (CommitReport,),
    }
    problems = []
    for shape in shapes.get(kind, (ScanReport, CommitReport)):
        try:
            shape.model_validate(body)
        except ValidationError as e:
            where = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()[:3]
            )
            problems.append(f"not a {shape.__name__} ({where})")
        else:
            return kind
    raise bad_request(f"malformed {kind} metrics report: " + "; ".join(problems))
