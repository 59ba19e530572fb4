"""The verdicts of a check, built after its search from the graph it recorded.

:func:`~agentic_machines.checking.check_properties` runs in two phases. While the search
runs, :mod:`~agentic_machines.checking.check` checks each state and step and records the
first violation of each safety property as a :class:`Finding`. After it, the methods here
read the kernel's record of the search (:class:`~agentic_machines.runtime.search.Found`:
its rows, each state's depth, prompt and breadth-first parent; :func:`tally` counts its
rows once) and build each property's verdict: a shortest path to a finding, the lasso of
a reachable cycle for ``never_diverges`` and ``halts_within``, the run of ``k`` steps
that has not halted, and the words of the bound every verdict names.

>>> sorted(cyclic_states({0: {1: "a"}, 1: {0: "a"}, 2: {}}))
[0, 1]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .._text import clip, counted, one_line
from ..machine import DIVERGE, AgenticMachine
from ..runtime.harness import TraceState
from ..runtime.search import Bounds, Found, UndecidedStep
from ..verdict import Verdict, short_repr
from .keyed import by_key_note
from .properties import (
    EffectsAtMostOnce,
    HaltsWithin,
    NeverDiverges,
    NeverRaises,
    Property,
    Raised,
)
from .result import Counterexample, PropertyResult

__all__ = ["Finding", "KeyedLoop", "Tally", "tally", "Verdicts", "cyclic_states", "alphabet_name"]


class Finding(NamedTuple):
    """The first violation of a property part the search found: at state ``at``, by
    ``completion`` (``None``: the state itself violates it) to ``outcome`` (a state or an
    end), and ``why`` in words.

    >>> Finding(3, None, None, "x is false").why
    'x is false'
    """

    at: Any
    completion: str | None
    outcome: Any
    why: str


class KeyedLoop(NamedTuple):
    """What refutes a keyed ``never_diverges``: the run to state ``at`` goes on for ever
    from step ``start`` (where an earlier state has ``at``'s key; ``None`` when the key
    itself raised at ``at``), and ``why`` in words. ``by_key``: repeating the ``loop``
    (its completions; ``keys``, the key after each) came back to the same keys without
    an exact repeat, so only the key's claim makes it a divergence; ``head`` is ``why``
    before what repeating the loop showed.

    >>> KeyedLoop(5, 2, "the key repeats").start
    2
    """

    at: Any
    start: int | None
    why: str
    by_key: bool = False
    loop: tuple[str, ...] = ()
    keys: tuple[Any, ...] = ()
    head: str = ""


class Tally(NamedTuple):
    """What the verdicts and the coverage read off a search's rows, counted once
    (:func:`tally`): per expanded state the states its steps reach (``succ``: state ->
    the first completion to it), the ``complete`` states (every successor recorded), the
    counts of steps (``transitions``: a step the state bound refused included), distinct
    outcomes (``edges``), undecided, ``DIVERGE`` and stuck steps, the first ``DIVERGE``
    step, and each complete state's alphabet share."""

    succ: dict[Any, dict[Any, str]]
    complete: set[Any]
    transitions: int
    edges: int
    unknown: int
    unknown_reason: str
    diverged: int
    first_diverge: tuple[Any, str] | None
    stuck: int
    share: dict[Any, float]


def tally(record: Found) -> Tally:
    """One pass over the rows of ``record``.

    >>> from agentic_machines import HALT
    >>> f = Found(); f.prompts.update({0: "p", 1: "q"}); f.rows.append((0, ["a", "b"], [1, HALT]))
    >>> t = tally(f); t.succ, t.edges, t.share
    ({0: {1: 'a'}}, 2, {0: 1.0})
    """
    prompts = record.prompts
    succ: dict[Any, dict[Any, str]] = {}
    complete: set[Any] = set()
    share: dict[Any, float] = {}
    transitions = edges = unknown = diverged = stuck = 0
    reason = ""
    first: tuple[Any, str] | None = None
    last = len(record.rows) - 1 if record.cut else -1
    for k, (s, comps, row) in enumerate(record.rows):
        transitions += len(row)
        stuck += not comps
        out: dict[Any, str] = {}  # every distinct outcome, ends included
        undecided = 0
        for c, t in zip(comps, row):
            if type(t) is UndecidedStep:
                undecided += 1
                reason = reason or t.reason
                continue
            if t is DIVERGE:
                diverged += 1
                first = first or (s, c)
            if t not in out:
                out[t] = c
        unknown += undecided
        edges += len(out)
        succ[s] = {t: c for t, c in out.items() if t in prompts}
        if k == last:  # the step to the state the bound refused was taken too
            transitions += 1
            continue
        complete.add(s)
        if len(row) > undecided:
            share[s] = len(out) / (len(row) - undecided)
    return Tally(succ, complete, transitions, edges, unknown, reason, diverged, first, stuck, share)


class Verdicts:
    """The verdicts of a check read off the kernel's record of its search; the check's
    search (``checking.check``) is one, and sets the attributes below."""

    machine: AgenticMachine
    name: str
    start: Any
    fixed: list[str] | None
    bounds: Bounds
    max_depth: int | None
    record: Found  # the explored graph: rows, depths, prompts, parents
    graph: Tally  # its rows counted, after the search
    # what the search found
    found: dict[Property, Finding]
    keyed_found: dict[NeverDiverges, KeyedLoop]
    keyed_unknown: dict[NeverDiverges, str]  # why a keyed loop could not be followed
    by_key: dict[NeverDiverges, Counterexample]  # the counterexamples resting on a key
    rounds: int  # how many rounds a keyed loop is followed
    # how it stopped
    truncated: str | None
    bound_depth: int | None

    def _verdict(self, prop: Property, label: str) -> PropertyResult:
        parts = prop.parts
        found = [self._part(q) for q in parts]
        refuted = [(cx, v) for cx, v in found if cx is not None]
        claim = f"{prop.claim()}, for {alphabet_name(self.fixed)}"
        checked = self.graph.transitions
        if refuted:
            # an exact counterexample is preferred to one that rests on a key's claim
            exact = [cx for cx, _ in refuted if not any(cx is k for k in self.by_key.values())]
            cx = min(exact or [cx for cx, _ in refuted], key=len)
            cx = Counterexample(
                label,
                cx.completions,
                cx.states,
                cx.prompts,
                cx.explanation,
                cx.loop,
                self.name,
                getattr(self.machine, "initial", None),
            )
            verdict = Verdict(
                False,
                claim,
                "exhaustive" if exact else "key",
                checked,
                reason=f"counterexample of {counted(len(cx), 'step')}: {cx.explanation}"
                + ("" if exact else self._by_key_note()),
                details={"counterexample": cx},
            )
            return PropertyResult(prop, verdict, cx, label)
        undecided = [why for _, why in found if why]
        if undecided:
            return PropertyResult(
                prop,
                Verdict(None, claim, "exhaustive", checked, reason="; ".join(undecided)),
                None,
                label,
            )
        reason = f"bound: {self._bound_text()}"
        if (
            self.bound_depth is not None
            and any(isinstance(q, NeverDiverges) and q.key is None for q in parts)
            and isinstance(self.start, TraceState)
        ):
            reason += (
                f"; {self.name}'s states are histories of completions, which never repeat, so a loop of "
                "model calls cannot be seen as a cycle here; pass never_diverges(key=...) to say which "
                "states are the same situation (e.g. key=machine.prompt)"
            )
        return PropertyResult(
            prop, Verdict(True, claim, "exhaustive", checked, reason=reason), None, label
        )

    def _by_key_note(self) -> str:
        """Why a refutation rests on a key: its loop was followed as far as the bound."""
        return by_key_note(
            self.rounds,
            "the search (as many rounds as it records states)",
            "max_states (--max-states)",
        )

    def _part(self, q: Property) -> tuple[Counterexample | None, str]:
        """The counterexample of one part, or why it is undecided ("" when it holds)."""
        if isinstance(q, HaltsWithin):
            return self._halts_within(q)
        if isinstance(q, NeverDiverges):
            return self._never_diverges(q)
        if isinstance(q, NeverRaises):
            if q in self.found:
                s, c, t, _ = self.found[q]
                raised: Raised = t
                why = f"the harness raised {raised.type}: {clip(one_line(raised.message), 200)}"
                return self._path_cx(q, s, c, t, why), ""
            return None, self._unknown_text()
        if q in self.found:
            return self._finding_cx(q, self.found[q]), ""
        if isinstance(q, EffectsAtMostOnce) and q.never_ran(self.machine):
            return None, q.never_ran(self.machine)
        if self.record.stopped:  # pragma: no cover - stop_early only stops when all are found
            return None, "the search stopped early"
        return None, self._unknown_text()

    def _unknown_text(self) -> str:
        unknown = self.graph.unknown
        if not unknown:
            return ""
        return (
            f"the outcome of {counted(unknown, 'step')} is unknown "
            f"(the harness raised Undecided: {self.graph.unknown_reason})"
        )

    def _path(self, s: Any) -> list[Any]:
        """The states of the breadth-first run from the start to ``s``."""
        parent = self.record.parent
        assert parent is not None  # a check's record keeps the parents
        path = [s]
        while (step := parent.get(path[-1])) is not None:
            path.append(step[0])
        path.reverse()
        return path

    def _path_cx(
        self, q: Property, s: Any, c: str | None, t: Any, why: str, loop: int | None = None
    ) -> Counterexample:
        """The run along the breadth-first path to state ``s``, then ``c`` (if any) to ``t``."""
        states = self._path(s)
        parent, prompts = self.record.parent, self.record.prompts
        comps = [parent[k][1] for k in states[1:]]  # type: ignore[index]
        shown = [prompts[k] for k in states]
        if c is not None:
            comps.append(c)
            states.append(t)
            if t is not DIVERGE and type(t) is not Raised and t in prompts:
                shown.append(prompts[t])
        return Counterexample(q.name, tuple(comps), tuple(states), tuple(shown), why, loop)

    def _finding_cx(self, q: Property, f: Finding) -> Counterexample:
        """The run to a finding: the path to its state, then its step (if any)."""
        if f.completion is None:  # the state itself violates the property
            return self._path_cx(q, f.at, None, None, f.why)
        return self._path_cx(q, f.at, f.completion, f.outcome, f.why)

    def _walk_cx(
        self,
        q: Property,
        walk: list[int],
        comps: list[str],
        why: str,
        loop: int | None = None,
    ) -> Counterexample:
        """The run through the states ``walk`` (one more than ``comps``)."""
        prompts = tuple(self.record.prompts[k] for k in walk)
        return Counterexample(q.name, tuple(comps), tuple(walk), prompts, why, loop)

    # -- liveness on the explored graph -----------------------------------------------------
    def _state_succ(self, s: Any) -> Iterable[tuple[Any, str]]:
        return self.graph.succ.get(s, {}).items()

    def _never_diverges(self, q: NeverDiverges) -> tuple[Counterexample | None, str]:
        candidates: list[Counterexample] = []
        if self.graph.first_diverge is not None:
            s, c = self.graph.first_diverge
            candidates.append(
                self._path_cx(
                    q,
                    s,
                    c,
                    DIVERGE,
                    "the harness returned DIVERGE (↑): it never returns to the model",
                )
            )
        lasso = self._lasso(q)
        if lasso is not None:
            candidates.append(lasso)
        if q in self.keyed_found:
            s, start, why, by_key = self.keyed_found[q][:4]
            cx = self._path_cx(q, s, None, None, why, loop=start)
            if not by_key:
                candidates.append(cx)
            elif not candidates:  # only the key's claim refutes it: the method says so
                self.by_key[q] = cx
                return cx, ""
        if candidates:
            return min(candidates, key=len), ""
        reasons = [self._unknown_text()] if self.graph.unknown else []
        reasons += [self.keyed_unknown[q]] if q in self.keyed_unknown else []
        return None, "; ".join(reasons)

    def _lasso(self, q: Property) -> Counterexample | None:
        cyclic = cyclic_states(self.graph.succ)
        if not cyclic:
            return None
        depth = self.record.depth
        found_at = {s: k for k, s in enumerate(self.record.prompts)}  # discovery order
        entry = min(cyclic, key=lambda s: (depth[s], found_at[s]))
        component = cyclic[entry]
        # the shortest cycle through `entry`, inside its strongly connected component
        back: dict[Any, tuple[Any, str]] = {}
        queue = deque([entry])
        closing: tuple[Any, str] | None = None
        while queue and closing is None:
            u = queue.popleft()
            for v, c in self._state_succ(u):
                if v == entry:
                    closing = (u, c)
                    break
                if v in component and v not in back:
                    back[v] = (u, c)
                    queue.append(v)
        assert closing is not None  # entry is on a cycle inside its component
        loop_states = [closing[0]]
        loop_comps = [closing[1]]
        while loop_states[-1] != entry:
            u, c = back[loop_states[-1]]
            loop_states.append(u)
            loop_comps.append(c)
        loop_states.reverse()
        loop_comps.reverse()
        stem = self._path(entry)
        walk = stem + loop_states[1:]
        comps = [self.record.parent[k][1] for k in stem[1:]] + loop_comps  # type: ignore[index]
        loop_at = len(stem) - 1
        why = (
            f"a reachable cycle of {counted(len(loop_comps), 'step')} that never "
            f"halts: after step {len(comps) - 1} the run is back in {short_repr(entry)}"
        )
        return self._walk_cx(q, walk + [entry], comps, why, loop_at)

    def _halts_within(self, q: HaltsWithin) -> tuple[Counterexample | None, str]:
        """The shortest run that shows ``halts_within(k)`` false, with a reachable cycle's
        lasso among the candidates: a run that goes round a loop for ever says more than
        its first k steps, so when it is no longer than them the lasso is returned."""
        cx, why = self._halts_within_run(q)
        if cx is None:
            return None, why
        lasso = self._lasso(q)  # only when refuted: a reachable cycle refutes every k
        if lasso is not None and len(lasso) <= len(cx):
            return lasso, ""
        return cx, ""

    def _halts_within_run(self, q: HaltsWithin) -> tuple[Counterexample | None, str]:
        if q in self.found:
            return self._finding_cx(q, self.found[q]), ""
        k = q.k
        if k == 0:  # the start is a state: the run of 0 steps has not halted
            return self._path_cx(q, self.start, None, None, "the start is a state, not HALT"), ""
        candidates: list[Counterexample] = []
        depth = self.record.depth
        if self.graph.first_diverge is not None:
            s, c = self.graph.first_diverge
            if depth[s] + 1 <= k:
                candidates.append(
                    self._path_cx(
                        q,
                        s,
                        c,
                        DIVERGE,
                        f"the harness returned DIVERGE (↑) after {counted(depth[s] + 1, 'model call')}",
                    )
                )
        if k >= len(self.record.prompts):
            # A run of k >= n steps through n states repeats one: it exists exactly when a
            # cycle is reachable, and the cycle's lasso shows it (without a cycle the
            # layers below empty within n steps).
            lasso = self._lasso(q)
            if lasso is not None:
                candidates.append(lasso)
                return min(candidates, key=len), ""
        # Layers of the runs: layer j holds every state some run is in after j steps.
        # state -> (previous state, completion) of one run reaching it
        layer: dict[Any, tuple[Any, str] | None] = {self.start: None}
        layers: list[dict[Any, tuple[Any, str] | None]] = [layer]
        open_end = ""
        complete = self.graph.complete
        for j in range(k):
            nxt: dict[Any, tuple[Any, str] | None] = {}
            for u in layer:
                if u not in complete:
                    open_end = open_end or (
                        f"a run is in {short_repr(u)} after {counted(j, 'step')} and the "
                        f"search did not expand it ({self._truncation_text() or 'bounded'})"
                    )
                for v, c in self._state_succ(u):
                    if v not in nxt:
                        nxt[v] = (u, c)
            layer = nxt
            layers.append(layer)
            if not layer:
                break
        if len(layers) == k + 1 and layers[k]:
            end = next(iter(layers[k]))
            walk: list[Any] = [end]
            comps: list[str] = []
            for j in range(k, 0, -1):
                u, c = layers[j][walk[-1]]  # type: ignore[misc]
                walk.append(u)
                comps.append(c)
            walk.reverse()
            comps.reverse()
            candidates.append(
                self._walk_cx(
                    q,
                    walk,
                    comps,
                    f"after {k} model calls the run has not halted (it is in {short_repr(walk[-1])})",
                )
            )
        if candidates:
            return min(candidates, key=len), ""
        reasons = [r for r in (open_end, self._unknown_text()) if r]
        return None, "; ".join(reasons)

    # -- bounds and statistics ---------------------------------------------------------------
    def _bound_depth(self) -> int | None:
        """The depth up to which every run was searched, when not the whole graph."""
        record, bounds = self.record, []
        if record.depth_cut and self.max_depth is not None:
            bounds.append(self.max_depth)
        if record.cut:  # the depth being expanded when max_states stopped the search
            bounds.append(record.depth[record.rows[-1][0]])
        return min(bounds) if bounds else None

    def _truncation_text(self) -> str | None:
        parts = []
        if self.record.depth_cut:
            parts.append(self.bounds.depth_cut())
        if self.truncated:
            parts.append(self.truncated)
        if self.record.stopped:
            parts.append("every property was refuted, so the search stopped early")
        return "; ".join(parts) or None

    def _bound_text(self) -> str:
        n = len(self.record.prompts)
        if self.bound_depth is None and not self.record.stopped:
            return f"the whole reachable graph ({counted(n, 'state')})"
        if self.bound_depth is None:
            return f"stopped early at {counted(n, 'state')}"
        d = self.bound_depth
        return f"every run of at most {counted(d, 'step')}"


def cyclic_states(succ: Mapping[Any, Iterable[Any]]) -> dict[Any, frozenset[Any]]:
    """The states on a cycle of the graph ``succ`` (state -> its successor states; a state
    with none may be left out), each mapped to its strongly connected component. Tarjan's
    algorithm, iterative (a long chain must not hit the recursion limit)."""
    index: dict[Any, int] = {}
    low: dict[Any, int] = {}
    on_stack: set[Any] = set()
    stack: list[Any] = []
    out: dict[Any, frozenset[Any]] = {}
    for root in succ:
        if root in index:
            continue
        work = [(root, iter(list(succ.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(list(succ.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in succ.get(v, ()):
                    members = frozenset(comp)
                    for w in comp:
                        out[w] = members
    return out


def alphabet_name(fixed: list[str] | None) -> str:
    if fixed is None:
        return "the completions the alphabet function chose per prompt"
    return f"the {len(fixed)}-completion alphabet"
