"""Hostile clients against a running ``negagraph serve`` (for a soak command, not CI).

:func:`run_hostile` sends, for a bounded time and only to a loopback address, the traffic
issue 22 found harmful, while one client times normal lookups:

* ``slow_headers``: connections that trickle their request headers a byte at a time
  (reconnecting when the server cuts them);
* ``slow_body``: batch lookups that send their headers at once, then trickle their body
  a byte at a time (reconnecting when the server answers or cuts them);
* ``costly_variant``: lookups of a variant whose game takes seconds to build
  (graph-share on ``complete-30`` edges) that the database does not hold;
* ``long_uri``, ``large_header``, ``many_headers``, ``bad_request_line``, ``bad_version``,
  ``options``, ``bad_json``: malformed or unsupported requests, each of which must get the
  API's JSON error.

It returns counts: requests by kind, answers with a 5xx status, error answers that are not
``{"error": {"code", "message"}}`` JSON, and the normal lookups' latencies. Only the
standard library is used.
"""

from __future__ import annotations

import ipaddress
import json
import select
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import urlencode, urlsplit

NORMAL_PATH = "/api/games/tic-tac-toe/positions?p=x........"
"""The normal lookup that is timed (tic-tac-toe, which :func:`run_hostile` expects the
served database to hold; any answer but a 5xx counts as answered)."""

COSTLY_QUERY = {"graph": "complete-30", "mode": "edges", "colors": "6"}
"""The graph-share variant whose symmetry set-up took 10-16 s (issue 22, item 2)."""

SLOW_CLIENTS = 4
"""Connections trickling header bytes at once, and as many trickling body bytes."""

SLOW_INTERVAL = 0.5
"""Seconds between two header (or body) bytes of a slow client."""

SLOW_BODY_LENGTH = 1000
"""Bytes of a slow-body client's body (it never gets to send them all)."""

WARM_UP = 20
"""Normal lookups sent (not timed) before the run: a worker's first one is slow (it
opens the database and checks its schema)."""

IO_TIMEOUT = 10.0
"""Seconds any one hostile or normal request may take before it counts as unanswered."""


@dataclass
class Tally:
    """What the hostile run saw (shared by its threads under a lock)."""

    requests: Counter[str] = field(default_factory=Counter)
    server_errors: int = 0
    non_json_errors: int = 0
    unanswered: int = 0
    examples: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, status: int | None, body: bytes, headers: dict[str, str]) -> None:
        with self.lock:
            self.requests[kind] += 1
            if status is None:
                self.unanswered += 1
                self._example(f"{kind}: no answer {body[:200]!r}")
                return
            if status >= 500:
                self.server_errors += 1
                self._example(f"{kind}: {status} {body[:200]!r}")
            if status >= 400 and not is_json_error(status, body, headers):
                self.non_json_errors += 1
                self._example(f"{kind}: non-JSON {status} {body[:200]!r}")

    def _example(self, text: str) -> None:
        if len(self.examples) < 10:
            self.examples.append(text)


def is_json_error(status: int, body: bytes, headers: dict[str, str]) -> bool:
    """Whether an answer is the API's JSON error of status *status*."""
    if not headers.get("content-type", "").startswith("application/json"):
        return False
    try:
        data = json.loads(body)
    except ValueError:
        return False
    return (
        isinstance(data, dict)
        and set(data) == {"error"}
        and isinstance(data["error"], dict)
        and set(data["error"]) == {"code", "message"}
        and data["error"]["code"] == status
    )


def check_loopback(host: str) -> None:
    """:raises ValueError: unless *host* is a loopback address (hostile traffic never
    leaves the machine)."""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise ValueError(f"hostile traffic goes to loopback addresses only, not {host!r}")


def raw_exchange(
    host: str, port: int, data: bytes, *, timeout: float = IO_TIMEOUT
) -> tuple[int | None, dict[str, str], bytes]:
    """Send *data* on a new connection and read the answer until the server closes or
    the body is complete: (status or ``None`` if none came, lower-cased headers, body)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(data)
        return read_answer(sock)


def read_answer(sock: socket.socket) -> tuple[int | None, dict[str, str], bytes]:
    """Read an answer from *sock* until the server closes or the body is complete:
    (status or ``None`` if none came, lower-cased headers, body)."""
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (TimeoutError, ConnectionResetError):
            break
        if not chunk:
            break
        received += chunk
        head, sep, body = received.partition(b"\r\n\r\n")
        if sep:
            headers = _headers(head)
            length = headers.get("content-length")
            if length is not None and len(body) >= int(length):
                break
    head, sep, body = received.partition(b"\r\n\r\n")
    if not sep:
        return None, {}, received
    parts = head.split(b"\r\n", 1)[0].split()
    status = int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else None
    return status, _headers(head), body


def _headers(head: bytes) -> dict[str, str]:
    out = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        out[name.strip().lower()] = value.strip()
    return out


def get(
    host: str,
    port: int,
    path: str,
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int | None, dict[str, str], bytes]:
    """One HTTP/1.1 request with ``Connection: close`` over :func:`raw_exchange`."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
    return raw_exchange(host, port, data)


def slow_client(host: str, port: int, until: float, tally: Tally) -> None:
    """Trickle a request's header bytes every :data:`SLOW_INTERVAL` seconds until
    *until* (monotonic), reconnecting whenever the server closes the connection."""
    request = (f"GET {NORMAL_PATH} HTTP/1.1\r\nHost: {host}\r\nX-Slow: ").encode()
    filler = b"a" * 10_000
    while time.monotonic() < until:
        tally.record("slow_headers", 0, b"", {})  # a connection opened (no answer due)
        try:
            with socket.create_connection((host, port), timeout=IO_TIMEOUT) as sock:
                for byte in request + filler:
                    if time.monotonic() >= until:
                        return
                    sock.sendall(bytes([byte]))
                    time.sleep(SLOW_INTERVAL)
        except OSError:
            continue  # cut by the server: open another


class SlowBody(NamedTuple):
    """What a slow-body client saw (:func:`slow_body`)."""

    status: int | None
    """The answer's status, ``None`` if none came."""
    headers: dict[str, str]
    body: bytes
    seconds: float
    """From just before the headers went to the server's answer or close (or to
    giving up)."""


def slow_body(
    host: str,
    port: int,
    until: float,
    *,
    interval: float = SLOW_INTERVAL,
    sent: Callable[[], None] | None = None,
) -> SlowBody:
    """A batch lookup whose headers go at once and whose body (:data:`SLOW_BODY_LENGTH`
    bytes declared) then trickles a byte every *interval* seconds, until the server
    answers or closes the connection, or until *until* (monotonic). *sent* is called
    once the headers are sent."""
    head = (
        f"POST /api/games/tic-tac-toe/positions HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Connection: close\r\nContent-Type: application/json\r\n"
        f"Content-Length: {SLOW_BODY_LENGTH}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, port), timeout=IO_TIMEOUT) as sock:
        began = time.monotonic()
        sock.sendall(head)
        if sent is not None:
            sent()
        cut = False
        for _ in range(SLOW_BODY_LENGTH - 1):  # never the whole body
            # Readable: the server answered or closed the connection.
            cut = bool(select.select([sock], [], [], interval)[0])
            if cut or time.monotonic() >= until:
                break
            try:
                sock.sendall(b" ")
            except OSError:
                cut = True
                break
        seconds = time.monotonic() - began
        if not cut:
            return SlowBody(None, {}, b"", seconds)
        status, headers, body = read_answer(sock)
    return SlowBody(status, headers, body, seconds)


def slow_body_client(host: str, port: int, until: float, tally: Tally) -> None:
    """:func:`slow_body` again and again until *until* (monotonic)."""
    while time.monotonic() < until:
        try:
            status, headers, body, _ = slow_body(host, port, until)
        except OSError:
            continue
        # An answer must be a JSON error; giving up first is no answer due (0).
        tally.record("slow_body", status or 0, body, headers)


def hostile_requests(host: str, port: int) -> list[tuple[str, Callable[[], Any]]]:
    """The one-shot hostile requests, each as (kind, a call giving ``raw_exchange``'s
    triple)."""
    costly = "/api/games/graph-share/positions?" + urlencode({**COSTLY_QUERY, "p": "0-1=?"})
    costly_line = "/api/games/graph-share/line?" + urlencode({**COSTLY_QUERY, "p": "0-1=?"})
    batch = json.dumps(
        {
            "params": {"graph": "complete-30", "mode": "edges", "colors": 6},
            "positions": ["0-1=?", "0-1=z"],
        }
    ).encode()

    def raw(data: bytes) -> Callable[[], Any]:
        return lambda: raw_exchange(host, port, data)

    return [
        ("costly_variant", lambda: get(host, port, costly)),
        ("costly_variant", lambda: get(host, port, costly_line)),
        (
            "costly_variant",
            lambda: get(
                host,
                port,
                "/api/games/graph-share/positions",
                method="POST",
                body=batch,
                headers={"Content-Type": "application/json"},
            ),
        ),
        ("long_uri", lambda: get(host, port, "/api/games?" + "x" * 20_000)),
        ("large_header", lambda: get(host, port, "/api", headers={"X-Big": "b" * 20_000})),
        (
            "many_headers",
            lambda: get(host, port, "/api", headers={f"X-H{i}": "1" for i in range(200)}),
        ),
        ("bad_request_line", raw(b"GARBAGE\r\n\r\n")),
        ("bad_request_line", raw(b"GET /api HTTP/1.1 extra\r\nHost: x\r\n\r\n")),
        ("bad_version", raw(b"GET /api HTTP/9.9\r\nHost: x\r\n\r\n")),
        ("bad_header", raw(b"GET /api HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n")),
        ("options", lambda: get(host, port, "/api/games/tic-tac-toe/positions", method="OPTIONS")),
        ("options", lambda: get(host, port, "/api", method="OPTIONS")),
        (
            "bad_json",
            lambda: get(
                host,
                port,
                "/api/games/tic-tac-toe/positions",
                method="POST",
                body=b'{"positions": [',
                headers={"Content-Type": "application/json"},
            ),
        ),
        (
            "bad_json",
            lambda: get(
                host,
                port,
                "/api/games/tic-tac-toe/positions",
                method="POST",
                body=b"\xff\xfe not json",
                headers={"Content-Type": "application/json"},
            ),
        ),
    ]


def percentile(values: list[float], q: float) -> float | None:
    """The *q*-quantile (0..1) of *values* by nearest rank (``None`` if empty)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def run_hostile(base_url: str, seconds: float) -> dict[str, Any]:
    """Run hostile traffic against the server at *base_url* (``http://127.0.0.1:PORT``,
    loopback only) for about *seconds*, timing normal lookups meanwhile.

    Returns ``requests`` (by kind), ``server_errors`` (5xx answers), ``non_json_errors``
    (error answers that are not the API's JSON), ``unanswered`` (hostile one-shot or
    normal requests that got no answer), ``normal`` (count and latency p50/p99/max in
    ms of the timed lookups, with how many were not a 200), ``seconds`` and up to 10
    ``examples`` of bad answers.

    :raises ValueError: if *base_url* is not an ``http`` URL on a loopback address.
    """
    parts = urlsplit(base_url)
    if parts.scheme != "http" or parts.hostname is None or parts.port is None:
        raise ValueError(f"expected http://HOST:PORT, not {base_url!r}")
    host, port = parts.hostname, parts.port
    check_loopback(host)
    for _ in range(WARM_UP):  # each worker's first lookup opens its database
        get(host, port, NORMAL_PATH)
    tally = Tally()
    start = time.monotonic()
    until = start + seconds
    threads = [
        threading.Thread(target=client, args=(host, port, until, tally), daemon=True)
        for client in (slow_client, slow_body_client)
        for _ in range(SLOW_CLIENTS)
    ]

    def hostile_loop() -> None:
        requests = hostile_requests(host, port)
        i = 0
        while time.monotonic() < until:
            kind, call = requests[i % len(requests)]
            i += 1
            try:
                status, headers, body = call()
            except OSError:
                status, headers, body = None, {}, b""
            tally.record(kind, status, body, headers)

    threads.append(threading.Thread(target=hostile_loop, daemon=True))
    for t in threads:
        t.start()
    not_ok = 0
    while time.monotonic() < until:
        began = time.perf_counter()
        try:
            status, headers, body = get(host, port, NORMAL_PATH)
        except OSError:
            status, headers, body = None, {}, b""
        tally.latencies.append(time.perf_counter() - began)
        tally.record("normal", status, body, headers)
        not_ok += status != 200
        time.sleep(0.02)
    for t in threads:
        t.join(timeout=IO_TIMEOUT + SLOW_INTERVAL)
    ms = [s * 1e3 for s in tally.latencies]

    def rounded(v: float | None) -> float | None:
        return None if v is None else round(v, 1)

    return {
        "seconds": round(time.monotonic() - start, 1),
        "requests": dict(sorted(tally.requests.items())),
        "server_errors": tally.server_errors,
        "non_json_errors": tally.non_json_errors,
        "unanswered": tally.unanswered,
        "normal": {
            "count": len(ms),
            "not_200": not_ok,
            "p50_ms": rounded(percentile(ms, 0.5)),
            "p99_ms": rounded(percentile(ms, 0.99)),
            "max_ms": rounded(max(ms, default=None)),
        },
        "examples": list(tally.examples),
    }


__all__ = [
    "SlowBody",
    "is_json_error",
    "raw_exchange",
    "read_answer",
    "run_hostile",
    "slow_body",
    "slow_body_client",
    "slow_client",
]
