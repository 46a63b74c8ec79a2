"""GET /api/games/<game>/line: principal lines, followed against every opponent reply."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.api.helpers import assert_error

FLIP = {"low": "high", "high": "low"}


def line(client: FlaskClient, game: str, p: str, **args: Any) -> tuple[int, Any]:
    r = client.get(f"/api/games/{game}/line", query_string={"p": p, **args})
    assert r.mimetype == "application/json"
    return r.status_code, r.get_json()


def position(client: FlaskClient, game: str, p: str, **params: Any) -> Any:
    r = client.get(f"/api/games/{game}/positions", query_string={"p": p, **params})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def test_line_shape(client: FlaskClient) -> None:
    status, body = line(client, "number-game", "13")
    assert status == 200
    assert set(body) == {"game", "params", "bound", "max_plies", "start", "steps", "plies", "end"}
    # the default line realises the value: here (no rule for endless play, low < high)
    # the low line
    assert body["bound"] == "value" and body["end"] == "terminal"
    assert body["steps"] == line(client, "number-game", "13", bound="low")[1]["steps"]
    start = body["start"]
    assert start["position"] == "13" and (start["low"], start["high"]) == (3, 5)
    assert body["plies"] == len(body["steps"]) >= 1
    assert [s["ply"] for s in body["steps"]] == list(range(1, body["plies"] + 1))
    assert [s["bound"] for s in body["steps"]] == [
        ("low", "high")[i % 2] for i in range(body["plies"])
    ]
    last = body["steps"][-1]
    assert last["state"] == "terminal"
    # The game ends on the starting mover's move here or on the opponent's.
    mover_value = last["value"] if body["plies"] % 2 == 0 else -last["value"]
    assert mover_value >= 3
    assert body["plies"] <= start["depth_low"]


def test_line_steps_are_moves_of_the_previous_position(client: FlaskClient) -> None:
    status, body = line(client, "tic-tac-toe", "x........", bound="high")
    assert status == 200
    here = body["start"]["position"]
    for step in body["steps"]:
        moves = {m["move"]: m for m in position(client, "tic-tac-toe", here)["moves"]}
        assert moves[step["move"]]["position"] == step["position"]
        for field in ("low", "high", "depth_low", "depth_high", "state"):
            assert moves[step["move"]][field] == step[field]
        here = step["position"]


def test_symmetric_variant_labels_follow_the_asked_orientation(client: FlaskClient) -> None:
    # With symmetry the database stores one representative per class; the line must
    # still be played from the position as asked, with moves legal there.
    for p in ("..x/.../...", ".../.../x..", "o.x/.x./..."):
        status, sym = line(client, "tic-tac-toe", p, symmetry="true")
        assert status == 200
        here = sym["start"]["position"]
        assert here == position(client, "tic-tac-toe", p)["position"]
        for step in sym["steps"]:
            moves = {
                m["move"]: m["position"]
                for m in position(client, "tic-tac-toe", here, symmetry="true")["moves"]
            }
            assert moves[step["move"]] == step["position"]
            here = step["position"]
        assert sym["end"] == "terminal"


def test_max_plies_cuts_the_line(client: FlaskClient) -> None:
    status, body = line(client, "tic-tac-toe", ".........", max_plies=2)
    assert status == 200
    assert body["plies"] == 2 and body["end"] == "max_plies" and body["max_plies"] == 2
    status, body = line(client, "tic-tac-toe", ".........", max_plies=0)
    assert status == 200 and body["steps"] == [] and body["end"] == "max_plies"


def test_line_from_a_terminal_or_unexpanded_position(client: FlaskClient) -> None:
    status, body = line(client, "tic-tac-toe", "xxx/oo./...")
    assert status == 200 and body["steps"] == [] and body["end"] == "terminal"
    status, body = line(client, "number-game", "59")
    assert status == 200 and body["steps"] == [] and body["end"] == "unexpanded"


def test_an_infinite_bound_line_never_repeats(client: FlaskClient) -> None:
    # 57 is expanded but its low bound depends on the frontier: the line walks towards
    # unexplored positions or stops rather than going round a cycle.
    for p in ("57", "55", "15", "9"):
        for bound in ("low", "high"):
            status, body = line(client, "number-game", p, bound=bound)
            assert status == 200
            seen = [body["start"]["position"]] + [s["position"] for s in body["steps"]]
            assert len(seen) == len(set(seen))
            assert body["end"] in ("terminal", "unexpanded", "repetition")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"bound": "middle"}, "'bound' must be one of value, low, high"),
        ({"max_plies": "many"}, "'max_plies' must be an integer"),
        ({"max_plies": -1}, "between 0 and 1000"),
        ({"max_plies": 10**30}, "must be an integer"),
        ({"max_plies": 1001}, "between 0 and 1000"),
        ({"depth": 3}, "unknown parameter 'depth'"),
    ],
)
def test_bad_line_arguments_are_400(
    client: FlaskClient, args: dict[str, Any], fragment: str
) -> None:
    assert_error(*line(client, "tic-tac-toe", ".........", **args), 400, fragment)


def test_line_errors(client: FlaskClient) -> None:
    assert_error(*line(client, "go", "x"), 404, "unknown game")
    assert_error(*line(client, "tic-tac-toe", "x"), 400, "invalid tic-tac-toe position")
    assert_error(*line(client, "number-game", "63"), 404, "not in the database")
    r = client.get("/api/games/tic-tac-toe/line")
    assert_error(r.status_code, r.get_json(), 400, "missing query parameter 'p'")


# -- following a line against every reply ---------------------------------------------------


class Follower:
    """Plays the line endpoint's first move for one side at every turn of that side, and
    every legal reply for the other side, checking DESIGN §4's guarantee: the game ends, at
    a terminal worth at least the starting bound for the side, within its depth, and no
    position repeats along any path."""

    def __init__(self, client: FlaskClient, game: str, params: dict[str, Any]) -> None:
        self.client = client
        self.game = game
        self.params = params
        self.done: dict[tuple[str, str], int] = {}
        self.path: list[str] = []
        self.answers: dict[tuple[str, str, str], Any] = {}

    @property
    def requests(self) -> int:
        return len(self.answers)

    def get(self, kind: str, p: str, **args: Any) -> Any:
        key = (kind, p, repr(sorted(args.items())))
        if key not in self.answers:
            r = self.client.get(
                f"/api/games/{self.game}/{kind}", query_string={"p": p, **self.params, **args}
            )
            assert r.status_code == 200, r.get_json()
            self.answers[key] = r.get_json()
        return self.answers[key]

    def follow(self, p: str, bound: str, target: int) -> int:
        """Plies until the game ends from *p* (the side to move realises *bound*, whose
        value must be at least *target*), against every reply; the longest path."""
        key = (p, bound)
        if key in self.done:
            return self.done[key]
        assert p not in self.path, f"loop: {self.path + [p]}"
        self.path.append(p)
        body = self.get("line", p, bound=bound)
        start = body["start"]
        assert start[bound] is not None and start[bound] >= target, (p, start)
        depth = start[f"depth_{bound}"]
        if start["state"] == "terminal":
            assert body["end"] == "terminal" and body["steps"] == []
            assert start["value"] >= target
            plies = 0
        else:
            assert body["end"] == "terminal", (p, body["end"])
            first = body["steps"][0]
            assert first["bound"] == bound
            reply_side = self.get("line", first["position"], bound=FLIP[bound])
            # The opponent's own line from there plays for the flipped bound, worth the
            # negation of ours.
            assert reply_side["start"][FLIP[bound]] == -start[bound]
            assert not reply_side["steps"] or reply_side["steps"][0]["bound"] == FLIP[bound]
            if first["state"] == "terminal":
                assert -first["value"] >= target
                plies = 1
            else:
                assert p != first["position"] and first["position"] not in self.path
                self.path.append(first["position"])
                replies = self.get("positions", first["position"])["moves"]
                assert replies
                plies = 0
                for reply in replies:
                    plies = max(plies, 2 + self.follow(reply["position"], bound, target))
                self.path.pop()
        if bound == "low":
            # depth_low bounds the plies against every reply; depth_high is how long the
            # opponent can resist, not a bound on how long the high strategy takes.
            assert plies <= depth, (p, plies, depth)
        self.path.pop()
        self.done[key] = plies
        return plies


@pytest.mark.parametrize("bound", ["low", "high"])
def test_tic_tac_toe_lines_hold_against_every_reply(client: FlaskClient, bound: str) -> None:
    follower = Follower(client, "tic-tac-toe", {})
    start = follower.get("positions", ".........")
    plies = follower.follow(".../.../...", bound, start[bound])
    assert plies <= 9 and (bound == "high" or plies <= start["depth_low"])
    # The second player too, from every first move.
    for m in start["moves"]:
        follower.follow(m["position"], bound, m[bound])


def test_number_game_low_line_holds_against_every_reply(client: FlaskClient) -> None:
    follower = Follower(client, "number-game", {})
    plies = follower.follow("13", "low", 3)
    assert 0 < plies <= follower.get("positions", "13")["depth_low"]
    assert len(follower.done) > 3


def test_connect_four_lines_hold_against_every_reply(client: FlaskClient) -> None:
    follower = Follower(client, "connect-four", {"width": 4, "height": 3})
    follower.follow("..../..../....", "low", 0)
    assert follower.requests > 100
