"""The discovery sweep of a tiered full solve (:mod:`solver.tiers.solve`): finding a tier's
positions, breadth first from the keys its parent tiers found (:class:`TierDiscovery`),
and the keys found for tiers not discovered yet, which wait in RAM (:class:`Found`) or
are found again when a run resumes.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from solver.errors import ContractError, SolveError
from solver.expand import KeyIndex, Moves, terminal_values
from solver.game import Game, PositionKey, TieredRules
from solver.store import TierNodes, TierRecord, TierStore
from solver.tiers.units import expand_keys, tiers_of

DISCOVERY_BATCH = 1 << 17
"""Positions expanded at a time while discovering a tier, at most: batches start at
:data:`FIRST_DISCOVERY_BATCH` and double while one takes less than a quarter of
:data:`DISCOVERY_REPORT` (the batch size does not change what is found, or its order)."""

FIRST_DISCOVERY_BATCH = 1024

DISCOVERY_REPORT = 2.0
"""Seconds between the progress reports of a tier's discovery (positions found and
expanded so far): a large tier takes minutes with per-position rules."""


class Found:
    """Positions of one tier in order of discovery (their index is their place), with
    each one's least distance from the root found so far: the keys found for a tier not
    discovered yet, then the tier being discovered."""

    def __init__(self) -> None:
        self.index: KeyIndex | None = KeyIndex(array("q"))
        self.keys = np.zeros(1024, np.int64)
        self.dist = np.zeros(1024, np.int32)
        self.count = 0

    def drop_index(self) -> None:
        """Free the key index (16-32 bytes a key): a tier being discovered is added to
        only by its moves within it, which most tiered games (connect-four's) have none
        of; :meth:`add` builds it again from the keys if one comes."""
        self.index = None

    def add(self, keys: npt.NDArray[np.int64], dist: npt.NDArray[np.int32]) -> int:
        """Add *keys* found at distances *dist*; returns how many were new."""
        if self.index is None:
            self.index = KeyIndex(array("q", self.keys[: self.count].tobytes()))
        ids, new, _ = self.index.resolve(keys, self.count)
        end = self.count + int(new.size)
        if end > self.keys.size:
            size = max(end, 2 * self.keys.size)
            self.keys = np.resize(self.keys, size)
            self.dist = np.resize(self.dist, size)
        self.keys[self.count : end] = new
        self.dist[self.count : end] = np.iinfo(np.int32).max
        np.minimum.at(self.dist, ids, dist)
        self.count = end
        return int(new.size)


@dataclass(frozen=True)
class Seeds:
    """The game's tablebase positions (:meth:`~solver.game.Game.tablebase_positions`)."""

    keys: npt.NDArray[np.int64]
    tiers: list[int]


def list_seeds(game: Game, tell: Callable[[str], None]) -> Seeds:
    """The game's tablebase positions (canonical), and their tiers; *tell* hears how
    many are listed so far, every :data:`DISCOVERY_REPORT` seconds at most.

    :raises SolveError: if a key does not fit 64 bits."""
    listed = game.tablebase_positions()
    if listed is None:
        return Seeds(np.zeros(0, np.int64), [])
    canon = game.canonical if game.uses_symmetry else None
    keys: list[PositionKey] = []
    told = time.monotonic()
    for key in listed:
        keys.append(canon(key) if canon is not None else key)
        if len(keys) % 4096 == 0 and time.monotonic() - told >= DISCOVERY_REPORT:
            told = time.monotonic()
            tell(f"listing the game's tablebase positions: {len(keys):,}")
    try:
        array = np.array(keys, dtype=np.int64)
    except OverflowError:
        raise SolveError(
            f"{game.name}: a position's key does not fit 64 bits, which a tiered "
            "solve needs: solve it with --no-tiers"
        ) from None
    return Seeds(array, tiers_of(game, array).tolist())


def listed_tiers(rules: TieredRules, tiers: list[int]) -> str:
    """*tiers* by name, for a message (the first eight)."""
    shown = ", ".join(rules.tier_name(t) for t in tiers[:8])
    return shown + (", ..." if len(tiers) > 8 else "") if tiers else "none"


class TierDiscovery:
    """Finds the positions of a game's tiers, a tier at a time, telling how far it is
    (*tell*) and letting the run sample its memory after each batch (*sample*)."""

    def __init__(
        self,
        game: Game,
        rules: TieredRules,
        *,
        tell: Callable[[str], None],
        sample: Callable[[], None],
    ) -> None:
        self.game = game
        self.rules = rules
        self.tell = tell
        self.sample = sample
        self.batch = FIRST_DISCOVERY_BATCH
        """Positions expanded at a time (grows up to DISCOVERY_BATCH)."""

    def _moves(self, keys: npt.NDArray[np.int64]) -> Moves:
        return expand_keys(self.game, keys)

    def pending_after_resume(
        self,
        store: TierStore,
        records: Sequence[TierRecord],
        undiscovered: set[int],
        roots: Seeds,
    ) -> dict[int, Found]:
        """The keys waiting for the tiers *undiscovered*: those of *roots* (the root,
        then the game's tablebase positions, at distance 0) in them; and the keys found
        again by expanding the stored tiers (*records*) that lead to one, in discovery
        order (so in the same order as the run that found them)."""
        pending: dict[int, Found] = {}
        tiers = np.array(roots.tiers, dtype=np.int64)
        for tier in dict.fromkeys(roots.tiers):
            if tier in undiscovered:
                mask = tiers == tier
                pending.setdefault(tier, Found()).add(
                    roots.keys[mask], np.zeros(int(mask.sum()), np.int32)
                )
        for record in records:
            if undiscovered.intersection(self.rules.child_tiers(record.tier)):
                self._expand_again(store, record, undiscovered, pending)
        return pending

    def _expand_again(
        self,
        store: TierStore,
        record: TierRecord,
        undiscovered: set[int],
        pending: dict[int, Found],
    ) -> None:
        """Add to *pending* the keys of tiers *undiscovered* that the stored tier
        *record*'s moves reach."""
        self.tell(f"resuming: expanding tier {self.rules.tier_name(record.tier)} again")
        nodes = store.tier_nodes(record)
        # In the order the discovery expanded them: by distance, then id.
        live = np.flatnonzero(~nodes.terminal)
        live = live[np.argsort(nodes.dist[live], kind="stable")]
        for start in range(0, live.size, DISCOVERY_BATCH):
            at = live[start : start + DISCOVERY_BATCH]
            moves = self._moves(nodes.keys[at])
            child_tiers = tiers_of(self.game, moves.keys)
            dist = np.repeat(nodes.dist[at], moves.counts).astype(np.int32) + 1
            for tier in np.unique(child_tiers).tolist():
                if tier in undiscovered:
                    mask = child_tiers == tier
                    pending.setdefault(tier, Found()).add(moves.keys[mask], dist[mask])

    def discover(self, tier: int, pending: dict[int, Found]) -> tuple[TierNodes, bool, int]:
        """Find every position of *tier*: the tier's positions, whether a move stays
        within it, and how many positions were expanded (the keys found for other tiers
        go to *pending*).

        Breadth first by distance from the root, level by level (the keys its parent
        tiers found may lie at several distances, and a move within the tier may reach
        one of them sooner), so each position's distance is the least, as in an
        untiered breadth-first solve; within a level, in order of discovery."""
        name = self.rules.tier_name(tier)
        self.tell(f"discovering tier {name}")
        told = time.monotonic()
        found = pending.pop(tier, None) or Found()
        found.drop_index()
        children = set(self.rules.child_tiers(tier))
        inner = False
        expanded = 0
        terminal = np.zeros(found.keys.size, bool)
        value = np.zeros(found.keys.size, np.int64)
        done = np.zeros(found.keys.size, bool)
        while True:
            left = np.flatnonzero(~done[: found.count])
            if not left.size:
                break
            level = int(found.dist[left].min())
            todo = left[found.dist[left] == level]
            start = 0
            while start < todo.size:
                began = time.monotonic()
                at = todo[start : start + self.batch]
                start += at.size
                keys = found.keys[at]
                term, val = terminal_values(self.game, keys)
                terminal[at] = term
                value[at] = val
                done[at] = True
                live = at[~term]
                if not live.size:
                    continue
                moves = self._moves(found.keys[live])
                self.sample()
                expanded += int(live.size)
                child_tiers = tiers_of(self.game, moves.keys)
                dist = np.full(moves.keys.size, level + 1, np.int32)
                same = child_tiers == tier
                inner = inner or bool(same.any())
                if same.any() and found.add(moves.keys[same], dist[same]):
                    size = found.keys.size
                    if size > terminal.size:
                        terminal = np.resize(terminal, size)
                        value = np.resize(value, size)
                        done = np.concatenate([done, np.zeros(size - done.size, bool)])
                for child in np.unique(child_tiers[~same]).tolist():
                    mask = child_tiers == child
                    if child not in children:
                        self._wrong_tier(tier, child, found.keys[live], moves, mask)
                    pending.setdefault(child, Found()).add(moves.keys[mask], dist[mask])
                now = time.monotonic()
                if now - began < DISCOVERY_REPORT / 4:  # fast rules: larger batches
                    self.batch = min(2 * self.batch, DISCOVERY_BATCH)
                if now - told >= DISCOVERY_REPORT:
                    told = now
                    self.tell(
                        f"discovering tier {name}: {found.count:,} positions, "
                        f"{int(done[: found.count].sum()):,} expanded"
                    )
        count = found.count
        nodes = TierNodes(
            found.keys[:count].copy(),
            found.dist[:count].copy(),
            terminal[:count].copy(),
            value[:count].copy(),
        )
        self.sample()
        return nodes, inner, expanded

    def _wrong_tier(
        self,
        tier: int,
        child: int,
        parents: npt.NDArray[np.int64],
        moves: Moves,
        mask: npt.NDArray[np.bool_],
    ) -> None:
        j = int(np.argmax(mask))
        parent = int(parents[np.searchsorted(np.cumsum(moves.counts), j, side="right")])
        game = self.game
        name = self.rules.tier_name(tier)
        raise ContractError(
            f"{game.name}: the move {moves.names[int(moves.labels[j])]!r} from "
            f"{game.format(parent)!r} (tier {name}) leads to {game.format(int(moves.keys[j]))!r}"
            f" in tier {self.rules.tier_name(child)}, which is not one of tier {name}'s child "
            "tiers "
            f"({listed_tiers(self.rules, list(self.rules.child_tiers(tier)))})"
        )


__all__ = [
    "DISCOVERY_BATCH",
    "DISCOVERY_REPORT",
    "FIRST_DISCOVERY_BATCH",
    "Found",
    "Seeds",
    "TierDiscovery",
    "list_seeds",
    "listed_tiers",
]
