"""The README's examples run, as written, against a real server (only the URL is swapped)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.integration.api.servers import ServerFactory

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
DEFAULT_URL = "http://127.0.0.1:8000"


def _blocks(language: str, section: str) -> list[str]:
    body = README.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", body, flags=re.DOTALL)


def test_setup_section_gives_exactly_the_two_commands() -> None:
    (setup,) = _blocks("sh", "Set-up")
    assert [line.split()[:2] for line in setup.strip().splitlines()] == [
        ["make", "run"],
        ["make", "test"],
    ]


def test_curl_cli_and_python_examples(api_servers: ServerFactory, tmp_path: Path) -> None:
    server = api_servers.start(f"sqlite:///{tmp_path}/catalog.db")
    env = {**os.environ, "CATALOG_URL": server.url, "PYTHONPATH": str(ROOT)}
    curl_block, cli_block = _blocks("sh", "Using it")
    for line in curl_block.strip().splitlines():
        argv = shlex.split(line.replace(DEFAULT_URL, server.url))
        assert argv[0] == "curl"
        done = subprocess.run(
            ["curl", "--fail-with-body", *argv[1:]], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        json.loads(done.stdout)
    catalog_bin = str(Path(sys.executable).parent / "catalog")
    for line in cli_block.strip().splitlines():
        argv = shlex.split(line)
        assert argv[0] == "catalog"
        done = subprocess.run(
            [catalog_bin, *argv[1:]], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0, (line, done.stdout, done.stderr)
    for code in _blocks("python", "Using it"):
        done = subprocess.run(
            [sys.executable, "-c", code.replace(DEFAULT_URL, server.url)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert done.returncode == 0, (code, done.stdout, done.stderr)
    tables = [
        t["name"]
        for t in json.loads(
            subprocess.run(
                ["curl", "-s", f"{server.url}/v1/catalog"],
                capture_output=True,
                text=True,
                timeout=30,
            ).stdout
        )["tables"]
    ]
    assert tables == ["ORDERS", "CUSTOMERS", "ITEMS"]
