"""Query results as text: an aligned table, CSV or JSON (``negagraph sql``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

FORMATS = ("table", "csv", "json")
"""The output formats of ``negagraph sql``."""


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return "x'" + value.hex() + "'"
    return str(value)


def _plain(value: Any) -> Any:
    """*value* as JSON can hold it (blobs as hex text)."""
    if isinstance(value, bytes):
        return value.hex()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def render(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str) -> str:
    """*rows* under *columns* in format *fmt* (:data:`FORMATS`), without a final newline.

    >>> print(render(["low", "high"], [(0, 0), (-1, None)], "table"))
    low | high
    ----+-----
      0 |    0
     -1 | NULL
    (2 rows)
    """
    if fmt == "json":
        return json.dumps([dict(zip(columns, map(_plain, r), strict=True)) for r in rows])
    if fmt == "csv":
        return _csv(columns, rows)
    return _table(columns, rows)


def _csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """*rows* as CSV under a header line (NULL as an empty field, blobs as hex)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([["" if v is None else _plain(v) for v in r] for r in rows])
    return out.getvalue().rstrip("\n")


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """*rows* as an aligned table (numbers to the right), then the count of rows."""
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    numeric = [_numeric(rows, i) for i in range(len(columns))]
    lines = [
        " | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(),
        "-+-".join("-" * w for w in widths),
    ]
    for row in cells:
        aligned = (
            v.rjust(w) if n else v.ljust(w) for v, w, n in zip(row, widths, numeric, strict=True)
        )
        lines.append(" | ".join(aligned).rstrip())
    lines.append(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")
    return "\n".join(lines)


def _numeric(rows: Sequence[Sequence[Any]], i: int) -> bool:
    """Whether column *i* holds only numbers (and NULLs): aligned to the right."""
    return all(isinstance(r[i], (int, float)) or r[i] is None for r in rows)


__all__ = ["FORMATS", "render"]
