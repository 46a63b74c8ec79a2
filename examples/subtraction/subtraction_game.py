"""A subtraction game: take 1 to `take` counters from a heap; who cannot move loses."""

from __future__ import annotations

from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase, Param


class Subtraction(GameBase):
    """Subtraction game: a heap of counters, each move removes 1 to `take` of them."""

    name: ClassVar[str] = "subtraction"
    description: ClassVar[str] = "Take 1 to `take` counters from a heap; who cannot move loses."
    notation: ClassVar[str] = "the number of counters left, e.g. 21"
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("heap", int, 21, "counters at the start", min=0, max=10_000),
        Param("take", int, 3, "most counters one move removes", min=1, max=100),
    )
    acyclic: ClassVar[bool] = True  # every move removes a counter
    value_range = (-1, 1)  # win or loss for the player to move

    def initial(self) -> int:
        return int(self.params["heap"])

    def children(self, key: int) -> list[tuple[str, int]]:
        most = min(int(self.params["take"]), key)
        return [(str(n), key - n) for n in range(1, most + 1)]

    def terminal_value(self, key: int) -> int | None:
        return -1 if key == 0 else None  # no counter left: the mover has lost

    def parse(self, text: str) -> int:
        if not text.isdigit() or int(text) > int(self.params["heap"]):
            raise InvalidPositionError(f"not a heap of 0 to {self.params['heap']}: {text!r}")
        return int(text)

    def format(self, key: int) -> str:
        return str(key)
