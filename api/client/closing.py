"""Clients and event streams close on leaving their ``with`` / ``async with`` block."""

from __future__ import annotations

from typing import Self


class ClosedOnExit:
    """``with x:`` closes ``x`` on the way out; subclasses define ``close``."""

    def close(self) -> None:
        """Release what this object holds."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClosedOnExit:
    """``async with x:`` closes ``x`` on the way out; subclasses define ``aclose``."""

    async def aclose(self) -> None:
        """Release what this object holds."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
