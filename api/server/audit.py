"""The audit trail of sign-in and authorization refusals.

Every refused request (no, bad or expired token: 401; a role that may not: 403) and every
refused sign-in at ``/v1/oauth/tokens`` is one JSON line on the ``catalog.audit`` logger (at
warning level, so a server logging only warnings keeps it), with
when, who (the token's subject when it was verified, a refused sign-in's client id, else
none), what was asked (method and
path), the code, why, and the catalog version the node served then; and it counts in
``catalog_auth_denials{code}`` at ``/metrics``. Tokens and secrets are never in it.

A refusal for want of a grant also names the ``privilege`` and the ``object``. Each grant of
more than reading (``MODIFY``, ``CREATE``, ``ALTER``, ``DROP``, ``MANAGE_GRANTS``,
``OWNERSHIP``, or a role) is a ``granted`` line with the version that made it.

What was allowed is in the log itself, exactly: each version names the principal that made it
(its origin), and principals' creations, role changes, new secrets and removals are versions,
as are roles and grants.
"""

from __future__ import annotations

import json
import logging
import time

from fastapi import Request

audit_log = logging.getLogger("catalog.audit")


def record_denial(
    request: Request, code: str, reason: str, subject: str | None = None, **about: str
) -> None:
    """Write one refusal to the audit trail and count it.

    ``about`` names what was refused, for a want of a grant: ``privilege`` and ``object``.
    """
    node = getattr(request.app.state, "node", None)
    version = node.service.latest_version if node is not None else None
    line: dict[str, object] = {
        "at_ms": int(time.time() * 1000),
        "decision": "denied",
        "code": code,
        "subject": subject,
        "method": request.method,
        "path": request.url.path,
        "client": request.client.host if request.client is not None else None,
        "version": version,
        "reason": reason,
        **about,
    }
    audit_log.warning(json.dumps(line, separators=(",", ":")))
    metrics = getattr(request.app.state, "metrics", None)
    if metrics is not None:
        metrics.auth_denials.labels(code=code).inc()


def record_grants(request: Request, subject: str, version: int, granted: list[str]) -> None:
    """Write to the audit trail each grant of more than reading that a version made."""
    for words in granted:
        line = {
            "at_ms": int(time.time() * 1000),
            "decision": "granted",
            "subject": subject,
            "method": request.method,
            "path": request.url.path,
            "version": version,
            "grant": words,
        }
        audit_log.warning(json.dumps(line, separators=(",", ":")))
