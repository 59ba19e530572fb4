"""Expressions of the CEK language: compiled from data, printed back to data.

A program is read as data (:mod:`.reader`), then :func:`compile_program` turns the data
into expression nodes. Each node knows its free variables ``fv`` (a sorted tuple of
names) and carries *selectors* that cut an environment down to what a sub-expression
may use. An environment is just a tuple of values aligned with the ``fv`` of the
expression it serves, which is what makes CEK states canonical: an environment holds
exactly the free variables of its expression, no more.

Rules of the language that the compiler enforces (each violation raises
:class:`~agentic_machines.errors.MalformedProgram`):

- special forms: ``(quote d)``, ``(lambda (x ...) body)`` (also ``(lambda args body)``
  and ``(lambda (x . rest) body)``), ``(let ((x e) ...) body)`` (compiled to
  ``((lambda (x ...) body) e ...)``), ``(let* ((x e) ...) body)``, ``(letrec ((f (lambda ...))
  ...) body)``, ``(if e e e)``, ``(cond (e body) ... (else body))``, ``(when e body)``,
  ``(unless e body)``, ``(and e ...)``, ``(or e ...)``, ``(begin e ...)``, ``(llm e)``,
  ``(eval e)``; a *body* is one or more expressions after ``(define ...)`` forms, which
  compile to ``letrec`` (procedures) and ``let`` (values), in order (docs/design.md);
- the names of special forms and primitives are reserved: they cannot be bound, so a
  primitive name always means the primitive (this keeps reified values closed and
  hygienic without renaming);
- programs are closed: a variable must be bound by an enclosing form.

>>> from agentic_machines.cek.reader import parse
>>> e = compile_program(parse("(let ((x 1)) (lambda (y) (+ x y)))"))
>>> type(e).__name__, e.fv
('App', ())
>>> to_datum(e) == parse("((lambda (x) (lambda (y) (+ x y))) 1)")
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from ..errors import MalformedProgram
from .syntax import FALSE, NIL, TRUE, Bool, Nil, Node, Pair, Symbol, from_items, iter_list, printed
from .values import PRIMITIVES, Closure, Prim

__all__ = [
    "Expr",
    "Const",
    "Quote",
    "Var",
    "PrimRef",
    "Lambda",
    "Group",
    "Seq",
    "EMPTY_SEQ",
    "seq_of",
    "App",
    "If",
    "Branches",
    "Begin",
    "Letrec",
    "Define",
    "DefineValue",
    "Cond",
    "Clauses",
    "And",
    "Or",
    "LetStar",
    "Binding",
    "Llm",
    "EvalForm",
    "SPECIAL_FORMS",
    "RESERVED",
    "compile_program",
    "to_datum",
    "check_datum",
]

SPECIAL_FORMS = frozenset(
    {"quote", "lambda", "let", "letrec", "if", "begin", "llm", "eval"}
    | {"define", "cond", "and", "or", "let*", "when", "unless"}
)
RESERVED = SPECIAL_FORMS | frozenset(PRIMITIVES)
_PRIM_VALUES = {name: Prim(name) for name in PRIMITIVES}


# ---------------------------------------------------------------- environments


def _union(*fvs: Sequence[str]) -> tuple[str, ...]:
    names: set[str] = set()
    for fv in fvs:
        names.update(fv)
    return tuple(sorted(names))


# The two trivial selectors are C callables, not Python functions, so selecting costs no
# Python frame in the run loop: ``tuple(env)`` is ``env`` itself (an exact tuple is
# returned as is), and the empty slice of any tuple is ``()``.
_identity: Callable[[tuple], tuple] = tuple
EMPTY_PREFIX: Callable[[tuple], tuple] = itemgetter(slice(0, 0))


def _selector(source: Sequence[str], target: Sequence[str]) -> Callable[[tuple], tuple]:
    """A function that maps an environment aligned with ``source`` to one aligned with ``target``.

    The first occurrence of a name in ``source`` wins (parameters shadow captured names).
    """
    if not target:
        return EMPTY_PREFIX
    if source == target:
        return _identity
    position: dict[str, int] = {}
    for i, name in enumerate(source):
        position.setdefault(name, i)
    index = [position[name] for name in target]
    if len(index) == 1:
        i = index[0]
        return itemgetter(slice(i, i + 1))  # a 1-tuple, read in C (no Python frame)
    return itemgetter(*index)


# ---------------------------------------------------------------- expression nodes


class Expr(Node):
    """Base class of expression nodes; ``fv`` is the sorted tuple of free variables.

    >>> from agentic_machines.cek.reader import parse
    >>> compile_program(parse("(+ 1 2)")).fv
    ()
    """

    __slots__ = ("fv",)
    fv: tuple[str, ...]
    _hash: int  # the Node protocol's cached hash, set by each subclass
    atomic = False
    """Atomic expressions (constants, variables, quotes, primitive names, lambdas) have
    no effect and cannot fail, so the machine evaluates them on the spot (see step)."""

    def __repr__(self) -> str:
        text = printed(self)
        return f"<{type(self).__name__} {text if len(text) <= 60 else text[:57] + '...'}>"


class _Literal(Expr):
    """An atom that evaluates to a value it holds (:class:`Const`, :class:`Quote`): built
    alike, told apart by type (they print differently); ``_tag`` keeps the hashes apart.
    """

    __slots__ = ("value",)
    atomic = True
    _tag: str

    def __init__(self, value: Any) -> None:
        self.value = value
        self.fv = ()
        self._hash = hash((self._tag, type(value).__name__, value))


class Const(_Literal):
    """A self-evaluating literal: an integer, a string, ``#t``/``#f`` or ``nil``.

    >>> Const(5).value, Const("a") == Const("a")
    (5, True)
    """

    __slots__ = ()
    _fields = ("value",)
    _tag = "Const"


class Quote(_Literal):
    """``(quote d)``: the datum ``d`` itself (its ``value``, also named ``datum``).

    >>> Quote(Symbol("a")).datum, Quote(1) == Const(1)
    (Symbol('a'), False)
    """

    __slots__ = ()
    _fields = ("datum",)
    _tag = "Quote"

    @property
    def datum(self) -> Any:
        """The quoted datum (the machine reads it as ``value``)."""
        return self.value


class Var(Expr):
    """A variable reference; its environment is the one-tuple of its value.

    >>> Var("x").fv
    ('x',)
    """

    __slots__ = ("name",)
    _fields = ("name",)
    atomic = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.fv = (name,)
        self._hash = hash(("Var", name))


class PrimRef(Expr):
    """A reference to a primitive procedure (primitive names cannot be rebound).

    >>> PrimRef("car").prim
    <primitive car>
    """

    __slots__ = ("name", "prim")
    _fields = ("name",)
    atomic = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.fv = ()
        self._hash = hash(("PrimRef", name))
        self.prim = _PRIM_VALUES[name]


class Lambda(Expr):
    """``(lambda (x ...) body)``. ``group`` is its one-member :class:`Group`. With
    ``rest``, the last parameter takes the list of the arguments after the others:
    ``(lambda (x . rest) body)``, or ``(lambda args body)`` when it is the only one.

    >>> Lambda(("x",), App(seq_of([PrimRef("+"), Var("x"), Var("k")]))).fv
    ('k',)
    >>> Lambda(("x", "more"), Var("more"), rest=True)
    <Lambda (lambda (x . more) more)>
    """

    __slots__ = ("params", "body", "group", "rest")
    _fields = ("params", "body", "rest")
    atomic = True

    def __init__(self, params: tuple[str, ...], body: Expr, rest: bool = False) -> None:
        self.params = tuple(params)
        self.body = body
        self.rest = bool(rest)
        self.fv = tuple(n for n in body.fv if n not in self.params)
        self._hash = hash((13, self.params, body._hash, self.rest))
        self.group = Group((), (self,))


class Plan:
    """How to build a lambda body's environment from ``args + captured + recursive``."""

    __slots__ = ("arity", "body", "rec", "select", "index", "self_only", "required")

    def __init__(
        self, arity: int, body: Expr, rec: tuple[int, ...], select: Callable, index: int
    ) -> None:
        # arity: the number of arguments, or -1 for a lambda with a rest parameter, which
        # takes at least ``required`` (so the run loop's one comparison sends it aside)
        self.arity = arity
        self.required = arity
        self.body = body
        self.rec = rec
        self.select = select
        self.index = index
        # True when the only member the body calls is itself, over the same group and
        # environment: its closure is then the calling closure (set by Group)
        self.self_only = False


class Group(Node):
    """A group of lambdas closed together: ``names`` are bound to ``lams`` recursively.

    A plain lambda is a group with no names. A closure is (group, index, environment);
    it never contains itself: calling member i re-creates the closures of the members
    its body uses, from the group's source and its environment. So closures are finite
    trees that print back as source.

    A member's closure is built over the *sub-group* of the members it can reach
    (``members[i]``), not the whole letrec: a closure never carries a sibling it cannot
    call or that sibling's captured values, so the same computation gives equal states
    whatever dead siblings its letrec had (canonical states).

    >>> from agentic_machines.cek.reader import parse
    >>> e = compile_program(parse("(letrec ((f (lambda (n) (g n))) (g (lambda (n) n))) f)"))
    >>> e.group.names, e.group.fv, e.group.members[1][0].names
    (('f', 'g'), (), ('g',))
    """

    __slots__ = ("names", "lams", "fv", "plans", "members")
    _fields = ("names", "lams")

    def __init__(
        self, names: tuple[str, ...], lams: tuple[Lambda, ...], _smaller: dict | None = None
    ) -> None:
        self.names = tuple(names)
        self.lams = tuple(lams)
        self._hash = hash(("Group", self.names, self.lams))
        bound = set(self.names)
        self.fv = tuple(n for n in _union(*(lam.fv for lam in self.lams)) if n not in bound)
        self.members = self._members({} if _smaller is None else _smaller)
        plans: list[Plan] = []
        for lam in self.lams:
            rec = tuple(
                j for j, n in enumerate(self.names) if n in lam.body.fv and n not in lam.params
            )
            source = list(lam.params) + list(self.fv) + [self.names[j] for j in rec]
            # Priority: parameters, then the group's own names, then captured names.
            position: dict[str, int] = {}
            for i, n in enumerate(lam.params):
                position.setdefault(n, i)
            base = len(lam.params) + len(self.fv)
            for k, j in enumerate(rec):
                position.setdefault(self.names[j], base + k)
            for i, n in enumerate(self.fv):
                position.setdefault(n, len(lam.params) + i)
            ordered = [""] * len(source)
            for n, i in position.items():
                ordered[i] = n
            plan = Plan(len(lam.params), lam.body, rec, _selector(ordered, lam.body.fv), len(plans))
            if lam.rest:
                plan.arity, plan.required = -1, len(lam.params) - 1
            plans.append(plan)
        self.plans = tuple(plans)
        for i, plan in enumerate(self.plans):
            plan.self_only = plan.rec == (i,) and self.members[i] == (self, i, None)

    def __repr__(self) -> str:
        lams = " ".join(printed(lam) for lam in self.lams)
        return f"<Group {' '.join(self.names) or '(lambda)'}: {lams}>"

    def _members(self, smaller: dict) -> tuple:
        """For each member i: (sub-group of the members i reaches, i's index in it, a
        selector from this group's environment to the sub-group's, or None for the same).

        ``smaller`` maps a name tuple to a sub-group already built for the same letrec; the
        sub-groups are built smallest first, so building one never recurses further.
        """
        n = len(self.lams)
        if n == 1:  # a plain lambda, or a letrec of one: it reaches the whole group
            return ((self, 0, None),)
        refs = [[k for k, name in enumerate(self.names) if name in lam.fv] for lam in self.lams]
        reach: list[tuple[int, ...]] = []
        for i in range(n):
            seen = {i}
            todo = [i]
            while todo:
                for k in refs[todo.pop()]:
                    if k not in seen:
                        seen.add(k)
                        todo.append(k)
            reach.append(tuple(sorted(seen)))
        for r in sorted(set(reach), key=len):
            key = tuple(self.names[k] for k in r)
            if len(r) < n and key not in smaller:
                smaller[key] = Group(key, tuple(self.lams[k] for k in r), smaller)
        members: list[tuple[Group, int, Callable[[tuple], tuple] | None]] = []
        for i, r in enumerate(reach):
            if len(r) == n:
                members.append((self, i, None))
                continue
            sub = smaller[tuple(self.names[k] for k in r)]
            select = None if sub.fv == self.fv else _selector(self.fv, sub.fv)
            members.append((sub, r.index(i), select))
        return tuple(members)

    def closure(self, index: int, env: tuple) -> Any:
        """The closure of member ``index`` with this group's environment ``env`` (canonical:
        over the sub-group that member reaches).

        >>> from agentic_machines.cek.reader import parse
        >>> e = compile_program(parse("(letrec ((f (lambda () 1)) (g (lambda () (f)))) g)"))
        >>> e.group.closure(0, ()).group.names
        ('f',)
        """
        sub, i, select = self.members[index]
        return Closure(sub, i, env if select is None else select(env))


class Seq(Node):
    """A sequence of expressions as a linked list (``head``, ``tail``); empty: :data:`EMPTY_SEQ`.

    Continuation frames keep the *pending* part of an application or ``begin`` as a
    ``Seq``, never the whole form, so a frame does not remember source code that has
    already been evaluated.

    >>> s = seq_of([Var("a"), Const(1), Var("b")])
    >>> s.size, s.fv, s.tail.fv
    (3, ('a', 'b'), ('b',))
    """

    __slots__ = (
        "head",
        "tail",
        "fv",
        "head_sel",
        "tail_sel",
        "size",
        "pre",
        "pre_consts",
        "stop",
        "stop_head_sel",
        "stop_tail_sel",
        "stop_call",
    )
    _fields = ("head", "tail")
    head_sel: Callable[[tuple], tuple] | None
    tail_sel: Callable[[tuple], tuple] | None
    stop_head_sel: Callable[[tuple], tuple] | None
    stop_tail_sel: Callable[[tuple], tuple] | None
    fv: tuple[str, ...]
    pre: Any  # the prefix getter, EMPTY_PREFIX, None (part by part) or UNPLANNED
    pre_consts: tuple
    stop: Seq
    stop_call: Any  # a primitive_call tuple or None

    def __init__(self, head: Expr | None, tail: Seq | None) -> None:
        self.head = head
        self.tail = tail
        if head is None:
            self.fv = ()
            self.size = 0
            self._hash = hash("Seq")
            self.pre, self.pre_consts, self.stop, self.stop_call = EMPTY_PREFIX, (), self, None
            self.stop_head_sel = self.stop_tail_sel = self.head_sel = self.tail_sel = None
            return
        assert tail is not None
        self.fv = _union(head.fv, tail.fv) if tail.fv else head.fv
        self.size = tail.size + 1
        self._hash = hash((11, head._hash, tail._hash))
        self.head_sel = _selector(self.fv, head.fv)
        self.tail_sel = _selector(self.fv, tail.fv)
        self.pre = UNPLANNED  # the run loop's plan is made when the sequence first runs

    def plan(self) -> Any:
        """Make the run loop's plan for this sequence; return ``pre`` (see below).

        The plan (fast._run_registers): ``pre`` reads the values of the atomic parts
        before the first compound part in one call from the environment (plus
        ``pre_consts``), and ``stop_head_sel``/``stop_tail_sel`` select the environments
        of that compound part (``stop.head``) and of the parts after it straight from
        this sequence's environment. These are the same tuples as the part-by-part
        selections of ``step`` (every fv is a tuple of distinct names). ``stop_call`` is
        the :func:`primitive_call` of ``stop.head`` read from this sequence's environment,
        or None. ``pre`` is None when a lambda is among those atomic parts (it needs a
        closure built): the loop then goes part by part. Made on first use, not when the
        sequence is built, so compiling (and the loader's round trip) costs what it did.

        >>> s = seq_of([Var("x"), Const(1), App(seq_of([Var("g"), Var("x")]))])
        >>> s.fv
        ('g', 'x')
        >>> s.plan()(("g-value", 7) + s.pre_consts), s.stop.head, s.stop_call
        ((7, 1), <App (g x)>, None)
        """
        found = _atom_spec(self)
        if found is None:  # a lambda: part by part
            self.pre, self.pre_consts, self.stop, self.stop_call = None, (), self, None
            self.stop_head_sel, self.stop_tail_sel = self.head_sel, self.tail_sel
            return None
        spec, seq = found
        self.stop = seq
        self.pre_consts = ()
        if seq.head is None:
            self.stop_head_sel = self.stop_tail_sel = self.stop_call = None
        else:
            assert seq.tail is not None
            self.stop_head_sel = _selector(self.fv, seq.head.fv)
            self.stop_tail_sel = _selector(self.fv, seq.tail.fv)
            self.stop_call = primitive_call(seq.head, self.fv)
        self.pre, self.pre_consts = _prefix_getter(self.fv, spec)
        return self.pre

    def __repr__(self) -> str:
        return f"<Seq{''.join(' ' + printed(e) for e in self.items())}>"

    def items(self) -> list[Expr]:
        """The expressions in order."""
        out = []
        seq = self
        while seq.head is not None:
            out.append(seq.head)
            seq = seq.tail  # type: ignore[assignment]
        return out


EMPTY_SEQ = Seq(None, None)


UNPLANNED = object()
"""``Seq.pre`` and ``If.test_call`` before their plan is made (see :meth:`Seq.plan`)."""


def _atom_spec(seq: Seq) -> tuple[list[tuple[bool, Any]], Seq] | None:
    """The atomic parts at the front of ``seq`` as a spec for :func:`_prefix_getter`
    (``(True, name)`` for a variable, ``(False, value)`` otherwise) and the rest of the
    sequence from its first compound part; None when a lambda is among those parts.

    >>> _atom_spec(seq_of([PrimRef("+"), Var("n"), Const(1)]))
    ([(False, <primitive +>), (True, 'n'), (False, 1)], <Seq>)
    """
    spec: list[tuple[bool, Any]] = []
    while seq.head is not None and seq.head.atomic:
        head = seq.head
        t = type(head)
        if t is Var:
            spec.append((True, head.name))  # type: ignore[attr-defined]
        elif t is Const:
            spec.append((False, head.value))  # type: ignore[attr-defined]
        elif t is Quote:
            spec.append((False, head.value))  # type: ignore[attr-defined]
        elif t is PrimRef:
            spec.append((False, head.prim))  # type: ignore[attr-defined]
        else:
            return None
        seq = seq.tail  # type: ignore[assignment]
    return spec, seq


def primitive_call(e: Expr, fv: tuple[str, ...]) -> tuple[Callable, Any, tuple] | None:
    """``(fn, get, consts)`` when ``e`` applies a primitive to atoms that need no closure
    (variables, constants, quotes, primitive names), else None.

    Such an application takes exactly one step, from evaluating it to its value, with no
    frame: its arguments are ``get(env + consts)`` (or ``get(env)`` when ``consts`` is
    empty) for an environment ``env`` aligned with ``fv`` (which contains ``e.fv``), and
    its value is ``fn(*arguments)``, raising what the primitive raises. The run loop
    evaluates such a part in place (fast._run_registers).

    >>> from agentic_machines.cek.reader import parse
    >>> fn, get, consts = primitive_call(compile_program(parse("(- 9 1)")), ())
    >>> fn(*get(() + consts))
    8
    >>> primitive_call(compile_program(parse("((lambda (x) x) 1)")), ()) is None
    True
    """
    if type(e) is not App or type(e.seq.head) is not PrimRef:
        return None
    found = _atom_spec(e.seq)
    if found is None or found[1].head is not None:
        return None
    getter, consts = _prefix_getter(fv, found[0][1:])
    return e.seq.head.prim.fn, getter, consts  # type: ignore[union-attr]


def _prefix_getter(fv: tuple[str, ...], spec: list) -> tuple[Any, tuple]:
    """(a function env + consts -> the prefix values as a tuple, consts) for a Seq plan."""
    if not spec:
        return EMPTY_PREFIX, ()
    consts: list = []
    index = []
    position = {name: i for i, name in enumerate(fv)}
    for is_var, x in spec:
        if is_var:
            index.append(position[x])
        else:
            index.append(len(fv) + len(consts))
            consts.append(x)
    if len(index) == 1:
        i = index[0]
        return itemgetter(slice(i, i + 1)), tuple(consts)  # a slice: a 1-tuple, not the item
    return itemgetter(*index), tuple(consts)


def seq_of(items: Sequence[Expr]) -> Seq:
    """Build a :class:`Seq` from a Python sequence of expressions (last first).

    >>> seq_of([]) is EMPTY_SEQ
    True
    """
    seq = EMPTY_SEQ
    for item in reversed(items):
        seq = Seq(item, seq)
    return seq


class _SeqForm(Expr):
    """A form made of one :class:`Seq` (:class:`App`, :class:`Begin`): built alike, told
    apart by type, since the machine does different things with the sequence. ``_tag``
    keeps the two hashes apart.
    """

    __slots__ = ("seq",)
    _fields = ("seq",)
    _tag: int

    def __init__(self, seq: Seq) -> None:
        self.seq = seq
        self.fv = seq.fv
        self._hash = hash((self._tag, seq._hash))


class App(_SeqForm):
    """``(f a ...)``: evaluate the parts left to right, then apply the first to the rest.

    >>> from agentic_machines.cek.reader import parse
    >>> compile_program(parse("(car '(1))")).seq.size
    2
    """

    __slots__ = ()
    _tag = 12


class DefineValue(App):
    """A value ``(define x e)`` at the start of a body, then the rest of the body ``b``:
    run as ``((lambda (x) b) e)`` runs, but its own node, so the stepper names the
    ``define`` rule and the printer writes the define back.

    >>> from agentic_machines.cek.reader import parse_program
    >>> e = compile_program(parse_program("(define x 5) (+ x 1)"))
    >>> type(e).__name__, printed(to_datum(e))
    ('DefineValue', '(begin (define x 5) (+ x 1))')
    """

    __slots__ = ()
    _tag = 25


class Branches(Node):
    """The two pending branches of an ``if`` (what its frame keeps).

    >>> Branches(Var("a"), Const(0)).fv
    ('a',)
    """

    __slots__ = ("then", "orelse", "fv", "then_sel", "else_sel")
    _fields = ("then", "orelse")

    def __init__(self, then: Expr, orelse: Expr) -> None:
        self.then = then
        self.orelse = orelse
        self.fv = _union(then.fv, orelse.fv)
        self._hash = hash((15, then._hash, orelse._hash))
        self.then_sel = _selector(self.fv, then.fv)
        self.else_sel = _selector(self.fv, orelse.fv)

    def __repr__(self) -> str:
        return f"<Branches {printed(self.then)} {printed(self.orelse)}>"


class If(Expr):
    """``(if test then else)``: only ``#f`` is false.

    >>> If(Var("t"), Branches(Var("a"), Const(0))).fv
    ('a', 't')
    """

    __slots__ = ("test", "branches", "test_sel", "branches_sel", "test_call")
    _fields = ("test", "branches")

    def __init__(self, test: Expr, branches: Branches) -> None:
        self.test = test
        self.branches = branches
        self.fv = _union(test.fv, branches.fv)
        self._hash = hash((14, test._hash, branches._hash))
        self.test_sel = _selector(self.fv, test.fv)
        self.branches_sel = _selector(self.fv, branches.fv)
        self.test_call: Any = UNPLANNED  # made when the if first runs (see plan)

    def plan(self) -> Any:
        """Make and return ``test_call``: the :func:`primitive_call` of the test, read
        from this ``if``'s environment, or None (fast._run_registers uses it).

        >>> from agentic_machines.cek.reader import parse
        >>> e = compile_program(parse("(let ((n 1)) (if (< n 2) n 0))")).seq.head.body
        >>> fn, get, consts = e.plan()
        >>> fn(*get((1,) + consts))
        #t
        """
        self.test_call = primitive_call(self.test, self.fv)
        return self.test_call


class Begin(_SeqForm):
    """``(begin e ...)``: evaluate in order, the value of the last (in tail position).

    >>> from agentic_machines.cek.reader import parse
    >>> compile_program(parse("(begin 1 2)")).seq.items()
    [<Const 1>, <Const 2>]
    """

    __slots__ = ()
    _tag = 16


class Clauses(Node):
    """What a ``cond``, ``when`` or ``unless`` still has to do once its test is known (what
    its frame keeps): ``then`` if the test is true (None: the test's value is the value),
    ``orelse`` if it is false (None: nothing is left, the value is ``nil``). ``form`` says
    how it prints, ``more`` that ``orelse`` is the next clauses of the same ``cond``.

    >>> Clauses(None, Var("b")).fv, Clauses(Var("a"), None, "when").fv
    (('b',), ('a',))
    """

    __slots__ = ("then", "orelse", "form", "more", "fv", "then_sel", "else_sel")
    _fields = ("then", "orelse", "form", "more")

    def __init__(
        self, then: Expr | None, orelse: Expr | None, form: str = "cond", more: bool = False
    ) -> None:
        self.then = then
        self.orelse = orelse
        self.form = form
        self.more = more
        tfv = then.fv if then is not None else ()
        efv = orelse.fv if orelse is not None else ()
        self.fv = _union(tfv, efv)
        self._hash = hash((22, then, orelse, form, more))
        self.then_sel = _selector(self.fv, tfv)
        self.else_sel = _selector(self.fv, efv)

    def __repr__(self) -> str:
        return f"<Clauses of {self.form}>"


class Cond(Expr):
    """``(cond (test e ...) clause ... (else e ...))``, and ``when``/``unless``: the first
    clause's ``test``, and what follows it (:class:`Clauses`). Only ``#f`` is false.

    >>> from agentic_machines.cek.reader import parse
    >>> e = compile_program(parse("(cond ((null? '()) 'a) (else 'b))"))
    >>> type(e).__name__, type(e.clauses.orelse).__name__
    ('Cond', 'Quote')
    """

    __slots__ = ("test", "clauses", "test_sel", "clauses_sel")
    _fields = ("test", "clauses")

    def __init__(self, test: Expr, clauses: Clauses) -> None:
        self.test = test
        self.clauses = clauses
        self.fv = _union(test.fv, clauses.fv)
        self._hash = hash((23, test._hash, clauses._hash))
        self.test_sel = _selector(self.fv, test.fv)
        self.clauses_sel = _selector(self.fv, clauses.fv)


class And(_SeqForm):
    """``(and e ...)``: the first ``#f``, or the value of the last (in tail position).

    >>> from agentic_machines.cek.reader import parse
    >>> compile_program(parse("(and 1 2)")).seq.size, compile_program(parse("(and)"))
    (2, <Const #t>)
    """

    __slots__ = ()
    _tag = 20


class Or(_SeqForm):
    """``(or e ...)``: the first value that is not ``#f``, or the value of the last.

    >>> from agentic_machines.cek.reader import parse
    >>> compile_program(parse("(or #f 2)")).seq.size, compile_program(parse("(or)"))
    (2, <Const #f>)
    """

    __slots__ = ()
    _tag = 21


class Binding(Node):
    """What a ``let*`` still has to do once the value of its first binding is known (what
    its frame keeps): bind ``name`` to the value, then evaluate ``body``, which is the rest
    of the same ``let*`` when ``more`` (its next binding), else the ``let*``'s body.
    ``name`` is None only in ``(let* () body)``. ``fv`` leaves ``name`` out; ``body_sel``
    selects ``body``'s environment from the value followed by this environment.

    >>> b = Binding("x", App(seq_of([PrimRef("+"), Var("x"), Var("y")])))
    >>> b.fv, b.body_sel((1, 2))
    (('y',), (1, 2))
    """

    __slots__ = ("name", "body", "more", "fv", "body_sel")
    _fields = ("name", "body", "more")

    def __init__(self, name: str | None, body: Expr, more: bool = False) -> None:
        self.name = name
        self.body = body
        self.more = more
        self.fv = tuple(n for n in body.fv if n != name)
        self._hash = hash((27, name, body._hash, more))
        # the name first: a later binding of the same name shadows the earlier one
        self.body_sel = _selector(((name,) if name is not None else ()) + self.fv, body.fv)

    def __repr__(self) -> str:
        return f"<Binding of {self.name}>"


class LetStar(Expr):
    """``(let* ((x e) ...) body)``: one node per binding, ``init`` (the ``e`` of the
    first) and the :class:`Binding` that follows it; a later binding sees the earlier
    ones. ``(let* () body)`` has no ``init`` (None).

    >>> from agentic_machines.cek.reader import parse
    >>> e = compile_program(parse("(let* ((x 1) (y (+ x 1))) y)"))
    >>> type(e).__name__, e.rest.name, type(e.rest.body).__name__, e.rest.more
    ('LetStar', 'x', 'LetStar', True)
    """

    __slots__ = ("init", "rest", "init_sel", "rest_sel")
    _fields = ("init", "rest")

    def __init__(self, init: Expr | None, rest: Binding) -> None:
        self.init = init
        self.rest = rest
        self.fv = rest.fv if init is None else _union(init.fv, rest.fv)
        self._hash = hash((26, init, rest._hash))
        self.init_sel = _selector(self.fv, init.fv if init is not None else ())
        self.rest_sel = _selector(self.fv, rest.fv)


class Letrec(Expr):
    """``(letrec ((f (lambda ...)) ...) body)``: mutually recursive lambdas.

    >>> from agentic_machines.cek.reader import parse
    >>> e = compile_program(parse("(let ((k 1)) (letrec ((f (lambda () k))) f))"))
    >>> e.seq.head.body.fv
    ('k',)
    """

    __slots__ = ("group", "body", "group_sel", "rec", "body_sel")
    _fields = ("group", "body")
    _tag = 19

    def __init__(self, group: Group, body: Expr) -> None:
        self.group = group
        self.body = body
        names = set(group.names)
        self.fv = _union(group.fv, [n for n in body.fv if n not in names])
        self._hash = hash((self._tag, group._hash, body._hash))
        self.group_sel = _selector(self.fv, group.fv)
        self.rec = tuple(j for j, n in enumerate(group.names) if n in body.fv)
        source = list(self.fv) + [group.names[j] for j in self.rec]
        self.body_sel = _selector(source, body.fv)


class Define(Letrec):
    """A run of procedure ``(define (f x) ...)`` forms at the start of a body, then the
    rest of the body: bound as :class:`Letrec` binds (so they may call each other), but
    its own node, so the stepper names the ``define`` rule and the printer writes the
    defines back. ``_tag`` keeps it apart from a ``letrec`` of the same procedures.

    >>> from agentic_machines.cek.reader import parse_program
    >>> e = compile_program(parse_program("(define (f x) x) (f 1)"))
    >>> type(e).__name__, e.group.names, printed(to_datum(e))
    ('Define', ('f',), '(begin (define f (lambda (x) x)) (f 1))')
    """

    __slots__ = ()
    _tag = 24


class _ArgForm(Expr):
    """A form of one argument (:class:`Llm`, :class:`EvalForm`): built alike, told apart
    by type; ``_tag`` keeps the two hashes apart.
    """

    __slots__ = ("arg",)
    _fields = ("arg",)
    _tag: int

    def __init__(self, arg: Expr) -> None:
        self.arg = arg
        self.fv = arg.fv
        self._hash = hash((self._tag, arg._hash))


class Llm(_ArgForm):
    """``(llm e)``: the only model call; ``e`` must evaluate to a string.

    >>> Llm(Var("q")).fv
    ('q',)
    """

    __slots__ = ()
    _tag = 17


class EvalForm(_ArgForm):
    """``(eval e)``: run a string of program text or a quoted datum, closed, in tail position.

    >>> EvalForm(Const("(+ 1 2)")).fv
    ()
    """

    __slots__ = ()
    _tag = 18


# ---------------------------------------------------------------- compiling data to expressions

_Build = Callable[[list[Expr]], Expr]


def compile_program(datum: Any) -> Expr:
    """Compile a datum (as returned by :func:`~agentic_machines.cek.reader.read`) into a
    closed expression; raise :class:`MalformedProgram` with a fix if it is not one.

    >>> from agentic_machines.cek.reader import parse
    >>> compile_program(parse("(f 1)"))
    Traceback (most recent call last):
      ...
    agentic_machines.errors.MalformedProgram: unbound variable `f`: bind it with let, lambda or letrec, or use a primitive (+, car, string-append, ...)
    """
    expr = _compile(datum)
    if expr.fv:
        raise MalformedProgram(
            f"unbound variable `{expr.fv[0]}`: bind it with let, lambda or letrec, "
            "or use a primitive (+, car, string-append, ...)"
        )
    return expr


def _compile(datum: Any) -> Expr:
    # Explicit work stack: ("visit", datum) expands a form; (builder, n) pops n results.
    tasks: list[tuple] = [(None, datum)]
    results: list[Expr] = []
    while tasks:
        build, item = tasks.pop()
        if build is not None:
            n = item
            args = results[len(results) - n :] if n else []
            del results[len(results) - n :]
            results.append(build(args))
            continue
        outcome = _visit(item)
        if isinstance(outcome, Expr):
            results.append(outcome)
        else:
            build, children = outcome
            tasks.append((build, len(children)))
            for child in reversed(children):
                tasks.append((None, child))
    return results[0]


def _visit(d: Any) -> Expr | tuple[_Build, list]:
    t = type(d)
    if t is int or t is str or t is Bool or t is Nil:
        return Const(d)
    if t is Symbol:
        name = d.name
        if name in SPECIAL_FORMS:
            raise MalformedProgram(
                f"`{name}` is a special form, not a value: write it as the head of a list, e.g. {_USAGE[name]}"
            )
        if name in PRIMITIVES:
            return PrimRef(name)
        if name == ".":
            raise MalformedProgram(
                "`.` may only end a parameter list, as in (lambda (a . rest) rest) or "
                "(define (f a . rest) rest)"
            )
        return Var(name)
    if t is not Pair:
        raise MalformedProgram(
            f"a {type(d).__name__} value cannot appear in program text; only numbers, strings, "
            "#t/#f, nil, symbols and lists are code"
        )
    items = list(iter_list(d))
    head = items[0]
    if type(head) is Symbol and head.name in SPECIAL_FORMS:
        return _FORMS[head.name](items)
    if head is _DEFINE_GROUP:
        return _form_define_group(items)
    if head is _DEFINE_VALUE:
        return _form_define_value(items)
    return _build_app, items


def _build_app(xs: list[Expr]) -> Expr:
    return App(seq_of(xs))


_USAGE = {
    "quote": "(quote datum) or 'datum",
    "lambda": "(lambda (x y) body)",
    "let": "(let ((x 1) (y 2)) body)",
    "letrec": "(letrec ((f (lambda (n) ...))) (f 3))",
    "if": "(if test then else)",
    "begin": "(begin e1 e2 ... en)",
    "define": "(define (f x) body) or (define x 1), before the expressions of a body",
    "cond": "(cond ((< n 0) 'neg) ((= n 0) 'zero) (else 'pos))",
    "and": "(and e1 e2 ...)",
    "or": "(or e1 e2 ...)",
    "let*": "(let* ((x 1) (y (+ x 1))) body)",
    "when": "(when test e1 e2 ...)",
    "unless": "(unless test e1 e2 ...)",
    "llm": '(llm "prompt")',
    "eval": '(eval "(+ 1 2)") or (eval \'(+ 1 2))',
}


def _shape(form: str, ok: bool, what: str) -> None:
    if not ok:
        raise MalformedProgram(f"bad ({form} ...): {what}; write it as {_USAGE[form]}")


def _binder(form: str, d: Any) -> str:
    if type(d) is not Symbol:
        raise MalformedProgram(
            f"bad ({form} ...): {_describe(d)} cannot be bound; variable names are symbols, as in {_USAGE[form]}"
        )
    if d.name in RESERVED:
        raise MalformedProgram(
            f"bad ({form} ...): `{d.name}` is reserved (a special form or primitive) and cannot be bound; pick another name"
        )
    return d.name


def _distinct(form: str, names: list[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise MalformedProgram(
                f"bad ({form} ...): `{n}` is bound twice; give each variable its own name"
            )
        seen.add(n)
    return tuple(names)


def _describe(d: Any) -> str:
    text = printed(d)
    return text if len(text) <= 40 else text[:37] + "..."


def _form_quote(items: list) -> Expr:
    _shape("quote", len(items) == 2, "it takes exactly one datum")
    check_datum(items[1])
    return Quote(items[1])


def _params(form: str, d: Any) -> tuple[tuple[str, ...], bool]:
    # (names, rest): ``args`` alone, or ``(a b . rest)`` (read with the DOT mark), has a rest.
    if type(d) is Symbol and d != DOT:
        return (_binder(form, d),), True
    _shape(form, d is NIL or type(d) is Pair, "the parameters must be a list of names")
    items = list(iter_list(d))
    rest = DOT in items
    if rest:
        _shape(form, items.index(DOT) == len(items) - 2, "`.` must come just before the last name")
        del items[-2]
    return _distinct(form, [_binder(form, p) for p in items]), rest


def _form_lambda(items: list) -> tuple:
    _shape("lambda", len(items) >= 3, "it takes a parameter list and a body")
    params, rest = _params("lambda", items[1])
    return (lambda xs: Lambda(params, xs[0], rest)), [_body("lambda", items[2:])]


DOT = Symbol(".")  # the reader's mark of a dotted parameter list (reader.DOT)
_DEFINE = Symbol("define")
# The head _body gives a run of procedure defines; told by identity, and the reader never
# reads a `#` name, so program text cannot write it (it compiles to Define).
_DEFINE_GROUP = Symbol("#define-group")
_DEFINE_VALUE = Symbol("#define-value")  # likewise, for a value define (DefineValue)
_LAMBDA = Symbol("lambda")
_BEGIN = Symbol("begin")


def _is_define(d: Any) -> bool:
    return type(d) is Pair and d.car == _DEFINE


def _body(form: str, forms: list) -> Any:
    """The datum of a body: ``(define ...)`` forms, then one or more expressions. The
    defines become nested :class:`Define` groups (each run of procedures, bound as
    ``letrec`` binds, so they may call each other) and :class:`DefineValue` (a value,
    bound as ``let`` binds), in order;
    several expressions become ``(begin ...)``.
    """
    n = 0
    while n < len(forms) and _is_define(forms[n]):
        n += 1
    exprs = forms[n:]
    for e in exprs:
        if _is_define(e):
            raise MalformedProgram(
                f"bad ({form} ...): (define ...) must come before the expressions of a body, "
                f"found {_describe(e)} after one; move it up"
            )
    if not exprs:
        raise MalformedProgram(
            f"bad ({form} ...): a body must end with an expression, after its defines; "
            "add the expression whose value is the body's value"
        )
    if n == 0:
        return exprs[0] if len(exprs) == 1 else Pair(_BEGIN, from_items(exprs))
    defs = [_definition(d) for d in forms[:n]]
    _distinct("define", [name for name, _ in defs])
    result = exprs[0] if len(exprs) == 1 else Pair(_BEGIN, from_items(exprs))
    i = len(defs)
    while i > 0:
        j = i
        while j > 0 and _is_lambda(defs[j - 1][1]):
            j -= 1
        if j < i:  # defs[j:i] are procedures: one group, bound as letrec binds
            binds = from_items([from_items([Symbol(nm), init]) for nm, init in defs[j:i]])
            result = from_items([_DEFINE_GROUP, binds, result])
            i = j
        else:  # a value: bound as let binds
            nm, init = defs[i - 1]
            binds = from_items([from_items([Symbol(nm), init])])
            result = from_items([_DEFINE_VALUE, binds, result])
            i -= 1
    return result


def _is_lambda(d: Any) -> bool:
    return type(d) is Pair and d.car == _LAMBDA


def _definition(d: Any) -> tuple[str, Any]:
    # (define (f . params) body ...) -> (f, (lambda params body ...)); (define x e) -> (x, e)
    items = list(iter_list(d))
    _shape("define", len(items) >= 2, "it needs a name and a value")
    target = items[1]
    if type(target) is Pair:
        _shape("define", len(items) >= 3, "a procedure needs a body")
        name = _binder("define", target.car)
        return name, from_items([_LAMBDA, target.cdr] + items[2:])
    _shape("define", len(items) == 3, "a value definition takes a name and one expression")
    return _binder("define", target), items[2]


def _form_define(items: list) -> Any:
    raise MalformedProgram(
        "(define ...) may only begin a body (of a program, lambda, let, letrec, let*, "
        "define, when, unless, cond clause or begin), before its expressions: write "
        "(define (f x) ...) then (f 1)"
    )


def _bindings(form: str, d: Any) -> tuple[list[str], list]:
    # The names and inits of a binding list ((name expression) ...), in order.
    _shape(
        form, d is NIL or type(d) is Pair, "the bindings must be a list of (name expression) pairs"
    )
    names, inits = [], []
    for b in iter_list(d):
        pair = list(iter_list(b)) if type(b) is Pair else None
        _shape(
            form,
            pair is not None and len(pair) == 2,
            f"the binding {_describe(b)} is not a (name expression) pair",
        )
        assert pair is not None  # _shape raised otherwise
        names.append(_binder(form, pair[0]))
        inits.append(pair[1])
    return names, inits


def _form_let(items: list) -> tuple:
    _shape("let", len(items) >= 3, "it takes a binding list and a body")
    names, inits = _bindings("let", items[1])
    params = _distinct("let", names)
    # let is sugar for applying a lambda.
    body = _body("let", items[2:])
    return (lambda xs: App(seq_of([Lambda(params, xs[-1])] + xs[:-1]))), inits + [body]


def _form_let_star(items: list) -> tuple:
    _shape("let*", len(items) >= 3, "it takes a binding list and a body")
    # Not _distinct: a later binding may bind a name again, shadowing the earlier one.
    names, inits = _bindings("let*", items[1])
    body = _body("let*", items[2:])
    if not names:
        return (lambda xs: LetStar(None, Binding(None, xs[0]))), [body]

    def build(xs: list[Expr]) -> Expr:
        # From the last binding to the first: each binding's body is the next LetStar.
        result = xs[-1]
        for i in reversed(range(len(names))):
            result = LetStar(xs[i], Binding(names[i], result, i < len(names) - 1))
        return result

    return build, inits + [body]


def _form_letrec(items: list) -> tuple:
    _shape("letrec", len(items) >= 3, "it takes a binding list and a body")
    found, inits = _bindings("letrec", items[1])
    names = _distinct("letrec", found)
    for init in inits:
        _shape(
            "letrec",
            type(init) is Pair and type(init.car) is Symbol and init.car.name == "lambda",
            f"every letrec binding must be a lambda, not {_describe(init)}",
        )
    body = _body("letrec", items[2:])
    return (lambda xs: Letrec(Group(names, tuple(xs[:-1])), xs[-1])), inits + [body]  # type: ignore[arg-type]


def _form_define_value(items: list) -> tuple:
    # (#define-value ((x e)) body), made by _body only: already checked there.
    name, init = list(iter_list(items[1].car))
    return (lambda xs: DefineValue(seq_of([Lambda((name.name,), xs[1]), xs[0]]))), [init, items[2]]


def _form_define_group(items: list) -> tuple:
    # (#define-group ((f (lambda ...)) ...) body), made by _body only: already checked there.
    binds = [list(iter_list(b)) for b in iter_list(items[1])]
    names = tuple(b[0].name for b in binds)
    inits = [b[1] for b in binds]
    return (lambda xs: Define(Group(names, tuple(xs[:-1])), xs[-1])), inits + [items[2]]  # type: ignore[arg-type]


def _form_if(items: list) -> tuple:
    _shape("if", len(items) == 4, "it takes a test, a then-branch and an else-branch")
    return (lambda xs: If(xs[0], Branches(xs[1], xs[2]))), items[1:]


def _form_begin(items: list) -> tuple:
    _shape("begin", len(items) >= 2, "it needs at least one expression")
    if any(_is_define(d) for d in items[1:]):  # a body: a program of several top-level forms
        return (lambda xs: xs[0]), [_body("begin", items[1:])]
    return (lambda xs: Begin(seq_of(xs))), items[1:]


_ELSE = Symbol("else")
_ARROW = Symbol("=>")


def _form_cond(items: list) -> tuple:
    _shape("cond", len(items) >= 2, "it needs at least one clause")
    has_body: list[bool] = []
    children: list = []
    has_else = False
    for i, clause in enumerate(items[1:], 2):
        parts = list(iter_list(clause)) if type(clause) is Pair else []
        _shape("cond", bool(parts), f"the clause {_describe(clause)} is not a list (test e ...)")
        if parts[0] == _ELSE:
            _shape("cond", i == len(items), "else must be the last clause")
            _shape("cond", len(parts) >= 2, "else needs at least one expression")
            has_else = True
            children.append(_body("cond", parts[1:]))
            continue
        _shape(
            "cond",
            not (len(parts) > 1 and parts[1] == _ARROW),
            "=> clauses are not supported; write (let ((v test)) (if v (f v) ...))",
        )
        children.append(parts[0])
        if len(parts) > 1:
            children.append(_body("cond", parts[1:]))
        has_body.append(len(parts) > 1)

    def build(xs: list[Expr]) -> Expr:
        # From the last clause to the first: each Cond's false branch is the next clauses.
        pos = len(xs) - 1 if has_else else len(xs)
        rest: Expr | None = xs[-1] if has_else else None
        more = False
        for body in reversed(has_body):
            then = None
            if body:
                pos -= 1
                then = xs[pos]
            pos -= 1
            rest, more = Cond(xs[pos], Clauses(then, rest, "cond", more)), True
        assert rest is not None  # a cond of only (else ...) is its body
        return rest

    return build, children


def _form_when(items: list) -> tuple:
    _shape("when", len(items) >= 3, "it takes a test and at least one expression")
    return (lambda xs: Cond(xs[0], Clauses(xs[1], None, "when"))), [
        items[1],
        _body("when", items[2:]),
    ]


def _form_unless(items: list) -> tuple:
    _shape("unless", len(items) >= 3, "it takes a test and at least one expression")
    return (lambda xs: Cond(xs[0], Clauses(Const(NIL), xs[1], "unless"))), [
        items[1],
        _body("unless", items[2:]),
    ]


def _form_and(items: list) -> Any:
    if len(items) == 1:
        return Const(TRUE)
    if len(items) == 2:
        return (lambda xs: xs[0]), items[1:]
    return (lambda xs: And(seq_of(xs))), items[1:]


def _form_or(items: list) -> Any:
    if len(items) == 1:
        return Const(FALSE)
    if len(items) == 2:
        return (lambda xs: xs[0]), items[1:]
    return (lambda xs: Or(seq_of(xs))), items[1:]


def _form_llm(items: list) -> tuple:
    _shape("llm", len(items) == 2, "it takes exactly one prompt expression")
    return (lambda xs: Llm(xs[0])), items[1:]


def _form_eval(items: list) -> tuple:
    _shape(
        "eval", len(items) == 2, "it takes exactly one expression (program text or a quoted datum)"
    )
    return (lambda xs: EvalForm(xs[0])), items[1:]


_FORMS: dict[str, Callable[[list], Any]] = {
    "quote": _form_quote,
    "lambda": _form_lambda,
    "let": _form_let,
    "letrec": _form_letrec,
    "if": _form_if,
    "begin": _form_begin,
    "define": _form_define,
    "cond": _form_cond,
    "when": _form_when,
    "unless": _form_unless,
    "and": _form_and,
    "or": _form_or,
    "let*": _form_let_star,
    "llm": _form_llm,
    "eval": _form_eval,
}


def check_datum(d: Any) -> None:
    """Raise :class:`MalformedProgram` unless ``d`` is pure data (no procedures inside).

    >>> check_datum(from_items([1, "a", NIL]))
    """
    if type(d) is Pair and d.pure:  # the common case, O(1): purity is cached in each pair
        return
    stack = [d]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is Pair:
            stack.append(x.car)
            stack.append(x.cdr)
        elif not (t is int or t is str or t is Bool or t is Nil or t is Symbol):
            raise MalformedProgram(
                f"a {t.__name__} value cannot appear inside quoted code; quote only numbers, "
                "strings, #t/#f, nil, symbols and lists"
            )


# ---------------------------------------------------------------- expressions back to data


def to_datum(expr: Expr) -> Any:
    """The datum an expression was compiled from (``let`` comes back as a lambda application).

    >>> from agentic_machines.cek.reader import parse
    >>> d = parse("(letrec ((f (lambda (n) (if (= n 0) 'done (f (- n 1)))))) (f 2))")
    >>> to_datum(compile_program(d)) == d
    True
    """
    tasks: list[tuple] = [(None, expr)]
    results: list[Any] = []
    while tasks:
        build, item = tasks.pop()
        if build is not None:
            n = item
            args = results[len(results) - n :] if n else []
            del results[len(results) - n :]
            results.append(build(args))
            continue
        t = type(item)
        if t is Const:
            results.append(item.value)
            continue
        if t is Var or t is PrimRef:
            results.append(Symbol(item.name))
            continue
        if t is Quote:
            results.append(from_items([Symbol("quote"), item.value]))
            continue
        build, children = _UNBUILD[t](item)
        tasks.append((build, len(children)))
        for child in reversed(children):
            tasks.append((None, child))
    return results[0]


def _sym_list(names: Sequence[str]) -> Any:
    return from_items([Symbol(n) for n in names])


def _unbuild_lambda(e: Lambda) -> tuple:
    params: Any = _sym_list(e.params)
    if e.rest:
        names = [Symbol(n) for n in e.params]
        params = names[0] if len(names) == 1 else from_items(names[:-1] + [DOT, names[-1]])
    return (lambda xs: from_items([_LAMBDA, params, xs[0]])), [e.body]


def _unbuild_cond(e: Cond) -> tuple:
    cl = e.clauses
    if cl.form == "when":
        return (lambda xs: from_items([Symbol("when"), xs[0], xs[1]])), [e.test, cl.then]
    if cl.form == "unless":
        return (lambda xs: from_items([Symbol("unless"), xs[0], xs[1]])), [e.test, cl.orelse]
    shape: list[bool] = []  # per clause: has a body
    children: list = []
    node: Any = e
    while True:
        cl = node.clauses
        children.append(node.test)
        if cl.then is not None:
            children.append(cl.then)
        shape.append(cl.then is not None)
        if cl.more:
            node = cl.orelse
            continue
        break
    has_else = cl.orelse is not None
    if has_else:
        children.append(cl.orelse)

    def build(xs: list) -> Any:
        clauses, pos = [], 0
        for body in shape:
            parts = [xs[pos]] + ([xs[pos + 1]] if body else [])
            pos += 2 if body else 1
            clauses.append(from_items(parts))
        if has_else:
            clauses.append(from_items([_ELSE, xs[pos]]))
        return from_items([Symbol("cond")] + clauses)

    return build, children


def _unbuild_let_star(e: LetStar) -> tuple:
    # (let* ((x e) ...) body): the bindings of one let* are a chain of LetStar nodes.
    names: list[str] = []
    children: list = []
    node: Any = e
    while node.init is not None:
        names.append(node.rest.name)
        children.append(node.init)
        if not node.rest.more:
            break
        node = node.rest.body
    children.append(node.rest.body)

    def build(xs: list) -> Any:
        bindings = from_items([from_items([Symbol(n), x]) for n, x in zip(names, xs)])
        return from_items([Symbol("let*"), bindings, xs[-1]])

    return build, children


def _unbuild_letrec(e: Letrec) -> tuple:
    names = e.group.names

    def build(xs: list) -> Any:
        bindings = from_items([from_items([Symbol(n), x]) for n, x in zip(names, xs)])
        return from_items([Symbol("letrec"), bindings, xs[-1]])

    return build, list(e.group.lams) + [e.body]


def _unbuild_define(e: Define) -> tuple:
    # (begin (define f (lambda ...)) ... body): compiles back to the same Define.
    names = e.group.names

    def build(xs: list) -> Any:
        defines = [from_items([_DEFINE, Symbol(n), x]) for n, x in zip(names, xs)]
        return from_items([_BEGIN] + defines + [xs[-1]])

    return build, list(e.group.lams) + [e.body]


def _unbuild_define_value(e: DefineValue) -> tuple:
    # (begin (define x e) body): compiles back to the same DefineValue.
    lam, init = e.seq.items()
    assert type(lam) is Lambda  # DefineValue is built only by _form_define_value
    name = lam.params[0]

    def build(xs: list) -> Any:
        return from_items([_BEGIN, from_items([_DEFINE, Symbol(name), xs[0]]), xs[1]])

    return build, [init, lam.body]


_UNBUILD: dict[type, Callable[[Any], tuple]] = {
    Lambda: _unbuild_lambda,
    App: lambda e: ((lambda xs: from_items(xs)), e.seq.items()),
    If: lambda e: (
        (lambda xs: from_items([Symbol("if")] + xs)),
        [e.test, e.branches.then, e.branches.orelse],
    ),
    Begin: lambda e: ((lambda xs: from_items([Symbol("begin")] + xs)), e.seq.items()),
    Cond: _unbuild_cond,
    And: lambda e: ((lambda xs: from_items([Symbol("and")] + xs)), e.seq.items()),
    Or: lambda e: ((lambda xs: from_items([Symbol("or")] + xs)), e.seq.items()),
    LetStar: _unbuild_let_star,
    Letrec: _unbuild_letrec,
    Define: _unbuild_define,
    DefineValue: _unbuild_define_value,
    Llm: lambda e: ((lambda xs: from_items([Symbol("llm"), xs[0]])), [e.arg]),
    EvalForm: lambda e: ((lambda xs: from_items([Symbol("eval"), xs[0]])), [e.arg]),
}
