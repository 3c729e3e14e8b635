"""The README's S3 example runs as written, twice, in a fresh shell holding no S3 keys.

Only the catalog URL is swapped; the catalog server's warehouse is on the real S3 server.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.api import test_readme as readme
from tests.integration.api.servers import RunningServer
from tests.integration.engines.conftest import catalog_settings
from tests.integration.s3.conftest import BUCKET, Lake

SECTION = readme.README.split("## Tables on S3\n", 1)[1].split("\n## ", 1)[0]


@pytest.fixture
def server(lake: Lake, tmp_path: Path) -> Iterator[RunningServer]:
    settings = dataclasses.replace(catalog_settings(tmp_path), warehouse=f"s3://{BUCKET}/readme")
    server = RunningServer(settings).start()
    try:
        yield server
    finally:
        server.stop()


def test_readme_s3_example(server: RunningServer, tmp_path: Path) -> None:
    (code,) = [b.split("```", 1)[0] for b in SECTION.split("```python\n")[1:]]
    env = readme.fresh_shell_env()
    assert not any(name.startswith("AWS_") for name in env)
    for attempt in (1, 2):  # the example starts over on every run
        example = readme.python_example(readme.as_written(code, server.url), tmp_path, "s3.py")
        done = readme.run_in_fresh_shell(readme.as_written(example, server.url), env, readme.ROOT)
        assert done.returncode == 0, (attempt, done.stderr[-3000:])
        assert "True [{'ID': 1, 'ITEM': 'pen'}, {'ID': 2, 'ITEM': 'ink'}]" in done.stdout
