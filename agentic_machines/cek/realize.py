"""Universality: realizing agentic machines inside the evaluator (``proofs/universality.md``).

A machine X' = (S', p', h') is *realized* by an injective encoding ``enc`` of its states
as data, a pure program ``Prompt(z)`` with ``Prompt(enc s) = p'(s)``, and a pure
program ``Step(z, c)`` returning ``(next enc(t))`` when h'(s, c) = t, ``halt`` when
h'(s, c) = 1, and looping without an ``llm`` call when h'(s, c) = ↑. The author's
construction then wraps them in

    Loop(z)  =  let r = Step(z, llm(Prompt(z))) in  if r = (next z') then Loop(z') else halt
    E_s      =  (let ((z (eval (quote enc(s))))) (Loop z))

and takes e(s) = the first boundary of E_s and loader(s) = the text of E_s. Resuming the
seed x* with that text runs E_s, so h(x*, loader(s)) = e(s); and resuming e(s) with c
runs Step and re-enters Loop exactly as E_t does, so h(e(s), c) = e(h'(s, c)).

:func:`realize` compiles any finite machine into lookup tables; :func:`realize_react_toy`
is a hand-written realization of a small ReAct-style harness (:func:`react_toy`).
``proofs/universality.md`` has the proof and runs the check.

>>> from agentic_machines import TableMachine, HALT
>>> m = TableMachine({"a": "left or right?", "b": "done?"},
...                  {("a", "L"): "b", ("a", "R"): "a", ("b", "L"): HALT, ("b", "R"): "a"})
>>> r = realize(m)
>>> r.check().holds
True
>>> r.evaluator.harness(r.seed, r.loader("b")) == r.embedding("b")
True
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, cast

from ..embedding import Embedding
from ..errors import InvalidArgument
from ..generation import completion_generates
from ..machine import DIVERGE, HALT, AgenticMachine, FunctionMachine, finite_parts
from ..verdict import Verdict
from .evaluator import HARNESS_FUEL, AgenticEvaluator, first_boundary
from .machine import Boundary
from .printer import escape_string, reify, unparse
from .syntax import from_items
from .theorem import SEED_PROMPT, seed_state

__all__ = [
    "Realization",
    "realize",
    "realize_with",
    "react_toy",
    "realize_react_toy",
    "REACT_WIKI",
    "REACT_QUESTION",
]

_LOOP_BINDINGS = """\
(diverge (lambda () (diverge)))
(loop (lambda (z)
  (let ((r (step z (llm (prompt z)))))
    (if (pair? r) (loop (car (cdr r))) 'halt))))"""


@dataclass(frozen=True, eq=False)
class Realization:
    """A realization of ``machine`` in the evaluator, with the Loop witness.

    ``embedding`` maps each state s to e(s), the first boundary of E_s (an
    :class:`~agentic_machines.embedding.Embedding` from ``machine`` into ``evaluator``);
    ``loader(s)`` is the text of E_s, the completion that loads e(s) from ``seed``;
    ``program`` is the Lisp text of the Loop (a letrec whose value is ``loop``).

    >>> from agentic_machines import TableMachine, HALT
    >>> r = realize(TableMachine({0: "go?"}, {(0, "y"): 0, (0, "n"): HALT}))
    >>> r.loader(0).startswith("(let ((z (eval (quote 0))))"), r.evaluator.prompt(r.embedding(0))
    (True, 'go?')
    """

    machine: AgenticMachine
    evaluator: AgenticEvaluator
    seed: Boundary
    encode: Callable[[Hashable], Any]
    program: str
    embedding: Any

    def loader(self, state: Hashable) -> str:
        """The text of E_s = ``(let ((z (eval (quote enc(s))))) (Loop z))``."""
        return _load_text(self.program, self.encode(state))

    def image(self, state: Hashable) -> Boundary:
        """e(s): the first boundary state of E_s."""
        return self.embedding(state)

    def check(self, *, states: Any = None, completions: Any = None) -> Verdict:
        """``completion_generates(evaluator, seed, machine)`` with this witness.

        On a finite machine the method is ``"exhaustive"`` in this sense: every state of
        the *target* machine and every completion of the *target's* finite alphabet. The
        evaluator accepts every string, and a machine compiled by :func:`realize` halts on
        strings outside the alphabet, so the claim (commutation) is about that alphabet
        only. Otherwise the check runs over the given sample (method ``"sampled"``).
        """
        return completion_generates(
            self.evaluator,
            self.seed,
            self.machine,
            embedding=self.embedding,
            loader=self.loader,
            states=states,
            completions=completions,
        )


def realize_with(
    machine: AgenticMachine,
    *,
    encode: Callable[[Hashable], Any],
    definitions: str,
    q: str = SEED_PROMPT,
    fuel: int = HARNESS_FUEL,
) -> Realization:
    """Build the Loop realization from an encoding and Lisp ``definitions``.

    ``definitions`` are letrec bindings that define at least ``(prompt z)`` and
    ``(step z c)`` (returning ``(list 'next z')``, ``'halt``, or looping, e.g. by
    calling ``(diverge)``); the names ``loop`` and ``diverge`` are added here.

    >>> from agentic_machines import FunctionMachine, HALT
    >>> count = FunctionMachine(lambda n: f"at {n}", lambda n, c: HALT if n == 2 else n + 1,
    ...                         states=[0, 1, 2], completions=["go"])
    >>> r = realize_with(count, encode=lambda n: n, definitions='''
    ...     (prompt (lambda (z) (string-append "at " (number->string z))))
    ...     (step (lambda (z c) (if (= z 2) 'halt (list 'next (+ z 1)))))''')
    >>> r.check().holds
    True
    """
    program = f"(letrec ({definitions.strip()}\n{_LOOP_BINDINGS}) loop)"
    evaluator = AgenticEvaluator(fuel=fuel)
    seed = seed_state(q)
    evaluator.initial = seed

    def image(state: Hashable) -> Boundary:
        b = first_boundary(_load_text(program, encode(state)), fuel=fuel)
        if type(b) is not Boundary:
            raise InvalidArgument(
                f"E_{state!r} reached {b} before its first llm call: Prompt must be pure and "
                "terminate; fix the prompt definition so that it returns a string for every state"
            )
        return b

    mapping: Any = {s: image(s) for s in machine.states} if machine.states is not None else image
    return Realization(
        machine, evaluator, seed, encode, program, Embedding(machine, evaluator, mapping)
    )


def _load_text(program: str, code: Any) -> str:
    # quote(enc s) is the *source* of the value enc(s) (a literal or a quotation), so that
    # eval of it gives back enc(s) without an llm call.
    return f"(let ((z (eval (quote {unparse(reify(code))})))) ({program} z))"


def realize(
    machine: AgenticMachine, *, q: str = SEED_PROMPT, fuel: int = HARNESS_FUEL
) -> Realization:
    """Compile a finite machine into Lisp lookup tables and realize it with the Loop.

    ``enc`` numbers the states in the order of ``machine.states``; ``Prompt`` and
    ``Step`` are nested ``if`` tables; a completion outside the machine's alphabet
    halts (commutation is claimed on the alphabet only); ↑ becomes ``(diverge)``.

    >>> from agentic_machines import TableMachine, DIVERGE
    >>> r = realize(TableMachine({0: "*"}, {(0, "x"): DIVERGE, (0, "y"): 0}))
    >>> r.evaluator.harness(r.embedding(0), "x"), r.evaluator.harness(r.embedding(0), "y") == r.embedding(0)
    (↑, True)
    """
    parts = finite_parts(machine)
    if parts is None:
        raise InvalidArgument(
            f"realize needs a finite machine (states and completions known); {machine.name!r} is not. "
            "Write Prompt and Step by hand and use realize_with."
        )
    states = list(parts.states)
    index = {s: i for i, s in enumerate(states)}

    def outcome(y: Any) -> str:
        if y is HALT:
            return "'halt"
        if y is DIVERGE:
            return "(diverge)"
        return f"(list 'next {index[y]})"

    def table(cases: list[tuple[str, str]], default: str) -> str:
        text = default
        for test, value in reversed(cases):
            text = f"(if {test} {value} {text})"
        return text

    prompt_body = table(
        [(f"(= z {i})", escape_string(machine.prompt(s))) for i, s in enumerate(states)], '""'
    )
    rows = []
    for i, s in enumerate(states):
        row = table(
            [
                (f"(string=? c {escape_string(c)})", outcome(machine.harness(s, c)))
                for c in parts.completions
            ],
            "'halt",
        )
        rows.append((f"(= z {i})", row))
    step_body = table(rows, "'halt")
    definitions = f"(prompt (lambda (z) {prompt_body}))\n(step (lambda (z c) {step_body}))"
    return realize_with(machine, encode=index.__getitem__, definitions=definitions, q=q, fuel=fuel)


# ---------------------------------------------------------------- a toy ReAct harness

REACT_QUESTION = "Where was the author of Hamlet born?"
REACT_WIKI = {
    "Hamlet": "Hamlet is a tragedy written by William Shakespeare.",
    "William Shakespeare": "William Shakespeare was an English playwright born in Stratford-upon-Avon.",
    "Stratford-upon-Avon": "Stratford-upon-Avon is a market town in Warwickshire, England.",
}
_MISSING, _INVALID = "?missing", "?invalid"
_HEADER = (
    "Answer the question with actions Search[title] (read a wiki page) or Finish[answer].\n"
    f"Question: {REACT_QUESTION}\n"
)
_NO_PAGE = "No such page."
_BAD_ACTION = "Invalid action: write Search[title] or Finish[answer]."
_REACT_COMPLETIONS = (
    "Search[Hamlet]",
    "Search[William Shakespeare]",
    "Search[Stratford-upon-Avon]",
    "Search[Mars]",
    "Search[]",
    "Finish[Stratford-upon-Avon]",
    "I should search.",
    "Search[Hamlet",
)


def _react_state(state: Hashable) -> tuple[str, ...]:
    # FunctionMachine passes its states as plain Hashables; react_toy's are these tuples.
    return cast(tuple[str, ...], state)


def _react_prompt(state: Hashable) -> str:
    lines, z = [_HEADER], _react_state(state)
    for i, key in enumerate(z, 1):
        text = REACT_WIKI.get(key, _NO_PAGE if key == _MISSING else _BAD_ACTION)
        lines.append(f"Observation {i}: {text}\n")
    lines.append(f"Action {len(z) + 1}:")
    return "".join(lines)


def _wrapped(c: str, prefix: str) -> bool:
    return len(c) >= len(prefix) and c[: len(prefix)] == prefix and c[-1:] == "]"


def _react_harness(state: Hashable, c: str, *, max_steps: int) -> Any:
    if _wrapped(c, "Finish["):
        return HALT
    if _wrapped(c, "Search["):
        title = c[len("Search[") : -1]
        key = title if title in REACT_WIKI else _MISSING
    else:
        key = _INVALID
    nxt = _react_state(state) + (key,)
    return HALT if len(nxt) >= max_steps else nxt


def react_toy(max_steps: int = 3) -> FunctionMachine:
    """A finite ReAct-style agent: a question, a three-page wiki, ``Search[x]``/``Finish[x]``.

    A state is the tuple of what each past action found (a page title, ``"?missing"``
    for an unknown page, ``"?invalid"`` for a malformed action), so the machine has
    finitely many states although every string is a completion; the prompt is the
    question plus the observations so far; ``Finish[...]`` halts, and so does running
    out of ``max_steps`` actions.

    >>> m = react_toy()
    >>> len(m.states), m.harness((), "Search[Hamlet]"), m.harness(("Hamlet",), "Finish[x]")
    (31, ('Hamlet',), 1)
    >>> print(m.prompt(("Hamlet",)).splitlines()[-2])
    Observation 1: Hamlet is a tragedy written by William Shakespeare.
    """
    keys = list(REACT_WIKI) + [_MISSING, _INVALID]
    states: list[tuple[str, ...]] = [()]
    frontier: list[tuple[str, ...]] = [()]
    for _ in range(max_steps - 1):
        frontier = [s + (k,) for s in frontier for k in keys]
        states.extend(frontier)
    return FunctionMachine(
        _react_prompt,
        lambda s, c: _react_harness(s, c, max_steps=max_steps),
        states=states,
        completions=_REACT_COMPLETIONS,
        initial=(),
        name="react-toy",
    )


def _lisp_string_cases(var: str, cases: list[tuple[str, str]], default: str) -> str:
    text = default
    for key, value in reversed(cases):
        text = f"(if (string=? {var} {escape_string(key)}) {value} {text})"
    return text


def realize_react_toy(max_steps: int = 3, *, q: str = SEED_PROMPT) -> Realization:
    """The hand-written Lisp realization of :func:`react_toy` (enc(s) = the list of keys).

    Commutation holds for every string, not only the sample alphabet, because the Lisp
    ``step`` parses actions exactly as the Python harness does. That is an argument plus
    a property test on random strings; :meth:`Realization.check` enumerates only the
    machine's eight sample completions (its ``"exhaustive"`` is over that alphabet).

    >>> r = realize_react_toy()
    >>> s = ("Hamlet", "?missing")
    >>> r.evaluator.harness(r.embedding(s), "Search[Stratford-upon-Avon]")
    1
    >>> r.evaluator.harness(r.embedding(("Hamlet",)), "Search[Mars]") == r.embedding(s)
    True
    """
    page = _lisp_string_cases(
        "t",
        [(title, escape_string(text)) for title, text in REACT_WIKI.items()]
        + [(_MISSING, escape_string(_NO_PAGE))],
        escape_string(_BAD_ACTION),
    )
    lookup = _lisp_string_cases(
        "x", [(title, "x") for title in REACT_WIKI], escape_string(_MISSING)
    )
    definitions = f"""
(page (lambda (t) {page}))
(lookup (lambda (x) {lookup}))
(len (lambda (z) (if (null? z) 0 (+ 1 (len (cdr z))))))
(append1 (lambda (z x) (if (null? z) (list x) (cons (car z) (append1 (cdr z) x)))))
(observations (lambda (z i)
  (if (null? z) ""
      (string-append "Observation " (number->string i) ": " (page (car z)) "\\n" (observations (cdr z) (+ i 1))))))
(prompt (lambda (z)
  (string-append {escape_string(_HEADER)} (observations z 1) "Action " (number->string (+ (len z) 1)) ":")))
(wrapped (lambda (c p)
  (if (< (string-length c) (string-length p)) #f
      (if (string=? (substring c 0 (string-length p)) p)
          (string=? (substring c (- (string-length c) 1) (string-length c)) "]")
          #f))))
(step (lambda (z c)
  (if (wrapped c "Finish[") 'halt
      (let ((z2 (append1 z (if (wrapped c "Search[")
                               (lookup (substring c 7 (- (string-length c) 1)))
                               {escape_string(_INVALID)}))))
        (if (< (len z2) {max_steps}) (list 'next z2) 'halt)))))"""
    return realize_with(
        react_toy(max_steps),
        encode=lambda s: from_items(list(_react_state(s))),
        definitions=definitions,
        q=q,
    )
