"""Conformance suite: every registered game against the :class:`Game` protocol's contract.

Each configuration is explored by a bounded breadth-first search over ``children``; every
position found must round-trip through its notation, agree between ``children`` and
``terminal_value``, and map to a valid representative under ``canonical``. The error
paths (unknown games and parameters, malformed positions) are checked for every game.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.check import check_game, check_position
from solver.errors import (
    InvalidParameterError,
    InvalidPositionError,
    NegagraphError,
    UnknownGameError,
)
from solver.game import Game, Param
from solver.games import GAMES, find_game, get_game

BFS_CAP = 3000
"""Most positions the conformance walk visits per configuration."""

# name, parameters, bound on keys to explore (number-game is infinite)
CONFIGS: list[tuple[str, dict[str, object], Callable[[int], bool] | None]] = [
    ("number-game", {"root": 13}, lambda k: k <= 60),
    ("number-game", {"root": 1}, None),
    ("tic-tac-toe", {"symmetry": False}, None),
    ("tic-tac-toe", {"symmetry": True}, None),
    ("connect-four", {"width": 4, "height": 4, "symmetry": False}, None),
    ("connect-four", {"width": 4, "height": 4, "symmetry": True}, None),
    ("connect-four", {"width": 5, "height": 4, "symmetry": False}, None),
    ("connect-four", {"width": 5, "height": 4, "symmetry": True}, None),
    ("connect-four", {"width": 1, "height": 1}, None),
    ("connect-four", {"width": 10, "height": 10, "symmetry": True}, None),
    ("grundy", {"n": 9}, None),
    ("grundy", {"n": 1}, None),
    ("grundy", {"n": 60}, None),
    ("nap", {"n": 9}, None),
    ("nap", {"n": 1}, None),
    ("nap", {"n": 60}, None),
    ("chess", {"material": "KRvK"}, None),
    ("chess", {"material": "KQvK"}, None),
    ("chess", {"material": "KRvK", "symmetry": False}, None),
    ("chess", {"material": "KPvKP"}, None),
    ("e-valuate", {}, None),
    ("e-valuate", {"expression": "a*b+c*d", "symmetry": True}, None),
    ("e-valuate", {"expression": "x+y+z", "digits": "1,3,5", "symmetry": True}, None),
    ("e-valuate", {"expression": "2*x-(y+3)*-x*y", "digits": "0-3,7", "symmetry": False}, None),
    ("e-valuate", {"expression": "x", "digits": "5"}, None),
    ("domino-tiling", {"rows": 3, "cols": 4, "symmetry": False}, None),
    ("domino-tiling", {"rows": 4, "cols": 4, "symmetry": True}, None),
    ("domino-tiling", {"rows": 2, "cols": 5, "symmetry": True}, None),
    ("domino-tiling", {"rows": 3, "cols": 6, "symmetry": True}, None),
    ("domino-tiling", {"rows": 8, "cols": 8, "symmetry": False}, None),
    ("domino-tiling", {"rows": 1, "cols": 1}, None),
    ("graph-share", {}, None),
    ("graph-share", {"symmetry": True}, None),
    ("graph-share", {"mode": "edges", "symmetry": True}, None),
    ("graph-share", {"graph": "complete-7", "colors": 3, "symmetry": True}, None),
    ("graph-share", {"graph": "edges:0-1,1-2,2-0,2-3", "mode": "edges", "colors": 3}, None),
    ("graph-share", {"graph": "path-2", "colors": 1}, None),
    ("pig", {"target": 12, "faces": 4}, None),
    ("pig", {}, None),
    ("pig", {"target": 1, "faces": 2}, None),
    ("coin-nim", {"n": 10}, None),
    ("coin-nim", {"n": 0}, None),
    ("dice-race", {"goal": 6, "faces": 4}, None),
    ("dice-race", {}, None),
]
CONFIG_IDS = [f"{name}[{','.join(f'{k}={v}' for k, v in p.items())}]" for name, p, _ in CONFIGS]


def make(name: str, **params: object) -> Game:
    """``get_game``, checked against (and typed as) the :class:`Game` protocol."""
    game = get_game(name, **params)
    assert isinstance(game, Game)
    return game


def explore(game: Game, bound: Callable[[int], bool] | None, cap: int = BFS_CAP) -> list[int]:
    """Keys reached by breadth-first search from the initial position (at most *cap*)."""
    start = game.initial()
    seen = {start}
    order = [start]
    queue = deque([start])
    while queue and len(order) < cap:
        key = queue.popleft()
        for _, child in game.children(key):
            if child in seen or (bound is not None and not bound(child)):
                continue
            seen.add(child)
            order.append(child)
            queue.append(child)
            if len(order) >= cap:
                break
    return order


@pytest.fixture(scope="module", params=CONFIGS, ids=CONFIG_IDS)
def explored(request: pytest.FixtureRequest) -> tuple[Game, list[int]]:
    name, params, bound = request.param
    game = make(name, **params)
    return game, explore(game, bound)


def test_every_registered_game_is_covered() -> None:
    assert {name for name, _, _ in CONFIGS} == set(GAMES)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_class_attributes(name: str) -> None:
    cls = GAMES[name]
    assert cls.name == name
    assert cls.version == (2 if name == "connect-four" else 1)  # 2: moves centre first
    assert cls.description and cls.notation
    assert cls.__doc__ and cls.__module__.startswith("solver.games.")
    for p in cls.parameters:
        assert isinstance(p, Param)
        assert p.convert(p.default) == p.default
    json.dumps(cls.describe())
    game = get_game(name)
    assert isinstance(game, Game)
    assert set(game.params) == {p.name for p in cls.parameters}
    assert game == get_game(name, **game.params)
    assert hash(game) == hash(get_game(name, **{k: str(v) for k, v in game.params.items()}))
    assert eval(repr(game), {"get_game": get_game}) == game


def test_walk_round_trip_and_terminals(explored: tuple[Game, list[int]]) -> None:
    """The contract's per-position checks (solver.check, as ``negagraph check`` runs them:
    notation round trip, terminal iff no moves, integer terminal values within the
    declared range, distinct labels, deterministic children, also across instances)."""
    game, keys = explored
    assert keys[0] == game.initial()
    other = get_game(game.name, **game.params)
    for key in keys:
        assert isinstance(key, int)
        text = game.format(key)
        assert " " not in text
        assert all(
            isinstance(label, str) and label and " " not in label for label, _ in game.children(key)
        )
        assert check_position(game, key, other=other) == [], text


def test_walk_canonical(explored: tuple[Game, list[int]]) -> None:
    """Canonical images: the identity without symmetry; with it idempotent, writable,
    with the same terminal value and the same moves up to symmetry (solver.check)."""
    game, keys = explored
    for key in keys:
        if not game.uses_symmetry:
            assert game.canonical(key) == key
        assert [v for v in check_position(game, key) if v.check == "canonical"] == []


@pytest.mark.parametrize(("name", "params", "bound"), CONFIGS, ids=CONFIG_IDS)
def test_check_game_finds_nothing_wrong(
    name: str, params: dict[str, object], bound: Callable[[int], bool] | None
) -> None:
    """The whole of ``negagraph check`` (acyclic claims on the explored graph, symmetry
    soundness on a solved sample) on a small budget."""
    report = check_game(
        make(name, **params),
        max_positions=300,
        max_seconds=20,
        symmetry_pairs=2,
        solve_expansions=500,
        bound=bound,
    )
    assert report.ok, [str(v) for v in report.violations]
    assert report.positions > 0


def test_symmetry_flag_follows_parameter() -> None:
    for name, cls in GAMES.items():
        names = {p.name for p in cls.parameters}
        if "symmetry" in names:
            assert make(name, symmetry=True).uses_symmetry
            assert not make(name, symmetry=False).uses_symmetry
        else:
            assert not make(name).uses_symmetry


def test_symmetry_merges_positions() -> None:
    for name, params, bound in CONFIGS:
        if not params.get("symmetry"):
            continue
        game = make(name, **params)
        keys = explore(game, bound, cap=500)
        assert len({game.canonical(k) for k in keys}) < len(keys), name


# -- random walks -------------------------------------------------------------------------

WALK_GAMES = [
    ("number-game", {"root": 13}),
    ("tic-tac-toe", {"symmetry": True}),
    ("connect-four", {"width": 7, "height": 6, "symmetry": True}),
    ("connect-four", {"width": 10, "height": 3}),
    ("connect-four", {"width": 3, "height": 10}),
    ("grundy", {"n": 60}),
    ("nap", {"n": 60}),
    ("chess", {"material": "KQvK"}),
    ("chess", {"material": "KPvKP"}),
    ("e-valuate", {"expression": "a*b-c*d+e*(f-g)", "symmetry": True}),
    ("domino-tiling", {"rows": 8, "cols": 8, "symmetry": True}),
    ("domino-tiling", {"rows": 3, "cols": 7, "symmetry": True}),
    ("graph-share", {"graph": "friendship-4", "mode": "edges", "colors": 3, "symmetry": True}),
    ("graph-share", {"graph": "cycle-9", "colors": 4, "symmetry": True}),
]


@pytest.mark.parametrize(("name", "params"), WALK_GAMES, ids=[w[0] for w in WALK_GAMES])
@settings(max_examples=40, deadline=None, database=None)
@given(choices=st.lists(st.integers(min_value=0, max_value=10**6), max_size=60))
def test_random_walk(name: str, params: dict[str, Any], choices: list[int]) -> None:
    game = make(name, **params)
    key = game.initial()
    for choice in choices:
        text = game.format(key)
        assert game.parse(text) == key
        rep = game.canonical(key)
        assert game.canonical(rep) == rep
        assert game.parse(game.format(rep)) == rep
        children = game.children(key)
        assert (game.terminal_value(key) is None) == bool(children)
        if not children:
            break
        key = children[choice % len(children)][1]


@pytest.mark.parametrize("name", sorted(GAMES))
@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(text=st.text(alphabet=st.sampled_from("0123456789+-,./{}xXoO. \t=ab"), max_size=30))
def test_parse_fuzz(name: str, text: str) -> None:
    game = make(name, **({"width": 4, "height": 4} if name == "connect-four" else {}))
    try:
        key = game.parse(text)
    except InvalidPositionError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert game.parse(game.format(key)) == key


@pytest.mark.parametrize("name", sorted(GAMES))
@settings(max_examples=100, deadline=None, database=None)
@given(text=st.text(max_size=20))
def test_parse_fuzz_any_text(name: str, text: str) -> None:
    game = make(name)
    try:
        key = game.parse(text)
    except InvalidPositionError:
        return
    assert game.parse(game.format(key)) == key


# -- error paths --------------------------------------------------------------------------


def test_unknown_game() -> None:
    with pytest.raises(UnknownGameError) as info:
        get_game("nope")
    message = str(info.value)
    assert "nope" in message
    for name in GAMES:
        assert name in message
    assert isinstance(info.value, KeyError) and isinstance(info.value, NegagraphError)
    with pytest.raises(UnknownGameError):
        find_game("")


BAD_PARAMS: list[tuple[str, dict[str, object]]] = [
    ("number-game", {"nope": 1}),
    ("number-game", {"root": 0}),
    ("number-game", {"root": "thirteen"}),
    ("number-game", {"root": 1.5}),
    ("number-game", {"root": 10**13}),
    ("tic-tac-toe", {"symmetry": "maybe"}),
    ("tic-tac-toe", {"size": 4}),
    ("connect-four", {"width": 0}),
    ("connect-four", {"width": 11}),
    ("connect-four", {"height": "six"}),
    ("connect-four", {"height": True}),
    ("connect-four", {"symmetry": 2}),
    ("connect-four", {"width": 4, "depth": 3}),
    ("grundy", {"n": 0}),
    ("grundy", {"n": 61}),
    ("grundy", {"n": "7.0"}),
    ("nap", {"n": -1}),
    ("nap", {"n": 61}),
    ("nap", {"n": ""}),
    ("chess", {"material": ""}),
    ("chess", {"material": "KR"}),
    ("chess", {"material": "RvK"}),
    ("chess", {"material": "KKvK"}),
    ("chess", {"material": "KXvK"}),
    ("chess", {"material": "KRvKvK"}),
    ("chess", {"material": "KPPPPPPPPPvK"}),
    ("chess", {"material": 5}),
    ("chess", {"symmetry": "sometimes"}),
    ("e-valuate", {"expression": "x+"}),
    ("e-valuate", {"expression": "x/y"}),
    ("e-valuate", {"expression": "2+3"}),
    ("e-valuate", {"digits": "9-0"}),
    ("e-valuate", {"digits": "1,1"}),
    ("e-valuate", {"digits": "a"}),
    ("e-valuate", {"symmetry": "sometimes"}),
    ("domino-tiling", {"rows": 0}),
    ("domino-tiling", {"cols": 9}),
    ("domino-tiling", {"size": 4}),
    ("graph-share", {"graph": "petersen"}),
    ("graph-share", {"graph": "cycle-2"}),
    ("graph-share", {"graph": "edges:0-0"}),
    ("graph-share", {"graph": "edges:0-1,1-0"}),
    ("graph-share", {"mode": "faces"}),
    ("graph-share", {"colors": 0}),
    ("graph-share", {"colors": 7}),
]


@pytest.mark.parametrize(("name", "params"), BAD_PARAMS, ids=[repr(p) for p in BAD_PARAMS])
def test_bad_parameters(name: str, params: dict[str, object]) -> None:
    with pytest.raises(InvalidParameterError) as info:
        get_game(name, **params)
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)


def test_parameters_from_text() -> None:
    game = get_game("connect-four", width="5", height=" 4 ", symmetry="yes")
    assert game.params == {"width": 5, "height": 4, "symmetry": True}
    assert get_game("nap", n="12").params == {"n": 12}


BAD_POSITION_PARAMS: dict[str, dict[str, object]] = {
    "connect-four": {"width": 4, "height": 4},
    "grundy": {"n": 7},
    "nap": {"n": 9},
    "chess": {"material": "KRvK"},
    "domino-tiling": {"rows": 2, "cols": 3},
}
BAD_POSITIONS: dict[str, list[str]] = {
    "number-game": [
        "",
        " ",
        "abc",
        "0",
        "000",
        "-3",
        "+5",
        "1.5",
        "1e3",
        "0x10",
        "²",
        "١٢",
        "13 15",
        "10000000000001",
        "9" * 5000,
    ],
    "tic-tac-toe": [
        "",
        "x",
        "xxxxxxxxxx",
        "x.o/.x.",
        "x.o/.x./..o/",
        "xo./..../..",
        "x.o/.z./...",
        "xx./.../...",  # X two ahead
        "o../.../...",  # O moved first
        "xxx/ooo/...",  # both have a line
        "xxx/oo./o..",  # X has a line but O moved after it
        "ooo/xx./x.x",  # O has a line but X moved after it
        "x.o.x.o.x.",  # ten cells
        "é" * 9,
    ],
    "connect-four": [
        "",
        "/",
        "0",
        "5",
        "1111 1",
        "11111",
        "x",
        "..../..../..../...",
        "..../..../..../.....",
        "..../..../..../..../....",
        "..../..../..../.z..",
        "..../..../.x../....",  # floating stone
        "..../..../..../xx..",  # x two ahead
        "..../..../..../o...",  # o moved first
        "..../..../..../oooo",  # o four, o moved first
        "x.../x.../x.../x.oo",  # x four but o moved after it... counts wrong
        "o.../xo../xo../xo.o",  # o four but counts say x moved last
        "x.../xoo./xoo./xoo.",  # x four in a column but o has 6 stones: counts
        "xxxx/oooo/xxxx/oooo",  # both have four
        "12121213",  # move after the game is over
        "x.../x.../x.../x.o.",  # x four with counts ok? (4 x, 1 o) counts wrong
    ],
    "grundy": ["", "+", "7+", "+7", "0", "4+0+3", "-7", "7.0", "8", "4+4", "a", "7=4+3", "1" * 4],
    "nap": [
        "",
        "{",
        "}",
        "{1",
        "1}",
        "{,}",
        "{1,,2}",
        "{0}",
        "{10}",
        "{-1}",
        "{1,1}",
        "{1,2,3}",
        "{2,5,8}",
        "1 2",
        "{a}",
        "{1.5}",
        "{}}",
        "{{}}",
        "{1;2}",
        "9" * 40,
    ],
    "chess": [
        "",
        "w",
        "8/8/8/4k3/8/8/8/R3K3",  # no side to move
        "8/8/8/4k3/8/8/8/R3K3 x - -",  # bad side to move
        "8/8/8/4k3/8/8/8/R3K4 w - -",  # nine files
        "8/8/8/4k3/8/8/R3K3 w - -",  # seven ranks
        "8/8/8/4k3/8/8/8/R3K3 w - - 0 1 2",  # seven fields
        "8/8/8/4k3/8/8/8/R3K3 w - - x 1",  # bad counter
        "8/8/8/4k3/8/8/8/R3K3 w - z9",  # bad en-passant square
        "8/8/8/4k3/8/8/8/R3K3 w K -",  # castling right without its rook
        "8/8/8/4k3/8/8/8/R3K3 w - e3",  # en passant without a pawn
        "8/8/8/8/8/8/8/R3K3 w - -",  # no black king
        "8/8/8/4k3/4k3/8/8/R3K3 w - -",  # two black kings
        "8/8/8/8/8/8/3k4/R3K3 w - -",  # kings adjacent
        "R3k3/8/8/8/8/8/8/4K3 w - -",  # black in check with white to move
        "8/8/8/4k3/8/8/8/1Q2K3 w - -",  # other material (KQvK)
        "8/8/8/4k3/8/8/8/RR2K3 w - -",  # more than the variant's material
        "8/8/8/4k3/8/8/P7/R3K3 w - -",  # a pawn the variant does not have
        "P7/8/8/4k3/8/8/8/4K3 w - -",  # a pawn on the last rank
        "8/8/8/4k3/8/8/8/R3K3 w - - - -",
        "\uff18/8/8/4k3/8/8/8/R3K3 w - -",
    ],
    "e-valuate": [
        "",
        ";",
        "x",
        "x=",
        "x=10",
        "x=a",
        "w=1",
        "X=1",
        "x=1,x=2",
        "x=1;",
        "x=1;proposed=",
        "x=1;proposed=10",
        "x=1;7",
        "x=1,y=2,z=3;proposed=4",  # all instantiated: nothing to propose
        "x=1,,y=2",
        "x=²",
        "x=١",
    ],
    "domino-tiling": [
        "",
        "/",
        ".../..",
        "..../..../....",
        ".../.../...",
        "x../...",  # one covered square
        "x.x/...",  # two squares, not adjacent
        "x../..x",  # a dark and a light square, but not adjacent
        "xo./...",
        "xxx/xxx/",
    ],
    "graph-share": [
        "",
        "0",
        "0=",
        "0=c",
        "0=A",
        "7=a",
        "0-1=a",
        "0=a,0=b",
        "0=a;proposed=c",
        "0=a;a",
        "0=a,1=a,2=a,3=a,4=a,5=a,6=a;proposed=b",  # all coloured
        "0=a,,1=b",
    ],
    "pig": [
        "",
        "0-0",
        "0-0:third:0",
        "0-0:first",
        "0-0 first 0",  # spaces instead of colons
        "100-0:first:0",  # a score at the target
        "0-0:first:1",  # a turn total a 1 never leaves
        "95-0:first:5:rolling",  # the roller has won already
        "0-0:first:200",
        "0-0:first:0:holding",
        "-1-0:first:0",
        "٣-0:first:0",
    ],
    "coin-nim": [
        "",
        "7",
        "7:third",
        "11:first",  # more than n
        "0:first:heads",  # nobody tosses at an empty pile
        "7:first:edge",
        "7:first:heads:tails",
        "7 first",
        "-1:first",
    ],
    "dice-race": [
        "",
        "3-5",
        "3-5:third",
        "11-0:first",  # past the goal
        "10-10:first",  # both at the goal
        "10-3:second:rolling",  # the race is over
        "3-5:first:rolled",
        "3--5:first",
    ],
}


@pytest.mark.parametrize(
    ("name", "text"),
    [(name, text) for name, texts in BAD_POSITIONS.items() for text in texts],
)
def test_bad_positions(name: str, text: str) -> None:
    game = make(name, **BAD_POSITION_PARAMS.get(name, {}))
    with pytest.raises(InvalidPositionError) as info:
        game.parse(text)
    message = str(info.value)
    assert message and "\n" not in message
    assert isinstance(info.value, ValueError)


def test_bad_positions_cover_every_game() -> None:
    assert set(BAD_POSITIONS) == set(GAMES)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("connect-four", {"width": "4", "height": 3, "symmetry": "yes"}),
        ("tic-tac-toe", {}),
        ("number-game", {"root": " 21"}),
        ("chess", {"material": "kbnvk"}),
        ("chess", {"material": "KQvKR", "symmetry": "off"}),
        ("e-valuate", {"expression": " (x) * ((y) - z) ", "digits": "0-3,5"}),
        ("e-valuate", {"expression": "b+a*(c)", "digits": "1,2,3"}),
        ("graph-share", {"graph": "edges:1-0, 2-1,0-2", "mode": "edges", "colors": "3"}),
        ("graph-share", {"graph": " complete-5", "symmetry": "0"}),
        ("domino-tiling", {"rows": "3", "cols": "4"}),
    ],
)
def test_variant_params_are_the_built_games_params(name: str, params: dict[str, object]) -> None:
    # The API looks a variant up by these before building its game (which can be costly).
    cls = find_game(name)
    assert cls.variant_params(params) == cls(**params).params


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("chess", {"material": "KKvK"}),
        ("e-valuate", {"expression": "1+2"}),
        ("e-valuate", {"expression": "x", "digits": "5-1"}),
        ("graph-share", {"graph": "edges:0-0"}),
        ("connect-four", {"width": "11"}),
        ("tic-tac-toe", {"size": "4"}),
    ],
)
def test_variant_params_refuse_what_building_refuses(name: str, params: dict[str, object]) -> None:
    cls = find_game(name)
    with pytest.raises(InvalidParameterError):
        cls.variant_params(params)
    with pytest.raises(InvalidParameterError):
        cls(**params)
