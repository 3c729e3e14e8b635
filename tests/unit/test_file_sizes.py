"""No Python file of the project is over 600 lines, tests and benchmarks included."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 600


def _tracked_python_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [ROOT / name for name in listed.stdout.split()]


def test_no_python_file_is_over_600_lines() -> None:
    files = _tracked_python_files()
    assert len(files) > 100  # the listing found the project
    over = {
        str(path.relative_to(ROOT)): lines
        for path in files
        if path.exists() and (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not over, f"split these files (lines each): {over}"
