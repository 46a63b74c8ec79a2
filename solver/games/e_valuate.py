"""e-Valuate (Aravamuthan & Ganguly, seed 003): MAX proposes digits, MIN places them.

The game is played on an arithmetic expression over single-letter variables, integers,
``+``, ``-``, ``*`` and parentheses. MAX moves first and, at each turn, proposes a value
from the domain (the digits 0-9 by default); MIN substitutes it for an uninstantiated
variable of his choice. As in the paper, MIN picks a *variable*, not an occurrence: a
variable that occurs several times is replaced everywhere at once (``E|x=d``), so the game
lasts ``2 n(E)`` plies for ``n(E)`` distinct variables. When every variable is instantiated
the expression's value is the result; MAX maximises it, MIN minimises it.

Moves: MAX's proposals are listed from the largest value down (a maximiser's natural
first guess, which makes depth-first searches cut sooner; ``docs/pruning.md`` measures it),
MIN's choices in alphabetical order of the variables.

Variables are numbered in alphabetical order (upper case before lower case). Key: bit
fields of width ``w = D.bit_length()`` for ``D`` domain values. Field 0 (the low bits) is
the pending proposal, fields ``1..n`` the variables; a field holds 0 (nothing) or ``1 + i``
for the ``i``-th smallest domain value. MIN is to move exactly when a proposal is pending.
Every game ends after MIN's last substitution, so terminal positions have MAX to move and
are worth ``+E`` to him (negamax convention: values are from the mover's view).

Symmetry (``symmetry=true``): permutations of the variables that leave the expression
unchanged up to commutativity and associativity of ``+`` and ``*`` (subtraction is read as
adding a negated term), found by comparing a normal form of the expression tree. Such a
permutation maps positions to positions of equal value and is an automorphism of the
game. With at most :data:`BRUTE_FORCE_VARIABLES` variables every permutation is tried;
beyond that only swaps of two variables are (so, e.g., the simultaneous swap
``a<->c, b<->d`` of ``a*b+c*d`` is found only with few variables). A group that only
permutes classes of interchangeable variables is applied by sorting each class's values;
any other by taking the smallest image (:mod:`solver.games._fields`).

The parameters are normalised when the game is built — the expression to its shortest
text with the same tree, the digits to sorted ranges — so equal variants compare equal.
``value_range`` bounds every position's value, by interval arithmetic over the domain.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeAlias

from solver.errors import InvalidParameterError, InvalidPositionError
from solver.game import Param, ParamValue, PositionKey
from solver.games._fields import Canonical, FieldGame, FieldGroup, FieldSorter, FieldWords

logger = logging.getLogger(__name__)

DEFAULT_EXPRESSION = "x*(y-z)"
"""The paper's introductory example, ``E = x(y - z)``, whose minimax value is 18."""

MAX_EXPRESSION_LENGTH = 500
"""Longest expression text accepted."""
MAX_NESTING = 50
"""Deepest nesting of parentheses and unary minus accepted."""
MAX_DIGIT = 99
"""Largest domain value."""
MAX_ABS_VALUE = 1 << 53
"""Largest absolute value an expression may reach over its domain (values are stored as
exact integers by the solver and the database, and sent as JSON numbers)."""
BRUTE_FORCE_VARIABLES = 7
"""Up to this many variables, every variable permutation is tested for symmetry."""
GROUP_CAP = 2000
"""Largest explicit symmetry group used for canonical keys (else: interchangeable classes)."""

Node: TypeAlias = tuple[Any, ...]
"""An expression tree: ``("num", n)``, ``("var", i)``, ``("neg", a)`` or ``(op, a, b)``
for ``op`` in ``+ - *``."""

_OPS = "+-*"
_SYMMETRY_CACHE: dict[tuple[str, int], Canonical] = {}
"""Canonical-key functions by (normalised expression, field width), shared by instances."""
_ASSIGNMENT = re.compile(r"^([A-Za-z])=(\?|[0-9]{1,3})$")


# -- expressions ----------------------------------------------------------------------


class _Parser:
    """Recursive descent over the expression text; errors name a 1-based position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, position)
        self.i = 0
        self.depth = 0
        self._tokenize()

    def fail(self, message: str) -> InvalidParameterError:
        return InvalidParameterError(f"bad expression {self.text!r}: {message}")

    def _tokenize(self) -> None:
        text = self.text
        i = 0
        while i < len(text):
            ch = text[i]
            if ch in " \t":
                i += 1
            elif ch.isascii() and ch.isalpha():
                self.tokens.append(("var", ch, i + 1))
                i += 1
            elif ch.isascii() and ch.isdigit():
                j = i
                while j < len(text) and text[j].isascii() and text[j].isdigit():
                    j += 1
                if j - i > 6:
                    raise self.fail(f"number at position {i + 1} has more than 6 digits")
                self.tokens.append(("num", text[i:j], i + 1))
                i = j
            elif ch in _OPS or ch in "()":
                self.tokens.append((ch, ch, i + 1))
                i += 1
            else:
                raise self.fail(
                    f"invalid character {ch!r} at position {i + 1} (use single-letter "
                    "variables, non-negative integers, + - * and parentheses)"
                )
        self.tokens.append(("end", "", len(text) + 1))

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i]

    def parse(self) -> Node:
        if len(self.tokens) == 1:
            raise self.fail("the expression is empty")
        node = self.expr()
        kind, tok, pos = self.peek()
        if kind == ")":
            raise self.fail(f"unmatched ')' at position {pos}")
        if kind != "end":
            raise self.fail(
                f"expected an operator (+, -, *) at position {pos}, found {tok!r}"
                + (" (write 'x*y' for a product)" if kind in ("var", "num", "(") else "")
            )
        return node

    def expr(self) -> Node:
        node = self.term()
        while self.peek()[0] in ("+", "-"):
            op = self.peek()[0]
            self.i += 1
            node = (op, node, self.term())
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.peek()[0] == "*":
            self.i += 1
            node = ("*", node, self.unary())
        return node

    def unary(self) -> Node:
        kind, tok, pos = self.peek()
        if kind == "-":
            self.i += 1
            self.enter(pos)
            node: Node = ("neg", self.unary())
            self.depth -= 1
            return node
        if kind == "num":
            self.i += 1
            return ("num", int(tok))
        if kind == "var":
            self.i += 1
            return ("var", tok)
        if kind == "(":
            self.i += 1
            self.enter(pos)
            node = self.expr()
            if self.peek()[0] != ")":
                k2, t2, p2 = self.peek()
                if k2 == "end":
                    raise self.fail(f"missing ')' for the '(' at position {pos}")
                raise self.fail(f"expected ')' at position {p2}, found {t2!r}")
            self.i += 1
            self.depth -= 1
            return node
        if kind == "end":
            raise self.fail(
                f"the expression ends early at position {pos}: expected a variable, a number or '('"
            )
        raise self.fail(f"expected a variable, a number or '(' at position {pos}, found {tok!r}")

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.fail(f"nesting deeper than {MAX_NESTING} at position {pos}")


def parse_expression(text: str) -> Node:
    """The expression tree of *text*, with variables still named by their letters.

    :raises InvalidParameterError: naming the 1-based position of the first problem.

    >>> parse_expression("x*(y-z)")
    ('*', ('var', 'x'), ('-', ('var', 'y'), ('var', 'z')))
    """
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise InvalidParameterError(
            f"expression is {len(text)} characters long; at most {MAX_EXPRESSION_LENGTH}"
        )
    return _Parser(text).parse()


_PREC = {"+": 1, "-": 1, "*": 2, "neg": 3, "num": 4, "var": 4}


def format_expression(node: Node, names: Sequence[str] | None = None) -> str:
    """The text of *node* with the fewest parentheses that keep its tree.

    ``names[i]`` names variable ``i`` when variables are numbered.

    >>> format_expression(parse_expression(" (x) * ((y) - z) "))
    'x*(y-z)'
    """
    kind = node[0]
    if kind == "num":
        return str(node[1])
    if kind == "var":
        v = node[1]
        return names[v] if names is not None and isinstance(v, int) else str(v)
    if kind == "neg":
        inner = format_expression(node[1], names)
        return "-" + (f"({inner})" if _PREC[node[1][0]] < 3 else inner)
    left = format_expression(node[1], names)
    right = format_expression(node[2], names)
    prec = _PREC[kind]
    if _PREC[node[1][0]] < prec:
        left = f"({left})"
    if _PREC[node[2][0]] <= prec:
        right = f"({right})"
    return f"{left}{kind}{right}"


def _rename(node: Node, index: dict[str, int]) -> Node:
    kind = node[0]
    if kind == "var":
        return ("var", index[node[1]])
    if kind == "num":
        return node
    if kind == "neg":
        return ("neg", _rename(node[1], index))
    return (kind, _rename(node[1], index), _rename(node[2], index))


def _variables(node: Node, out: set[str]) -> None:
    kind = node[0]
    if kind == "var":
        out.add(node[1])
    elif kind == "neg":
        _variables(node[1], out)
    elif kind != "num":
        _variables(node[1], out)
        _variables(node[2], out)


def normal_form(node: Node, perm: Sequence[int] | None = None) -> str:
    """A text that is equal for trees equal up to commutativity and associativity of
    ``+`` and ``*`` (with ``a - b`` read as ``a + (-b)``), after renaming variable ``i`` to
    ``perm[i]``."""
    kind = node[0]
    if kind == "num":
        return str(node[1])
    if kind == "var":
        return f"v{perm[node[1]] if perm is not None else node[1]}"
    if kind == "*":
        factors: list[Node] = []
        _flatten_product(node, factors)
        return "P(" + ",".join(sorted(normal_form(f, perm) for f in factors)) + ")"
    terms: list[tuple[bool, Node]] = []
    _flatten_sum(node, False, terms)
    if len(terms) == 1 and not terms[0][0]:  # a double negation
        return normal_form(terms[0][1], perm)
    return (
        "S("
        + ",".join(
            sorted(("-" if negative else "+") + normal_form(t, perm) for negative, t in terms)
        )
        + ")"
    )


def _flatten_product(node: Node, out: list[Node]) -> None:
    if node[0] == "*":
        _flatten_product(node[1], out)
        _flatten_product(node[2], out)
    else:
        out.append(node)


def _flatten_sum(node: Node, negative: bool, out: list[tuple[bool, Node]]) -> None:
    kind = node[0]
    if kind == "+":
        _flatten_sum(node[1], negative, out)
        _flatten_sum(node[2], negative, out)
    elif kind == "-":
        _flatten_sum(node[1], negative, out)
        _flatten_sum(node[2], not negative, out)
    elif kind == "neg":
        _flatten_sum(node[1], not negative, out)
    else:
        out.append((negative, node))


def value_interval(node: Node, low: int, high: int) -> tuple[int, int]:
    """Bounds of the expression's value when every variable lies in ``low..high``, by
    interval arithmetic (exact for expressions in which no variable repeats, else safe).

    >>> value_interval(parse_expression("x*(y-z)"), 0, 9)
    (-81, 81)
    """
    kind = node[0]
    if kind == "num":
        return node[1], node[1]
    if kind == "var":
        return low, high
    if kind == "neg":
        a, b = value_interval(node[1], low, high)
        return -b, -a
    a_lo, a_hi = value_interval(node[1], low, high)
    b_lo, b_hi = value_interval(node[2], low, high)
    if kind == "+":
        return a_lo + b_lo, a_hi + b_hi
    if kind == "-":
        return a_lo - b_hi, a_hi - b_lo
    products = (a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi)
    return min(products), max(products)


def _python(node: Node, field: Callable[[int], str]) -> str:
    kind = node[0]
    if kind == "num":
        return str(node[1])
    if kind == "var":
        return field(node[1])
    if kind == "neg":
        return f"(-{_python(node[1], field)})"
    return f"({_python(node[1], field)}{kind}{_python(node[2], field)})"


def parse_digits(text: str) -> tuple[int, ...]:
    """The domain given as ranges and lists, e.g. ``"0-9"``, ``"1,3,5"``, ``"0-3,7"``.

    :raises InvalidParameterError: for malformed items, empty ranges, values above
        :data:`MAX_DIGIT` or repeated values.

    >>> parse_digits("0-3,7")
    (0, 1, 2, 3, 7)
    """
    values: list[int] = []
    seen: set[int] = set()
    if not text.strip():
        raise InvalidParameterError("digits is empty: give ranges and lists like '0-9' or '1,3,5'")
    for part in text.split(","):
        item = part.strip()
        m = re.fullmatch(r"([0-9]{1,3})(?:\s*-\s*([0-9]{1,3}))?", item, flags=re.ASCII)
        if m is None:
            raise InvalidParameterError(
                f"bad digits item {item!r} in {text!r}: expected a value like '7' or a "
                "range like '0-9'"
            )
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if lo > hi:
            raise InvalidParameterError(f"empty range {item!r} in digits {text!r}")
        if hi > MAX_DIGIT:
            raise InvalidParameterError(
                f"digits value {hi} in {text!r} is above the largest allowed, {MAX_DIGIT}"
            )
        for v in range(lo, hi + 1):
            if v in seen:
                raise InvalidParameterError(f"digits value {v} is given twice in {text!r}")
            seen.add(v)
            values.append(v)
    return tuple(sorted(values))


def format_digits(values: Sequence[int]) -> str:
    """The shortest text of a sorted domain: consecutive runs of 3 or more as ranges.

    >>> format_digits((0, 1, 2, 3, 7, 8))
    '0-3,7,8'
    """
    parts: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{values[i]}-{values[j]}")
        else:
            parts.extend(str(v) for v in values[i : j + 1])
        i = j + 1
    return ",".join(parts)


# -- the game -------------------------------------------------------------------------


def _normal_form(
    expression: str, digits_text: str
) -> tuple[Node, tuple[str, ...], tuple[int, ...], tuple[int, int]]:
    """The variant's expression tree (variables numbered in name order), the variable
    names, the digits and the interval of the expression's values over them.

    :raises InvalidParameterError: for a malformed expression or digits, an expression
        without variables, or values beyond 2**53.
    """
    tree = parse_expression(expression)
    found: set[str] = set()
    _variables(tree, found)
    if not found:
        raise InvalidParameterError(
            f"expression {expression!r} has no variables: e-Valuate needs at least one"
        )
    names = tuple(sorted(found))
    digits = parse_digits(digits_text)
    renamed = _rename(tree, {v: i for i, v in enumerate(names)})
    lo, hi = value_interval(tree, digits[0], digits[-1])
    if max(-lo, hi) > MAX_ABS_VALUE:
        raise InvalidParameterError(
            f"expression {format_expression(renamed, names)!r} may reach "
            f"{hi if hi >= -lo else lo} over digits {format_digits(digits)}; values must "
            "stay within 2**53"
        )
    return renamed, names, digits, (lo, hi)


class EValuate(FieldGame):
    """e-Valuate (see the module docstring)."""

    name: ClassVar[str] = "e-valuate"
    version: ClassVar[int] = 1
    description: ClassVar[str] = (
        "e-Valuate: MAX proposes a digit, MIN substitutes it for an uninstantiated variable "
        "of the expression (every occurrence at once); the final value of the expression is "
        "the result, which MAX maximises and MIN minimises."
    )
    notation: ClassVar[str] = (
        "Every variable in alphabetical order as 'name=value' or 'name=?' (not yet "
        "instantiated), separated by ',', then ';proposed=d' when MAX has proposed d and "
        "MIN is to substitute it, e.g. 'x=3,y=?,z=?;proposed=7'. When parsing, variables may "
        "come in any order and omitted ones are uninstantiated. Moves: MAX's are the value "
        "proposed ('7'), MIN's the variable that receives it ('y'). Values are from the "
        "mover's view; MAX is to move when nothing is proposed."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "expression",
            str,
            DEFAULT_EXPRESSION,
            "arithmetic expression over single-letter variables, integers, + - * and "
            "parentheses (normalised to its shortest form)",
        ),
        Param("digits", str, "0-9", "values MAX may propose: ranges and lists, e.g. 0-9 or 1,3,5"),
        Param(
            "symmetry",
            bool,
            True,
            "identify positions under permutations of interchangeable variables",
        ),
    )

    @classmethod
    def _normalize_params(cls, values: dict[str, ParamValue]) -> None:
        tree, names, digits, _ = _normal_form(str(values["expression"]), str(values["digits"]))
        values["expression"] = format_expression(tree, names)
        values["digits"] = format_digits(digits)

    def _configure(self) -> None:
        tree, names, digits, (lo, hi) = _normal_form(
            str(self.params["expression"]), str(self.params["digits"])
        )
        self.names = names
        self.digits = digits
        self.tree: Node = tree
        # E lies in [lo, hi]: MAX's value of every position too, MIN's is its negation.
        self.value_range = (min(lo, -hi), max(hi, -lo))
        n, d = len(names), len(digits)
        w = d.bit_length()
        self._n = n
        self._value_index = {v: i + 1 for i, v in enumerate(digits)}
        # MAX's proposals from the largest value down: a maximiser's natural first guess,
        # which lets depth-first searches (alpha-beta, the solver's leak walk) cut sooner.
        self._set_fields(
            w, names, tuple((str(v), i + 1) for i, v in reversed(list(enumerate(digits))))
        )
        values = (0, *digits)
        source = _python(self.tree, lambda j: f"V[(k >> {self._shift[j]}) & {self._mask}]")
        # The source is built from the parsed tree only (integers, '+-*', field lookups).
        self._evaluate: Callable[[int], int] = eval(
            compile(f"lambda k: {source}", "<e-valuate>", "eval"), {"V": values}
        )
        self._set_symmetry(_SYMMETRY_CACHE, (str(self.params["expression"]), w))

    # -- symmetry ---------------------------------------------------------------------

    def interchangeable(self) -> list[list[int]]:
        """Classes of variables any two of which can be swapped (by normal form)."""
        n = self._n
        base = normal_form(self.tree)
        parent = list(range(n))
        for a in range(n):
            for b in range(a + 1, n):
                if parent[b] != b:
                    continue
                perm = list(range(n))
                perm[a], perm[b] = b, a
                if normal_form(self.tree, perm) == base:
                    parent[b] = parent[a]
        classes: dict[int, list[int]] = {}
        for j in range(n):
            classes.setdefault(parent[j], []).append(j)
        return list(classes.values())

    def variable_symmetries(self) -> list[tuple[int, ...]] | None:
        """Every variable permutation that keeps the normal form (``None`` if there are
        more than :data:`BRUTE_FORCE_VARIABLES` variables)."""
        n = self._n
        if n > BRUTE_FORCE_VARIABLES:
            return None
        base = normal_form(self.tree)
        return [p for p in itertools.permutations(range(n)) if normal_form(self.tree, p) == base]

    def _symmetries(self) -> Canonical:
        classes = self.interchangeable()
        product = math.prod(math.factorial(len(c)) for c in classes)
        group = self.variable_symmetries()
        fields = self._n + 1
        identity = tuple(range(1 << self._w))
        if group is not None and len(group) > product and len(group) <= GROUP_CAP:
            elements = [((0, *(1 + p[j] for j in range(self._n))), identity) for p in group]
            logger.debug("e-valuate: explicit symmetry group of order %d", len(group))
            return FieldGroup(self._w, fields, elements).canonical, len(group)
        if product == 1:
            return None, 1
        sorter = FieldSorter(self._w, fields, [[1 + j for j in c] for c in classes])
        return sorter.canonical, product

    # -- the Game protocol ------------------------------------------------------------

    def terminal_value(self, key: PositionKey) -> int | None:
        if key & self._mask or not self._complete(key):
            return None
        return self._evaluate(key)

    def value_of(self, assignment: dict[str, int]) -> int:
        """The expression's value for a full assignment of variable names to values."""
        key = 0
        for name, value in assignment.items():
            key |= self._value_index[value] << self._shift[self._field_index[name]]
        return self._evaluate(key)

    # -- notation (FieldGame's, with these words and fields) --------------------------

    words: ClassVar[FieldWords] = FieldWords(
        "assignments", "variable ", "d", "every variable is instantiated"
    )

    def _assignment(self, part: str, item: str, text: str) -> tuple[str, str]:
        m = _ASSIGNMENT.match(item)
        if m is None:
            raise InvalidPositionError(
                f"expected 'variable=value' or 'variable=?', got {part.strip()!r} in {text!r}"
            )
        name, value = m.group(1), m.group(2)
        if name not in self._field_index:
            raise InvalidPositionError(
                f"unknown variable {name!r} in {text!r} (variables: {', '.join(self.names)})"
            )
        return name, value

    def _value(self, symbol: str, text: str) -> int:
        if not (symbol.isascii() and symbol.isdigit() and len(symbol) <= 3):
            raise InvalidPositionError(f"expected a value, got {symbol!r} in {text!r}")
        index = self._value_index.get(int(symbol))
        if index is None:
            raise InvalidPositionError(
                f"{symbol} is not one of the digits {self.params['digits']} in {text!r}"
            )
        return index


__all__ = [
    "DEFAULT_EXPRESSION",
    "EValuate",
    "format_digits",
    "format_expression",
    "normal_form",
    "parse_digits",
    "parse_expression",
]
