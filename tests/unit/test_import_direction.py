"""Imports point down: api, spark → catalog → schemasync → updatelog, and never in a circle.

``spark`` uses one part of ``api``, the client (``api.client`` and the wire shapes it
answers with), and nothing imports ``spark``.

Inside ``api``, one subpackage per job, with its own direction (``API_ALLOWED``)::

    api.cli ──→ api.client ──→ api.wire ──→ catalog (its models)
       │                          ↑
       └──→ api.server ───────────┤     (``catalog serve`` and the admin commands, which
              │   ↑               │      open the store to issue tokens or check it)
              ↓   │               │
           api.iceberg ───────────┘     (through the server's execution, auth, errors;
              api.sql                    never through its routes)

Checked on the source: every import statement counts, deferred ones inside functions and
``TYPE_CHECKING`` blocks included, since each is an edge a reader must follow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["api", "spark", "catalog", "schemasync", "updatelog"]
ALLOWED = {
    "api": {"catalog", "schemasync", "updatelog"},
    "spark": {"catalog", "schemasync", "updatelog", "api"},
    "catalog": {"schemasync", "updatelog"},
    "schemasync": {"updatelog"},
    "updatelog": set(),
}
# The parts of api, and what each may import of api's other parts and of our packages.
API_ALLOWED = {
    # What server and client share: bodies, roles, codes.
    "api.wire": {"catalog"},
    # The client stands alone: the shared wire shapes and the catalog's models only.
    "api.client": {"api.wire", "catalog"},
    "api.sql": {"catalog"},
    # The CLI speaks through the client; ``serve`` runs the server, and the admin commands
    # (issue a token, check a store) open the store directly.
    "api.cli": {"api.client", "api.wire", "api.server", "catalog", "schemasync", "updatelog"},
    # The Iceberg protocol runs batches and checks tokens as the server does.
    "api.iceberg": {"api.server", "api.wire", "catalog", "schemasync", "updatelog"},
    # The server builds a node, translates SQL and mounts the Iceberg protocol.
    "api.server": {"api.wire", "api.sql", "api.iceberg", "catalog", "schemasync", "updatelog"},
}
# Modules a part may not import although it may import their package.
API_FORBIDDEN = {"api.iceberg": ("api.server.routes", "api.server.app")}

# Third-party modules only some folders (one module, for etcd) may import.
CONFINED = {
    "pyetcd": ("updatelog/kv_etcd",),
    "fastapi": ("api/server/", "api/iceberg/"),
    "starlette": ("api/server/", "api/iceberg/"),
    "uvicorn": ("api/server/", "api/cli/server.py"),
    "sqlglot": ("api/sql/",),
    "httpx": ("api/client/",),
    "pyspark": ("spark/",),
    "pyiceberg": ("api/iceberg/",),
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def _sources() -> list[tuple[str, Path]]:
    return [(pkg, p) for pkg in LAYERS for p in sorted((ROOT / pkg).rglob("*.py"))]


@pytest.mark.parametrize(("package", "path"), _sources(), ids=lambda v: str(v))
def test_imports_point_down(package: str, path: Path) -> None:
    ours = _imports(path) & set(LAYERS)
    upward = ours - ALLOWED[package] - {package}
    assert not upward, f"{path.relative_to(ROOT)} imports {sorted(upward)}"


@pytest.mark.parametrize(("package", "path"), _sources(), ids=lambda v: str(v))
def test_confined_third_party_imports(package: str, path: Path) -> None:
    rel = str(path.relative_to(ROOT))
    for module, owners in CONFINED.items():
        if module in _imports(path):
            assert rel.startswith(owners), f"{rel} imports {module}; only {owners} may"


def _full_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _part(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "api" else parts[0]


API_SOURCES = [
    (part, p) for part in API_ALLOWED for p in sorted((ROOT / part.replace(".", "/")).rglob("*.py"))
]


@pytest.mark.parametrize(("part", "path"), API_SOURCES, ids=lambda v: str(v))
def test_the_parts_of_api_import_in_their_direction(part: str, path: Path) -> None:
    imported = {m for m in _full_imports(path) if _part(m) in {*LAYERS, *API_ALLOWED}}
    wrong = {_part(m) for m in imported} - API_ALLOWED[part] - {part}
    assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"
    inner = [m for m in imported for f in API_FORBIDDEN.get(part, ()) if m.startswith(f)]
    assert not inner, f"{path.relative_to(ROOT)} imports {inner}"


SPARK_MAY_USE_OF_API = {"api.client", "api.wire"}


@pytest.mark.parametrize("path", sorted((ROOT / "spark").rglob("*.py")), ids=str)
def test_spark_uses_only_the_client_of_api(path: Path) -> None:
    used = {_part(m) for m in _full_imports(path) if m.split(".")[0] == "api"}
    assert used <= SPARK_MAY_USE_OF_API, f"{path.relative_to(ROOT)} imports {sorted(used)}"


def test_every_part_of_api_is_named() -> None:
    parts = {f"api.{p.name}" for p in (ROOT / "api").iterdir() if (p / "__init__.py").exists()}
    assert parts == set(API_ALLOWED)


# -- circles -------------------------------------------------------------------------------

CIRCLE_PACKAGES = [*LAYERS, "deploy"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """Yield the modules of ``known`` that ``path`` (module ``name``) imports, anywhere in it.

    ``from package import x`` is an edge to ``package.x`` when that is a module, else to
    ``package`` (whose ``__init__`` then runs).
    """
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package[: len(package) - (node.level - 1)]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    yield f"{base}.{alias.name}"
                elif base in known:
                    yield base


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def _graph() -> dict[str, set[str]]:
    paths = {
        _module_name(p): p for pkg in CIRCLE_PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))
    }
    known = set(paths)
    return {
        name: set(_imported_modules(name, path, known)) - {name} for name, path in paths.items()
    }


def test_no_module_imports_itself_through_others() -> None:
    circles = _circles(_graph())
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_imports_inside_functions_are_edges_and_circles_are_found(tmp_path: Path) -> None:
    module = tmp_path / "a.py"
    module.write_text("def f() -> None:\n    from pkg import b  # deferred\n")
    assert list(_imported_modules("pkg.a", module, {"pkg.a", "pkg.b"})) == ["pkg.b"]
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
