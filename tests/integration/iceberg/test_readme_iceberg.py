"""The README's Iceberg example runs as written, twice, in a fresh shell.

Only the catalog URL is swapped. PyIceberg writes, then Spark, and each reads what both wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.api import test_readme as readme
from tests.integration.api.servers import RunningServer, ServerFactory

README = (readme.ROOT / "README.md").read_text()
SECTION = README.split("## Iceberg\n", 1)[1].split("\n## ", 1)[0]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    factory = ServerFactory()
    try:
        yield factory.start(f"sqlite:///{tmp_path}/catalog.db")
    finally:
        factory.stop_all()


def test_readme_iceberg_example(server: RunningServer, tmp_path: Path) -> None:
    (code,) = [b.split("```", 1)[0] for b in SECTION.split("```python\n")[1:]]
    env = readme.fresh_shell_env(SPARK_LOCAL_IP="127.0.0.1")
    for attempt in (1, 2):  # the example starts over on every run
        shown = readme.as_written(code, server.url)
        example = readme.python_example(shown, tmp_path, "iceberg_example.py")
        script = readme.as_written(example, server.url)
        done = readme.run_in_fresh_shell(script, env, readme.ROOT, 300)
        assert done.returncode == 0, (attempt, done.stderr[-3000:])
        lines = done.stdout.splitlines()
        assert {"|  1|    /|", "|  2|/docs|", "|  3|/blog|"} <= set(lines)
        assert (
            "[{'ID': 1, 'PAGE': '/'}, {'ID': 2, 'PAGE': '/docs'}, {'ID': 3, 'PAGE': '/blog'}]"
            in lines
        )
