"""``make run`` installs only what serving needs, and that alone serves.

The test builds a fresh virtualenv with the extras the Makefile's serving stamp installs (from
a copy of the sources, so the checkout gets no build files), checks its size, and runs
``catalog serve`` from it on the embedded SQLite store: a DDL, a read by a typed name, the
page and the API reference.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from deploy.etcd_process import stop_process
from deploy.etcd_server import free_port

ROOT = Path(__file__).resolve().parents[3]
MAX_VENV_BYTES = 400 * 1024 * 1024
PACKAGES = ("catalog", "updatelog", "schemasync", "api", "spark")


def _serve_extras() -> str:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run: \$\(SERVE_STAMP\)$", makefile, flags=re.MULTILINE), "run target"
    (extras,) = re.findall(r"^SERVE_EXTRAS := (\S+)$", makefile, flags=re.MULTILINE)
    assert "install --quiet -e '.[$(SERVE_EXTRAS)]'" in makefile
    return str(extras)


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())


def test_the_serving_install_is_small_and_serves(tmp_path: Path) -> None:
    extras = _serve_extras()
    assert set(extras.split(",")) == {"etcd", "api"}
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, f"{source}[{extras}]"], check=True, timeout=600)
    assert _size(venv) <= MAX_VENV_BYTES, f"{_size(venv):,} bytes"

    port = free_port()
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CATALOG_", "PYTHON"))}
    server = subprocess.Popen(
        [str(venv / "bin" / "catalog"), "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        else:
            raise AssertionError("the serving install did not start serving")
        created = httpx.post(
            url + "/v1/sql", json={"sql": "CREATE TABLE orders (id INT PRIMARY KEY)"}, timeout=30
        )
        assert created.status_code == 200, created.text
        table = httpx.get(url + "/v1/schemas/public/tables/orders", timeout=10).json()
        assert table["table"]["name"] == "ORDERS"
        assert httpx.get(url + "/ui/", timeout=10).status_code == 200
        assert httpx.get(url + "/docs", timeout=10, follow_redirects=True).status_code == 200
        assert (work / "data" / "catalog.db").exists()
    finally:
        stop_process(server, timeout_s=15)
