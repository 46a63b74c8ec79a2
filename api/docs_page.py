"""The OpenAPI document as a self-contained HTML page (``GET /api/docs``): no scripts, no
CDN, rendered from the Jinja template ``api/templates/docs.html``."""

from __future__ import annotations

import json
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

CSS = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#222}
h1{margin-bottom:.2rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2.5rem}
h3{margin:1.8rem 0 .3rem;font-family:ui-monospace,monospace;font-size:1.05rem}
.method{display:inline-block;min-width:3.5rem;padding:0 .4rem;border-radius:3px;color:#fff;
text-align:center;margin-right:.5rem}.get{background:#2a7ab0}.post{background:#3a944a}
table{border-collapse:collapse;margin:.4rem 0 1rem;width:100%}
td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}code{font-family:ui-monospace,monospace;font-size:.92em;
background:#f4f4f4;padding:0 .2rem;border-radius:2px}
.schema{font-family:ui-monospace,monospace;font-size:.9em;margin:.2rem 0 0 1.2rem}
nav ul{columns:2}
"""


def _schema_text(schema: dict[str, Any]) -> Markup:
    """A short human-readable type of *schema*, as markup (links to the schemas)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return Markup('<a href="#schema-{0}">{0}</a>').format(name)
    if "anyOf" in schema:
        return Markup(" | ").join(_schema_text(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    text = Markup(escape(" | ".join(kind) if isinstance(kind, list) else str(kind)))
    if kind == "array" and "items" in schema:
        text = Markup("array of {}").format(_schema_text(schema["items"]))
    extras: list[Markup] = []
    code = Markup("<code>{}</code>")
    if "enum" in schema:
        extras.append(Markup("one of ") + Markup(", ").join(code.format(v) for v in schema["enum"]))
    if "const" in schema:
        extras.append(Markup("always ") + code.format(json.dumps(schema["const"])))
    if "minimum" in schema or "maximum" in schema:
        extras.append(Markup("{}..{}").format(schema.get("minimum", ""), schema.get("maximum", "")))
    if "default" in schema:
        extras.append(Markup("default ") + code.format(json.dumps(schema["default"])))
    if "maxItems" in schema:
        extras.append(Markup("at most {}").format(schema["maxItems"]))
    return text if not extras else Markup("{} ({})").format(text, Markup("; ").join(extras))


def _inline(text: str) -> Markup:
    """*text* escaped, with `backquoted` spans as code."""
    pieces = str(escape(text)).split("`")
    return Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces)))


_TEMPLATES = Environment(
    loader=PackageLoader("api", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
_TEMPLATES.filters["inline"] = _inline
_TEMPLATES.filters["schema_text"] = _schema_text


def render_docs(doc: dict[str, Any]) -> str:
    """The OpenAPI document *doc* as a self-contained HTML page (no scripts, no CDN),
    from the Jinja template ``api/templates/docs.html`` (autoescaped)."""
    operations = []
    for path, item in doc["paths"].items():
        shared = item.get("parameters", [])
        for method, op in item.items():
            if method == "parameters":
                continue
            body = op.get("requestBody")
            operations.append(
                {
                    "id": op["operationId"],
                    "method": method,
                    "path": path,
                    "summary": op["summary"],
                    "description": op.get("description"),
                    "parameters": [*shared, *op.get("parameters", [])],
                    "body": body,
                    "body_schema": next(iter(body["content"].values()))["schema"] if body else None,
                    "responses": op["responses"],
                }
            )
    page = _TEMPLATES.get_template("docs.html")
    return page.render(
        info=doc["info"],
        css=Markup(CSS),
        operations=operations,
        schemas=doc["components"]["schemas"],
    )


__all__ = ["render_docs"]
