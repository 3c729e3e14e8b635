"""Imports point down: api, spark → catalog → schemasync → updatelog. Checked on the source."""

from __future__ import annotations

import ast
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
# Third-party modules only one package (one module, for etcd) may import.
CONFINED = {
    "pyetcd": "updatelog/kv_etcd",
    "fastapi": "api/",
    "uvicorn": "api/",
    "sqlglot": "api/",
    "pyspark": "spark/",
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
    for module, owner in CONFINED.items():
        if module in _imports(path):
            assert rel.startswith(owner), f"{rel} imports {module}; only {owner}* may"
