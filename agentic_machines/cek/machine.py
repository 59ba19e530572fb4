"""The CEK machine: states, continuation frames, and one ``step`` function.

A state is one of

- ``Eval(expr, env, kont)``: evaluate ``expr`` in ``env`` (a tuple aligned with
  ``expr.fv``), then hand the value to ``kont``;
- ``Ret(value, kont)``: hand ``value`` to the innermost frame of ``kont``;
- ``Boundary(prompt, kont)``: the control is ``(llm prompt)`` with ``prompt`` an
  evaluated string; the model's completion is handed to ``kont``.

Runs end in ``Halted(value)`` or ``Failed(error)``. The continuation is a linked list of
frames ending in :data:`HALT_K`, so deep recursion in the object program grows a heap
structure and never the Python stack. Every state and frame is immutable with a
cached hash (a slotted :class:`~agentic_machines.cek.syntax.Node`, not a frozen dataclass:
see there why), so a whole state compares and hashes without recursion, and a run can
detect a repeated state exactly with Brent's algorithm in constant memory.
:func:`run_by_steps` is the definition of a run; :mod:`agentic_machines.cek.fast` takes
the same transitions faster.

Frames keep only what is still to be done (the *pending* expressions and the
environment they need), so the same computation reached by different source always
gives equal states.

>>> from agentic_machines.cek.reader import parse
>>> from agentic_machines.cek.expr import compile_program
>>> start = Eval(compile_program(parse("(+ 1 (llm \\"q\\"))")), (), HALT_K)
>>> b, steps = run_by_steps(start, fuel=100)
>>> type(b).__name__, b.prompt, steps
('Boundary', 'q', 4)
>>> run_by_steps(Ret("41", b.kont), fuel=100)[0]
Failed(EvaluationError('+: expected an integer, got "41" (string)'))
"""

from __future__ import annotations

from typing import Any

from .._text import clip
from ..errors import EvaluationError, MalformedProgram, ParseError, Undecided, WrongType
from .expr import (
    And,
    App,
    Begin,
    Binding,
    Branches,
    Clauses,
    Cond,
    Const,
    Define,
    DefineValue,
    EvalForm,
    Expr,
    If,
    Lambda,
    Letrec,
    LetStar,
    Llm,
    Or,
    PrimRef,
    Quote,
    Seq,
    Var,
    compile_program,
)
from .printer import unparse
from .reader import parse
from .syntax import FALSE, NIL, Node, from_items
from .values import Closure, Prim, type_name

__all__ = [
    "Frame",
    "ArgsK",
    "IfK",
    "BeginK",
    "CondK",
    "AndK",
    "OrK",
    "LetStarK",
    "LlmK",
    "EvalK",
    "HaltK",
    "HALT_K",
    "Eval",
    "Ret",
    "Boundary",
    "Halted",
    "Failed",
    "Cycle",
    "step",
    "run_by_steps",
    "kont_depth",
    "program_value",
    "atom_value",
    "next_part",
    "apply_procedure",
    "fit_arguments",
    "out_of_fuel",
]


# ---------------------------------------------------------------- continuation frames


class Frame(Node):
    """A continuation frame; ``next`` is the rest of the continuation, ``depth`` the
    number of frames from this one down to :data:`HALT_K` (excluded).

    A frame's hash is computed when it is first asked for, not when the frame is built:
    the run loop builds a frame at nearly every other step and most are dropped unseen,
    while a state is hashed only where it is observed (a boundary, a cycle check that
    got past its cheap tests, ``step``'s states). The hash is the same number either way
    (:meth:`_own_hash` of the fields and the next frame's hash), computed down the chain
    with a loop, never by recursion, and cached in ``_h``: a cache, not a field, so
    frames stay immutable in every way equality or a reader can see.

    >>> LlmK(HALT_K).next is HALT_K, LlmK(EvalK(HALT_K))
    (True, LlmK((eval (llm [])), depth=2))
    >>> k = LlmK(EvalK(HALT_K))
    >>> k._h is None, hash(k) == hash(LlmK(EvalK(HALT_K))), k._h is None
    (True, True, False)
    """

    __slots__ = ("next", "depth", "_h")
    next: Frame
    depth: int
    _h: int | None

    @property  # type: ignore[override]
    def _hash(self) -> int:  # the Node protocol's cached hash, computed on first use
        h = self._h
        return _hash_frames(self) if h is None else h

    def _own_hash(self, next_hash: int) -> int:
        raise NotImplementedError  # every concrete frame defines it

    # __repr__ (the continuation as a program with a hole) is attached by cek/stepper.py.


def _hash_frames(top: Frame) -> int:
    # Hash the frames from ``top`` down to the first already hashed one (HALT_K is), then
    # back up, so a 100 000-deep continuation hashes without recursion and each frame once.
    chain = []
    f = top
    while f._h is None:
        chain.append(f)
        f = f.next
    h: int = f._h  # type: ignore[assignment]
    for f in reversed(chain):
        h = f._h = f._own_hash(h)
    return h


class HaltK(Frame):
    """The empty continuation: a value returned here ends the run. Use :data:`HALT_K`.

    >>> kont_depth(HALT_K)
    0
    """

    __slots__ = ()
    _fields = ()

    def __init__(self) -> None:
        self.next = None  # type: ignore[assignment]
        self.depth = 0
        self._h = hash("HaltK")

    def __repr__(self) -> str:
        return "HALT_K"

    def __reduce__(self) -> str:  # type: ignore[override]
        return "HALT_K"


HALT_K = HaltK()


class ArgsK(Frame):
    """Evaluating an application: ``done`` holds the values so far (operator first),
    ``rest`` the parts still to evaluate, ``env`` their environment (aligned with ``rest.fv``).
    Source context: ``(v0 ... HOLE e ...)``.

    >>> from agentic_machines.cek import first_boundary
    >>> k = first_boundary('(string-append "a" (llm "q") "b")').kont
    >>> type(k).__name__, k.done[1], k.rest.size
    ('ArgsK', 'a', 1)
    """

    __slots__ = ("done", "rest", "env")
    _fields = ("done", "rest", "env", "next")

    def __init__(self, done: tuple, rest: Seq, env: tuple, next: Frame) -> None:
        self.done = done
        self.rest = rest
        self.env = env
        self.next = next
        self.depth = next.depth + 1
        self._h = None

    def _own_hash(self, next_hash: int) -> int:
        return hash((1, self.done, self.rest._hash, self.env, next_hash))


class IfK(Frame):
    """Waiting for the test of an ``if``. Source context: ``(if HOLE then else)``.

    >>> from agentic_machines.cek import first_boundary
    >>> first_boundary('(if (llm "q") 1 2)').kont.branches
    <Branches 1 2>
    """

    __slots__ = ("branches", "env")
    _fields = ("branches", "env", "next")

    def __init__(self, branches: Branches, env: tuple, next: Frame) -> None:
        self.branches = branches
        self.env = env
        self.next = next
        self.depth = next.depth + 1
        self._h = None

    def _own_hash(self, next_hash: int) -> int:
        return hash((2, self.branches._hash, self.env, next_hash))


class _RestK(Frame):
    """A frame that keeps the pending expressions of ``begin``, ``and`` or ``or``
    (:class:`BeginK`, :class:`AndK`, :class:`OrK`): built alike, told apart by type;
    ``_tag`` keeps the hashes apart.
    """

    __slots__ = ("rest", "env")
    _fields = ("rest", "env", "next")
    _tag: int

    def __init__(self, rest: Seq, env: tuple, next: Frame) -> None:
        self.rest = rest
        self.env = env
        self.next = next
        self.depth = next.depth + 1
        self._h = None

    def _own_hash(self, next_hash: int) -> int:
        return hash((self._tag, self.rest._hash, self.env, next_hash))


class BeginK(_RestK):
    """Inside ``begin``: ``rest`` (non-empty) comes next. Source context: ``(begin HOLE e ...)``.

    >>> from agentic_machines.cek import first_boundary
    >>> first_boundary('(begin (llm "q") 2)').kont
    BeginK((begin [] 2), depth=1)
    """

    __slots__ = ()
    _tag = 3


class CondK(Frame):
    """Waiting for the test of a ``cond`` clause (or of ``when``/``unless``); ``clauses``
    is what follows it. Source context: ``(cond (HOLE e ...) clause ...)``.

    >>> from agentic_machines.cek import first_boundary
    >>> first_boundary('(cond ((llm "q") 1) (else 2))').kont
    CondK((cond ([] 1) (else 2)), depth=1)
    """

    __slots__ = ("clauses", "env")
    _fields = ("clauses", "env", "next")

    def __init__(self, clauses: Clauses, env: tuple, next: Frame) -> None:
        self.clauses = clauses
        self.env = env
        self.next = next
        self.depth = next.depth + 1
        self._h = None

    def _own_hash(self, next_hash: int) -> int:
        return hash((9, self.clauses._hash, self.env, next_hash))


class AndK(_RestK):
    """Inside ``and``: ``rest`` (non-empty) comes next unless the value is ``#f``.
    Source context: ``(and HOLE e ...)``.

    >>> from agentic_machines.cek import first_boundary
    >>> first_boundary('(and (llm "q") 2)').kont
    AndK((and [] 2), depth=1)
    """

    __slots__ = ()
    _tag = 10


class OrK(_RestK):
    """Inside ``or``: ``rest`` (non-empty) comes next if the value is ``#f``.
    Source context: ``(or HOLE e ...)``.

    >>> from agentic_machines.cek import first_boundary
    >>> first_boundary('(or (llm "q") 2)').kont
    OrK((or [] 2), depth=1)
    """

    __slots__ = ()
    _tag = 11


class LetStarK(Frame):
    """Waiting for the value of a ``let*`` binding; ``rest`` binds it and holds what
    follows (the next bindings, or the body), ``env`` its environment (aligned with
    ``rest.fv``). Source context: ``(let* ((x HOLE) binding ...) body)``.

    >>> from agentic_machines.cek import first_boundary
    >>> first_boundary('(let* ((x (llm "q")) (y x)) y)').kont
    LetStarK((let* ((x []) (y x)) y), depth=1)
    """

    __slots__ = ("rest", "env")
    _fields = ("rest", "env", "next")

    def __init__(self, rest: Binding, env: tuple, next: Frame) -> None:
        self.rest = rest
        self.env = env
        self.next = next
        self.depth = next.depth + 1
        self._h = None

    def _own_hash(self, next_hash: int) -> int:
        return hash((12, self.rest._hash, self.env, next_hash))


class _ArgK(Frame):
    """A frame that waits for the one argument of a form and keeps nothing else
    (:class:`LlmK`, :class:`EvalK`): built alike, told apart by type; ``_tag`` keeps
    the two hashes apart. The constructor is inherited, not called through, so building
    one costs what a frame with its own ``__init__`` costs.
    """

    __slots__ = ()
    _fields = ("next",)
    _tag: int

    def __init__(self, next: Frame) -> None:
        self.next = next
        self.depth = next.depth + 1
        self._h = None

    def _own_hash(self, next_hash: int) -> int:
        return hash((self._tag, next_hash))


class LlmK(_ArgK):
    """Waiting for the prompt of ``llm``. Source context: ``(llm HOLE)``.

    >>> from agentic_machines.cek import first_boundary
    >>> type(first_boundary('(llm (llm "q"))').kont).__name__
    'LlmK'
    """

    __slots__ = ()
    _tag = 4


class EvalK(_ArgK):
    """Waiting for the argument of ``eval``. Source context: ``(eval HOLE)``.

    >>> from agentic_machines.cek import first_boundary
    >>> first_boundary('(eval (llm "q"))').kont
    EvalK((eval []), depth=1)
    """

    __slots__ = ()
    _tag = 5


# ---------------------------------------------------------------- states and endings


class Eval(Node):
    """Evaluate ``expr`` in ``env`` (aligned with ``expr.fv``), continue with ``kont``.

    >>> step(Eval(Const(1), (), HALT_K))
    Ret(1, depth=0)
    """

    __slots__ = ("expr", "env", "kont")
    _fields = ("expr", "env", "kont")

    def __init__(self, expr: Expr, env: tuple, kont: Frame) -> None:
        self.expr = expr
        self.env = env
        self.kont = kont
        self._hash = hash((6, expr._hash, env, kont._hash))

    def __repr__(self) -> str:
        return f"Eval({self.expr!r}, depth={kont_depth(self.kont)})"


class Ret(Node):
    """Return ``value`` to the continuation ``kont``.

    >>> step(Ret(1, HALT_K))
    Halted(1)
    """

    __slots__ = ("value", "kont")
    _fields = ("value", "kont")

    def __init__(self, value: Any, kont: Frame) -> None:
        self.value = value
        self.kont = kont
        self._hash = hash((7, value, kont._hash))

    def __repr__(self) -> str:
        return f"Ret({_short(self.value)}, depth={kont_depth(self.kont)})"


class Boundary(Node):
    """A boundary state: control ``(llm prompt)`` with ``prompt`` evaluated, continuation ``kont``.

    These are the states of the agentic evaluator: p(β) = ``prompt``, and h(β, c) hands
    the completion ``c`` to ``kont``.

    >>> from agentic_machines.cek import first_boundary
    >>> b = first_boundary('(+ 1 (string-length (llm "word?")))')
    >>> b.prompt, kont_depth(b.kont), b == first_boundary('(+ 1 (string-length (llm "word?")))')
    ('word?', 2, True)
    """

    __slots__ = ("prompt", "kont")
    _fields = ("prompt", "kont")

    def __init__(self, prompt: str, kont: Frame) -> None:
        self.prompt = prompt
        self.kont = kont
        self._hash = hash((8, prompt, kont._hash))

    def __repr__(self) -> str:
        return f"Boundary(prompt={_short(self.prompt)}, depth={kont_depth(self.kont)})"


class Halted(Node):
    """The run ended normally with ``value``.

    >>> Halted(1) == Halted(1)
    True
    """

    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value
        self._hash = hash(("Halted", type(value).__name__, value))

    def __repr__(self) -> str:
        return f"Halted({_short(self.value)})"


class Failed(Node):
    """The run ended with a run-time error (kept as the exception object).

    >>> Failed(EvaluationError("bad")).message
    'bad'
    """

    __slots__ = ("error",)
    _fields = ("message",)

    def __init__(self, error: Exception) -> None:
        self.error = error
        self._hash = hash(("Failed", str(error)))

    @property
    def message(self) -> str:
        return str(self.error)

    def __repr__(self) -> str:
        return f"Failed({self.error!r})"


class Cycle(Node):
    """The run repeated a state: it diverges. ``period`` is the length of the cycle.

    >>> Cycle(2).period
    2
    """

    __slots__ = ("period",)
    _fields = ("period",)

    def __init__(self, period: int) -> None:
        self.period = period
        self._hash = hash(("Cycle", period))

    def __repr__(self) -> str:
        return f"Cycle(period={self.period})"


def _short(v: Any) -> str:
    return clip(unparse(v), 40, "...")


def kont_depth(kont: Frame) -> int:
    """The number of frames above :data:`HALT_K`.

    >>> kont_depth(LlmK(EvalK(HALT_K)))
    2
    """
    return kont.depth  # kept by each frame as it is built


# ---------------------------------------------------------------- the step function


def step(state: Node) -> Node:
    """One CEK transition. ``Boundary``, ``Halted`` and ``Failed`` do not step.

    Raises ``EvaluationError``, ``MalformedProgram`` or ``ParseError`` on a run-time
    error; :func:`run` turns those into ``Failed``.

    >>> s = Eval(Llm(Const("q")), (), HALT_K)
    >>> s = step(s); s
    Eval(<Const "q">, depth=1)
    >>> step(step(s))
    Boundary(prompt="q", depth=0)
    """
    # Dispatch on exact types (type(x) is C), which mypy does not narrow through a saved
    # type: the registers are typed Any, as in _run_registers.
    st: Any = state
    e: Any
    k: Any
    t = type(state)
    if t is Eval:
        e, env, k = st.expr, st.env, st.kont
        te = type(e)
        if te is Var:
            # <x, ρ, κ>  ->  <ρ(x), κ>          (ρ holds exactly x)
            return Ret(env[0], k)
        if te is App:
            # <(f a ...), ρ, κ>  ->  evaluate the parts left to right (see next_part)
            return next_part((), e.seq, env, k)
        if te is Const:
            # <c, ρ, κ>  ->  <c, κ>
            return Ret(e.value, k)
        if te is If:
            # <(if t a b), ρ, κ>  ->  <t, ρ|t, IfK(a b, ρ|ab, κ)>;  an atomic t is decided on the spot
            test = e.test
            if test.atomic:
                return _branch(
                    atom_value(test, e.test_sel(env)), e.branches, e.branches_sel(env), k
                )
            return Eval(test, e.test_sel(env), IfK(e.branches, e.branches_sel(env), k))
        if te is PrimRef:
            # <p, ρ, κ>  ->  <primitive p, κ>
            return Ret(e.prim, k)
        if te is Lambda:
            # <(lambda (x ...) b), ρ, κ>  ->  <closure(λ, ρ), κ>   (ρ holds exactly fv(λ))
            return Ret(Closure(e.group, 0, env), k)
        if te is Quote:
            # <'d, ρ, κ>  ->  <d, κ>
            return Ret(e.value, k)
        if te is Begin:
            # <(begin e1 e ...), ρ, κ>  ->  <e1, ρ|e1, BeginK((e ...), ρ|(e ...), κ)>;  a lone e1 is in tail position
            seq = e.seq
            if seq.tail.head is None:
                return Eval(seq.head, env, k)
            return Eval(seq.head, seq.head_sel(env), BeginK(seq.tail, seq.tail_sel(env), k))
        if te is Cond:
            # <(cond (t e) c ...), ρ, κ>  ->  <t, ρ|t, CondK(e c ..., ρ|(e c ...), κ)>   (when, unless alike)
            return Eval(e.test, e.test_sel(env), CondK(e.clauses, e.clauses_sel(env), k))
        if te is And or te is Or:
            # <(and e1 e ...), ρ, κ>  ->  <e1, ρ|e1, AndK((e ...), ρ|(e ...), κ)>;  a lone e1 is in tail position (or: OrK)
            seq = e.seq
            if seq.tail.head is None:
                return Eval(seq.head, env, k)
            frame = AndK if te is And else OrK
            return Eval(seq.head, seq.head_sel(env), frame(seq.tail, seq.tail_sel(env), k))
        if te is LetStar:
            # <(let* ((x e) b ...) body), ρ, κ>  ->  <e, ρ|e, LetStarK(x (let* (b ...) body), ρ|rest, κ)>;
            # an atomic e is bound on the spot;  <(let* () body), ρ, κ>  ->  <body, ρ, κ>
            return _let_star(e, env, k)
        if te is Letrec:
            # <(letrec ((f λ) ...) b), ρ, κ>  ->  <b, ρ|b + {f: closure(group, i, ρ|group)}, κ>   (closure over the members f reaches)
            return _bind_group(e, env, k)
        if te is Define:
            # <(define (f x) e) ... b, ρ, κ>  ->  <b, ρ|b + {f: closure(group, i, ρ|group)}, κ>   (a body's run of procedure defines, bound as letrec binds)
            return _bind_group(e, env, k)
        if te is DefineValue:
            # <(define x e) b, ρ, κ>  ->  as <((lambda (x) b) e), ρ, κ>: e first, then b with x bound (see next_part)
            return next_part((), e.seq, env, k)
        if te is Llm:
            # <(llm a), ρ, κ>  ->  <a, ρ, LlmK(κ)>
            return Eval(e.arg, env, LlmK(k))
        if te is EvalForm:
            # <(eval a), ρ, κ>  ->  <a, ρ, EvalK(κ)>
            return Eval(e.arg, env, EvalK(k))
        raise WrongType(
            f"step: {te.__name__} is not an expression node of the CEK; build expressions with compile_program"
        )
    if t is Ret:
        v, k = st.value, st.kont
        tk = type(k)
        if tk is ArgsK:
            # <v, ArgsK(done, rest, ρ, κ)>  ->  continue the application with done + v (see next_part)
            return next_part(k.done + (v,), k.rest, k.env, k.next)
        if tk is IfK:
            # <#f, IfK(a b, ρ, κ)>  ->  <b, ρ|b, κ>;   <v, IfK(a b, ρ, κ)>  ->  <a, ρ|a, κ>
            return _branch(v, k.branches, k.env, k.next)
        if tk is BeginK:
            # <v, BeginK((e), ρ, κ)>  ->  <e, ρ, κ>;   <v, BeginK((e e' ...), ρ, κ)>  ->  <e, ρ|e, BeginK((e' ...), ..., κ)>
            rest = k.rest
            if rest.tail.head is None:
                return Eval(rest.head, k.env, k.next)
            return Eval(
                rest.head, rest.head_sel(k.env), BeginK(rest.tail, rest.tail_sel(k.env), k.next)
            )
        if tk is CondK:
            # <#f, CondK(e c ..., ρ, κ)>  ->  <(cond c ...), ρ|c, κ>, or <nil, κ> when no clause is left;
            # <v, CondK(e c ..., ρ, κ)>  ->  <e, ρ|e, κ>, or <v, κ> for a clause (t) without e
            return _clause(v, k.clauses, k.env, k.next)
        if tk is AndK or tk is OrK:
            # <#f, AndK(...)>  ->  <#f, κ>  (or: <v, OrK(...)>  ->  <v, κ> for v not #f);  else as BeginK
            if (v is FALSE) is (tk is AndK):
                return Ret(v, k.next)
            rest = k.rest
            if rest.tail.head is None:
                return Eval(rest.head, k.env, k.next)
            return Eval(
                rest.head, rest.head_sel(k.env), tk(rest.tail, rest.tail_sel(k.env), k.next)
            )
        if tk is LetStarK:
            # <v, LetStarK(x rest, ρ, κ)>  ->  <rest, ({x: v} + ρ)|rest, κ>   (rest: the next binding, or the body in tail position)
            rest = k.rest
            return Eval(rest.body, rest.body_sel((v,) + k.env), k.next)
        if tk is LlmK:
            # <q, LlmK(κ)>  ->  boundary (llm q, κ)   when q is a string
            if type(v) is not str:
                raise EvaluationError(
                    f"llm: the prompt must be a string, got {_short(v)} ({type_name(v)})"
                )
            return Boundary(v, k.next)
        if tk is EvalK:
            # <text or datum, EvalK(κ)>  ->  <program, {}, κ>   (closed program, tail position)
            return Eval(program_value(v), (), k.next)
        if tk is HaltK:
            # <v, HALT_K>  ->  halted with v
            return Halted(v)
        raise WrongType(
            f"step: {tk.__name__} is not a continuation frame of the CEK; continuations are built by step and run"
        )
    raise WrongType(
        f"step: {t.__name__} is not a running state (Eval or Ret): a Boundary steps on with "
        "Ret(completion, boundary.kont), and Halted, Failed and Cycle have ended"
    )


def _let_star(e: LetStar, env: tuple, k: Frame) -> Node:
    # let* rule: a binding's value first (an atom's at once), then the rest with it bound.
    init, rest = e.init, e.rest
    if init is None:
        return Eval(rest.body, env, k)
    if init.atomic:
        return Eval(
            rest.body, rest.body_sel((atom_value(init, e.init_sel(env)),) + e.rest_sel(env)), k
        )
    return Eval(init, e.init_sel(env), LetStarK(rest, e.rest_sel(env), k))


def _bind_group(e: Any, env: tuple, k: Frame) -> Node:
    # letrec and define rules: the body, with a closure for each member it uses.
    group = e.group
    genv = e.group_sel(env)
    vals = env + tuple(group.closure(j, genv) for j in e.rec) if e.rec else env
    return Eval(e.body, e.body_sel(vals), k)


def atom_value(e: Any, env: tuple) -> Any:
    """The value of an atomic expression (no effect, cannot fail), without a step.

    >>> from agentic_machines.cek.reader import parse
    >>> atom_value(compile_program(parse("42")), ())
    42
    """
    t = type(e)
    if t is Var:
        return env[0]
    if t is Const:
        return e.value
    if t is PrimRef:
        return e.prim
    if t is Lambda:
        return Closure(e.group, 0, env)
    return e.value  # Quote


def next_part(done: tuple, seq: Any, env: tuple, k: Frame) -> Node:
    """The state after the application rule has read the parts it can (``done``, then ``seq``).

    >>> from agentic_machines.cek.reader import parse
    >>> call = compile_program(parse("(+ 1 2)"))
    >>> next_part((), call.seq, (), HALT_K)
    Ret(3, depth=0)
    """
    # Application rule, one part at a time (ρ is aligned with seq.fv):
    #   atomic part a:    done, (a e ...), ρ   ->  done + value(a), (e ...), ρ|(e ...)
    #   compound part e:  <e, ρ|e, ArgsK(done, (e' ...), ρ|(e' ...), κ)>
    #   no part left:     apply done[0] to done[1:]
    # (``seq`` is a Seq, typed Any: its selectors are None only on the empty sequence,
    # which the loop condition excludes, a relation mypy cannot follow.)
    while seq.head is not None:
        head = seq.head
        if not head.atomic:
            return Eval(head, seq.head_sel(env), ArgsK(done, seq.tail, seq.tail_sel(env), k))
        done = done + (atom_value(head, seq.head_sel(env)),)
        env = seq.tail_sel(env)
        seq = seq.tail
    return apply_procedure(done[0], done[1:], k)


def _branch(v: Any, br: Branches, env: tuple, k: Frame) -> Node:
    # if rule: only #f is false.
    if v is FALSE:
        return Eval(br.orelse, br.else_sel(env), k)
    return Eval(br.then, br.then_sel(env), k)


def _clause(v: Any, cl: Clauses, env: tuple, k: Frame) -> Node:
    # cond rule: only #f is false; a clause (t) gives t's value; no clause left gives nil.
    if v is FALSE:
        if cl.orelse is None:
            return Ret(NIL, k)
        return Eval(cl.orelse, cl.else_sel(env), k)
    if cl.then is None:
        return Ret(v, k)
    return Eval(cl.then, cl.then_sel(env), k)


def fit_arguments(plan: Any, args: tuple) -> tuple:
    """The arguments of a call as the body's parameters take them: a procedure with a
    rest parameter gets the arguments after the first ``required`` as one list.

    >>> from agentic_machines.cek.reader import parse
    >>> rest = compile_program(parse("(lambda (a . more) more)")).group.plans[0]
    >>> fit_arguments(rest, (1, 2, 3))
    (1, <list (2 3)>)
    """
    if plan.arity >= 0:
        n = plan.arity
        raise EvaluationError(
            f"a procedure of {n} argument{'s' if n != 1 else ''} was called with {len(args)}"
        )
    n = plan.required
    if len(args) < n:
        raise EvaluationError(
            f"a procedure of at least {n} argument{'s' if n != 1 else ''} was called with {len(args)}"
        )
    return args[:n] + (from_items(args[n:]),)


def apply_procedure(f: Any, args: tuple, k: Frame) -> Node:
    """The state after applying the procedure ``f`` (a closure or a primitive) to ``args``.

    >>> from agentic_machines.cek.reader import parse
    >>> plus = atom_value(compile_program(parse("+")), ())
    >>> apply_procedure(plus, (20, 22), HALT_K)
    Ret(42, depth=0)
    """
    tf = type(f)
    if tf is Closure:
        # apply closure(group, i, ρ) to args  ->  <body_i, {params: args} + ρ + recursive members, κ>
        # (a rest parameter takes the list of the arguments after the others: see fit_arguments)
        group = f.group
        plan = group.plans[f.index]
        if len(args) != plan.arity:
            args = fit_arguments(plan, args)
        vals = args + f.env
        if plan.rec:
            genv = f.env
            vals = vals + tuple(group.closure(j, genv) for j in plan.rec)
        return Eval(plan.body, plan.select(vals), k)
    if tf is Prim:
        # apply primitive p to args  ->  <p(args), κ>
        return Ret(f.fn(*args), k)
    raise EvaluationError(f"{_short(f)} ({type_name(f)}) is not a procedure and cannot be applied")


def program_value(v: Any) -> Expr:
    """The closed expression that ``(eval v)`` runs: ``v`` is program text or a quoted datum.

    Text that does not read is how this run ends (h returns 1 when the text is a model's
    completion), not a mistake in a file: the error says what is wrong with the text,
    without the reader's advice to its writer.

    >>> program_value("(+ 1 2)")
    <App (+ 1 2)>
    >>> program_value("(((")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.ParseError: eval: the text "(((" is not a program: unclosed '(' (line 1, column 3)
    """
    if type(v) is str:
        try:
            datum = parse(v)
        except ParseError as err:
            problem = f"eval: the text {_short(v)} is not a program: {err.problem}"
            raise ParseError(problem, line=err.line, column=err.column) from None
        return compile_program(datum)
    return compile_program(v)


# ---------------------------------------------------------------- running


_STOP = (Boundary, Halted, Failed)


def out_of_fuel(fuel: int) -> Undecided:
    """The error of a run that used all its ``fuel``: undecided, never a verdict.

    >>> str(out_of_fuel(10)).startswith("the run used all 10 steps of fuel")
    True
    """
    return Undecided(
        f"the run used all {fuel} steps of fuel without reaching an llm call, the end, "
        "or a repeated state; pass a larger fuel= to decide it"
    )


def run_by_steps(state: Node, *, fuel: int, detect_cycles: bool = True) -> tuple[Node, int]:
    """Run from ``state`` by calling :func:`step` once per transition: the definition of a run.

    Returns ``(outcome, steps)``: the first ``Boundary``, ``Halted``, ``Failed`` or
    ``Cycle`` (a repeated state, found exactly with Brent's algorithm in constant
    memory), and the number of steps taken. Raises :class:`Undecided` when ``fuel`` steps
    pass first. :func:`agentic_machines.cek.fast.run` takes the same transitions faster
    and is tested against this one.

    >>> from agentic_machines.cek.reader import parse
    >>> start = Eval(compile_program(parse("(+ 1 (llm \\"q\\"))")), (), HALT_K)
    >>> run_by_steps(start, fuel=100)[0]
    Boundary(prompt="q", depth=1)
    """
    s: Any = state  # any state node; each has the Node protocol's _hash
    if type(s) in _STOP:
        return s, 0
    tortoise, t_hash = s, s._hash
    power = lam = 1
    steps = 0
    while True:
        if steps >= fuel:
            raise out_of_fuel(fuel)
        try:
            s = step(s)
        except (EvaluationError, MalformedProgram, ParseError) as err:
            return Failed(err), steps + 1
        steps += 1
        ts = type(s)
        if ts is Boundary or ts is Halted or ts is Failed:
            return s, steps
        if detect_cycles:
            if s._hash == t_hash and s == tortoise:
                return Cycle(lam), steps
            if power == lam:
                tortoise, t_hash = s, s._hash
                power <<= 1
                lam = 0
            lam += 1
