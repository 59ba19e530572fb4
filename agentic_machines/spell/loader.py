"""Loading a Spell state with one completion: rebuilding its waiting frames as source.

A state of :class:`~agentic_machines.spell.SpellMachine` is a model call and the stack
of frames waiting for its result. :func:`loader` writes the completion that, answered
to the initial state, reaches exactly that state: a quoted trailing form whose
evaluation pushes the same frames, innermost last, and then makes the same call. Each
frame is rebuilt by the source construct that pushes it (``(f v ... HOLE e ...)``,
``(do HOLE e ...)``, ``(if HOLE a b)``, ``(def x HOLE)``, ``(let ((x HOLE) ...) ...)``,
``(eval HOLE)``, ``(think "" HOLE)``, ``(!call-now x v y HOLE ...)``, and a call of
``(fn () HOLE)`` for a frame that gives an environment back); values are written as
literals, and ``def`` forms set the environment a frame keeps.

Scope is dynamic and no form removes a binding, so within one program the environments
only gain keys. A child session that waits inside its own computation keeps, above its
caller's frames, environments without the caller's bindings: the loader rebuilds the
caller's frames, then starts the child's part as a child session of its own with
``(!spell-eval "<program>")`` (Spell's core evaluator as a builtin: a fresh empty
environment, the result returning through the same call frame a model child's does),
whose trailing form rebuilds the child's frames. Nested children nest these programs
(see ``proofs/spell_loader.md``).

>>> from agentic_machines.spell import SpellMachine
>>> m = SpellMachine(task="t")
>>> s = m.harness(m.initial, " (defn f (x) (str x \\"!\\")) '(f (!llm-self \\"inner\\"))")
>>> [f[0] for f in s.kont], loader(s)[:12]
(['args', 'return'], " '((fn f (x)")
>>> m.harness(m.initial, loader(s)) == s
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..cek.syntax import NIL, Symbol, from_items
from ..errors import InvalidArgument
from .evaluator import Boundary, Env
from .text import literal, pr_str

__all__ = ["loader", "is_loadable"]

_MISSING = object()


def _sym(name: str) -> Symbol:
    return Symbol(name)


def is_loadable(state: Boundary) -> bool:
    """True when :func:`loader` can rebuild ``state``: every frame is one a source construct
    pushes (always, for states the runtime reaches; ``proofs/spell_loader.md``).

    >>> is_loadable(Boundary("self", "(quine completion (eval (do ", ()))
    True
    """
    try:
        loader(state)
    except InvalidArgument:
        return False
    return True


def loader(state: Boundary) -> str:
    """The completion that reaches ``state`` from a :class:`SpellMachine`'s initial state."""
    if type(state) is not Boundary:
        raise InvalidArgument(f"loader: {state!r} is not a Spell state")
    call = "!llm-self" if state.kind == "self" else "leaf-llm"
    form = _segment(state.kont, from_items([_sym(call), state.prompt]), "completion")
    return " '" + pr_str(form)


def _segment(kont: tuple, call: Any, name: str) -> Any:
    """The form that, evaluated as the trailing form of a program whose quine binds
    ``name``, pushes ``kont`` and then evaluates ``call``.

    A ``return`` frame below the top is where a child session waits for its caller: the
    caller's environment is set, and ``(!spell-eval "<child program>")`` pushes the same
    frame and starts the child in a fresh environment; the child's trailing form is the
    rest of the stack, rebuilt the same way (recursively, one program per session).
    """
    contexts: list[Callable[[Any], Any]] = []
    current: dict[str, Any] = {name: _MISSING}

    def set_env(env: Env) -> Callable[[Any], Any]:
        if not env.effects:
            raise InvalidArgument("loader: a waiting frame outside the trailing form's eval")
        extra = [k for k in current if k not in env.bindings]
        if extra:
            raise InvalidArgument(
                f"loader: a waiting frame's environment lacks {extra[0]!r}, which cannot be unbound"
            )
        defs = [
            from_items([_sym("def"), _sym(k), literal(v)])
            for k, v in env.bindings.items()
            if current.get(k, _MISSING) is _MISSING or current[k] != v
        ]
        current.clear()
        current.update(env.bindings)
        if not defs:
            return lambda inner: inner
        return lambda inner: from_items([_sym("do"), *defs, inner])

    def chain(first: Callable[[Any], Any], then: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda inner: first(then(inner))

    form = call
    i = 0
    n = len(kont)
    while i < n:
        frame = kont[i]
        tag = frame[0]
        nxt = kont[i + 1][0] if i + 1 < n else None
        if tag == "return" and i + 1 < n:
            # a child session waits here: its program is the rest of the stack
            child_name = _session_name(kont[i + 1 :])
            inner = _segment(kont[i + 1 :], call, child_name)
            program = f"(quine {child_name} (eval (do '{pr_str(inner)})))"
            contexts.append(set_env(frame[1]))
            form = from_items([_sym("!spell-eval"), program])
            break
        if tag == "return":  # the call's own frame, on top
            contexts.append(set_env(frame[1]))
            i += 1
        elif tag == "restore" and nxt in ("let", "eval"):
            # the let / eval construct pushes this frame itself, from the current environment
            contexts.append(chain(set_env(frame[1]), _construct(kont[i + 1])))
            i += 2
        elif tag == "restore":
            contexts.append(chain(set_env(frame[1]), _call_fn))
            i += 1
        else:
            contexts.append(_construct(frame))
            i += 1
    for wrap in reversed(contexts):
        form = wrap(form)
    return form


def _session_name(kont: tuple) -> str:
    # The child's quine binds its name in every environment of its session; the lowest
    # environment of the segment has the fewest keys, and the name is among them.
    for frame in kont:
        if frame[0] in ("restore", "return"):
            keys = sorted(frame[1].bindings)
            if not keys:
                raise InvalidArgument("loader: a child session's environment binds no name")
            return "completion" if "completion" in keys else keys[0]
    raise InvalidArgument("loader: a child session without a call frame")  # pragma: no cover


def _call_fn(inner: Any) -> Any:
    return from_items([from_items([_sym("fn"), NIL, inner])])


def _construct(frame: tuple) -> Callable[[Any], Any]:
    tag = frame[0]
    if tag == "args":
        done, rest = frame[1], frame[2]
        return lambda inner: from_items([*(literal(v) for v in done), inner, *rest])
    if tag == "do":
        return lambda inner: from_items([_sym("do"), inner, *frame[1]])
    if tag == "if":
        return lambda inner: from_items([_sym("if"), inner, frame[1], frame[2]])
    if tag == "def":
        return lambda inner: from_items([_sym("def"), _sym(frame[1]), inner])
    if tag == "let":
        _, name, rest, body = frame
        pairs = [from_items([_sym(n), e]) for n, e in rest]
        return lambda inner: from_items(
            [_sym("let"), from_items([from_items([_sym(name), inner]), *pairs]), *body]
        )
    if tag == "eval":
        if frame[1]:
            raise InvalidArgument("loader: an outer-eval frame cannot wait for a model call")
        return lambda inner: from_items([_sym("eval"), inner])
    if tag == "const":
        if frame[1] is not NIL:
            raise InvalidArgument("loader: unexpected constant frame")
        return lambda inner: from_items([_sym("think"), "", inner])
    if tag == "callnow":
        _, kind, names, exprs, done, limit = frame
        k = len(done)
        parts: list[Any] = [_sym(kind)]
        for j in range(k):
            parts += [_sym(names[j]), literal(done[j])]

        def build(inner: Any) -> Any:
            tail: list[Any] = []
            for j, e in enumerate(exprs):
                tail += [_sym(names[k + 1 + j]), e]
            extra = [] if limit is None else [limit]
            return from_items([*parts, _sym(names[k]), inner, *tail, *extra])

        return build
    raise InvalidArgument(f"loader: cannot rebuild a {tag!r} frame")
