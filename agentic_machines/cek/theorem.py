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
``(if HOLE a b)``, ``(begin HOLE e ...)``, ``(llm HOLE)``, ``(eval HOLE)``). A frame's
environment is rebuilt by applying a lambda over its variables to their values; the
application is a tail call, so it leaves no frame behind. Values print back as
closed, ``llm``-free source (:func:`reify`).

>>> from agentic_machines.cek import AgenticEvaluator, first_boundary
>>> beta = first_boundary('(let ((n 2)) (+ n (string-length (llm "word?"))))')
>>> print(loader(beta))
(+ 2 (string-length (llm "word?")))
>>> AgenticEvaluator().harness(seed_state("go"), loader(beta)) == beta
True
"""

from __future__ import annotations

from typing import Any

from .expr import (
    App,
    Begin,
    Const,
    EvalForm,
    Expr,
    If,
    Lambda,
    Letrec,
    Llm,
    PrimRef,
    Quote,
    Var,
    seq_of,
)
from .machine import HALT_K, ArgsK, BeginK, Boundary, EvalK, IfK, LlmK
from .reader import escape_string, unparse
from .syntax import Bool, Nil, Pair, Symbol, iter_list
from .values import Closure, Prim

__all__ = ["SEED_PROMPT", "seed_program", "seed_state", "loader", "loader_expr", "reify"]

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
    from .evaluator import first_boundary

    state = first_boundary(seed_program(q))
    assert type(state) is Boundary
    return state


def reify(value: Any) -> Expr:
    """A closed, ``llm``-free expression that evaluates to exactly ``value``.

    Data become literals or quotations; primitives their names; a closure its lambda
    (or letrec group) applied to the reified values it captured; a list that contains
    procedures becomes ``(list ...)``. Iterative, with sharing: a value reached twice is
    reified once.

    >>> from agentic_machines.cek import evaluate
    >>> v = evaluate("(let ((k 3)) (lambda (x) (+ x k)))")
    >>> unparse(reify(v))
    '((lambda (k) (lambda (x) (+ x k))) 3)'
    >>> evaluate(unparse(reify(v))) == v
    True
    """
    memo: dict[int, Expr] = {}
    _reify_into([value], memo)
    return memo[id(value)]


def _reify_into(roots: list[Any], memo: dict[int, Expr]) -> None:
    """Reify every value in ``roots`` into ``memo`` (id -> expression), with an explicit stack.

    The ids are stable because every value reified is reachable from ``roots``, which the
    caller keeps alive.
    """
    stack: list[tuple[Any, bool]] = [(v, False) for v in roots]
    while stack:
        v, expanded = stack.pop()
        key = id(v)
        if key in memo:
            continue
        t = type(v)
        if t is int or t is str or t is Bool or t is Nil:
            memo[key] = Const(v)
        elif t is Symbol:
            memo[key] = Quote(v)
        elif t is Prim:
            memo[key] = PrimRef(v.name)
        elif t is Pair:
            items = list(iter_list(v))
            if not expanded:
                stack.append((v, True))
                stack.extend((item, False) for item in items)
                continue
            parts = [memo[id(item)] for item in items]
            if all(type(p) is Const or type(p) is Quote for p in parts):
                memo[key] = Quote(v)
            else:
                memo[key] = App(seq_of([PrimRef("list")] + parts))
        elif t is Closure:
            if not expanded:
                stack.append((v, True))
                stack.extend((item, False) for item in v.env)
                continue
            group = v.group
            inner: Expr = (
                group.lams[0] if not group.names else Letrec(group, Var(group.names[v.index]))
            )
            memo[key] = _bind(group.fv, v.env, inner, memo)
        else:
            raise TypeError(f"reify: {type(v).__name__} is not a value of the CEK language")


def _bind(names: tuple, values: tuple, body: Expr, memo: dict[int, Expr]) -> Expr:
    """``((lambda (names...) body) values...)``, or ``body`` when there is nothing to bind."""
    if not names:
        return body
    return App(seq_of([Lambda(names, body)] + [memo[id(v)] for v in values]))


def loader_expr(state: Boundary) -> Expr:
    """The closed expression whose first boundary is ``state`` (see :func:`loader`).

    >>> from agentic_machines.cek import first_boundary
    >>> loader_expr(first_boundary('(if (llm "ok?") 1 2)'))
    <If (if (llm "ok?") 1 2)>
    """
    if type(state) is not Boundary:
        raise TypeError(f"loader: {state!r} is not a boundary state of the agentic evaluator")
    frames = []
    k = state.kont
    while k is not HALT_K:
        frames.append(k)
        k = k.next
    values: list[Any] = []
    for f in frames:
        tf = type(f)
        if tf is ArgsK:
            values.extend(f.done)
            values.extend(f.env)
        elif tf is IfK or tf is BeginK:
            values.extend(f.env)
    memo: dict[int, Expr] = {}
    _reify_into(values, memo)
    hole: Expr = Llm(Const(state.prompt))
    for f in frames:
        tf = type(f)
        if tf is ArgsK:
            # (v0 ... HOLE e ...) in the frame's environment
            parts = [memo[id(v)] for v in f.done] + [hole] + f.rest.items()
            hole = _bind(f.rest.fv, f.env, App(seq_of(parts)), memo)
        elif tf is IfK:
            # (if HOLE then else)
            hole = _bind(f.branches.fv, f.env, If(hole, f.branches), memo)
        elif tf is BeginK:
            # (begin HOLE e ...)
            hole = _bind(f.rest.fv, f.env, Begin(seq_of([hole] + f.rest.items())), memo)
        elif tf is LlmK:
            # (llm HOLE)
            hole = Llm(hole)
        elif tf is EvalK:
            # (eval HOLE)
            hole = EvalForm(hole)
        else:
            raise TypeError(f"loader: unknown frame {tf.__name__}")
    return hole


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
