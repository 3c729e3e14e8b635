"""``python -m deploy.local_cluster`` as the README runs it: it serves, then stops on Ctrl-C."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from updatelog.errors import StorageUnavailableError
from updatelog.url import open_log

ROOT = Path(__file__).resolve().parents[3]
START_BOUND_S = 90.0


def _etcd_is_secured(data_dir: Path, printed: str) -> None:
    """etcd speaks TLS only, wants a user, and the catalog's user reaches its keys only."""
    (store_url,) = re.findall(r"store URL:\s+(\S+)", printed)
    assert "user=catalog" in store_url and "password_file=" in store_url
    password = (data_dir / "etcd-catalog.password").read_text()
    assert password not in printed
    endpoint = re.findall(r"etcd endpoints:\s+(\S+)", printed)[0].split(",")[0]
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://{endpoint}/health", timeout=5)  # no plain HTTP

    async def latest(url: str) -> int:
        log = open_log(url)
        try:
            return await log.latest_version()
        finally:
            await log.close()

    assert asyncio.run(latest(store_url)) >= 2  # the catalog's own keys
    anonymous = store_url.split("&user=")[0]  # a client certificate, but no user
    elsewhere = store_url.replace("/catalog?", "/other?")  # the user, outside its keys
    for url in (anonymous, elsewhere):
        with pytest.raises(StorageUnavailableError, match="permission denied"):
            asyncio.run(latest(url))


def test_local_cluster_serves_and_stops_on_interrupt(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "deploy.local_cluster", "--nodes", "2", "--etcd-members", "1"]
    command += ["--delay-ms", "50", "--max-clock-skew-ms", "50", "--data-dir", str(tmp_path)]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: what it starts can be stopped with it
    )
    try:
        assert process.stdout is not None
        printed: list[str] = []
        deadline = time.monotonic() + START_BOUND_S
        while not printed or "running; press Ctrl-C" not in printed[-1]:
            assert time.monotonic() < deadline, "".join(printed)
            line = process.stdout.readline()
            assert line, f"the command ended early:\n{''.join(printed)}"
            printed.append(line)
        urls = re.findall(r"catalog n\d+:\s+(http://127\.0\.0\.1:\d+)", "".join(printed))
        assert len(urls) == 2, printed
        ddl = httpx.post(
            urls[0] + "/v1/sql", json={"sql": "CREATE TABLE T (ID INT PRIMARY KEY)"}, timeout=30
        )
        assert ddl.status_code == 200, ddl.text
        ready = httpx.get(
            f"{urls[1]}/v1/versions/{ddl.json()['version']}/ready",
            params={"timeout": 10},
            timeout=30,
        )
        assert ready.status_code == 200  # the second node follows the same etcd
        _etcd_is_secured(tmp_path, "".join(printed))
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
        assert process.returncode == 0, rest
        assert "stopping" in rest
        for url in urls:  # every process it started is gone
            try:
                httpx.get(url + "/healthz", timeout=2)
            except httpx.TransportError:
                continue
            raise AssertionError(f"{url} still answers after the cluster stopped")
    finally:
        if process.poll() is None:  # a failed assertion: let it stop what it started
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                # Its group, by the id it was started with: the nodes and etcd it started too.
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
