"""The Spell evaluator: a CEK machine with dynamic scope, ``quine`` and an effect boundary.

A machine state is a control (an expression to evaluate, or a value being returned),
an environment and a continuation. The continuation is a stack of immutable frames; the
loop in :func:`run` never recurses on the Python stack. A run stops at a *boundary*
(a self-call ``!llm-self``, or a one-shot ``leaf-llm`` call, with its prompt already
evaluated), at the end (``Halted``) or at an error (:class:`Stuck`, which keeps the
environment and continuation for error recovery).

Scope is dynamic, as in Spell: a function body sees its caller's bindings, and a
function value is its own source ``(fn name (params) body...)``, so every value prints
back as text. ``def`` binds in the current environment, which flows forward to the
following forms; a function call, ``let``, ``quine`` and ``eval`` give their bindings
back when they return.

**The effect boundary.** In a program of the shape ``(quine name ... (eval X))`` the
last ``eval`` is the *outer eval*: ``X`` (usually ``(do ... 'T)``) is evaluated with
effects unbound, giving the trailing form ``T`` and an environment; then ``T`` is
evaluated in that environment **with effects bound**. Effects are the names that begin
with ``!``, ``leaf-llm`` and the tools of the environment. Anywhere else they raise
:class:`~agentic_machines.errors.UnboundEffect`. Being dynamic, the permission reaches
the functions the trailing form calls, and nothing else.

>>> run_text("(quine q (+ 41 1))")
42
>>> run_text("(quine self (pr-str self))")
'(quine self (pr-str self))'
>>> run_text('(quine completion (eval (do (def x 2) (quote (* x 21)))))')
42
>>> run_text('(quine completion (eval (do (!llm-self "No"))))')
Traceback (most recent call last):
  ...
agentic_machines.errors.UnboundEffect: unbound symbol `!llm-self`: effect functions are bound only inside the outer eval of the trailing form; return the call quoted as the last form of the do, as in '(!llm-self ...)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._text import clip, counted
from ..cek.machine import Halted
from ..cek.reader import parse
from ..cek.syntax import (
    FALSE,
    NIL,
    TRUE,
    Bool,
    Node,
    Pair,
    Symbol,
    deep_equal,
    from_items,
    iter_list,
)
from ..cek.values import PRIMITIVES, type_name
from ..errors import EvaluationError, ParseError, UnboundEffect, Undecided
from .edits import apply_edits
from .text import (
    Builtin,
    SpellFn,
    balance,
    is_open_program,
    literal,
    pr_str,
    reopen,
    to_datum,
    wrap_cat,
)

__all__ = [
    "SpellFn",
    "Builtin",
    "Env",
    "EMPTY_ENV",
    "Boundary",
    "Stuck",
    "Halted",
    "World",
    "PURE_WORLD",
    "SPECIAL_FORMS",
    "EFFECT_BUILTINS",
    "start",
    "resume",
    "run",
    "run_text",
    "outer_eval",
    "cut_value",
]

DEFAULT_FUEL = 1_000_000
"""Steps allowed to one run (a harness call, or :func:`run_text`)."""

SPECIAL_FORMS = frozenset(
    {
        "quote",
        "if",
        "do",
        "def",
        "defn",
        "fn",
        "lambda",
        "let",
        "quine",
        "eval",
        "prune",
        "think",
        "rethink",
        "persist",
        "!call-now",
        "!peek",
    }
)
"""Forms whose arguments are not simply evaluated (the names cannot be rebound)."""

EFFECT_BUILTINS = frozenset({"!llm-self", "!extend", "leaf-llm", "!spell-eval"})
"""Effect functions of every Spell program (the tools of the environment are the others)."""

_CALL_NOW = frozenset({"!call-now", "!peek"})


# ---------------------------------------------------------------- values


class Env(Node):
    """A dynamic environment: ``bindings`` (a dict, never changed after construction)
    and ``effects`` (True inside the outer eval of the trailing form).

    >>> EMPTY_ENV.bind("x", 1).get("x"), EMPTY_ENV.get("x") is None
    (1, True)
    """

    __slots__ = ("bindings", "effects")
    _fields = ("bindings", "effects")

    def __init__(self, bindings: Mapping[str, Any], effects: bool) -> None:
        self.bindings = dict(bindings)
        self.effects = effects
        self._hash = hash((frozenset(self.bindings.items()), effects))

    def bind(self, name: str, value: Any) -> Env:
        """A new environment with ``name`` bound to ``value``."""
        return Env({**self.bindings, name: value}, self.effects)

    def get(self, name: str) -> Any:
        """The user binding of ``name``, or ``None``."""
        return self.bindings.get(name)

    def with_effects(self, on: bool) -> Env:
        """The same bindings with effects switched on or off."""
        return self if self.effects == on else Env(self.bindings, on)

    def __repr__(self) -> str:
        return f"Env({sorted(self.bindings)}, effects={self.effects})"


EMPTY_ENV = Env({}, False)
"""The fresh environment every program starts in (Challenge 3: nothing crosses but the prefix)."""


class Boundary(Node):
    """A model call with its prompt evaluated: ``kind`` is ``"self"`` (``!llm-self``: the
    completion is appended to ``prompt`` and evaluated) or ``"leaf"`` (``leaf-llm``: the
    completion is returned as a string); ``kont`` is the frame stack waiting for the result.

    >>> b = Boundary("self", "(quine completion (eval (do ", ())
    >>> b.prompt, b.kont
    ('(quine completion (eval (do ', ())
    """

    __slots__ = ("kind", "prompt", "kont")
    _fields = ("kind", "prompt", "kont")

    def __init__(self, kind: str, prompt: str, kont: tuple) -> None:
        self.kind = kind
        self.prompt = prompt
        self.kont = kont
        self._hash = hash(("SpellBoundary", kind, prompt, kont))

    @property
    def depth(self) -> int:
        """How many self-calls are waiting for this one (0 for a top-level turn)."""
        return sum(1 for f in self.kont if f[0] == "return")

    def __repr__(self) -> str:
        # the whole prompt: two boundaries never read alike; a listing or a sentence cuts
        # it by the one prompt rule, where it differs from the states beside it
        return f"Boundary({self.kind}, {self.prompt!r}, waiting={len(self.kont)})"


class Stuck:
    """A run-time error, with where it happened: the ``env`` and frame stack ``kont``.

    >>> Stuck(EvaluationError("x"), EMPTY_ENV, ()).error
    EvaluationError('x')
    """

    __slots__ = ("error", "env", "kont")

    def __init__(self, error: Exception, env: Env, kont: tuple) -> None:
        self.error = error
        self.env = env
        self.kont = kont

    def __repr__(self) -> str:
        return f"Stuck({self.error!r})"


class World:
    """What effects can touch: ``tools`` (name -> Python function) and whether the
    self-call family (``!llm-self``, ``!extend``, ``!call-now``, ``!peek``, ``leaf-llm``)
    exists. :meth:`call` runs a tool; subclasses count the calls.

    >>> World({"twice": lambda x: 2 * x}).call("twice", (21,))
    42
    """

    def __init__(
        self, tools: Mapping[str, Callable[..., Any]] | None = None, *, self_calls: bool = True
    ) -> None:
        self.tools = dict(tools or {})
        self.self_calls = self_calls

    def is_effect(self, name: str) -> bool:
        """True when ``name`` is an effect function of this world."""
        return name.startswith("!") or name == "leaf-llm" or name in self.tools

    def call(self, name: str, args: tuple) -> Any:
        """Run the tool ``name`` on ``args`` and return its result as a Spell value."""
        return from_python(self.tools[name](*args))


PURE_WORLD = World()
"""A world with no tools (self-calls still exist, as boundaries)."""


def from_python(x: Any) -> Any:
    """A tool's Python result as a Spell value: lists become lists, bools #t/#f, None nil.

    >>> from_python([1, "a", True, None])
    <list (1 "a" #t nil)>
    """
    if x is None:
        return NIL
    if x is True:
        return TRUE
    if x is False:
        return FALSE
    if type(x) in (list, tuple):
        return from_items([from_python(i) for i in x])
    if type(x) in (int, str) or isinstance(x, Node):
        return x
    raise EvaluationError(
        f"a tool returned {type(x).__name__}; tools must return str, int, bool, None or lists of those"
    )


# ---------------------------------------------------------------- pure builtins


def _show(v: Any) -> str:
    text = pr_str(v)
    return clip(text, 40, "...")


def _str(*xs: Any) -> str:
    return "".join(x if type(x) is str else "" if x is NIL else pr_str(x) for x in xs)


def _seq(name: str, x: Any) -> list:
    if x is NIL or type(x) is Pair:
        return list(iter_list(x))
    raise EvaluationError(f"{name}: expected a list, got {_show(x)} ({type_name(x)})")


def _count(x: Any) -> int:
    if type(x) is str:
        return len(x)
    return len(_seq("count", x))


def _nth(xs: Any, i: Any) -> Any:
    items = _seq("nth", xs)
    if type(i) is not int or not 0 <= i < len(items):
        raise EvaluationError(f"nth: index {_show(i)} out of range for a list of {len(items)}")
    return items[i]


def _first(xs: Any) -> Any:
    items = _seq("first", xs)
    return items[0] if items else NIL


def _rest(xs: Any) -> Any:
    if type(xs) is Pair:
        return xs.cdr
    _seq("rest", xs)  # nil is fine, anything else is an error
    return NIL


def _cmp(name: str, ok: Callable[[int, int], bool]) -> Callable[..., Bool]:
    def compare(*xs: Any) -> Bool:
        if len(xs) < 2 or any(type(x) is not int for x in xs):
            raise EvaluationError(f"{name}: expected at least two integers, as in ({name} 1 2)")
        return TRUE if all(ok(a, b) for a, b in zip(xs, xs[1:])) else FALSE

    return compare


def _mod(a: Any, b: Any) -> int:
    if type(a) is not int or type(b) is not int or b == 0:
        raise EvaluationError("mod: expected two integers, the second not zero")
    return a % b


def _join(sep: Any, xs: Any) -> str:
    return (sep if type(sep) is str else _str(sep)).join(_str(x) for x in _seq("join", xs))


def _split_lines(s: Any) -> Any:
    if type(s) is not str:
        raise EvaluationError(f"split-lines: expected a string, got {_show(s)}")
    return from_items(s.splitlines())


def _read_string(s: Any) -> Any:
    if type(s) is not str:
        raise EvaluationError(f"read-string: expected a string, got {_show(s)}")
    return parse(s)


def _wrap_cat(*forms: Any) -> str:
    return wrap_cat(forms)


PURE: dict[str, Callable[..., Any]] = {
    **PRIMITIVES,
    "=": lambda *xs: TRUE if all(deep_equal(a, b) for a, b in zip(xs, xs[1:])) else FALSE,
    ">": _cmp(">", lambda a, b: a > b),
    "<=": _cmp("<=", lambda a, b: a <= b),
    ">=": _cmp(">=", lambda a, b: a >= b),
    "mod": _mod,
    "str": _str,
    "pr-str": lambda *xs: " ".join(pr_str(x) for x in xs),
    "read-string": _read_string,
    "count": _count,
    "first": _first,
    "rest": _rest,
    "nth": _nth,
    "conj": lambda xs, *ys: from_items(_seq("conj", xs) + list(ys)),
    "concat": lambda *ls: from_items([x for xs in ls for x in _seq("concat", xs)]),
    "join": _join,
    "split-lines": _split_lines,
    "reopen": reopen,
    "wrap-cat": _wrap_cat,
    "procedure?": lambda x: TRUE if type(x) in (SpellFn, Builtin) else FALSE,
}
"""Pure builtins (every program sees them). ``conj`` appends at the end (there are no vectors)."""

_ENV_BUILTINS = frozenset({"edit-reopen", "apply-edits"})
"""Pure builtins that read the dynamic environment (``persist`` looks values up)."""

_CONSTANTS = {"true": TRUE, "false": FALSE}


# ---------------------------------------------------------------- the machine


def _sym(form: str, x: Any) -> str:
    if type(x) is not Symbol:
        raise EvaluationError(f"{form}: expected a name, got {_show(x)}")
    if x.name in SPECIAL_FORMS:
        raise EvaluationError(
            f"{form}: `{x.name}` is a special form and cannot be rebound; pick another name"
        )
    return x.name


def _params(form: str, x: Any) -> tuple[str, ...]:
    if not (x is NIL or type(x) is Pair):
        raise EvaluationError(f"{form}: expected a parameter list such as (x y), got {_show(x)}")
    names = tuple(_sym(form, p) for p in iter_list(x))
    if len(set(names)) != len(names):
        raise EvaluationError(f"{form}: a parameter name appears twice in {_show(x)}")
    return names


def _fn(items: list) -> SpellFn:
    # (fn (params) body...) or (fn name (params) body...)
    if len(items) >= 3 and type(items[1]) is Symbol:
        return SpellFn(_sym("fn", items[1]), _params("fn", items[2]), tuple(items[3:]))
    if len(items) >= 2:
        return SpellFn(None, _params("fn", items[1]), tuple(items[2:]))
    raise EvaluationError("fn: expected (fn (x ...) body ...)")


def _do(forms: list | tuple) -> Any:
    return from_items([Symbol("do"), *forms])


def _truthy(v: Any) -> bool:
    return v is not FALSE and v is not NIL


def _lookup(name: str, env: Env, world: World) -> Any:
    if name in env.bindings:
        return env.bindings[name]
    if name in PURE or name in _ENV_BUILTINS:
        return Builtin(name)
    if name in _CONSTANTS:
        return _CONSTANTS[name]
    if world.is_effect(name):
        _gate(name, env, world)
        if name in world.tools or name in EFFECT_BUILTINS:
            return Builtin(name)
    raise EvaluationError(
        f"unbound symbol `{name}`: define it with (def {name} ...) or (defn {name} (...) ...)"
    )


def _gate(name: str, env: Env, world: World) -> None:
    """Raise :class:`UnboundEffect` unless the effect ``name`` is bound here."""
    if not env.effects:
        raise UnboundEffect(
            f"unbound symbol `{name}`: effect functions are bound only inside the outer eval of "
            f"the trailing form; return the call quoted as the last form of the do, as in '({name} ...)"
        )
    if not world.self_calls and name not in world.tools:
        raise UnboundEffect(
            f"unbound symbol `{name}`: this harness has no self-calls, only the tools "
            + (", ".join(sorted(world.tools)) or "(none)")
        )


def _scope(stack: list, env: Env) -> None:
    """Push a frame that gives ``env`` back, unless that would be redundant (tail position)."""
    if stack and stack[-1][0] not in ("restore", "return"):
        stack.append(("restore", env))


def _call_frame(stack: list, env: Env) -> None:
    """Mark where a model call's result returns; a tail call reuses the frame below."""
    if not stack or stack[-1][0] == "return":
        return
    if stack[-1][0] == "restore":
        stack[-1] = ("return", stack[-1][1])
    else:
        stack.append(("return", env))


def _completion(env: Env, who: str) -> Any:
    program = env.get("completion")
    if program is None:
        raise EvaluationError(
            f"{who}: `completion` is unbound; it needs the wrapper (quine completion (eval (do ...)))"
        )
    return program


def _edit_reopen(program: Any, env: Env) -> str:
    def lookup(name: str) -> Any:
        return env.get(name)

    return reopen(apply_edits(to_datum(program), lookup)) + " "


def start(datum: Any, kont: tuple = (), env: Env = EMPTY_ENV) -> tuple:
    """The machine input that evaluates program ``datum`` on top of ``kont``.

    A program ``(quine name ... (eval X))`` is recognised here: its last ``eval`` is the
    outer eval, the only place where effects get bound.
    """
    stack = list(kont)
    outer = outer_eval(datum)
    if outer is not None:
        name, x = outer
        stack.append(("eval", True))
        return ("eval", x, env.bind(name, datum)), stack
    return ("eval", datum, env), stack


def outer_eval(datum: Any) -> tuple[str, Any] | None:
    """``(name, X)`` when ``datum`` is ``(quine name ... (eval X))``, else ``None``.

    >>> outer_eval(parse("(quine c 1 (eval (do 2)))"))
    ('c', <list (do 2)>)
    """
    if type(datum) is not Pair or datum.car != Symbol("quine"):
        return None
    items = list(iter_list(datum))
    if len(items) < 3 or type(items[1]) is not Symbol:
        return None
    last = items[-1]
    if type(last) is Pair and last.car == Symbol("eval"):
        parts = list(iter_list(last))
        if len(parts) == 2:
            return items[1].name, parts[1]
    return None


def resume(boundary: Boundary, completion: str) -> tuple:
    """The machine input that hands a leaf call's completion (a string) to its waiting frames."""
    return ("ret", completion, EMPTY_ENV), list(boundary.kont)


def run(
    control: tuple, stack: list, world: World = PURE_WORLD, *, fuel: int = DEFAULT_FUEL
) -> tuple[Boundary | Halted | Stuck, int]:
    """Run to the next boundary, the end, or an error; return ``(outcome, steps)``.

    ``control`` is ``("eval", datum, env)`` or ``("ret", value, env)`` (see :func:`start`).
    Raises :class:`~agentic_machines.errors.Undecided` when ``fuel`` steps pass first.

    >>> run(*start(parse('(quine completion (eval (do (quote (!llm-self "hi")))))')))[0]
    Boundary(self, '(quine completion (eval (do "hi" ', waiting=0)
    """
    mode, x, env = control
    steps = 0
    try:
        while True:
            steps += 1
            if steps > fuel:
                raise Undecided(
                    f"the Spell program used all {fuel} steps of fuel without reaching a model call or "
                    "its end; pass a larger fuel= to decide it"
                )
            if mode == "eval":
                t = type(x)
                if t is Symbol:
                    mode, x = "ret", _lookup(x.name, env, world)
                    continue
                if t is not Pair:
                    mode = "ret"  # numbers, strings, booleans, nil, values: themselves
                    continue
                head = x.car
                if type(head) is Symbol and head.name in SPECIAL_FORMS:
                    mode, x, env = _special(head.name, x, env, stack, world)
                    continue
                items = list(iter_list(x))
                stack.append(("args", (), tuple(items[1:])))
                x = items[0]
                continue
            # mode == "ret": hand the value x to the top frame
            if not stack:
                return Halted(x), steps
            frame = stack.pop()
            tag = frame[0]
            if tag == "args":
                done, rest = frame[1] + (x,), frame[2]
                if rest:
                    stack.append(("args", done, rest[1:]))
                    mode, x = "eval", rest[0]
                    continue
                result = _apply(done[0], done[1:], env, stack, world)
                if type(result) is Boundary:
                    return result, steps
                mode, x, env = result
            elif tag == "restore" or tag == "return":
                env = frame[1]
            elif tag == "do":
                rest = frame[1]
                if len(rest) > 1:
                    stack.append(("do", rest[1:]))
                mode, x = "eval", rest[0]
            elif tag == "if":
                mode, x = "eval", frame[1] if _truthy(x) else frame[2]
            elif tag == "def":
                env = env.bind(frame[1], x)
            elif tag == "let":
                _, name, rest, body = frame
                env = env.bind(name, x)
                if rest:
                    stack.append(("let", rest[0][0], rest[1:], body))
                    mode, x = "eval", rest[0][1]
                else:
                    mode, x = "eval", _do(body)
            elif tag == "eval":
                # A string evaluates to itself (use read-string to parse text).
                mode, env = "eval", env.with_effects(True) if frame[1] else env
            elif tag == "const":
                x = frame[1]
            elif tag == "callnow":
                _, kind, names, exprs, done, limit = frame
                done = done + (x,)
                if exprs:
                    stack.append(("callnow", kind, names, exprs[1:], done, limit))
                    mode, x = "eval", exprs[0]
                    continue
                return _call_now(kind, names, done, env, stack, limit), steps
            else:  # pragma: no cover - every frame tag is handled above
                raise TypeError(f"unknown frame {tag}")
    except (EvaluationError, ParseError) as err:
        return Stuck(err, env, tuple(stack)), steps


def _special(name: str, x: Pair, env: Env, stack: list, world: World) -> tuple:
    items = list(iter_list(x))
    n = len(items)
    if name == "quote":
        if n != 2:
            raise EvaluationError("quote: expected exactly one datum, as in (quote x) or 'x")
        return "ret", items[1], env
    if name == "if":
        if n not in (3, 4):
            raise EvaluationError("if: expected (if test then) or (if test then else)")
        stack.append(("if", items[2], items[3] if n == 4 else NIL))
        return "eval", items[1], env
    if name == "do":
        if n == 1:
            return "ret", NIL, env
        if n > 2:
            stack.append(("do", tuple(items[2:])))
        return "eval", items[1], env
    if name in ("def", "persist"):
        if not 2 <= n <= 3 or (name == "def" and n != 3):
            raise EvaluationError(f"{name}: expected ({name} name expression)")
        target = _sym(name, items[1])
        stack.append(("def", target))
        return "eval", items[2] if n == 3 else items[1], env
    if name == "defn":
        if n < 3:
            raise EvaluationError("defn: expected (defn name (x ...) body ...)")
        fn = SpellFn(_sym("defn", items[1]), _params("defn", items[2]), tuple(items[3:]))
        return "ret", fn, env.bind(fn.name, fn)  # type: ignore[arg-type]
    if name in ("fn", "lambda"):
        return "ret", _fn(items), env
    if name == "let":
        if n < 2 or not (items[1] is NIL or type(items[1]) is Pair):
            raise EvaluationError("let: expected (let ((x 1) (y 2)) body ...)")
        pairs = []
        for b in iter_list(items[1]):
            parts = list(iter_list(b)) if type(b) is Pair else []
            if len(parts) != 2:
                raise EvaluationError(f"let: each binding is (name expression), got {_show(b)}")
            pairs.append((_sym("let", parts[0]), parts[1]))
        _scope(stack, env)
        if not pairs:
            return "eval", _do(items[2:]), env
        stack.append(("let", pairs[0][0], tuple(pairs[1:]), tuple(items[2:])))
        return "eval", pairs[0][1], env
    if name == "quine":
        if n < 2:
            raise EvaluationError("quine: expected (quine name body ...)")
        bound = env.bind(_sym("quine", items[1]), x)
        _scope(stack, env)
        # Only the last body form is live; the earlier ones are inert context.
        return ("eval", items[-1], bound) if n > 2 else ("ret", NIL, bound)
    if name == "eval":
        if n != 2:
            raise EvaluationError("eval: expected (eval expression)")
        _scope(stack, env)
        stack.append(("eval", False))
        return "eval", items[1], env
    if name == "prune":
        return "ret", NIL, env
    if name in ("think", "rethink"):
        rest = items[1:]
        if name == "rethink" and rest and type(rest[0]) is int:
            rest = rest[1:]
        body = rest[1:]  # the label is inert
        if not body:
            return "ret", NIL, env
        stack.append(("const", NIL))
        return "eval", _do(body), env
    # !call-now / !peek: effects, so only inside the outer eval of the trailing form
    _gate(name, env, world)
    pairs_in = items[1:]
    limit = None
    if name == "!call-now" and len(pairs_in) == 3:
        # (!call-now name expression limit): the injected value cut to `limit` characters
        limit = pairs_in[2]
        if type(limit) is not int or limit < 0:
            raise EvaluationError(
                f"!call-now: the limit of (!call-now name expression limit) is a non-negative "
                f"integer literal, got {_show(limit)}"
            )
        pairs_in = pairs_in[:2]
    if not pairs_in or len(pairs_in) % 2:
        raise EvaluationError(
            f"{name}: expected ({name} name expression [name expression ...])"
            + (" or (!call-now name expression limit)" if name == "!call-now" else "")
        )
    names = tuple(_sym(name, pairs_in[i]) for i in range(0, len(pairs_in), 2))
    exprs = tuple(pairs_in[i] for i in range(1, len(pairs_in), 2))
    stack.append(("callnow", name, names, exprs[1:], (), limit))
    return "eval", exprs[0], env


def _call_now(
    kind: str, names: tuple, values: tuple, env: Env, stack: list, limit: int | None = None
) -> Boundary:
    # The macro of the paper: reopen the (edited) completion and append the results as
    # literal definitions, so re-evaluating the next program reads them, never the tool.
    if limit is not None:
        values = tuple(cut_value(v, limit) for v in values)
    prefix = _edit_reopen(_completion(env, kind), env)
    defs = "".join(f"(def {n} {pr_str(literal(v))}) " for n, v in zip(names, values))
    if kind == "!peek":
        defs += f"(prune {len(names) + 1}) "
    _call_frame(stack, env)
    return Boundary("self", prefix + defs, tuple(stack))


def cut_value(value: Any, limit: int) -> Any:
    """``value`` as ``(!call-now name expression limit)`` injects it: unchanged when its text
    (a string itself, anything else printed) has at most ``limit`` characters, else that
    text cut to ``limit`` characters with ``... + [N chars...]`` after it, as a string.

    >>> cut_value("abcdef", 4), cut_value(7, 4), cut_value(12345678, 4)
    ('abcd... + [2 chars...]', 7, '1234... + [4 chars...]')
    """
    text = value if type(value) is str else pr_str(value)
    if len(text) <= limit:
        return value
    return text[:limit] + f"... + [{len(text) - limit} chars...]"


def _apply(f: Any, args: tuple, env: Env, stack: list, world: World) -> tuple | Boundary:
    tf = type(f)
    if tf is SpellFn:
        if len(args) != len(f.params):
            raise EvaluationError(
                f"{f.name or 'fn'}: expected {counted(len(f.params), 'argument')}, got {len(args)}"
            )
        _scope(stack, env)
        call_env = Env({**env.bindings, **dict(zip(f.params, args))}, env.effects)
        return "eval", _do(f.body), call_env
    if tf is not Builtin:
        raise EvaluationError(f"{_show(f)} ({type_name(f)}) is not a function and cannot be called")
    name = f.name
    if name in PURE:
        return "ret", PURE[name](*args), env
    if name in _ENV_BUILTINS:
        if len(args) != 1:
            raise EvaluationError(f"{name}: expected 1 argument, the program (usually completion)")
        if name == "apply-edits":
            return "ret", apply_edits(to_datum(args[0]), env.get), env
        return "ret", _edit_reopen(args[0], env), env
    if name == "!llm-self":
        if len(args) != 1 or type(args[0]) is not str:
            raise EvaluationError("!llm-self: expected one string, the prefix (or a plain prompt)")
        prefix = args[0] if is_open_program(args[0]) else wrap_cat([args[0]])
        _call_frame(stack, env)
        return Boundary("self", prefix, tuple(stack))
    if name == "!extend":
        if args:
            raise EvaluationError("!extend: takes no arguments; it reopens completion")
        prefix = _edit_reopen(_completion(env, "!extend"), env)
        _call_frame(stack, env)
        return Boundary("self", prefix, tuple(stack))
    if name == "!spell-eval":
        # Spell's core evaluator as a builtin: the second half of a self-call (the
        # runtime's `(spell-eval completion {})` after the model answered), with the
        # program given instead of asked for. A child session: fresh empty environment,
        # its result returns through a call frame exactly as a model child's does.
        if len(args) != 1 or type(args[0]) is not str:
            raise EvaluationError(
                "!spell-eval: expected one string, a whole program such as "
                '"(quine completion (eval (do \'(+ 1 2))))"'
            )
        try:
            datum = parse(balance(args[0]))
        except ParseError as err:
            raise EvaluationError(f"!spell-eval: the program does not parse: {err}") from None
        _call_frame(stack, env)
        control, new_stack = start(datum, tuple(stack))
        stack[:] = new_stack
        return control
    if name == "leaf-llm":
        if len(args) != 1 or type(args[0]) is not str:
            raise EvaluationError("leaf-llm: expected one string, the prompt")
        _call_frame(stack, env)
        return Boundary("leaf", args[0], tuple(stack))
    return "ret", world.call(name, args), env


def run_text(text: str, world: World = PURE_WORLD, *, fuel: int = DEFAULT_FUEL) -> Any:
    """Evaluate a closed Spell program with no model: its value, or the error raised.

    A model call raises :class:`EvaluationError` (use :class:`~agentic_machines.spell.SpellMachine`
    or :func:`~agentic_machines.spell.run_spell` to answer it).

    >>> run_text("(do (defn sq (x) (* x x)) (sq 7))")
    49
    """
    outcome, _ = run(*start(parse(text)), world, fuel=fuel)
    if type(outcome) is Halted:
        return outcome.value
    if type(outcome) is Stuck:
        raise outcome.error
    raise EvaluationError(
        f"the program made a model call ({outcome.kind}, prompt {_show(outcome.prompt)}); "
        "run it with run_spell(program, completions) to answer it"
    )
