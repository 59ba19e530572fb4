"""The SPE theorem, executable: the seed state x* and the loader.

``seed_state(q)`` is x*, the first boundary of ``(let ((y (llm q))) (eval y))``.
``loader(β)`` is program text whose first boundary is exactly β. Since ``eval`` runs in
tail position, resuming x* with that text runs it under the empty continuation, so

    h(x*, loader(β)) == β        for every boundary state β,

and the identity embedding witnesses that x* is an SPE state (every state is a
successor of x*: surjectivity, as in F1). ``proofs/spe_theorem.md`` has the
proof; the test suite checks the equality on random programs and completions.

How the loader works: start from ``(llm "q")`` and wrap it, frame by frame from the
innermost outwards, in the source context that pushes that frame (``(v ... HOLE e ...)``,
``(if HOLE a b)``, ``(begin HOLE e ...)``, ``(cond (HOLE e) ...)``, ``(and HOLE e ...)``,
``(or HOLE e ...)``, ``(let* ((x HOLE) ...) b)``, ``(llm HOLE)``, ``(eval HOLE)``). A frame's
environment is rebuilt by applying a lambda over its variables to their values; the
application is a tail call, so it leaves no frame behind. Values print back as
closed, ``llm``-free source (:func:`~agentic_machines.cek.printer.reify`).

>>> from agentic_machines.cek import AgenticEvaluator, first_boundary
>>> beta = first_boundary('(let ((n 2)) (+ n (string-length (llm "word?"))))')
>>> print(loader(beta))
(+ 2 (string-length (llm "word?")))
>>> AgenticEvaluator().harness(seed_state("go"), loader(beta)) == beta
True
"""

from __future__ import annotations

from typing import Any

from ..errors import WrongType
from .evaluator import first_boundary
from .expr import (
    And,
    App,
    Begin,
    Cond,
    Const,
    EvalForm,
    Expr,
    If,
    LetStar,
    Llm,
    Or,
    seq_of,
)
from .machine import HALT_K, AndK, ArgsK, BeginK, Boundary, CondK, EvalK, IfK, LetStarK, LlmK, OrK
from .printer import bind, escape_string, reify_into, unparse

__all__ = ["SEED_PROMPT", "seed_program", "seed_state", "loader", "loader_expr"]

SEED_PROMPT = "Write a program."


def seed_program(q: str = SEED_PROMPT) -> str:
    """The text of Seed_q = ``(let ((y (llm q))) (eval y))``.

    >>> seed_program("go")
    '(let ((y (llm "go"))) (eval y))'
    """
    return f"(let ((y (llm {escape_string(q)}))) (eval y))"


def seed_state(q: str = SEED_PROMPT) -> Boundary:
    """x*: the first boundary state of :func:`seed_program`.

    >>> x = seed_state("go")
    >>> x.prompt
    'go'
    """
    state = first_boundary(seed_program(q))
    assert type(state) is Boundary
    return state


def loader_expr(state: Boundary) -> Expr:
    """The closed expression whose first boundary is ``state`` (see :func:`loader`).

    >>> from agentic_machines.cek import first_boundary
    >>> loader_expr(first_boundary('(if (llm "ok?") 1 2)'))
    <If (if (llm "ok?") 1 2)>
    """
    if type(state) is not Boundary:
        raise WrongType(
            f"loader: {state!r} is not a boundary state of the agentic evaluator; pass one that "
            "first_boundary(...) or AgenticEvaluator.harness returned"
        )
    frames = []
    k = state.kont
    while k is not HALT_K:
        frames.append(k)
        k = k.next
    values: list[Any] = []
    for f in frames:
        tf = type(f)
        # ``type(f) is X`` written out (not through a variable) lets the type checker narrow f.
        if type(f) is ArgsK:
            values.extend(f.done)
            values.extend(f.env)
        elif tf in _KEEPS_ENV:
            values.extend(f.env)  # type: ignore[attr-defined]
    memo: dict[int, Expr] = {}
    reify_into(values, memo)
    hole: Expr = Llm(Const(state.prompt))
    for f in frames:
        tf = type(f)
        if type(f) is ArgsK:
            # (v0 ... HOLE e ...) in the frame's environment
            parts = [memo[id(v)] for v in f.done] + [hole] + f.rest.items()
            hole = bind(f.rest.fv, f.env, App(seq_of(parts)), memo)
        elif type(f) is IfK:
            # (if HOLE then else)
            hole = bind(f.branches.fv, f.env, If(hole, f.branches), memo)
        elif type(f) is BeginK:
            # (begin HOLE e ...)
            hole = bind(f.rest.fv, f.env, Begin(seq_of([hole] + f.rest.items())), memo)
        elif type(f) is AndK or type(f) is OrK:
            # (and HOLE e ...), (or HOLE e ...)
            form = And if tf is AndK else Or
            hole = bind(f.rest.fv, f.env, form(seq_of([hole] + f.rest.items())), memo)
        elif type(f) is CondK:
            # (cond (HOLE e) clause ...), (when HOLE e), (unless HOLE e)
            hole = bind(f.clauses.fv, f.env, Cond(hole, f.clauses), memo)
        elif type(f) is LetStarK:
            # (let* ((x HOLE) binding ...) body)
            hole = bind(f.rest.fv, f.env, LetStar(hole, f.rest), memo)
        elif tf is LlmK:
            # (llm HOLE)
            hole = Llm(hole)
        elif tf is EvalK:
            # (eval HOLE)
            hole = EvalForm(hole)
        else:
            raise WrongType(
                f"loader: {tf.__name__} is not a continuation frame of the CEK; pass a Boundary's kont"
            )
    return hole


_KEEPS_ENV = (IfK, BeginK, AndK, OrK, CondK, LetStarK)  # the frames with an env (ArgsK: and done)


def loader(state: Boundary) -> str:
    """Program text that loads ``state`` from the seed: ``h(x*, loader(β)) == β``.

    The text parses, is closed, makes no ``llm`` call before its first boundary, and
    its first boundary equals ``state`` exactly.

    >>> from agentic_machines.cek import first_boundary
    >>> beta = first_boundary('(letrec ((f (lambda (n) (if (= n 0) (llm "base") (+ 1 (f (- n 1))))))) (f 2))')
    >>> loader(beta)
    '(+ 1 (+ 1 (llm "base")))'
    """
    return unparse(loader_expr(state))
