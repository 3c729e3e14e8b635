"""The error-code registry (``api.wire.codes``) names every code, once, with all it maps to."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import catalog
import schemasync
import schemasync.errors
import updatelog
import updatelog.errors
from api.client.errors import CLASS_BY_CODE, error_class
from api.client.retries import RETRYABLE_CODES
from api.iceberg.errors import iceberg_error
from api.server.errors import ApiError, problem
from api.wire.codes import ClientClass, Code, IcebergType, Retry, code_of
from catalog.errors import ErrorCode

ROOT = Path(__file__).resolve().parents[3]


def _subclasses(root: type[Exception]) -> list[type[Exception]]:
    found = [root]
    for sub in root.__subclasses__():
        found += _subclasses(sub)
    return found


DOMAIN = ("catalog", "schemasync", "updatelog")


def _domain_codes() -> set[str]:
    """Return every code the catalog, schemasync and updatelog packages define."""
    for package in (catalog, schemasync, updatelog):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(module.name)
    codes = {str(code) for code in ErrorCode}
    for root in (updatelog.errors.UpdateLogError, schemasync.errors.SchemaSyncError):
        codes |= {
            str(cls.code)  # type: ignore[attr-defined]
            for cls in _subclasses(root)
            if cls.__module__.split(".")[0] in DOMAIN
        }
    return codes


def test_every_code_the_domain_raises_is_registered_with_its_string() -> None:
    missing = sorted(c for c in _domain_codes() if code_of(c) is None)
    assert missing == [], f"add these to api.wire.codes.Code: {missing}"


def test_every_code_of_the_api_layer_is_raised_somewhere() -> None:
    sources = "\n".join(p.read_text() for p in (ROOT / "api").rglob("*.py"))
    used = set(re.findall(r"\bCode\.([A-Z_]+)\b", sources))
    unused = sorted(str(c) for c in Code if str(c) not in _domain_codes() and c.name not in used)
    assert unused == [], f"registered but never answered: {unused}"


def test_member_names_are_their_wire_strings() -> None:
    assert all(code.name == code.value for code in Code)


@pytest.mark.parametrize("code", list(Code), ids=str)
def test_each_answer_follows_the_registry(code: Code) -> None:
    answer = problem(code, "why")
    assert answer.status_code == code.status
    assert json.loads(bytes(answer.body))["code"] == str(code)
    assert ("Retry-After" in answer.headers) is (code.retry is not Retry.NEVER)
    iceberg = iceberg_error(ApiError(code, "why"))
    assert iceberg.status_code == code.iceberg_status
    assert json.loads(bytes(iceberg.body))["error"]["type"] == str(code.iceberg)
    assert error_class(code, code.status) is CLASS_BY_CODE[code]
    assert CLASS_BY_CODE[code].__name__ == str(code.client)
    assert (code in RETRYABLE_CODES) is (code.retry is Retry.AUTOMATIC)


def test_unknown_codes_answer_by_status() -> None:
    assert problem("NO_SUCH_CODE", "why").status_code == 500
    assert error_class("NO_SUCH_CODE", 404).__name__ == "NotFoundError"
    assert error_class("TABLE_EXISTS", None).__name__ == "EventStreamError"
    assert error_class("VERSION_COMPACTED", None).__name__ == "CompactedError"


def test_the_named_types_and_classes_exist() -> None:
    import api.client.errors as client_errors

    assert all(hasattr(client_errors, str(name)) for name in ClientClass)
    assert all(str(t).endswith(("Exception", "Error")) for t in IcebergType)


def test_iceberg_answers_are_read_by_the_java_client_as_meant() -> None:
    """A lost compare-and-set wrote nothing: 409 (the client retries), never 503 (a Java
    client's "commit state unknown"); throttling is 429; both say Retry-After."""
    from catalog.errors import ConcurrentUpdateError

    lost = iceberg_error(ConcurrentUpdateError("lost the race"))
    assert lost.status_code == 409
    assert json.loads(bytes(lost.body))["error"]["type"] == "CommitFailedException"
    assert lost.headers["Retry-After"] == "1"
    throttled = iceberg_error(ApiError(Code.TOO_MANY_REQUESTS, "busy"))
    assert throttled.status_code == 429
    assert throttled.headers["Retry-After"] == "1"
    # The catalog's own API keeps its statuses.
    assert problem(Code.CONCURRENT_UPDATE, "why").status_code == 503
    assert problem(Code.TOO_MANY_REQUESTS, "why").status_code == 429
