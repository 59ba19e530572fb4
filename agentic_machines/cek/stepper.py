"""The CEK machine one step at a time, shown as ⟨e, ρ, κ⟩ with κ as the program around a hole.

:func:`start_state` turns a parsed program into the machine's first state; the machine's
own :func:`~agentic_machines.cek.machine.step` takes one transition; :func:`show_state`
prints a state the way a textbook writes it:

- ``eval ⟨e, ρ, κ⟩``: evaluate the expression e in the environment ρ (only the variables
  e uses), then continue with κ;
- ``ret  ⟨v, κ⟩``: hand the value v to κ;
- ``llm  ⟨(llm "q"), κ⟩``: a boundary: the model's completion is handed to κ;
- ``halt ⟨v⟩``: the run ended with v.

The continuation κ prints as the rest of the program with a hole ``[]`` where the
current value goes: ``(+ 1 [])`` is "add one to the value". The empty continuation is
``[]`` itself. Its pending expressions print with their variable names; the values of
those variables are in the frame's own environment, which :func:`frame_context` keeps
out of the picture (the frame's repr says how deep it is).

>>> from agentic_machines.cek.reader import parse
>>> from agentic_machines.cek.machine import step
>>> s = start_state(parse('(let ((n 2)) (+ n (llm "q")))'))
>>> for _ in range(5):
...     print(show_state(s))
...     s = step(s)
eval ⟨((lambda (n) (+ n (llm "q"))) 2), {}, []⟩
eval ⟨(+ n (llm "q")), {n ↦ 2}, []⟩
eval ⟨(llm "q"), {}, (+ 2 [])⟩
eval ⟨"q", {}, (+ 2 (llm []))⟩
ret  ⟨"q", (+ 2 (llm []))⟩
>>> print(show_state(s))
llm  ⟨(llm "q"), (+ 2 [])⟩
"""

from __future__ import annotations

from typing import Any, cast

from ..errors import WrongType
from .expr import compile_program
from .machine import (
    HALT_K,
    AndK,
    ArgsK,
    BeginK,
    Boundary,
    CondK,
    Eval,
    EvalK,
    Failed,
    Frame,
    Halted,
    IfK,
    LetStarK,
    LlmK,
    OrK,
    Ret,
    kont_depth,
)
from .printer import escape_string, unparse
from .values import Closure

__all__ = [
    "start_state",
    "show_state",
    "show_boundary",
    "kont_text",
    "frame_context",
    "rule_of",
    "HOLE",
]

HOLE = "[]"
"""How the hole of a continuation prints."""


def start_state(program: Any) -> Eval:
    """The first state of a run of ``program``, a parsed program (what :func:`~agentic_machines.cek.parse`
    returns): ``⟨program, {}, []⟩``. Program text is parsed first, by the caller: a
    string here is the string literal it is, never parsed.

    >>> from agentic_machines.cek.reader import parse
    >>> start_state(parse("(+ 1 2)"))
    Eval(<App (+ 1 2)>, depth=0)
    >>> start_state(parse("(+ 1 x)"))
    Traceback (most recent call last):
      ...
    agentic_machines.errors.MalformedProgram: unbound variable `x`: bind it with let, lambda or letrec, or use a primitive (+, car, string-append, ...)
    """
    return Eval(compile_program(program), (), HALT_K)


def frame_context(frame: Frame, hole: str) -> str:
    """The source around one frame, with ``hole`` where its value goes.

    >>> from agentic_machines.cek import first_boundary
    >>> frame_context(first_boundary('(if (llm "ok?") 1 2)').kont, "[]")
    '(if [] 1 2)'
    """
    t = type(frame)
    # Each test names the class itself (not ``t``) so that the type checker narrows ``frame``.
    if type(frame) is ArgsK:
        parts = [brief(v) for v in frame.done] + [hole] + [unparse(e) for e in frame.rest.items()]
        return f"({' '.join(parts)})"
    if type(frame) is IfK:
        br = frame.branches
        return f"(if {hole} {unparse(br.then)} {unparse(br.orelse)})"
    if type(frame) is BeginK:
        return f"(begin {' '.join([hole] + [unparse(e) for e in frame.rest.items()])})"
    if t is CondK:
        return _clauses_context(cast(CondK, frame).clauses, hole)
    if t is AndK or t is OrK:
        name = "and" if t is AndK else "or"
        pending = cast(AndK, frame).rest.items()  # OrK has the same fields
        return f"({name} {' '.join([hole] + [unparse(e) for e in pending])})"
    if t is LetStarK:
        return _let_star_context(cast(LetStarK, frame).rest, hole)
    if t is LlmK:
        return f"(llm {hole})"
    if t is EvalK:
        return f"(eval {hole})"
    raise WrongType(
        f"frame_context: {t.__name__} is not a continuation frame; pass a state's kont (or one "
        "of its frames)"
    )


def _clauses_context(cl: Any, hole: str) -> str:
    # A cond with the hole as its first clause's test (when/unless: as their test).
    if cl.form == "when":
        return f"(when {hole} {unparse(cl.then)})"
    if cl.form == "unless":
        return f"(unless {hole} {unparse(cl.orelse)})"
    parts = [f"({hole} {unparse(cl.then)})" if cl.then is not None else f"({hole})"]
    if cl.more:
        parts.append(unparse(cl.orelse)[len("(cond ") : -1])  # the next clauses, inline
    elif cl.orelse is not None:
        parts.append(f"(else {unparse(cl.orelse)})")
    return f"(cond {' '.join(parts)})"


def _let_star_context(rest: Any, hole: str) -> str:
    # A let* with the hole as its first binding's expression; the next bindings of the
    # same let* inline after it.
    first = f"({rest.name} {hole})"
    if rest.more:
        return f"(let* ({first} {unparse(rest.body)[len('(let* (') :]}"
    return f"(let* ({first}) {unparse(rest.body)})"


def kont_text(kont: Frame) -> str:
    """The continuation as the program around a hole ``[]`` (innermost frame innermost).

    >>> from agentic_machines.cek import first_boundary
    >>> kont_text(first_boundary('(+ 1 (string-length (llm "word?")))').kont)
    '(+ 1 (string-length []))'
    >>> kont_text(HALT_K)
    '[]'
    """
    text = HOLE
    while kont is not HALT_K:
        text = frame_context(kont, text)
        kont = kont.next
    return text


def env_text(names: tuple, env: tuple) -> str:
    """An environment as ``{x ↦ v, ...}`` (``names`` aligned with ``env``).

    >>> env_text(("n", "s"), (2, "a"))
    '{n ↦ 2, s ↦ "a"}'
    """
    return "{" + ", ".join(f"{n} ↦ {brief(v)}" for n, v in zip(names, env)) + "}"


def brief(value: Any) -> str:
    """A value as a step shows it: a closure longer than :data:`BRIEF` characters by its
    parameters only, ``(lambda (x) …)`` (its whole body on every line would hide the
    step), anything else in full.

    >>> from agentic_machines.cek import evaluate
    >>> brief(evaluate("(lambda (s) (string-append s s \\"and a long tail\\"))")), brief("a")
    ('(lambda (s) …)', '"a"')
    """
    text = unparse(value)
    if type(value) is Closure and len(text) > BRIEF:
        params = value.group.lams[value.index].params
        return f"(lambda ({' '.join(params)}) …)"
    return text


BRIEF = 40
"""The longest closure a step prints whole."""


def show_state(state: Any) -> str:
    """One line for a state of the machine: its kind, then ⟨e, ρ, κ⟩ (see the module docstring).

    >>> from agentic_machines.cek.machine import Cycle
    >>> show_state(Halted(3)), show_state(Ret(3, HALT_K))
    ('halt ⟨3⟩', 'ret  ⟨3, []⟩')
    """
    t = type(state)
    if t is Eval:
        expr = state.expr
        return f"eval ⟨{unparse(expr)}, {env_text(expr.fv, state.env)}, {kont_text(state.kont)}⟩"
    if t is Ret:
        return f"ret  ⟨{brief(state.value)}, {kont_text(state.kont)}⟩"
    if t is Boundary:
        return f"llm  ⟨(llm {escape_string(state.prompt)}), {kont_text(state.kont)}⟩"
    if t is Halted:
        return f"halt ⟨{unparse(state.value)}⟩"
    if t is Failed:
        return f"fail ⟨{state.error}⟩"
    raise WrongType(
        f"show_state: {t.__name__} is not a state of the CEK machine; pass one that "
        "CEKStepper or first_boundary(...) gave"
    )


_EVAL_RULES = {
    "Var": "var",
    "Const": "const",
    "Quote": "quote",
    "PrimRef": "primitive",
    "Lambda": "lambda",
    "If": "if",
    "Begin": "begin",
    "And": "and",
    "Or": "or",
    "LetStar": "let*",
    "Letrec": "letrec",
    "Define": "define",
    "DefineValue": "define",
    "Llm": "llm",
    "EvalForm": "eval",
}
_RET_RULES = {
    "IfK": "if: branch",
    "BeginK": "begin: next",
    "AndK": "and: next or stop",
    "OrK": "or: next or stop",
    "LetStarK": "let*: bind",
    "LlmK": "llm: boundary",
    "EvalK": "eval: program",
    "HaltK": "halt",
}


def rule_of(state: Any) -> str | None:
    """The name of the rule of :func:`~agentic_machines.cek.machine.step` that moves on from
    ``state`` (the comments of ``step`` write each rule out), or None for a state that
    does not step.

    >>> from agentic_machines.cek.reader import parse_program
    >>> from agentic_machines.cek.machine import step
    >>> s = start_state(parse_program("(cond ((> 1 2) 'a) (else 'b))"))
    >>> rule_of(s), rule_of(step(s)), rule_of(step(step(s)))
    ('cond', 'primitive application', 'cond: clause')
    """
    t = type(state)
    if t is Eval:
        e = state.expr
        name = type(e).__name__
        if name == "Cond":
            return e.clauses.form
        if name == "App":
            parts = e.seq.items()
            if all(p.atomic for p in parts):
                head = parts[0]
                hn = type(head).__name__
                if hn == "PrimRef":
                    return _application(head.prim)
                if hn == "Var":
                    return _application(state.env[e.fv.index(head.name)])
                return _application(head)
            return "application: next part"
        return _EVAL_RULES.get(name)
    if t is Ret:
        k = state.kont
        name = type(k).__name__
        if name == "CondK":
            return f"{k.clauses.form}: clause"
        if name == "ArgsK":
            if all(p.atomic for p in k.rest.items()):
                return _application(k.done[0] if k.done else state.value)
            return "application: next part"
        return _RET_RULES.get(name)
    return None


def _application(f: Any) -> str:
    # Which apply rule ends an application whose operator is ``f`` (a value, or a lambda).
    from .values import Closure, Prim  # values sit below; imported here, where it is used

    if type(f) is Prim:
        return "primitive application"
    if type(f) is Closure:
        rest = f.group.plans[f.index].arity < 0
    else:
        rest = getattr(f, "rest", False)
    return "application (rest parameter)" if rest else "application"


def show_boundary(state: Boundary) -> str:
    """A boundary state as the whole triple ``⟨(llm "q"), ρ, κ⟩``: ρ is the environment
    the continuation resumes in (its innermost frame's, only the variables it still uses),
    which :func:`show_state`'s one-line ``llm`` form leaves out.

    >>> from agentic_machines.cek import first_boundary
    >>> print(show_boundary(first_boundary('(let ((n 2)) (+ n (llm "q") n))')))
    ⟨(llm "q"), {n ↦ 2}, (+ 2 [] n)⟩
    """
    env = "{}"
    frame = state.kont
    while frame is not HALT_K:
        names = _frame_names(frame)
        if names is not None:
            env = env_text(names, frame.env)  # type: ignore[attr-defined]
            break
        frame = frame.next
    return f"⟨(llm {escape_string(state.prompt)}), {env}, {kont_text(state.kont)}⟩"


def _frame_names(frame: Frame) -> tuple | None:
    # The frames that keep an environment keep it aligned with their pending code's fv.
    t = type(frame)
    if t is ArgsK or t is BeginK or t is AndK or t is OrK or t is LetStarK:
        return frame.rest.fv  # type: ignore[attr-defined]
    if t is IfK:
        return frame.branches.fv  # type: ignore[attr-defined]
    if t is CondK:
        return frame.clauses.fv  # type: ignore[attr-defined]
    return None


def _frame_repr(self: Frame) -> str:
    # The continuation from this frame as a program with a hole: no object address.
    return f"{type(self).__name__}({kont_text(self)}, depth={kont_depth(self)})"


# machine.py defines the frames but sits below this module, so the frames' repr is
# attached here; cek/__init__.py imports this module, whichever cek module comes first.
Frame.__repr__ = _frame_repr  # type: ignore[method-assign, assignment]  # attached on purpose, see above
