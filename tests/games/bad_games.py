"""Games that break the Game contract on purpose, each in one way, for ``negagraph check``
and the plugin loader (loaded by reference: ``tests/games/bad_games.py:WrongSymmetry``)."""

from __future__ import annotations

import itertools
import os
import time
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from solver.errors import InvalidPositionError
from solver.game import GameBase, Param, PositionKey


class Heap(GameBase):
    """Take 1 to 3 counters from a heap; who cannot move loses (a correct game)."""

    name: ClassVar[str] = "heap"
    description: ClassVar[str] = "take 1 to 3 counters"
    notation: ClassVar[str] = "the counters left"
    parameters: ClassVar[tuple[Param, ...]] = (Param("heap", int, 21, "counters", min=0),)
    acyclic: ClassVar[bool] = True
    value_range = (-1, 1)

    def initial(self) -> PositionKey:
        return int(self.params["heap"])

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        return [(str(n), key - n) for n in range(1, min(3, key) + 1)]

    def terminal_value(self, key: PositionKey) -> int | None:
        return -1 if key == 0 else None

    def parse(self, text: str) -> PositionKey:
        if not text.isdigit():
            raise InvalidPositionError(f"not a heap: {text!r}")
        return int(text)

    def format(self, key: PositionKey) -> str:
        return str(key)


class WrongSymmetry(Heap):
    """Claims heaps 2k and 2k+1 are alike: they are not (21 wins, 20 loses)."""

    name: ClassVar[str] = "wrong-symmetry"
    uses_symmetry = True

    def canonical(self, key: PositionKey) -> PositionKey:
        return key - key % 2


class FakeAcyclic(Heap):
    """Declares acyclic, yet a counter may be put back (below the starting heap)."""

    name: ClassVar[str] = "fake-acyclic"

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        moves = super().children(key)
        if 0 < key < int(self.params["heap"]):
            moves.append(("+1", key + 1))
        return moves


class OutOfRange(Heap):
    """Declares values in [-1, 1] but a heap of 0 is worth -2."""

    name: ClassVar[str] = "out-of-range"

    def terminal_value(self, key: PositionKey) -> int | None:
        return -2 if key == 0 else None


class Restless(Heap):
    """Its children change from call to call."""

    name: ClassVar[str] = "restless"
    _calls = itertools.count()

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        moves = super().children(key)
        return moves[::-1] if key == 7 and next(self._calls) % 2 else moves


class BadNotation(Heap):
    """Writes heap 5 as "6"."""

    name: ClassVar[str] = "bad-notation"

    def format(self, key: PositionKey) -> str:
        return "6" if key == 5 else str(key)


class Crashing(Heap):
    """Its children raise at heap 5."""

    name: ClassVar[str] = "crashing"

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        if key == 5:
            raise ValueError("no moves from 5 today")
        return super().children(key)


class Unfinished(GameBase):
    """Forgets children, terminal_value, parse and format."""

    name: ClassVar[str] = "unfinished"

    def initial(self) -> PositionKey:
        return 0


NotAGame = 42
"""Not a class at all."""


class BadFacts(Heap):
    """Declares a value range upside down."""

    name: ClassVar[str] = "bad-facts"
    value_range = (1, -1)


class TicTacToeAgain(Heap):
    """Takes the name of a built-in game."""

    name: ClassVar[str] = "tic-tac-toe"


class TieredHeap(Heap):
    """A correct game with tiers: the heap's blocks of four counters (a move of 1-3 stays
    in its block or enters the next one down)."""

    name: ClassVar[str] = "tiered-heap"
    tiers: ClassVar[bool] = True

    def tier(self, key: PositionKey) -> int:
        return key // 4

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier - 1,) if tier > 0 else ()

    def tier_positions(self, tier: int) -> range:
        return range(4 * tier, 4 * tier + 4)


class SkippingTiers(TieredHeap):
    """Says a block's moves lead two blocks down."""

    name: ClassVar[str] = "skipping-tiers"

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier - 2,) if tier > 1 else ()


class CyclicTiers(TieredHeap):
    """Says a block's moves may lead up a block too: the tiers form a cycle."""

    name: ClassVar[str] = "cyclic-tiers"

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier - 1, tier + 1) if 0 < tier < 6 else ()


class WrongTierPositions(TieredHeap):
    """Lists one position too many in each tier (the next block's first)."""

    name: ClassVar[str] = "wrong-tier-positions"

    def tier_positions(self, tier: int) -> range:
        return range(4 * tier, 4 * tier + 5)


class UnnamedTiers(TieredHeap):
    """Names its odd tiers with an empty string."""

    name: ClassVar[str] = "unnamed-tiers"

    def tier_name(self, tier: int) -> str:
        return "" if tier % 2 else f"block {tier}"


class WrongTiersBatch(TieredHeap):
    """Its batched tiers put a block's last heap (4t+3) in the block above."""

    name: ClassVar[str] = "wrong-tiers-batch"

    def tiers_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        out: npt.NDArray[np.int64] = (keys + 1) // 4
        return out


class WrongFormatBatch(Heap):
    """Its batched notation writes heap 7 as 8 (and every text it writes as bytes)."""

    name: ClassVar[str] = "wrong-format-batch"

    def format_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.bytes_] | None:
        texts = [self.format(int(k) + 1 if k == 7 else int(k)).encode() for k in keys]
        return np.array(texts, dtype=np.bytes_)


class TiersWithoutHooks(Heap):
    """Declares tiers but implements none of their hooks."""

    name: ClassVar[str] = "tiers-without-hooks"
    tiers: ClassVar[bool] = True


class TiersOfContractOne(TieredHeap):
    """Declares tiers while saying it was written for contract 1, which had none."""

    name: ClassVar[str] = "tiers-of-contract-one"
    contract: ClassVar[int] = 1


class EndlessTiers(TieredHeap):
    """Numbers its blocks upwards from the starting heap (the counters taken, by fours)
    and says each block's moves may lead to the next one, without end: the game is
    finite, its child-tier relation is not."""

    name: ClassVar[str] = "endless-tiers"

    def tier(self, key: PositionKey) -> int:
        return (int(self.params["heap"]) - key) // 4

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier + 1,)

    def tier_positions(self, tier: int) -> range:
        top = int(self.params["heap"]) - 4 * tier
        return range(max(0, top - 3), max(0, top + 1))


class SlowEndlessTiers(EndlessTiers):
    """:class:`EndlessTiers` taking two milliseconds to list a tier's child tiers: a
    walk of its relation up to 100,000 tiers would take minutes."""

    name: ClassVar[str] = "slow-endless-tiers"

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        time.sleep(0.002)
        return super().child_tiers(tier)


class OutOfRangeTiers(TieredHeap):
    """Declares values in [-1, 1] but a heap of 0 is worth 2."""

    name: ClassVar[str] = "out-of-range-tiers"

    def terminal_value(self, key: PositionKey) -> int | None:
        return 2 if key == 0 else None


class FickleTiers(TieredHeap):
    """Its moves change between calls: on every other call, the starting heap may also
    take a counter back (a heap of 22, in the same block, that the first call does not
    show)."""

    name: ClassVar[str] = "fickle-tiers"
    _calls = itertools.count()

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        moves = super().children(key)
        if key == int(self.params["heap"]) and next(self._calls) % 2:
            moves.append(("+1", key + 1))
        return moves


class ChangedTiers(TieredHeap):
    """Its starting heap may also take five counters when ``$NEGAGRAPH_TEST_RULES_CHANGED``
    is set: its rules change from one process to the next, under the same version (the
    next block's positions are found in another order)."""

    name: ClassVar[str] = "changed-tiers"

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        moves = super().children(key)
        if key == int(self.params["heap"]) and os.environ.get("NEGAGRAPH_TEST_RULES_CHANGED"):
            moves.append(("5", key - 5))
        return moves


class SingleTiers(Heap):
    """A correct game with tiers: each heap its own tier."""

    name: ClassVar[str] = "single-tiers"
    tiers: ClassVar[bool] = True

    def tier(self, key: PositionKey) -> int:
        return key

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return tuple(range(max(0, tier - 3), tier))[::-1]


class FicklePass(SingleTiers):
    """On every other call, the starting heap may also pass (a move within its tier,
    where the first call shows none)."""

    name: ClassVar[str] = "fickle-pass"
    _calls = itertools.count()

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        moves = super().children(key)
        if key == int(self.params["heap"]) and next(self._calls) % 2:
            moves.append(("pass", key))
        return moves


class FickleUp(SingleTiers):
    """On every other call, the starting heap may also take a counter back (to a tier
    that the first call does not show, and that its child tiers do not list)."""

    name: ClassVar[str] = "fickle-up"
    _calls = itertools.count()

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        moves = super().children(key)
        if key == int(self.params["heap"]) and next(self._calls) % 2:
            moves.append(("+1", key + 1))
        return moves


class EvaluatedHeap(Heap):
    """The heap game with a correct evaluation (the exact value: a multiple of 4 loses)
    and its batched form."""

    name: ClassVar[str] = "evaluated-heap"

    def evaluate(self, key: PositionKey) -> int:
        return -1 if key % 4 == 0 else 1

    def evaluate_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        return np.where(keys % 4 == 0, -1, 1).astype(np.int64)


class EvaluationOutOfRange(EvaluatedHeap):
    """Estimates heap 5 at 2, outside the declared value range (-1, 1)."""

    name: ClassVar[str] = "evaluation-out-of-range"

    def evaluate(self, key: PositionKey) -> int:
        return 2 if key == 5 else super().evaluate(key)

    def evaluate_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        return None


class RestlessEvaluation(EvaluatedHeap):
    """Its estimate of heap 7 changes from call to call."""

    name: ClassVar[str] = "restless-evaluation"

    def _configure(self) -> None:
        self._flips = itertools.cycle((1, 0))

    def evaluate(self, key: PositionKey) -> int:
        return next(self._flips) if key == 7 else super().evaluate(key)

    def evaluate_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        return None


class WrongAtTerminal(EvaluatedHeap):
    """Estimates the empty heap, where the player to move has lost (-1), at 0."""

    name: ClassVar[str] = "wrong-at-terminal"

    def evaluate(self, key: PositionKey) -> int:
        return 0 if key == 0 else super().evaluate(key)

    def evaluate_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        return None


class WrongEvaluateBatch(EvaluatedHeap):
    """Its batched evaluation says 0 of heap 9, the per-position one 1."""

    name: ClassVar[str] = "wrong-evaluate-batch"

    def evaluate_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        out = super().evaluate_batch(keys)
        assert out is not None
        out[keys == 9] = 0
        return out


class CrashingEvaluation(EvaluatedHeap):
    """Its evaluation raises at heap 3."""

    name: ClassVar[str] = "crashing-evaluation"

    def evaluate(self, key: PositionKey) -> int:
        if key == 3:
            raise ZeroDivisionError("heap 3")
        return super().evaluate(key)


class EvaluationOfContractThree(EvaluationOutOfRange):
    """Written for Game contract 3, before the evaluation: its ``evaluate`` (out of range
    at heap 5) is never asked."""

    name: ClassVar[str] = "evaluation-of-contract-three"
    contract: ClassVar[int] = 3
