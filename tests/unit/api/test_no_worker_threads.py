"""Every route and dependency of the app is a coroutine: none runs on a worker thread.

FastAPI runs a plain function (an endpoint or a dependency) on a thread pool, one hop there
and back per request; for a read served from memory that hop costs more than the read.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, APIRouter

import api.server.routes
from api.server.app import create_app
from api.server.config import ServerSettings


def _is_coroutine(call: Any) -> bool:
    return inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(
        getattr(call, "__call__", None)  # noqa: B004 - a callable object's method
    )


def _plain_functions(dependant: Dependant) -> list[str]:
    found = []
    call = dependant.call
    if call is not None and not _is_coroutine(call):
        found.append(getattr(call, "__qualname__", repr(call)))
    for dependency in dependant.dependencies:
        found.extend(_plain_functions(dependency))
    return found


def test_no_endpoint_or_dependency_runs_on_a_worker_thread(tmp_path: Path) -> None:
    app = create_app(ServerSettings(store=f"sqlite:///{tmp_path}/catalog.db"))
    dependants = [
        (route.path, route.dependant)
        for module in pkgutil.iter_modules(api.server.routes.__path__)
        for route in getattr(
            importlib.import_module(f"api.server.routes.{module.name}"), "router", APIRouter()
        ).routes
        if isinstance(route, APIRoute)
    ]
    assert len(dependants) > 20
    threaded = {
        path: found for path, dependant in dependants if (found := _plain_functions(dependant))
    }
    app_wide = [d.dependency for d in app.router.dependencies]
    threaded |= {
        "every route": [getattr(f, "__qualname__", "?") for f in app_wide if not _is_coroutine(f)]
    }
    assert threaded == {"every route": []}, f"make these coroutines (async def): {threaded}"
