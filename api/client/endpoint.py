"""``Endpoint``: a client method made of one ``Call`` builder, the same in both clients.

``client.tables(...)`` is ``client.send(tables_call(...))``; on the async client the
same attribute gives the coroutine of ``send``, to await. The builder is the method: its
signature and docstring are the method's (type checkers see them through ``__get__``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Generic, ParamSpec, Protocol, Self, TypeVar, overload

from api.client.calls import Call

P = ParamSpec("P")
T = TypeVar("T")


class Sends(Protocol):
    """A blocking client: ``send`` returns the call's answer."""

    def send(self, call: Call[T], /) -> T:
        """Send ``call``; return its decoded answer."""
        ...


class SendsAsync(Protocol):
    """An asyncio client: ``send`` returns a coroutine of the call's answer."""

    def send(self, call: Call[T], /) -> Coroutine[Any, Any, T]:
        """Send ``call``; return a coroutine of its decoded answer."""
        ...


class Endpoint(Generic[P, T]):
    """A method of both clients that sends the ``Call`` its builder returns.

    Args:
        build: the call builder; its parameters and docstring are the method's.
    """

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__
        self.__wrapped__ = build  # ``inspect.signature`` and ``help`` show the builder's
        self._name = build.__name__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    def __call__(self, client: Sends | SendsAsync, /, *args: P.args, **kwargs: P.kwargs) -> Any:
        """Send with ``client`` the call built from the arguments (``Client.tables(client)``)."""
        return client.send(self._build(*args, **kwargs))

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(
        self, client: SendsAsync, owner: type[Any]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    @overload
    def __get__(self, client: Sends, owner: type[Any]) -> Callable[P, T]: ...

    def __get__(self, client: Sends | SendsAsync | None, owner: type[Any]) -> Any:
        if client is None:
            return self

        def method(*args: P.args, **kwargs: P.kwargs) -> Any:
            return self(client, *args, **kwargs)

        method.__name__ = method.__qualname__ = self._name
        method.__doc__ = self.__doc__
        method.__wrapped__ = self._build  # type: ignore[attr-defined]
        return method
