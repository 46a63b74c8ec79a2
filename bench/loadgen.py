"""HTTP load generators for the lookup target: ``wrk`` when it is installed, else a
Python one (separate processes, one keep-alive :mod:`http.client` connection each).

Both cycle through a list of request paths for a fixed time over a fixed number of
connections and report a :class:`Load`. This module imports the standard library only,
so the Python generator's processes start quickly.
"""

from __future__ import annotations

import http.client
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.measure import ROOT


@dataclass(frozen=True)
class Load:
    """What a load run achieved."""

    tool: str
    """``wrk`` or ``python``."""
    requests: int
    errors: int
    """Requests that failed or were not answered 200 (wrk: status >= 400 or socket errors)."""
    seconds: float
    p99_ms: float

    @property
    def per_second(self) -> float:
        return self.requests / self.seconds


def run_load(host: str, port: int, paths: list[str], *, seconds: float, connections: int) -> Load:
    """GET *paths* in turn from ``host:port`` for *seconds* over *connections*."""
    if shutil.which("wrk"):
        return wrk_load(host, port, paths, seconds=seconds, connections=connections)
    return python_load(host, port, paths, seconds=seconds, connections=connections)


WRK_SCRIPT = """\
local paths = %s
local i = math.random(#paths)
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("NEGAGRAPH %%d %%d %%d %%d\\n", summary.requests, summary.duration,
    latency:percentile(99), e.connect + e.read + e.write + e.status + e.timeout))
end
"""
"""A wrk script cycling through the paths (a Lua table) and printing one summary line:
requests, duration (µs), p99 latency (µs), errors."""


def wrk_load(host: str, port: int, paths: list[str], *, seconds: float, connections: int) -> Load:
    """:func:`run_load` with wrk (two threads)."""
    table = "{" + ",".join(json.dumps(p) for p in paths) + "}"
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "lookups.lua"
        script.write_text(WRK_SCRIPT % table)
        out = subprocess.run(
            [
                "wrk",
                "-t",
                str(min(2, connections)),
                "-c",
                str(connections),
                "-d",
                f"{max(1, round(seconds))}s",
                "--timeout",
                "5s",
                "-s",
                str(script),
                f"http://{host}:{port}",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    line = next(x for x in out.splitlines() if x.startswith("NEGAGRAPH "))
    requests, duration_us, p99_us, errors = (int(v) for v in line.split()[1:])
    return Load("wrk", requests, errors, duration_us / 1e6, p99_us / 1e3)


def python_load(
    host: str, port: int, paths: list[str], *, seconds: float, connections: int
) -> Load:
    """:func:`run_load` with *connections* processes running :func:`client_main`."""
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [Path(tmp) / f"job{i}.json" for i in range(connections)]
        for i, job in enumerate(jobs):
            job.write_text(json.dumps([host, port, paths, seconds, i * len(paths) // connections]))
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "bench.loadgen", str(job)],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                text=True,
            )
            for job in jobs
        ]
        outs = [proc.communicate()[0] for proc in procs]
    if any(proc.returncode for proc in procs):
        raise RuntimeError("a load generator process failed")
    results = [json.loads(out) for out in outs]
    latencies = sorted(t for _, _, lat in results for t in lat)
    elapsed = max(e for _, e, _ in results)
    errors = sum(n for n, _, _ in results)
    return Load("python", len(latencies), errors, elapsed, percentile(latencies, 99) * 1e3)


def client_main(job: Path) -> None:
    """A load generator process: runs the :func:`client` job in the JSON file *job*,
    writes the result as JSON to stdout."""
    host, port, paths, seconds, offset = json.loads(job.read_text())
    json.dump(client(host, port, paths, seconds, offset), sys.stdout)


def client(
    host: str, port: int, paths: list[str], seconds: float, i: int
) -> tuple[int, float, list[float]]:
    """One connection GETting *paths* in turn from the *i*-th for *seconds* (reopened
    whenever the server closes it): (errors, seconds taken, latency of every request)."""
    conn = http.client.HTTPConnection(host, port, timeout=10)
    latencies: list[float] = []
    errors = 0
    start = time.perf_counter()
    while (t0 := time.perf_counter()) - start < seconds:
        conn.request("GET", paths[i % len(paths)])
        response = conn.getresponse()
        response.read()
        latencies.append(time.perf_counter() - t0)
        errors += response.status != 200
        i += 1
    conn.close()
    return errors, time.perf_counter() - start, latencies


def percentile(sorted_values: list[float], pct: float) -> float:
    """The nearest-rank *pct* percentile of *sorted_values* (ascending)."""
    if not sorted_values:
        return math.nan
    return sorted_values[max(0, math.ceil(pct / 100 * len(sorted_values)) - 1)]


if __name__ == "__main__":
    client_main(Path(sys.argv[1]))


__all__ = ["Load", "percentile", "python_load", "run_load", "wrk_load"]
