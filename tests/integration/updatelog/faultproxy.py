"""A TCP relay in front of a real etcd that can swallow the answers: a lost-response fault.

Requests still reach etcd (so a transaction commits) while nothing comes back to the client,
which is the ambiguous outcome a network failure after a commit produces. ``heal`` closes every
relayed connection, so the client reconnects cleanly instead of reading half an HTTP/2 frame.
"""

from __future__ import annotations

import contextlib
import socket
import threading

_CHUNK = 65536


class FaultProxy:
    """Relay ``127.0.0.1:<port>`` to ``target``; ``drop_responses`` blackholes the way back."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self._target = (host, int(port))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.endpoint = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self.drop_responses = False
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._accepter = threading.Thread(target=self._accept, name="faultproxy", daemon=True)

    def __enter__(self) -> FaultProxy:
        self._accepter.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._accepter.join(timeout=5)
        self._listener.close()
        self.heal()
        for thread in self._threads:
            thread.join(timeout=5)

    def heal(self) -> None:
        """Close every relayed connection and let answers through again."""
        with self._lock:
            sockets, self._sockets = self._sockets, set()
            self.drop_responses = False
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                server = socket.create_connection(self._target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            client.settimeout(None)
            with self._lock:
                self._sockets.update((client, server))
            for src, dst, answers in ((client, server, False), (server, client, True)):
                thread = threading.Thread(
                    target=self._pipe, args=(src, dst, answers), name="faultproxy-pipe", daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def _pipe(self, src: socket.socket, dst: socket.socket, answers: bool) -> None:
        with contextlib.suppress(OSError):
            while True:
                data = src.recv(_CHUNK)
                if not data:
                    break
                if answers and self.drop_responses:
                    continue
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
