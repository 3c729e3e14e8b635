"""The three engines behind one small interface: run a statement, list names, a text type."""

from __future__ import annotations

from typing import Any, Protocol

from tests.integration.engines.conftest import EngineError, SparkShell, TrinoServer


class Engine(Protocol):
    name: str
    text_type: str

    def sql(self, statement: str) -> list[list[Any]]: ...

    def namespaces(self) -> list[str]: ...

    def tables(self, namespace: str) -> list[str]: ...


class DuckDBEngine:
    name = "duckdb"
    text_type = "VARCHAR"

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    def sql(self, statement: str) -> list[list[Any]]:
        import duckdb

        try:
            return [list(row) for row in self.connection.execute(statement).fetchall()]
        except duckdb.Error as e:
            raise EngineError(f"{type(e).__name__}: {e}") from e

    def namespaces(self) -> list[str]:
        rows = self.sql(
            "SELECT schema_name FROM information_schema.schemata WHERE catalog_name = 'cat'"
        )
        return sorted(r[0] for r in rows)

    def tables(self, namespace: str) -> list[str]:
        rows = self.sql(
            "SELECT table_name FROM information_schema.tables "
            f"WHERE table_catalog = 'cat' AND table_schema = '{namespace}'"
        )
        return sorted(r[0] for r in rows)


class SparkEngine:
    name = "spark"
    text_type = "STRING"

    def __init__(self, shell: SparkShell) -> None:
        self.shell = shell

    def sql(self, statement: str) -> list[list[Any]]:
        return self.shell.sql(statement)

    def namespaces(self) -> list[str]:
        return sorted(r[0] for r in self.sql("SHOW NAMESPACES IN cat"))

    def tables(self, namespace: str) -> list[str]:
        return sorted(r[1] for r in self.sql(f"SHOW TABLES IN cat.{namespace}"))


class TrinoEngine:
    name = "trino"
    text_type = "VARCHAR"

    def __init__(self, server: TrinoServer) -> None:
        self.server = server

    def sql(self, statement: str) -> list[list[Any]]:
        return self.server.sql(statement)

    def namespaces(self) -> list[str]:
        return sorted(r[0] for r in self.sql("SHOW SCHEMAS FROM cat"))

    def tables(self, namespace: str) -> list[str]:
        return sorted(r[0] for r in self.sql(f"SHOW TABLES FROM cat.{namespace}"))
