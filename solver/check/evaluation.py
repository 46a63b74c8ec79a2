"""The evaluation's promises (:mod:`solver.evaluation`), checked on sampled positions:
an integer within the declared ``value_range``, the same answer twice (and in another
instance of the variant), the exact value at a terminal position, and a batched form
that answers as the per-position hook does. Every violation is of the check
``evaluate``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solver.check.base import INT64, Violation, first_of, witness
from solver.evaluation import EVALUATION_CONTRACT, BatchedEvaluates, Evaluates, evaluation_of
from solver.game import Game, GameBase, GameFacts, PositionKey


def evaluation_problems(
    rules: Evaluates,
    key: PositionKey,
    terminal: int | None,
    facts: GameFacts,
    other: Evaluates | None = None,
) -> list[str]:
    """What breaks the evaluation's promises at *key*, whose terminal value is
    *terminal*; *other* is another instance of the variant, if any."""
    value = rules.evaluate(key)
    if not isinstance(value, int) or isinstance(value, bool):
        return [f"evaluate() is {value!r}, not an integer"]
    out = []
    low, high = facts.value_range or (value, value)
    if not low <= value <= high:
        out.append(f"evaluate() is {value}, outside the declared value_range {facts.value_range}")
    again = rules.evaluate(key)
    if again != value:
        out.append(f"evaluate() gave {value}, then {again!r} on a second call")
    elif other is not None and (theirs := other.evaluate(key)) != value:
        out.append(f"evaluate() gives {value}, another instance of the variant {theirs!r}")
    if terminal is not None and value != terminal:
        out.append(f"evaluate() is {value} at a terminal position whose value is {terminal}")
    return out


def check_evaluate_batch(game: Game, keys: Sequence[PositionKey]) -> list[Violation]:
    """``evaluate_batch`` of the sampled *keys* (those that fit 64 bits) gives what
    ``evaluate`` does, when the game has both (a ``None`` answer offers nothing)."""
    rules = evaluation_of(game)
    fit = [k for k in keys if k in INT64]
    if rules is None or not isinstance(rules, BatchedEvaluates) or not fit:
        return []
    try:
        found = rules.evaluate_batch(np.array(fit, dtype=np.int64))
        if found is None:
            return []
        values = np.asarray(found).tolist()
    except Exception as e:
        return [Violation("evaluate", f"evaluate_batch raised {type(e).__name__}: {e}", "-")]
    if len(values) != len(fit):
        message = f"evaluate_batch of {len(fit)} keys gives {len(values)} values"
        return [Violation("evaluate", message, "-")]
    wrong = []
    for k, v in zip(fit, values, strict=True):
        one = _safe_evaluate(rules, k)
        if one is not None and v != one:
            wrong.append((k, f"evaluate_batch gives {v} where evaluate() gives {one}"))
    return first_of(game, "evaluate", wrong)


def _safe_evaluate(rules: Evaluates, key: PositionKey) -> int | None:
    """``evaluate(key)``, or ``None`` if it raises (reported per position already)."""
    try:
        return rules.evaluate(key)
    except Exception:
        return None


def ignored_evaluation(game: Game) -> str | None:
    """A note when *game* has an ``evaluate`` that is never used because its class is
    written for a contract before :data:`~solver.evaluation.EVALUATION_CONTRACT`."""
    if isinstance(game, Evaluates) and evaluation_of(game) is None and isinstance(game, GameBase):
        return (
            f"evaluate() is not used: the game is written for Game contract {game.contract}, "
            f"and the evaluation came with contract {EVALUATION_CONTRACT}"
        )
    return None


def evaluation_violations(
    game: Game,
    key: PositionKey,
    terminal: int | None,
    facts: GameFacts,
    other: Game | None,
) -> list[Violation]:
    """:func:`evaluation_problems` at *key* as violations (none if *game* has no
    evaluation)."""
    rules = evaluation_of(game)
    if rules is None:
        return []
    mirror = None if other is None else evaluation_of(other)
    try:
        problems = evaluation_problems(rules, key, terminal, facts, mirror)
    except Exception as e:
        problems = [f"evaluate() raised {type(e).__name__}: {e}"]
    return [Violation("evaluate", p, witness(game, key)) for p in problems]


__all__ = [
    "check_evaluate_batch",
    "evaluation_problems",
    "evaluation_violations",
    "ignored_evaluation",
]
