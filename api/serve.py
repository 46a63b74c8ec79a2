"""Serving the API behind gunicorn (``negagraph serve``).

The master process binds the socket and supervises the workers. The app it hands them has
touched no database (:func:`api.create_app` only wires), so each worker makes its own
engine and connection pool on its first request, after the fork. SIGTERM stops gracefully
(requests in flight finish, up to :data:`GRACEFUL_TIMEOUT` seconds); SIGINT (Ctrl-C) stops
at once. Both end the process with status 0.

Workers are gevent workers (:class:`Worker`): each connection is a greenlet, so a client
that sends its request slowly, or keeps its connection idle, holds a greenlet and a
socket, never a worker. A connection has :data:`REQUEST_TIMEOUT` seconds to send each
request's line and headers, else it is closed, and then :data:`BODY_TIMEOUT` seconds to
send its body, else it is answered 408 and closed; a worker holds at most *connections*
connections at once. Lookups themselves run one at a time per worker (they are CPU work
on the GIL), as with sync workers. gunicorn's own answers to malformed HTTP (a bad request
line, a URI over :data:`LIMIT_REQUEST_LINE` bytes, too many or too large header fields)
are the API's JSON errors, not HTML.
"""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import socket
import time
from typing import Any

import gevent
from flask import Flask
from gunicorn import util as gunicorn_util
from gunicorn.app.base import BaseApplication
from gunicorn.workers.ggevent import GeventWorker
from werkzeug.exceptions import RequestTimeout

from db.session import safe_url
from solver.errors import NegagraphError

GRACEFUL_TIMEOUT = 10
"""Seconds workers get to finish their requests after SIGTERM."""

REQUEST_TIMEOUT = 5
"""Seconds a connection has to send a request's line and headers (and the longest a
kept-alive connection stays idle); then it is closed."""

BODY_TIMEOUT = 5
"""Seconds a request has, once its headers are in, to send its whole body: reading the
body gives up then (:class:`BodyDeadline`), and the request is answered 408."""

CONNECTIONS = 1000
"""Default most simultaneous connections per worker."""

LIMIT_REQUEST_LINE = 8190
"""Longest request line, in bytes (gunicorn's default): longer is a JSON 414."""

LIMIT_REQUEST_FIELD_SIZE = 8190
"""Longest header field, in bytes: longer is a JSON 431."""

LIMIT_REQUEST_FIELDS = 100
"""Most header fields: more is a JSON 431."""


class ServeError(NegagraphError, OSError):
    """The server cannot start: its address is taken or cannot be bound."""


def write_json_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's error answer for requests it refuses before the app sees them (bad
    request line, URI too long, header fields too large...), as the API's JSON error."""
    message = mesg or reason
    body = (
        json.dumps({"error": {"code": status_int, "message": message}}, separators=(",", ":"))
        + "\n"
    )
    data = body.encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        "Cache-Control: no-cache\r\n"
        f"Content-Length: {len(data)}\r\n"
        "\r\n"
    )
    gunicorn_util.write_nonblock(sock, head.encode("latin-1") + data)


class BodyDeadline:
    """A request body's reader (gunicorn's) whose reads give up at *deadline*
    (monotonic): a read that would wait past it raises a 408 ``RequestTimeout``, which
    the app answers as its JSON error. What has already arrived is read even late (the
    worker may have been busy): only waiting for the client is cut.

    This is the body's counterpart of the header deadline, which gunicorn's gevent
    worker keeps the same way (a ``gevent.Timeout`` around reading the headers)."""

    def __init__(self, reader: Any, deadline: float) -> None:
        self.reader = reader
        self.deadline = deadline

    def read(self, size: int) -> bytes:
        late = RequestTimeout(f"the request body did not arrive within {BODY_TIMEOUT} s")
        with gevent.Timeout(max(0.0, self.deadline - time.monotonic()), late):
            data: bytes = self.reader.read(size)
        return data


class Worker(GeventWorker):  # type: ignore[misc]  # gunicorn is untyped
    """gunicorn's gevent worker whose own error answers are JSON (:func:`write_json_error`).

    gunicorn writes those answers with ``gunicorn.util.write_error`` from
    ``Worker.handle_error``; this worker replaces that function in its process (after
    the fork, so the master is untouched). It also stops quietly on Ctrl-C, even one
    that comes while it boots (:meth:`init_signals`, :meth:`handle_quit`)."""

    quitting = False
    """Whether SIGINT or SIGQUIT has come (:meth:`handle_quit`)."""

    arbiter: Any = None
    """The master's gunicorn ``Arbiter`` as this process inherited it (set by
    :func:`remember_arbiter`, gunicorn's ``post_fork`` hook)."""

    def init_process(self) -> None:
        gunicorn_util.write_error = write_json_error
        super().init_process()

    def init_signals(self) -> None:
        super().init_signals()
        # Until now this process ran the master's signal handler, which it inherited: it
        # queues a signal for the master's loop, which never runs here. A SIGINT, SIGQUIT
        # or SIGTERM that came while the worker booted (Ctrl-C right after the start)
        # was lost, and the worker served on until the master killed it. Act on it now.
        if self.arbiter is None:
            return
        pending: set[Any] = set()
        with contextlib.suppress(queue.Empty):
            while True:
                pending.add(self.arbiter.SIG_QUEUE.get_nowait())
        for sig in (signal.SIGINT, signal.SIGQUIT):
            if sig in pending:
                self.handle_quit(sig, None)
                return
        if signal.SIGTERM in pending:
            self.handle_exit(signal.SIGTERM, None)

    def handle_quit(self, sig: int, frame: Any) -> None:
        # SIGINT and SIGQUIT stop the worker at once: gunicorn's gevent worker spawns a
        # greenlet that exits the process. Ctrl-C in a terminal sends SIGINT to every
        # process of the group, and the master then sends each worker SIGQUIT: the
        # second greenlet ran while the first's exit shut the process down, and gevent
        # printed its SystemExit as a traceback. Only the first signal counts.
        if self.quitting:
            return
        self.quitting = True
        super().handle_quit(sig, frame)

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> Any:
        # One request per connection, as sync workers do: a kept-alive connection stays
        # with the worker that accepted it, so a few busy clients could load one worker
        # while the other idles; reconnecting spreads them over the workers.
        req.must_close = True
        if req.body is not None:
            # Without a deadline, a client trickling its body held its connection for
            # as long as it went on; enough of them held them all.
            req.body.reader = BodyDeadline(req.body.reader, time.monotonic() + BODY_TIMEOUT)
        return super().handle_request(listener_name, req, sock, addr)


def remember_arbiter(arbiter: Any, worker: Any) -> None:
    """gunicorn's ``post_fork`` hook: give the new worker the master's arbiter."""
    worker.arbiter = arbiter


class Server(BaseApplication):  # type: ignore[misc]  # gunicorn is untyped
    """A gunicorn application serving *app* with gunicorn settings *options*."""

    def __init__(self, app: Flask, options: dict[str, Any]) -> None:
        self.application = app
        self.options = options
        super().__init__(prog="negagraph serve")

    def load_config(self) -> None:
        settings = self.cfg.settings
        for key, value in self.options.items():
            if key in settings and value is not None:
                self.cfg.set(key, value)

    def load(self) -> Any:  # the Flask app, a WSGI callable
        return self.application


def bind_address(host: str, port: int) -> str:
    """gunicorn's ``bind`` for *host* and *port* (IPv6 addresses in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def check_port(host: str, port: int) -> None:
    """Check that ``host:port`` can be listened on (as gunicorn will, with
    ``SO_REUSEADDR``), so that a taken port is one line, not a failed start.

    :raises ServeError: if it cannot.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
            probe.listen(1)
        except OSError as exc:
            shown = f"[{host}]" if ":" in host else host
            raise ServeError(
                f"cannot listen on {shown}:{port}: {exc.strerror or exc} (is another "
                "server running there? choose another --port)"
            ) from None


def serve(
    app: Flask, *, host: str, port: int, workers: int, connections: int = CONNECTIONS
) -> None:
    """Serve *app* on ``host:port`` with *workers* gevent worker processes of up to
    *connections* connections each, until stopped by a signal."""
    options: dict[str, Any] = {
        "bind": bind_address(host, port),
        "workers": workers,
        "worker_class": f"{Worker.__module__}.{Worker.__qualname__}",
        "worker_connections": connections,
        "keepalive": REQUEST_TIMEOUT,
        "limit_request_line": LIMIT_REQUEST_LINE,
        "limit_request_field_size": LIMIT_REQUEST_FIELD_SIZE,
        "limit_request_fields": LIMIT_REQUEST_FIELDS,
        "graceful_timeout": GRACEFUL_TIMEOUT,
        "post_fork": remember_arbiter,
        "timeout": 60,
        "proc_name": "negagraph",
        "errorlog": "-",
        "loglevel": "info",
        "accesslog": None,
        # gunicorn >= 25 opens a control socket under $HOME by default: not for us.
        "control_socket_disable": True,
    }
    Server(app, options).run()


def banner(url: str, host: str, port: int, workers: int, connections: int) -> str:
    """The line ``negagraph serve`` prints when it starts: what it serves, where (the
    API, its docs, and the explorer at ``/``), with how many workers.

    >>> print(banner("sqlite:///negagraph.db", "::1", 5000, 1, 50))
    negagraph: serving sqlite:///negagraph.db at http://[::1]:5000/api (docs: ...; explorer: ...
    >>> banner("sqlite:///negagraph.db", "127.0.0.1", 5000, 1, 50).split("; ")[1]
    'explorer: http://127.0.0.1:5000/) with 1 worker of up to 50 connections'
    """
    base = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    return (
        f"negagraph: serving {safe_url(url)} at {base}/api "
        f"(docs: {base}/api/docs; explorer: {base}/) with {workers} worker"
        f"{'s' if workers != 1 else ''} of up to {connections} connection"
        f"{'s' if connections != 1 else ''}"
    )


__all__ = [
    "BODY_TIMEOUT",
    "CONNECTIONS",
    "GRACEFUL_TIMEOUT",
    "REQUEST_TIMEOUT",
    "BodyDeadline",
    "ServeError",
    "Server",
    "Worker",
    "banner",
    "check_port",
    "serve",
    "write_json_error",
]
