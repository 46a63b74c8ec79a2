"""The shapes of the HTTP API's answers and request bodies, as pydantic models.

They are the one description of the JSON the API speaks: the OpenAPI document's
``components.schemas`` are generated from them (:func:`component_schemas`), the batch
body is validated by :class:`BatchRequest`, the views build their answers as these
models and :func:`to_data` serialises every one of them (the HTTP API's and
``negagraph query --json``'s alike).

A model's fields are declared in the order its JSON has them (mixins put shared fields
in the middle); a field with a default is left out of the JSON unless it was given
(``to_move`` and the other fields from the first player's side, ``chance``...).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema
from pydantic.json_schema import models_json_schema

Scalar = int | str | bool
Params = dict[str, Scalar]
"""Every parameter of the game variant, defaults included."""
Bound = Annotated[int | None, Field(description="null: infinite")]
Depth = Annotated[int | None, Field(ge=0, description="plies; null: infinite")]
State = Literal["unexpanded", "expanded", "terminal", "unknown"]


def _isoformat(moment: datetime) -> str:
    return moment.isoformat()


Timestamp = Annotated[
    datetime,
    PlainSerializer(_isoformat, return_type=str),
    WithJsonSchema({"format": "date-time", "type": "string"}),
]
"""A moment, written as :meth:`datetime.isoformat` writes it (``+00:00``, not ``Z``)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorDetail(_Model):
    code: int = Field(description="the HTTP status")
    message: str = Field(description="what went wrong")


class Error(_Model):
    """Every error answer has this shape."""

    error: ErrorDetail


class Bounds(_Model):
    low: Bound = Field(description="lower bound for the player to move (null: -infinity)")
    high: Bound = Field(description="upper bound for the player to move (null: +infinity)")
    low_final: bool = Field(description="no further expansion can change low")
    high_final: bool = Field(description="no further expansion can change high")


class _Values(Bounds):
    value: int | None = Field(description="the exact value when low = high, else null")
    repetition_value: int | None = Field(
        description="the value when endless play scores the game's repetition value "
        "(clamp(r, low, high)); null if the game has no such rule or a bound is not final"
    )
    depth_low: Depth = Field(description="plies within which the low bound is forced")
    depth_high: Depth = Field(description="plies the opponent can hold the mover to high")
    state: State = Field(
        description="unknown: not in the database (a move from an unexpanded position)"
    )
    to_move: Literal["MAX", "MIN"] | None = Field(
        default=None,
        description="MAX: the first player is to move (games that say who is to move)",
    )
    max_low: Bound = Field(default=None, description="low from the first player's side")
    max_high: Bound = Field(default=None, description="high from the first player's side")
    max_value: int | None = Field(default=None, description="value from the first player's side")


class ChanceFields(_Model):
    """A position of a game of chance (``docs/design.md`` §10): its bounds for its
    player as floats rounded outwards (the true bounds lie between), and as exact
    fractions where they are known."""

    kind: Literal["decision", "chance", "terminal"] = Field(
        description="decision: the player chooses; chance: an outcome is drawn"
    )
    player: int = Field(ge=0, le=1, description="whose position it is: 0 first, 1 second")
    low: float = Field(description="lower bound (endless play the worst), rounded down")
    high: float = Field(description="upper bound (endless play the best), rounded up")
    low_exact: str | None = Field(description="low as an exact fraction, if known")
    high_exact: str | None = Field(description="high as an exact fraction, if known")
    value: str | None = Field(description="the exact value when the exact bounds meet")
    first_player_low: float = Field(description="the bounds from the first player's side")
    first_player_high: float
    plies: float | None = Field(
        ge=0,
        description="the expected number of plies (players' moves) to the end when both "
        "players follow the optimal strategy; null: infinite (play may never end)",
    )
    plies_exact: str | None = Field(description="plies as an exact fraction, if known")


class ChanceMoveFields(ChanceFields):
    """A move of a game of chance: the resulting position's fields, the outcome's
    probability and the move's bounds for the mover."""

    probability: str | None = Field(
        description="the outcome's probability as a fraction at a chance node, else null"
    )
    keeps_turn: bool = Field(description="the mover is also the resulting position's player")
    move_low: float = Field(description="the move's lower bound for the mover")
    move_high: float = Field(description="the move's upper bound for the mover")
    move_low_exact: str | None
    move_high_exact: str | None


class _At(_Model):
    position: str = Field(description="in the game's notation")


class PositionFields(_Values, _At):
    """A position with its bounds, flags, value, depths and state."""


class _MoveHead(_Model):
    move: str = Field(description="the move in the game's notation")
    position: str = Field(description="the resulting position")


class Move(_Values, _MoveHead):
    """A move with the resulting position's own fields (from the point of view of the
    player to move there) and the move's bounds for the mover."""

    chance: ChanceMoveFields | None = Field(default=None, description="games of chance only")
    move_low: Bound = Field(description="the move's lower bound for the mover: -high of the child")
    move_high: Bound = Field(description="the move's upper bound for the mover: -low of the child")


class _PositionHead(_Model):
    game: str
    params: Params
    position: str = Field(description="the position, normalised")


class Position(_Values, _PositionHead):
    chance: ChanceFields | None = Field(default=None, description="games of chance only")
    moves: list[Move] = Field(description="best first for the player to move")


class _EstimateHead(_Model):
    game: str
    params: Params
    position: str = Field(description="the position, normalised")
    to_move: Literal["MAX", "MIN"] | None = Field(
        default=None,
        description="MAX: the first player is to move (games that say who is to move)",
    )
    kind: Literal["estimate", "proven"] = Field(
        description="estimate: score comes from a heuristic search and is not proven "
        "unless exact; proven: the database holds the exact value, nothing was searched"
    )
    searched: bool = Field(description="a search ran (false: the database answered)")
    proven_value: int | None = Field(
        description="the exact value the database holds for the mover, else null"
    )
    best_move: str | None = Field(
        description="the search's best move, or the database's best move when proven; "
        "null at a terminal position"
    )
    score: int | None = Field(
        description="the search's score for the mover: heuristic unless exact; null when "
        "nothing was searched"
    )
    exact: bool = Field(description="the score (or proven_value) is the game's value")
    depth: int | None = Field(
        ge=1, description="plies of the last completed iteration; null when not searched"
    )
    positions: int = Field(ge=0, description="positions searched, repeats counted")
    seconds: float = Field(ge=0, description="wall-clock time of the search")
    rate: float = Field(ge=0, description="positions searched per second")


class EstimateMove(_MoveHead):
    """A legal move of an estimated position and the position it leads to: enough to
    play on from a position the database does not hold (no values: those are the
    database's, or another estimate's)."""


class Estimate(Bounds, _EstimateHead):
    """A position searched beyond the database (``docs/api.md``): a heuristic search's
    best move and score, beside the bounds the database has proven (``low`` ...
    ``high_final``: ``null``/false where not stored); or, where the database holds the
    exact value, that value and no search."""

    stored: bool = Field(description="the database holds the position (its bounds above)")
    moves: list[EstimateMove] = Field(
        description="the legal moves in the game's order (empty at a terminal position)"
    )


class PositionError(_Model):
    """A batch entry that has no answer: malformed (400) or not in the database (404)."""

    position: str = Field(description="the position as sent")
    error: ErrorDetail


def _integral(value: Any) -> Any:
    """JSON has one kind of number, and JSON Schema's ``integer`` is any number without a
    fractional part: ``4.0`` is the integer 4 (some clients write every number so)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


JsonInt = Annotated[int, BeforeValidator(_integral)]


class BatchRequest(_Model):
    """The body of `POST /api/games/{game}/positions`."""

    params: dict[str, JsonInt | str | bool] = Field(
        default_factory=dict, description="the game's parameters (defaults when absent)"
    )
    positions: list[str] = Field(description="positions in the game's notation")


class BatchResponse(_Model):
    game: str
    params: Params
    initial: str = Field(
        description="the variant's initial position (where a page opens a variant the "
        "database does not hold)"
    )
    results: list[Position | PositionError] = Field(
        description="one per requested position, in request order"
    )


class _StepHead(_Model):
    ply: int = Field(ge=1)
    move: str
    bound: Literal["low", "high", "value"] = Field(
        description="the bound this step's mover realises (value: a move that keeps a "
        "value only endless play gives)"
    )
    position: str = Field(description="the position reached")


class LineStep(_Values, _StepHead):
    pass


class Line(_Model):
    game: str
    params: Params
    bound: Literal["value", "low", "high"]
    max_plies: int = Field(ge=0)
    start: PositionFields
    steps: list[LineStep]
    plies: int = Field(ge=0)
    end: Literal["terminal", "unexpanded", "max_plies", "repetition"] = Field(
        description="terminal: the game ended; unexpanded: the line reached the frontier "
        "of the solved graph; max_plies: the limit; repetition: every move realising the "
        "bound revisits a position of the line"
    )


class StrategyMove(_Model):
    """A move of the strategy: a decision node's best move, or a chance node's outcome."""

    move: str = Field(description="the move or outcome, in the game's notation")
    probability: str | None = Field(
        description="the outcome's probability as a fraction at a chance node, else null"
    )
    node: int = Field(ge=0, description="the resulting position's node (its id)")
    ref: bool = Field(
        description="the position was already in the tree (a repetition or a "
        "transposition): the node is not repeated"
    )


class _NodeHead(_Model):
    id: int = Field(ge=0, description="its index in nodes (0: the start)")
    position: str = Field(description="the position as reached")


class StrategyNode(ChanceFields, _NodeHead):
    """A position of the strategy tree with its chance fields."""

    children: list[StrategyMove] = Field(
        description="the best move at a decision node, every outcome at a chance node, "
        "none at a terminal position or where the tree is cut"
    )
    cut: bool = Field(description="the node limit left this node's children out")


class Strategy(_Model):
    """A game of chance's optimal strategy from a position, as a tree."""

    game: str
    params: Params
    position: str = Field(description="the start, normalised")
    max_nodes: int = Field(ge=1)
    nodes: list[StrategyNode] = Field(
        description="the tree breadth first: node 0 the start, each other node reached "
        "from an earlier one by the one move whose ref is false"
    )
    cut: bool = Field(description="some node's children were left out (the node limit)")


class ReplayCommit(_Model):
    """One committed batch of the variant's solves."""

    seq: int = Field(ge=1, description="1, 2, ... per variant, across its runs")
    run: int = Field(description="the solve run (`/api/solves/{run}`)")
    nodes: int = Field(ge=0, description="positions stored after this commit")
    edges: int = Field(ge=0, description="moves stored after this commit")
    expansions: int = Field(ge=0, description="the run's expansions so far")
    root_low: Bound = Field(description="the run root's low bound after this commit")
    root_high: Bound = Field(description="the run root's high bound after this commit")
    root_low_final: bool
    root_high_final: bool


class ReplayTier(_Model):
    """A tier of a tiered full solve (a `tiers` row)."""

    tier: int = Field(description="the game's tier number")
    name: str = Field(description="how the game names it (chess: the material)")
    ordinal: int = Field(ge=0, description="its place in the discovery order, parents first")
    first_id: int | None = Field(description="its first node id (null: not numbered yet)")
    nodes: int = Field(ge=0, description="its positions")
    edges: int | None = Field(description="its positions' moves (null: not solved yet)")
    discovered_in: int = Field(ge=1, description="the commit that recorded it")
    solved_in: int | None = Field(description="the commit that solved it (null: not yet)")


class _ReplayHead(_Model):
    id: int = Field(ge=0, description="the node id (discovery order; a tier's in solve order)")
    position: str
    state: Literal["unexpanded", "expanded", "terminal"]


class ReplayNode(Bounds, _ReplayHead):
    """A position as the commit left it: bounds and flags recomputed from that graph."""

    expanded_in: int | None = Field(
        description="the commit that expanded it (null: not expanded by this commit)"
    )


class ReplayEdge(_Model):
    parent: int
    child: int
    move: str


class Replay(_Model):
    """A stored solve as one of its commits left it, with the whole timeline."""

    game: str
    params: Params
    layout: Literal["graph", "compact"] = Field(description="the variant's storage layout")
    commit: int = Field(ge=1, description="the commit shown")
    root: int | None = Field(description="the node id of that commit's run root")
    commits: list[ReplayCommit] = Field(description="every commit of the variant, in order")
    tiers: list[ReplayTier] = Field(
        description="its tiers in discovery order (empty: solved without tiers)"
    )
    drawn: bool = Field(description="whether nodes and edges give the commit's graph")
    not_drawn: str | None = Field(description="why the graph is not given (null: it is)")
    nodes: list[ReplayNode]
    edges: list[ReplayEdge] = Field(description="the moves of the expanded positions")


class GameParameter(_Model):
    name: str
    type: Literal["int", "str", "bool"]
    default: Scalar
    help: str
    min: int | None = None
    max: int | None = None
    choices: list[str] | None = None


class LastRun(_Model):
    id: int
    status: str


class Variant(_Model):
    id: int
    params: Params
    params_text: str
    rules_version: int
    game_source: str | None = Field(
        description="where the game came from when the variant was created"
    )
    compatible: bool = Field(description="stored under this server's rules version")
    nodes: int = Field(ge=0)
    layout: Literal["graph", "compact"] = Field(
        description="graph: nodes and edges; compact: a complete tiered solve's values by "
        "key, no graph (no replay)"
    )
    root: str | None
    root_bounds: Bounds | None
    last_run: LastRun | None


class Game(_Model):
    name: str
    version: int = Field(description="rules version")
    description: str
    notation: str = Field(description="how positions are written")
    parameters: list[GameParameter]
    source: str = Field(description="builtin, plugin <distribution> <version> or reference <ref>")
    installed: Literal[True]
    players: tuple[str, str] = Field(
        description="what people call the first player (MAX) and the second (MIN)"
    )
    chance: bool = Field(
        description="a game of chance: its positions carry chance values and its optimal "
        "play is a strategy (`/strategy`), not a line"
    )
    value_range: tuple[int, int] | None = Field(
        description="the values positions can have, as the game declares them (null: "
        "not declared, or set by the parameters)"
    )
    initial: str = Field(description="the initial position with default parameters")
    estimates: bool = Field(
        description="positions can be estimated beyond the database (`/estimate`), with "
        "the default parameters"
    )
    variants: list[Variant] = Field(description="the variants this database holds")


class MissingVariant(_Model):
    id: int
    params_text: str
    nodes: int = Field(ge=0)
    rules_version: int


class MissingGame(_Model):
    """A game this database holds that this server does not have (its lookups are a
    503)."""

    name: str
    installed: Literal[False]
    variants: list[MissingVariant]


class Games(_Model):
    games: list[Game | MissingGame]
    plugin_errors: list[str] = Field(description="one line per plugin that could not be loaded")


RunStatus = Literal["running", "complete", "budget", "stopped", "failed", "dead"]


class SolveRun(_Model):
    id: int
    variant_id: int
    game: str | None
    params: Params | None
    rules_version: int | None
    status: RunStatus
    started_at: Timestamp
    heartbeat_at: Timestamp = Field(description="time of the run's latest commit")
    finished_at: Timestamp | None
    root: str
    full: bool = Field(description="tablebase mode")
    max_expansions: int | None
    max_seconds: float | None
    expansions: int
    nodes_added: int
    edges_added: int
    nodes: int
    edges: int
    frontier: int
    root_bounds: Bounds
    seconds: float
    rss_bytes: int | None = Field(
        ge=0, description="the solving process's memory (RSS) at the latest commit"
    )
    memory_limit: int | None = Field(ge=0, description="the run's memory limit (null: none)")
    resident_nodes: int | None = Field(
        ge=0, description="nodes of the graph the run held in RAM at the latest commit"
    )
    tiers_done: int | None = Field(
        ge=0,
        description="a tiered full solve's tiers discovered (while discovering) or solved "
        "(while solving) at the latest commit (null: not tiered)",
    )
    tiers_total: int | None = Field(
        ge=0, description="the tiers reachable from a tiered solve's root (null: not tiered)"
    )
    units_done: int | None = Field(
        ge=0,
        description="a tiered solve's units of work done in its current sweep (tiers while "
        "discovering, shards of tiers while solving; null: not tiered)",
    )
    units_total: int | None = Field(
        ge=0, description="the units of the current sweep known to the run (null: not tiered)"
    )
    workers: int | None = Field(
        ge=1, description="the processes solving the run's units (1: its own; null: not tiered)"
    )
    eta_seconds: float | None = Field(
        ge=0,
        description="a running tiered solve's estimate at its latest commit of the seconds "
        "it still needs, once every tier is discovered (null: not known, or the run ended)",
    )
    worker_units: list[WorkerUnits] = Field(
        description="the shards each process wrote for the run (tiered solves)"
    )
    pid: int
    hostname: str


class WorkerUnits(_Model):
    worker: str = Field(description="the process, as host:pid")
    units: int = Field(ge=0, description="shards it wrote")
    positions: int = Field(
        ge=0,
        description="their positions, of both sweeps (a position is written discovered, "
        "then solved: discovered + solved)",
    )
    seconds: float = Field(ge=0, description="its time on them")
    discovered: int = Field(ge=0, description="the positions it wrote discovered")
    solved: int = Field(ge=0, description="the positions it solved")


class SolveList(_Model):
    solves: list[SolveRun]
    total: int = Field(ge=0)


class SchemaState(_Model):
    revision: str | None
    head: str
    at_head: bool


class DatabaseHealth(_Model):
    url: str = Field(description="password hidden")
    backend: str | None
    reachable: bool
    read_only: bool
    schema_: SchemaState = Field(alias="schema")
    problem: str | None = None


class Health(_Model):
    status: Literal["ok", "unavailable"]
    version: str | None
    database: DatabaseHealth
    error: ErrorDetail | None = None


class Endpoint(_Model):
    method: str
    path: str
    summary: str


class Index(_Model):
    """What this server answers: every endpoint of the OpenAPI document."""

    name: Literal["negagraph"]
    version: str | None
    docs: str = Field(description="the documentation page")
    openapi: str = Field(description="the OpenAPI document")
    endpoints: list[Endpoint]


COMPONENTS: tuple[type[BaseModel], ...] = (
    Error,
    Position,
    BatchRequest,
    BatchResponse,
    Line,
    Strategy,
    Estimate,
    Replay,
    Games,
    SolveList,
    Health,
    Index,
)
"""The models the OpenAPI paths name; the models they use come along."""


def to_data(model: BaseModel) -> Any:
    """*model* as JSON-ready data (dicts, lists, text, numbers), its fields in their
    declared order, defaults left out unless given: the one way answers are serialised."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def component_schemas(*, max_batch: int) -> dict[str, Any]:
    """``components.schemas`` of the OpenAPI document: the JSON Schemas of the models
    (OpenAPI 3.1 is JSON Schema), without pydantic's generated titles. *max_batch* is
    the server's ``MAX_BATCH``, the most positions a batch body may hold."""
    _, top = models_json_schema(
        [(m, "validation" if m is BatchRequest else "serialization") for m in COMPONENTS],
        ref_template="#/components/schemas/{model}",
    )
    schemas: dict[str, Any] = _untitled(top["$defs"])
    schemas["BatchRequest"]["properties"]["positions"]["maxItems"] = max_batch
    return schemas


def _untitled(schema: Any) -> Any:
    """*schema* without the ``title`` keywords pydantic adds to every model and field
    (the docs page names them already); a property called ``title`` would stay."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                continue
            if key == "properties":
                out[key] = {name: _untitled(sub) for name, sub in value.items()}
            else:
                out[key] = _untitled(value)
        return out
    if isinstance(schema, list):
        return [_untitled(item) for item in schema]
    return schema


__all__ = ["COMPONENTS", "BatchRequest", "component_schemas", "to_data"]
