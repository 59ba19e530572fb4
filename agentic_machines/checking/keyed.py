"""Following a keyed loop: whether a run that came back to a key goes round for ever.

``never_diverges(key=...)`` says which states are one situation. A run that comes back
to the key of an earlier state is a divergence only when the machine really goes round
that loop for ever: :func:`keyed_loop` repeats the loop's completions from where the run
came back, as many rounds as the check's bound of states, and says whether the run ends
or leaves the keys (no divergence), repeats a state exactly (a divergence), or came back
to the same keys every round (a divergence only by the key's claim). The search
(:mod:`~agentic_machines.checking.check`) and the per-run check
(:mod:`~agentic_machines.checking.run_check`) both follow loops with it.

>>> from agentic_machines import FunctionMachine, HALT
>>> from agentic_machines.checking import never_diverges
>>> m = FunctionMachine(lambda n: "go?", lambda n, c: HALT if n == 3 else n + 1)
>>> keyed_loop(m, never_diverges(key=m.prompt), 1, ["go"], ["go?"]) is None  # capped at 3
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, NamedTuple

from .._outcome import is_end
from .._text import counted
from ..errors import Undecided
from ..machine import AgenticMachine
from ..runtime.agent import AgentMachine
from ..runtime.search import same_state
from ..verdict import short_repr
from .properties import NeverDiverges

__all__ = [
    "KEYED_ROUNDS",
    "KeyedFollow",
    "keyed_loop",
    "along",
    "loop_starts",
    "key_of",
    "by_key_note",
]


def key_of(p: NeverDiverges, state: Any) -> Any:
    """``p.key(state)``, made hashable (its ``repr`` when it is not).

    >>> from agentic_machines.checking import never_diverges
    >>> key_of(never_diverges(key=lambda s: [s]), 3)
    '[3]'
    """
    key = p.key(state)  # type: ignore[misc]  # a key that raises is the caller's to report
    try:
        hash(key)
    except TypeError:
        return repr(key)
    return key


KEYED_ROUNDS = 100_000
"""How many rounds :func:`keyed_loop` follows a keyed loop whose states never repeat
exactly (an agent's histories never repeat) when no bound of states says: as many as
:func:`~agentic_machines.checking.check_properties` records states by default. A search
follows its loops as many rounds as its ``max_states``: a loop capped within that bound
runs into its cap, whether or not the search stops early; only a loop that comes back
to the same keys for longer rests on the key's claim that those states are one
situation."""


class KeyedFollow(NamedTuple):
    """How repeating a keyed loop went when it did not stop: ``kind`` is ``"forever"`` (a
    state repeated at the same place of the loop: the run goes round for ever, exact),
    ``"open"`` (every round followed came back to the same keys, no state repeated: a
    divergence only by the key's claim) or ``"unknown"`` (a step's outcome is unknown: the
    harness raised ``Undecided``); ``why`` ends the explanation.

    >>> KeyedFollow("open", "it came back").kind
    'open'
    """

    kind: str
    why: str


def keyed_loop(
    machine: AgenticMachine,
    p: NeverDiverges,
    end: Any,
    loop: Sequence[str],
    keys: Sequence[Any],
    rounds: int | None = None,
    offered: Callable[[Any], Iterable[str]] | None = None,
    memo: dict[tuple[Any, str], tuple[Any, Any]] | None = None,
    dead: set[tuple[Any, int]] | None = None,
    again: bool = False,
) -> KeyedFollow | None:
    """Whether a run that came back to a key really goes round for ever: ``None`` when
    it does not, else how far repeating the loop went (:class:`KeyedFollow`).

    The run is in ``end`` after the completions ``loop``, whose states had the keys
    ``keys`` (one per completion: the key after it; the last is the key ``end`` shares
    with the state where the loop began). Repeating ``loop`` from ``end`` must bring the
    same keys back in the same order, each completion one that ``offered(state)`` offers
    there (when given: completions chosen per prompt), until a state repeats exactly at
    the same place of the loop (``"forever"``: exact). A step that ends the run, reaches
    another key or takes a completion not offered shows that the run does not go round
    for ever (the key left out what stops the loop: a turn counter): ``None``. After
    ``rounds`` rounds (:data:`KEYED_ROUNDS` when ``None``) without either it stops
    (``"open"``). On a machine whose ``R`` reachable states are at most ``rounds``, that
    decides it: the states at the start of ``R + 1`` rounds cannot all differ.

    ``memo`` keeps each step taken (and its key) for the next call, and ``dead`` the
    (state, place in the loop) pairs from which this loop was seen to stop: a search
    follows the same loop from many states of one run. With ``again`` (a re-check of the
    search's follow) every step runs again, and the memo gives only the keys. An agent's
    steps are taken by the step's own process, not a fork of it
    (:meth:`AgentMachine.along`): a followed run does not come back.

    >>> from agentic_machines import FunctionMachine, HALT
    >>> from agentic_machines.checking import never_diverges
    >>> capped = FunctionMachine(lambda n: "go?", lambda n, c: HALT if n == 60 else n + 1)
    >>> p = never_diverges(key=capped.prompt)
    >>> keyed_loop(capped, p, 1, ["go"], ["go?"]) is None  # it runs into its cap
    True
    >>> keyed_loop(capped, p, 1, ["go"], ["go?"], rounds=50).why  # 50 rounds do not reach it
    'repeating them from there came back to the same keys 50 more rounds without an exact repeat (the states never repeat exactly: the key says they are the same situation)'
    >>> endless = FunctionMachine(lambda n: "go?", lambda n, c: (n + 1) % 4)
    >>> keyed_loop(endless, p, 1, ["go"], ["go?"]).why
    'repeating them from there comes back to the same keys until, after 4 rounds, the run is in state 1 again: it never ends'
    """
    rounds = KEYED_ROUNDS if rounds is None else rounds
    known: dict[tuple[Any, str], tuple[Any, Any]] = {} if memo is None else memo
    stopped: set[tuple[Any, int]] = set() if dead is None else dead
    if (end, 0) in stopped:
        return None
    seen = {(end, 0)}
    x = end
    size = len(loop)
    with along(machine):
        for step in range(rounds * size):
            i = step % size
            c = loop[i]
            went = known.get((x, c))
            if went is None or again:
                try:
                    went = _keyed_step(machine, p, x, c, offered, went)
                except Undecided as exc:
                    why = f"repeating the loop met a step whose outcome is unknown: {exc}"
                    return KeyedFollow("unknown", why)
                if went[1] == keys[i]:  # one key object for every round (prompts are big)
                    went = (went[0], keys[i])
                known[(x, c)] = went
            x, key = went
            place = (x, (i + 1) % size)
            if x is _GONE or key != keys[i] or place in stopped:
                stopped.update(seen)  # from each of them the loop stops the same way
                return None
            if place in seen:
                return KeyedFollow(
                    "forever",
                    f"repeating them from there comes back to the same keys until, after "
                    f"{counted(step // size + 1, 'round')}, the run is in state {short_repr(x)} "
                    "again: it never ends",
                )
            seen.add(place)
    return KeyedFollow(
        "open",
        f"repeating them from there came back to the same keys {counted(rounds, 'more round')} "
        "without an exact repeat (the states never repeat exactly: the key says they are "
        "the same situation)",
    )


def along(machine: AgenticMachine) -> AbstractContextManager[Any]:
    """Where ``machine`` takes the steps of a run that goes on and does not come back: an
    agent's own process takes them (:meth:`AgentMachine.along`), where a search forks it
    to keep the state for its other completions; any other machine as it is.

    >>> from agentic_machines import FunctionMachine, HALT
    >>> with along(FunctionMachine(lambda n: "?", lambda n, c: HALT)):
    ...     pass
    """
    return machine.along() if isinstance(machine, AgentMachine) else nullcontext()


def loop_starts(comps: Sequence[str], keys: Sequence[Any], starts: Sequence[int]) -> list[int]:
    """The loops worth following at the end of a run: ``starts`` (the steps, nearest
    first, whose state has the key of the run's last state) without those whose loop is
    the nearest loop repeated, since following it is following the nearest loop, tried
    first. ``comps[j]`` is the run's ``j``-th completion, ``keys[j]`` the key of the state
    before it (``keys[-1]``: the last state's).

    >>> loop_starts(["go"] * 4, ["?"] * 5, [3, 2, 1, 0])  # "go" repeated: only the nearest
    [3]
    >>> loop_starts(["a", "b", "a", "b"], ["?", "!", "?", "!", "?"], [2, 0])
    [2]
    >>> loop_starts(["a", "b", "b"], ["?", "!", "?", "?"], [2, 0])
    [2, 0]
    """
    if not starts:
        return []
    end = len(comps)
    q = end - starts[0]  # the nearest loop's length
    low = end - q  # the window [low, end) repeats the nearest loop (its period is q)
    while low > 0 and comps[low - 1] == comps[low - 1 + q] and keys[low] == keys[low + q]:
        low -= 1
    return [n for n in starts if n == starts[0] or (end - n) % q or n < low]


_GONE = object()
"""Where a followed step goes when it ends the run, raises or is not offered."""


def _keyed_step(
    machine: AgenticMachine,
    p: NeverDiverges,
    x: Any,
    c: str,
    offered: Callable[[Any], Iterable[str]] | None,
    known: tuple[Any, Any] | None = None,
) -> tuple[Any, Any]:
    """The state ``c`` takes ``x`` to and its key, or ``(_GONE, None)``; raises ``Undecided``.
    With ``known`` (the step as the search took it, for a re-check) the harness runs again,
    and the known key is kept when it gives the same state (the harness is what a re-check
    checks; the key, the property's own function, needs no second call)."""
    took = known is not None and known[0] is not _GONE
    try:
        if not took and offered is not None and c not in offered(x):
            return _GONE, None  # the machine is never asked this there: no loop to follow
        t = machine.harness(x, c)
    except Undecided:
        raise
    except Exception:  # noqa: BLE001 - a step that raises ends the run: no loop
        return _GONE, None
    if t is None or is_end(t):
        return _GONE, None
    if took and same_state(t, known[0]):  # type: ignore[index]
        return known  # type: ignore[return-value]
    return t, key_of(p, t)


def by_key_note(rounds: int, who: str, knob: str) -> str:
    """What a verdict that rests on a key adds to its reason: its loop came back to the
    same keys for ``rounds`` rounds, as far as ``who`` follows one, and ``knob`` goes
    further.

    >>> by_key_note(50, "the search", "max_states").split(", so")[0]
    '; not exhaustive: 50 rounds is as far as the search follows a loop'
    """
    return (
        f"; not exhaustive: {counted(rounds, 'round')} is as far as {who} follows a loop, so "
        "this refutation rests on the key's claim that those states are one situation; a loop "
        f"capped after more rounds looks the same: a larger {knob} follows it further"
    )
