"""The README's examples run as written, twice, each in a fresh shell (only the URL is swapped).

A fresh shell has the system's PATH and nothing of the test's environment: a command works
only if the README says how to get it (activate the venv). Everything runs a second time too,
because a reader runs examples again.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.integration.api.servers import ServerFactory

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
DEFAULT_URL = "http://127.0.0.1:8000"
VENV_ACTIVATE = ".venv/bin/activate"


def _blocks(language: str, section: str) -> list[str]:
    body = README.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", body, flags=re.DOTALL)


def fresh_shell_env(**extra: str) -> dict[str, str]:
    """The environment of a new terminal: the system's PATH, a home, a locale, no venv."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    env["LANG"] = "C.UTF-8"
    if "JAVA_HOME" in os.environ:  # how this machine finds Java, as a reader's shell would
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    return {**env, **extra}


def as_written(script: str, url: str) -> str:
    """The script with the server's URL, activating the venv these tests run in.

    That venv is the checkout's ``.venv`` when ``make test`` made it; run from elsewhere, the
    activation points at the one running the tests.
    """
    script = script.replace(DEFAULT_URL, url)
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        script = script.replace(VENV_ACTIVATE, f"{sys.prefix}/bin/activate")
    return script


def run_in_fresh_shell(
    script: str, env: dict[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with ``bash -e`` in a new shell (stops at the first failing command)."""
    command = ["bash", "-e", "-c", script]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def python_example(code: str, folder: Path, name: str) -> str:
    """Save a Python example as the README says and return the shell lines that run it."""
    (folder / name).write_text(code)
    return f". {VENV_ACTIVATE}\ncd {folder}\npython {name}\n"


def test_setup_section_gives_exactly_the_two_commands() -> None:
    (setup,) = _blocks("sh", "Set-up")
    assert [line.split()[:2] for line in setup.strip().splitlines()] == [
        ["make", "run"],
        ["make", "test"],
    ]


def test_the_using_it_examples_run_twice_in_a_fresh_shell(
    api_servers: ServerFactory, tmp_path: Path
) -> None:
    server = api_servers.start(f"sqlite:///{tmp_path}/catalog.db")
    env = fresh_shell_env(CATALOG_URL=server.url)  # the CLI's commands name no URL
    curl_block, cli_block = _blocks("sh", "Using it")
    python_blocks = _blocks("python", "Using it")
    for attempt in (1, 2):
        for line in curl_block.strip().splitlines():
            # Strict about HTTP errors here; the README keeps curl's output readable.
            strict = line.replace("curl -s", "curl -s --fail-with-body", 1)
            done = run_in_fresh_shell(as_written(strict, server.url), env, ROOT)
            assert done.returncode == 0, (attempt, line, done.stdout, done.stderr)
            json.loads(done.stdout)
        done = run_in_fresh_shell(as_written(cli_block, server.url), env, ROOT)
        assert done.returncode == 0, (attempt, done.stdout, done.stderr)
        for number, code in enumerate(python_blocks):
            lines = python_example(as_written(code, server.url), tmp_path, f"example{number}.py")
            done = run_in_fresh_shell(as_written(lines, server.url), env, ROOT)
            assert done.returncode == 0, (attempt, code, done.stdout, done.stderr)
    catalog = subprocess.run(
        ["curl", "-s", f"{server.url}/v1/catalog"], capture_output=True, text=True, timeout=30
    )
    assert [t["name"] for t in json.loads(catalog.stdout)["tables"]] == [
        "ORDERS",
        "CUSTOMERS",
        "ITEMS",
    ]
    listing = json.loads(
        subprocess.run(
            ["curl", "-s", f"{server.url}/v1/versions"], capture_output=True, text=True, timeout=30
        ).stdout
    )
    # The second run changed nothing, so it wrote nothing: one version per change of the first.
    assert listing["latest"] == 5
    versions = listing["versions"]
    shell = [o for v in versions for o in v["origins"] if o["client"] == "cli"]
    assert shell and shell[0]["message"] == "customers for the shop"
