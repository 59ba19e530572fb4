"""Properties of a harness, as values: what :func:`check_properties` and the Hypothesis
tests check.

Three kinds, after the model checkers (TLC's invariants, action properties and
liveness):

- a state **invariant** ``Invariant(name, fn)``, ``fn(state, prompt) -> bool``, must
  be true in every reached state;
- a **transition** property ``Transition(name, fn)``, ``fn(state, completion,
  outcome) -> bool``, must be true of every step ``h(state, completion) = outcome``.
  The outcome is a state, ``HALT``, ``DIVERGE`` or a :class:`Raised` value (the
  harness raised an exception on that completion);
- a **liveness** property is about whole runs: :func:`halts_within` and
  :func:`never_diverges`, decided on the explored graph, cycles included.

Ready-made ones: :func:`halts_within`, :func:`never_diverges`, :func:`never_raises`,
:func:`prompt_length_at_most`, :func:`unreachable` and :func:`effects_at_most_once`.
``p & q`` (or :func:`all_of`) is the conjunction: it holds when every part holds,
and its counterexample is the shortest of theirs.

>>> p = halts_within(8) & never_raises() & prompt_length_at_most(2000)
>>> p.name
'halts_within(8) & never_raises() & prompt_length_at_most(2000)'
>>> [q.kind for q in p.parts]
['liveness', 'transition', 'invariant']
>>> parse_property("halts_within:8") == halts_within(8)
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._outcome import Raised
from ..errors import InvalidArgument

__all__ = [
    "Property",
    "Invariant",
    "Transition",
    "HaltsWithin",
    "NeverDiverges",
    "NeverRaises",
    "EffectsAtMostOnce",
    "Conjunction",
    "Raised",
    "halts_within",
    "never_diverges",
    "never_raises",
    "prompt_length_at_most",
    "unreachable",
    "unreachable_prompt",
    "effects_at_most_once",
    "all_of",
    "parse_property",
    "PROPERTY_NAMES",
    "display_names",
    "part_names",
    "spell_property",
]


class Property:
    """Base class of the properties. ``name`` names it in reports; ``kind`` is
    ``"invariant"``, ``"transition"``, ``"liveness"``, ``"effects"`` or ``"all"``.

    ``p & q`` is their conjunction.
    """

    name: str
    kind: str = "property"

    @property
    def parts(self) -> tuple[Property, ...]:
        """The properties a conjunction is made of; ``(self,)`` for the others."""
        return (self,)

    def claim(self) -> str:
        """What the property says, in words (the claim of its verdict)."""
        return self.name

    def __and__(self, other: Property) -> Conjunction:
        if not isinstance(other, Property):
            return NotImplemented
        return Conjunction(self.parts + other.parts)


def _check_callable(fn: Any, what: str, signature: str) -> None:
    if not callable(fn):
        raise InvalidArgument(f"{what} needs a function {signature}, got {fn!r}")


def _check_name(name: Any, what: str) -> None:
    if not isinstance(name, str) or not name:
        raise InvalidArgument(
            f"{what} needs a non-empty name string first, e.g. {what}('short prompts', fn); got {name!r}"
        )


@dataclass(frozen=True, eq=False)  # a property is its object: equal names never merge
class Invariant(Property):
    """A state invariant: ``fn(state, prompt)`` is true in every reached state.

    >>> short = Invariant("short prompts", lambda state, prompt: len(prompt) < 80)
    >>> short.kind, short.fn("s", "hello")
    ('invariant', True)
    >>> Invariant(lambda s, p: True, "oops")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: Invariant needs a non-empty name string first, e.g. Invariant('short prompts', fn); got <function <lambda> at ...>
    """

    name: str
    fn: Callable[[Any, str], bool] = field(compare=False)
    text: str = field(default="", compare=False)
    kind = "invariant"

    def __post_init__(self) -> None:
        _check_name(self.name, "Invariant")
        _check_callable(self.fn, "Invariant", "fn(state, prompt) -> bool")

    def claim(self) -> str:
        return self.text or f"{self.name} holds in every reached state"


@dataclass(frozen=True, eq=False)  # a property is its object: equal names never merge
class Transition(Property):
    """A transition property: ``fn(state, completion, outcome)`` is true of every step.

    >>> no_reset = Transition("no reset", lambda s, c, o: o != "start")
    >>> no_reset.kind, no_reset.fn("a", "RESET", "start")
    ('transition', False)
    """

    name: str
    fn: Callable[[Any, str, Any], bool] = field(compare=False)
    text: str = field(default="", compare=False)
    kind = "transition"

    def __post_init__(self) -> None:
        _check_name(self.name, "Transition")
        _check_callable(self.fn, "Transition", "fn(state, completion, outcome) -> bool")

    def claim(self) -> str:
        return self.text or f"{self.name} holds on every step"


@dataclass(frozen=True)
class HaltsWithin(Property):
    """Every run halts (``HALT``) within ``k`` model calls, and none diverges.

    A run that reaches ``DIVERGE``, is left stuck (the completions function offers no
    completion: it has not halted), or makes ``k`` model calls and is still in a state,
    is a counterexample; a reachable cycle is one for every k, and is returned as its
    lasso when that is no longer than the other runs. A run the harness ends by raising
    is left to :func:`never_raises`: here it counts as ended.

    >>> HaltsWithin(3).claim()
    'every run halts within 3 model calls'
    """

    k: int
    kind = "liveness"

    def __post_init__(self) -> None:
        if not isinstance(self.k, int) or isinstance(self.k, bool) or self.k < 0:
            raise InvalidArgument(f"halts_within(k) needs an integer k >= 0, got {self.k!r}")

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"halts_within({self.k})"

    def claim(self) -> str:
        return f"every run halts within {self.k} model calls"


@dataclass(frozen=True)
class NeverDiverges(Property):
    """No run diverges: no reachable ``DIVERGE``, and no reachable cycle of states (a
    model that repeats the cycle's completions keeps the run going for ever; the
    counterexample is the cycle's lasso).

    ``key(state)`` (one argument, the state), when given, says which states are the same
    situation: a run that reaches a state with the key of an earlier state of the same
    run is back where it was, a loop. An agent function needs it to show a loop of
    model calls at all: its states are histories of completions, which never repeat
    (``key=machine.prompt`` says "the same prompt again is the same situation"). Without
    a key, the verdict on such a machine says that it cannot see such loops.

    >>> NeverDiverges().claim()
    'no run diverges (no reachable DIVERGE, no reachable cycle)'
    >>> NeverDiverges(key=len).name
    'never_diverges(key=len)'
    """

    key: Callable[[Any], Any] | None = None
    kind = "liveness"

    def __post_init__(self) -> None:
        if self.key is not None:
            _check_callable(self.key, "never_diverges(key=...)", "key(state) -> a hashable value")

    @property
    def name(self) -> str:  # type: ignore[override]
        if self.key is None:
            return "never_diverges()"
        return f"never_diverges(key={getattr(self.key, '__name__', 'key')})"

    def claim(self) -> str:
        if self.key is None:
            return "no run diverges (no reachable DIVERGE, no reachable cycle)"
        return (
            f"no run diverges (no reachable DIVERGE, no run that comes back to the key of an "
            f"earlier state and goes round that loop for ever; keys by {self.name[19:-1]})"
        )


@dataclass(frozen=True)
class NeverRaises(Property):
    """The harness never raises, whatever the completion.

    A step whose harness raises is a :class:`Raised` outcome. Machines that record an
    exception as an outcome instead of raising it (a ``HarnessMachine`` built with
    ``on_error="halt"``, an agent loop) are asked through their ``result(state,
    completion)`` method: a halting step whose result is an exception is a
    counterexample too.

    >>> NeverRaises().kind
    'transition'
    """

    kind = "transition"

    @property
    def name(self) -> str:  # type: ignore[override]
        return "never_raises()"

    def claim(self) -> str:
        return "the harness never raises, on any completion"


@dataclass(frozen=True, eq=False)  # compared by the tool it watches (below)
class EffectsAtMostOnce(Property):
    """A tool's side effect happens at most once per request along every run.

    ``tool`` is an object that logs its real executions in a list attribute ``calls``
    (one entry per execution, the request: e.g. its arguments), or the name of such a
    tool in the machine's ``tools`` mapping. The checker reads the log before and
    after every harness call, so an execution that a replay repeats (a harness that
    re-runs its program to reach a state, a retry) is seen, and a run in which one
    request is executed twice is a counterexample. The history along a run is taken
    along the breadth-first path to each state (exact when a state determines its
    history, as the trace states of generator harnesses and agent loops do).

    Two of them are the same property when they watch the same tool (the same name, or
    the same tool object) under the same label.

    >>> EffectsAtMostOnce("charge").name
    'effects_at_most_once(charge)'
    >>> EffectsAtMostOnce("ping") == EffectsAtMostOnce("charge")
    False
    """

    tool: Any = field(compare=False)
    label: str = ""
    kind = "effects"

    def _identity(self) -> tuple:
        # a tool object may be unhashable or compare by value: it is itself, by id
        tool = self.tool
        return (self.label, tool if isinstance(tool, str) else id(tool))

    def __eq__(self, other: object) -> bool:
        if type(other) is not EffectsAtMostOnce:
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    @property
    def tool_name(self) -> str:
        """The watched tool's own name (never the label: messages say which tool ran).

        >>> EffectsAtMostOnce("ping", "tool").tool_name
        'ping'
        """
        return self.tool if isinstance(self.tool, str) else _tool_name(self.tool)

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"effects_at_most_once({self.label or self.tool_name})"

    def claim(self) -> str:
        return f"no run executes one request of {self.tool_name} twice"

    def never_ran(self, machine: Any) -> str:
        """Why the check cannot pass (``""`` when it can): ``tool`` names an effect of an
        agent machine that never ran in any explored run (a misspelled name, or an
        ``@effect`` that wraps another function than the tool), with the effects seen.

        >>> class Agent:
        ...     def effect_log(self, start=0): return [("s", "Mailer.send", "()", True)]
        >>> EffectsAtMostOnce("send").never_ran(Agent())
        ''
        >>> EffectsAtMostOnce("send_emial").never_ran(Agent())
        "no @effect named 'send_emial' ran in any explored run, so nothing says it runs at most once; the effects that ran: Mailer.send"
        """
        tool = self.tool
        if not isinstance(tool, str) or not callable(getattr(machine, "effect_log", None)):
            return ""
        seen = dict.fromkeys(name for _, name, *_ in machine.effect_log())
        if any(_named(name, tool) for name in seen):
            return ""
        return (
            f"no @effect named {tool!r} ran in any explored run, so nothing says it runs at "
            f"most once; the effects that ran: {', '.join(seen) or 'none'}"
        )

    def log(self, machine: Any) -> list:
        """The tool's log of real executions (its ``calls`` list)."""
        tool = self.tool
        if isinstance(tool, str) and callable(getattr(machine, "effect_log", None)):
            return _EffectLogView(machine, tool)  # type: ignore[return-value]
        if isinstance(tool, str):
            tools = getattr(machine, "tools", None)
            if not isinstance(tools, Mapping) or tools.get(tool) is None:
                raise InvalidArgument(
                    f"effects_at_most_once({tool!r}): machine {getattr(machine, 'name', machine)!r} "
                    "has no tools mapping with that name; pass the tool object itself"
                )
            tool = tools[tool]
        calls = getattr(tool, "calls", None)
        if not isinstance(calls, list):
            raise InvalidArgument(
                f"effects_at_most_once needs a tool that logs its executions in a list "
                f"attribute 'calls'; {tool!r} has none (wrap the tool with a counter that "
                "appends each request to .calls)"
            )
        return calls


class _EffectLogView:
    """The real executions of one tool, read from an agent machine's ``effect_log(start)``
    (entries ``(state, tool, arguments, ok)``): its arguments, in order, as a list.

    It keeps its place in the machine's log and reads only the entries added since, so a
    check that reads it before and after every step pays for each execution once (linear
    in the executions, not in the steps times the log).

    >>> class Agent:
    ...     log = [("s", "charge", "(1,)", True), ("s", "ping", "()", True)]
    ...     def effect_log(self, start=0): return self.log[start:]
    >>> view = _EffectLogView(Agent(), "charge")
    >>> len(view), view[0:]
    (1, ['(1,)'])
    """

    def __init__(self, machine: Any, tool: str) -> None:
        self.machine, self.tool = machine, tool
        self._read = 0
        self._calls: list = []
        self._by_state: dict[Any, list] = {}  # the step (its new history) -> its requests

    def _sync(self) -> list:
        new = self.machine.effect_log(self._read)
        if new:
            self._read += len(new)
            tool = self.tool
            for state, name, args, *_ in new:
                if _named(name, tool):
                    self._calls.append(args)
                    self._by_state.setdefault(state, []).append(args)
        return self._calls

    def at(self, state: Any, completion: str) -> tuple:
        """The requests of the step h(state, completion), whenever they really ran: in this
        step, or when an earlier check or run made the same step (an effect runs once per
        step of the machine, and a replay returns its recorded result). So a run's history
        of executions is right even when the step was made before."""
        self._sync()
        return tuple(self._by_state.get(state.then(completion), ()))

    def at_start(self) -> tuple:
        """The requests made before the agent's first model call (its start's step)."""
        self._sync()
        return tuple(self._by_state.get(getattr(self.machine, "initial", None), ()))

    def __len__(self) -> int:
        return len(self._sync())

    def __getitem__(self, index: Any) -> Any:
        return self._sync()[index]


def _named(name: str, tool: str) -> bool:
    """Whether the effect log's ``name`` (a qualified name) is the tool called ``tool``."""
    return name == tool or name.rsplit(".", 1)[-1] == tool


def _tool_name(tool: Any) -> str:
    return getattr(tool, "name", None) or getattr(tool, "__name__", None) or type(tool).__name__


@dataclass(frozen=True)
class Conjunction(Property):
    """Every one of ``parts`` holds. Build it with ``p & q`` or :func:`all_of`.

    >>> (never_raises() & never_diverges()).claim()
    'the harness never raises, on any completion; and no run diverges (no reachable DIVERGE, no reachable cycle)'
    """

    members: tuple[Property, ...]
    kind = "all"

    def __post_init__(self) -> None:
        if not self.members:
            raise InvalidArgument("a conjunction needs at least one property")
        for p in self.members:
            if not isinstance(p, Property):
                raise InvalidArgument(f"{p!r} is not a property; build one with Invariant(...)")

    @property
    def parts(self) -> tuple[Property, ...]:
        return self.members

    @property
    def name(self) -> str:  # type: ignore[override]
        return " & ".join(p.name for p in self.members)

    def claim(self) -> str:
        return "; and ".join(p.claim() for p in self.members)


# -- ready-made properties ----------------------------------------------------------------


def halts_within(k: int) -> HaltsWithin:
    """Every run halts within ``k`` model calls (and none diverges).

    >>> halts_within(8).name
    'halts_within(8)'
    """
    return HaltsWithin(k)


def never_diverges(key: Callable[[Any], Any] | None = None) -> NeverDiverges:
    """No run reaches ``DIVERGE`` or a cycle of states; with ``key(state)``, nor a state
    whose key an earlier state of its run had (see :class:`NeverDiverges`).

    >>> never_diverges().kind, never_diverges(key=str).name
    ('liveness', 'never_diverges(key=str)')
    """
    return NeverDiverges(key)


def never_raises() -> NeverRaises:
    """The harness never raises, on any completion.

    >>> never_raises().name
    'never_raises()'
    """
    return NeverRaises()


def prompt_length_at_most(n: int) -> Invariant:
    """Every prompt has at most ``n`` characters (a prompt that grows without bound
    breaks it at some depth).

    >>> p = prompt_length_at_most(5)
    >>> p.name, p.fn("s", "hello"), p.fn("s", "hello!")
    ('prompt_length_at_most(5)', True, False)
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise InvalidArgument(f"prompt_length_at_most(n) needs an integer n >= 0, got {n!r}")
    return Invariant(
        f"prompt_length_at_most({n})",
        lambda state, prompt: len(prompt) <= n,
        text=f"every prompt has at most {n} characters",
    )


def unreachable(pred: Callable[[Any], bool], name: str | None = None) -> Invariant:
    """No reached state satisfies ``pred``, called as ``pred(state)`` (one argument, the
    state; never anything else). A predicate of the prompt is :func:`unreachable_prompt`.

    >>> p = unreachable(lambda s: s == 3, name="state 3")
    >>> p.name, p.fn(3, "*"), p.fn(2, "*")
    ('unreachable(state 3)', False, True)
    >>> bad = 3
    >>> unreachable(lambda s, bad=bad: s == bad).fn(3, "*")  # a default is never filled in
    False
    """
    _check_callable(pred, "unreachable", "pred(state) -> bool")
    label = name or getattr(pred, "__name__", "pred")
    return Invariant(
        f"unreachable({label})",
        lambda state, prompt: not pred(state),
        text=f"no reachable state satisfies {label}",
    )


def unreachable_prompt(pred: Callable[[str], bool], name: str | None = None) -> Invariant:
    """No reached state has a prompt that satisfies ``pred``, called as ``pred(prompt)``
    (one argument, the prompt string). A predicate of the state is :func:`unreachable`.

    >>> p = unreachable_prompt(lambda prompt: prompt.endswith("Turn 1:"), name="turn 1 again")
    >>> p.name, p.fn("s", "...Turn 1:"), p.fn("s", "...Turn 2:")
    ('unreachable_prompt(turn 1 again)', False, True)
    """
    _check_callable(pred, "unreachable_prompt", "pred(prompt) -> bool")
    label = name or getattr(pred, "__name__", "pred")
    return Invariant(
        f"unreachable_prompt({label})",
        lambda state, prompt: not pred(prompt),
        text=f"no reachable state has a prompt that satisfies {label}",
    )


def effects_at_most_once(tool: Any, *, name: str | None = None) -> EffectsAtMostOnce:
    """No run executes one request of ``tool`` twice (see :class:`EffectsAtMostOnce`).

    >>> class Charge:
    ...     def __init__(self): self.calls = []
    ...     def __call__(self, amount): self.calls.append(amount)
    >>> effects_at_most_once(Charge(), name="charge").name
    'effects_at_most_once(charge)'
    """
    if not isinstance(tool, str) and not isinstance(getattr(tool, "calls", None), list):
        raise InvalidArgument(
            f"effects_at_most_once needs a tool name or a tool that logs its executions in a "
            f"list attribute 'calls'; {tool!r} has none"
        )
    return EffectsAtMostOnce(tool, name or "")


def all_of(*properties: Property | Iterable[Property]) -> Conjunction:
    """The conjunction of ``properties`` (also written ``p & q``).

    >>> all_of(never_raises(), [never_diverges()]).name
    'never_raises() & never_diverges()'
    """
    flat: list[Property] = []
    for p in properties:
        if isinstance(p, Property):
            flat.extend(p.parts)
        else:
            for q in p:
                if not isinstance(q, Property):
                    raise InvalidArgument(f"{q!r} is not a property")
                flat.extend(q.parts)
    return Conjunction(tuple(flat))


PROPERTY_NAMES: dict[str, str] = {
    "halts_within": "halts_within:K, every run halts within K model calls",
    "never_diverges": "never_diverges, no reachable DIVERGE or cycle; never_diverges:prompt "
    "(states with one prompt are the same situation) or never_diverges:MODULE:FUNCTION (a key)",
    "never_raises": "never_raises, the harness never raises",
    "prompt_length_at_most": "prompt_length_at_most:N, every prompt has at most N characters",
    "effects_at_most_once": "effects_at_most_once:TOOL, a tool of the machine's tools mapping",
}
"""The properties :func:`parse_property` reads (the command line's ``--property``)."""


def parse_property(text: str, machine: Any = None) -> Property:
    """A property from its command-line spelling ``NAME`` or ``NAME:ARG``.

    ``never_diverges:prompt`` keys states by ``machine.prompt`` (the machine checked);
    ``never_diverges:MODULE:FUNCTION`` by a function ``key(state)`` imported from a module.

    >>> parse_property("never_raises"), parse_property("prompt_length_at_most:100").name
    (NeverRaises(), 'prompt_length_at_most(100)')
    >>> parse_property("never_diverges:os.path:basename").name
    'never_diverges(key=basename)'
    >>> parse_property("halts_within")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: halts_within needs a number: halts_within:K (e.g. halts_within:8)
    """
    name, _, arg = text.strip().partition(":")
    name = name.strip().replace("-", "_").removesuffix("()")
    if name in ("halts_within", "prompt_length_at_most"):
        try:
            number = int(arg)
        except ValueError:
            raise InvalidArgument(
                f"{name} needs a number: {name}:{'K' if name == 'halts_within' else 'N'} "
                f"(e.g. {name}:{8 if name == 'halts_within' else 2000})"
            ) from None
        return halts_within(number) if name == "halts_within" else prompt_length_at_most(number)
    if name == "never_diverges" and arg:
        return never_diverges(key=_key_function(arg.strip(), machine))
    if name in ("never_diverges", "never_raises"):
        if arg:
            raise InvalidArgument(f"{name} takes no argument, got {text!r}")
        return never_diverges() if name == "never_diverges" else never_raises()
    if name == "effects_at_most_once":
        if not arg:
            raise InvalidArgument(
                "effects_at_most_once needs a tool name: effects_at_most_once:TOOL"
            )
        return EffectsAtMostOnce(arg)
    known = "; ".join(PROPERTY_NAMES.values())
    raise InvalidArgument(f"unknown property {text!r}; known properties: {known}")


def spell_property(p: Property) -> str | None:
    """The command-line spelling :func:`parse_property` reads back as ``p`` (with the
    machine checked), or ``None`` when ``p`` has none (a property of your own code).

    >>> [spell_property(q) for q in (halts_within(3), never_raises(), effects_at_most_once("charge"))]
    ['halts_within:3', 'never_raises', 'effects_at_most_once:charge']
    >>> spell_property(parse_property("prompt_length_at_most:9")), spell_property(unreachable(bool))
    ('prompt_length_at_most:9', None)
    """
    if isinstance(p, HaltsWithin):
        return f"halts_within:{p.k}"
    if isinstance(p, NeverRaises):
        return "never_raises"
    if isinstance(p, EffectsAtMostOnce):
        return f"effects_at_most_once:{p.tool}" if isinstance(p.tool, str) and not p.label else None
    if isinstance(p, NeverDiverges):
        key = p.key
        if key is None:
            return "never_diverges"
        if getattr(key, "__name__", None) == "prompt" and hasattr(key, "__self__"):
            return "never_diverges:prompt"  # a machine's own prompt function
        module, name = getattr(key, "__module__", None), getattr(key, "__qualname__", "")
        if module and name and "<" not in name:
            return f"never_diverges:{module}:{name}"
        return None
    if isinstance(p, Invariant) and p.name.startswith("prompt_length_at_most("):
        return f"prompt_length_at_most:{p.name[22:-1]}"
    return None


def _key_function(spec: str, machine: Any) -> Callable[[Any], Any]:
    """The key of ``never_diverges:SPEC``: ``prompt`` (the machine's prompt function) or
    ``MODULE:FUNCTION``."""
    if spec == "prompt":
        if machine is None:
            raise InvalidArgument(
                "never_diverges:prompt keys states by the machine's prompt: parse it with the "
                "machine, parse_property(text, machine)"
            )
        return machine.prompt
    module, _, attr = spec.rpartition(":")
    if not module or not attr:
        raise InvalidArgument(
            f"never_diverges:{spec} names no key; write never_diverges:prompt or "
            "never_diverges:MODULE:FUNCTION (a function key(state))"
        )
    import importlib  # only for a key named on the command line

    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise InvalidArgument(
            f"never_diverges:{spec}: cannot import {attr!r} from {module!r} ({exc}); give "
            "never_diverges:MODULE:FUNCTION with an importable module"
        ) from None
    if not callable(fn):
        raise InvalidArgument(
            f"never_diverges:{spec}: {module}:{attr} is not a function key(state)"
        )
    return fn


def display_names(properties: Sequence[Property]) -> list[str]:
    """The names ``properties`` are reported under, one per property, made unique: a
    later property whose name an earlier one has gets ``#2``, ``#3``, ... (a property
    is its object, so two with one name are both checked and both reported).

    >>> display_names([unreachable(lambda s: s == 1), unreachable(lambda s: s == 2), never_raises()])
    ['unreachable(<lambda>)', 'unreachable(<lambda>)#2', 'never_raises()']
    """
    seen: dict[str, int] = {}
    out = []
    for p in properties:
        name = p.name
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def part_names(properties: Sequence[Property]) -> dict[Property, str]:
    """The name each part of ``properties`` is named by in a reason: a property checked
    on its own by its :func:`display_names` name (``#2`` when an earlier one has its
    name), a part of a conjunction by its own name, made unique the same way.

    >>> a, b = unreachable(lambda s: s == 1), unreachable(lambda s: s == 2)
    >>> list(part_names([a, b & never_raises()]).values())
    ['unreachable(<lambda>)', 'unreachable(<lambda>)#2', 'never_raises()']
    """
    names: dict[Property, str] = {}
    for p, label in zip(properties, display_names(properties)):
        if p.parts == (p,):
            names.setdefault(p, label)
    taken = set(names.values())
    for p in properties:
        for q in p.parts:
            if q in names:
                continue
            name, n = q.name, 1
            while name in taken:
                n += 1
                name = f"{q.name}#{n}"
            names[q] = name
            taken.add(name)
    return names


def flatten(properties: Property | Sequence[Property]) -> list[Property]:
    """The properties to check, one per entry (a single property becomes a list).

    >>> [p.name for p in flatten(never_raises())]
    ['never_raises()']
    """
    if isinstance(properties, Property):
        return [properties]
    if isinstance(properties, (str, bytes)) or not isinstance(properties, Iterable):
        raise InvalidArgument(
            f"properties must be a property or a list of them, got {properties!r}; e.g. "
            "[halts_within(8), never_raises()]"
        )
    out = list(properties)
    for p in out:
        if not isinstance(p, Property):
            raise InvalidArgument(
                f"{p!r} is not a property; use Invariant(name, fn), Transition(name, fn) or a "
                "ready-made one such as halts_within(8)"
            )
    return out
