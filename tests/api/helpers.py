"""Helpers of the API tests: throw-away databases on SQLite and the local PostgreSQL
server (the approach of ``tests/db/helpers.py``), solving into them, and apps over them."""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from psycopg import sql

from api import create_app
from api.database import get_database
from db.migrate import upgrade
from db.session import make_engine
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve

PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_USER = "postgres"
PG_ADMIN_DB = "test"


def _admin() -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(
            host=PG_HOST,
            port=PG_PORT,
            user=PG_USER,
            dbname=PG_ADMIN_DB,
            autocommit=True,
            connect_timeout=10,
        )
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is unreachable at {PG_USER}@{PG_HOST}:{PG_PORT}/{PG_ADMIN_DB}: {exc}",
            pytrace=False,
        )


@contextmanager
def pg_database(prefix: str = "negagraph_api_test") -> Iterator[str]:
    """A fresh, uniquely named PostgreSQL database (its URL), dropped afterwards."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    with _admin() as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"postgresql+psycopg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        with _admin() as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextmanager
def fresh_database(backend: str, directory: Path) -> Iterator[str]:
    """The URL of a new, empty database (no schema) on *backend*."""
    if backend == "sqlite":
        path = directory / f"negagraph-{secrets.token_hex(4)}.db"
        path.touch()
        yield f"sqlite:///{path}"
    else:
        with pg_database() as url:
            yield url


def solve_into(url: str, game: str, params: dict[str, Any], full: bool) -> None:
    engine = make_engine(url)
    try:
        solve(get_game(game, **params), full=full, store=SqlStore(engine))
    finally:
        engine.dispose()


@contextmanager
def make_app(url: str, **config: Any) -> Iterator[Flask]:
    """An app over *url*; its engine is disposed afterwards."""
    app = create_app({"TESTING": True, "DATABASE_URL": url, **config})
    try:
        yield app
    finally:
        get_database(app).dispose()


def assert_error(status: int, body: Any, code: int, *fragments: str) -> None:
    """*body* is an error answer of the one shape, status *code*, naming *fragments*."""
    assert status == code, body
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code
    for fragment in fragments:
        assert fragment in body["error"]["message"], body


class TcpProxy:
    """A TCP forwarder on a free loopback port to ``target`` (e.g. the PostgreSQL server),
    that a test can :meth:`close`: from then on connections to its port are refused and
    the ones it carried are cut, as when a database server goes away."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Stop listening and cut every connection."""
        # shutdown wakes the thread blocked in accept() (close alone would not, and the
        # socket would go on listening until its next connection).
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
        self._thread.join(timeout=10)


def reachable_texts(game: str, params: dict[str, Any], most: int) -> list[str]:
    """Up to *most* positions of *game* reachable from its start, breadth first, in its
    notation as reached (not canonical: their moves' texts are not the stored ones)."""
    g = get_game(game, **params)
    queue, seen = [g.initial()], set()
    texts: list[str] = []
    while queue and len(texts) < most:
        key = queue.pop(0)
        if key in seen:
            continue
        seen.add(key)
        texts.append(g.format(key))
        queue.extend(child for _, child in g.children(key))
    return texts


def _compact(data: Any) -> bytes:
    return (json.dumps(data, separators=(",", ":")) + "\n").encode()


def assert_batch_is_the_singles(
    client: FlaskClient, game: str, query: dict[str, str], body: dict[str, Any], texts: list[str]
) -> None:
    """The answer to a batch lookup of *texts* (the game's parameters as *body* gives
    them) is, byte for byte, the single lookups' answers (*query*: the same parameters)
    in the batch's envelope (with the variant's initial position)."""
    singles = []
    for text in texts:
        single = client.get(f"/api/games/{game}/positions", query_string={**query, "p": text})
        assert single.status_code == 200, single.get_json()
        data = json.loads(single.get_data())
        assert _compact(data) == single.get_data()  # compact JSON in its own order
        singles.append(data)
    r = client.post(f"/api/games/{game}/positions", json={"params": body, "positions": texts})
    assert r.status_code == 200
    params = singles[0]["params"]
    g = get_game(game, **params)
    envelope = {"game": game, "params": params, "initial": g.format(g.initial())}
    assert r.get_data() == _compact({**envelope, "results": singles})


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@contextmanager
def solved_postgres_behind_proxy() -> Iterator[tuple[str, TcpProxy]]:
    """A fresh PostgreSQL database holding tic-tac-toe's full solve, and its URL through a
    :class:`TcpProxy` that the test closes to make the server go away."""
    with pg_database() as direct:
        upgrade(direct)
        solve_into(direct, "tic-tac-toe", {}, True)
        proxy = TcpProxy((PG_HOST, PG_PORT))
        name = direct.rsplit("/", 1)[1]
        try:
            yield f"postgresql+psycopg://{PG_USER}@127.0.0.1:{proxy.port}/{name}", proxy
        finally:
            proxy.close()
