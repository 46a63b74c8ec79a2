"""Serving the API behind gunicorn (``negagraph serve``).

The master process binds the socket and supervises the workers. The app it hands them has
touched no database (:func:`api.create_app` only wires), so each worker makes its own
engine and connection pool on its first request, after the fork. SIGTERM stops gracefully
(requests in flight finish, up to :data:`GRACEFUL_TIMEOUT` seconds); SIGINT (Ctrl-C) stops
at once. Both end the process with status 0.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from gunicorn.app.base import BaseApplication  # type: ignore[import-untyped]

GRACEFUL_TIMEOUT = 10
"""Seconds workers get to finish their requests after SIGTERM."""


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

    def load(self) -> Flask:
        return self.application


def serve(app: Flask, *, host: str, port: int, workers: int, threads: int) -> None:
    """Serve *app* on ``host:port`` with *workers* processes of *threads* threads each
    (``sync`` workers when *threads* is 1, else ``gthread``) until stopped by a signal."""
    options: dict[str, Any] = {
        "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "workers": workers,
        "threads": threads,
        "worker_class": "sync" if threads == 1 else "gthread",
        "graceful_timeout": GRACEFUL_TIMEOUT,
        "timeout": 60,
        "proc_name": "negagraph",
        "errorlog": "-",
        "loglevel": "info",
        "accesslog": None,
        # gunicorn >= 25 opens a control socket under $HOME by default: not for us.
        "control_socket_disable": True,
    }
    Server(app, options).run()


__all__ = ["GRACEFUL_TIMEOUT", "Server", "serve"]
