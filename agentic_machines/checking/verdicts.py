"""The verdicts of a check, built after its search from the graph it recorded.

:func:`~agentic_machines.checking.check_properties` runs in two phases. While the search
runs, :mod:`~agentic_machines.checking.check` checks each state and step and records the
first violation of each safety property as a :class:`Finding`. After it, the methods here
read the recorded graph (states by id, their breadth-first parents, successors and
depths) and build each property's verdict: a shortest path to a finding, the lasso of a
reachable cycle for ``never_diverges`` and ``halts_within``, the run of ``k`` steps that
has not halted, and the words of the bound every verdict names.

>>> sorted(cyclic_states(3, lambda i: [((i + 1) % 2, "a")] if i < 2 else []))
[0, 1]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from .._text import counted, one_line
from ..machine import DIVERGE, AgenticMachine
from ..runtime.harness import TraceState
from ..runtime.search import Bounds
from ..verdict import Verdict, short_repr
from .properties import (
    EffectsAtMostOnce,
    HaltsWithin,
    NeverDiverges,
    NeverRaises,
    Property,
    Raised,
)
from .result import Counterexample, PropertyResult

__all__ = ["Finding", "Verdicts", "cyclic_states", "alphabet_name"]


class Finding(NamedTuple):
    """The first violation of a property part the search found: at state id ``at``,
    by ``completion`` (``None``: the state itself violates it) to ``outcome`` (a state
    id or an end), and ``why`` in words.

    >>> Finding(3, None, None, "x is false").why
    'x is false'
    """

    at: int
    completion: str | None
    outcome: Any
    why: str


class Verdicts:
    """The verdicts of a check read off the graph its search recorded; the check's
    search (``checking.check``) is one, and fills the attributes below as it goes."""

    machine: AgenticMachine
    name: str
    start: Any
    fixed: list[str] | None
    bounds: Bounds
    max_depth: int | None
    # the explored graph, by state id
    states: list[Any]
    prompts: list[str]
    depth: list[int]
    parent: list[int]
    via: list[str]
    succ: list[dict[Any, str]]
    complete: list[bool]
    # what the search found
    found: dict[Property, Finding]
    keyed_found: dict[NeverDiverges, tuple[int, int, str]]
    first_diverge: tuple[int, str] | None
    first_raised: tuple[int, str, Raised] | None
    unknown: int
    unknown_reason: str
    transitions_made: int
    # how it stopped
    depth_cut: bool
    cut_depth: int | None
    truncated: str | None
    stopped_early: bool
    bound_depth: int | None

    def _verdict(self, prop: Property, label: str) -> PropertyResult:
        parts = prop.parts
        found = [self._part(q) for q in parts]
        refuted = [(cx, v) for cx, v in found if cx is not None]
        claim = f"{prop.claim()}, for {alphabet_name(self.fixed)}"
        checked = self.transitions_made
        if refuted:
            cx = min((cx for cx, _ in refuted), key=len)
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
                "exhaustive",
                checked,
                reason=f"counterexample of {counted(len(cx), 'step')}: {cx.explanation}",
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

    def _part(self, q: Property) -> tuple[Counterexample | None, str]:
        """The counterexample of one part, or why it is undecided ("" when it holds)."""
        if isinstance(q, HaltsWithin):
            return self._halts_within(q)
        if isinstance(q, NeverDiverges):
            return self._never_diverges(q)
        if isinstance(q, NeverRaises):
            if self.first_raised is not None:
                i, c, t = self.first_raised
                return self._path_cx(
                    q, i, c, t, f"the harness raised {t.type}: {one_line(t.message)[:200]}"
                ), ""
            return None, self._unknown_text()
        if q in self.found:
            return self._finding_cx(q, self.found[q]), ""
        if isinstance(q, EffectsAtMostOnce) and q.never_ran(self.machine):
            return None, q.never_ran(self.machine)
        if self.stopped_early:  # pragma: no cover - stop_early only stops when all are found
            return None, "the search stopped early"
        return None, self._unknown_text()

    def _unknown_text(self) -> str:
        if not self.unknown:
            return ""
        return (
            f"the outcome of {counted(self.unknown, 'step')} is unknown "
            f"(the harness raised Undecided: {self.unknown_reason})"
        )

    def _path(self, j: int) -> list[int]:
        path = [j]
        while self.parent[path[-1]] >= 0:
            path.append(self.parent[path[-1]])
        path.reverse()
        return path

    def _path_cx(
        self, q: Property, i: int, c: str | None, t: Any, why: str, loop: int | None = None
    ) -> Counterexample:
        """The run along the breadth-first path to state ``i``, then ``c`` (if any) to ``t``."""
        ids = self._path(i)
        comps = [self.via[k] for k in ids[1:]]
        states = [self.states[k] for k in ids]
        prompts = [self.prompts[k] for k in ids]
        if c is not None:
            comps.append(c)
            if type(t) is int:
                states.append(self.states[t])
                prompts.append(self.prompts[t])
            else:
                states.append(t)
        return Counterexample(q.name, tuple(comps), tuple(states), tuple(prompts), why, loop)

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
        """The run through the state ids ``walk`` (one more than ``comps``)."""
        states = tuple(self.states[k] for k in walk)
        prompts = tuple(self.prompts[k] for k in walk)
        return Counterexample(q.name, tuple(comps), states, prompts, why, loop)

    # -- liveness on the explored graph -----------------------------------------------------
    def _state_succ(self, i: int) -> Iterable[tuple[int, str]]:
        return ((t, c) for t, c in self.succ[i].items() if type(t) is int)

    def _never_diverges(self, q: NeverDiverges) -> tuple[Counterexample | None, str]:
        candidates: list[Counterexample] = []
        if self.first_diverge is not None:
            i, c = self.first_diverge
            candidates.append(
                self._path_cx(
                    q,
                    i,
                    c,
                    DIVERGE,
                    "the harness returned DIVERGE (↑): it never returns to the model",
                )
            )
        lasso = self._lasso(q)
        if lasso is not None:
            candidates.append(lasso)
        if q in self.keyed_found:
            j, at, why = self.keyed_found[q]
            candidates.append(self._path_cx(q, j, None, None, why, loop=None if at < 0 else at))
        if candidates:
            return min(candidates, key=len), ""
        reasons = [self._unknown_text()] if self.unknown else []
        return None, "; ".join(reasons)

    def _lasso(self, q: Property) -> Counterexample | None:
        cyclic = cyclic_states(len(self.states), self._state_succ)
        if not cyclic:
            return None
        entry = min(cyclic, key=lambda k: (self.depth[k], k))
        component = cyclic[entry]
        # the shortest cycle through `entry`, inside its strongly connected component
        back: dict[int, tuple[int, str]] = {}
        queue = deque([entry])
        closing: tuple[int, str] | None = None
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
        comps = [self.via[k] for k in stem[1:]] + loop_comps
        loop_at = len(stem) - 1
        why = (
            f"a reachable cycle of {counted(len(loop_comps), 'step')} that never "
            f"halts: after step {len(comps) - 1} the run is back in {short_repr(self.states[entry])}"
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
            return self._path_cx(q, 0, None, None, "the start is a state, not HALT"), ""
        candidates: list[Counterexample] = []
        if self.first_diverge is not None:
            i, c = self.first_diverge
            if self.depth[i] + 1 <= k:
                candidates.append(
                    self._path_cx(
                        q,
                        i,
                        c,
                        DIVERGE,
                        f"the harness returned DIVERGE (↑) after {self.depth[i] + 1} model call(s)",
                    )
                )
        if k >= len(self.states):
            # A run of k >= n steps through n states repeats one: it exists exactly when a
            # cycle is reachable, and the cycle's lasso shows it (without a cycle the
            # layers below empty within n steps).
            lasso = self._lasso(q)
            if lasso is not None:
                candidates.append(lasso)
                return min(candidates, key=len), ""
        # Layers of the runs: layer j holds every state some run is in after j steps.
        # state id -> (previous id, completion) of one run reaching it
        layer: dict[int, tuple[int, str] | None] = {0: None}
        layers: list[dict[int, tuple[int, str] | None]] = [layer]
        open_end = ""
        for j in range(k):
            nxt: dict[int, tuple[int, str] | None] = {}
            for u in layer:
                if not self.complete[u]:
                    open_end = open_end or (
                        f"a run is in {short_repr(self.states[u])} after {j} step(s) and the "
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
            walk = [end]
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
                    f"after {k} model calls the run has not halted (it is in {short_repr(self.states[walk[-1]])})",
                )
            )
        if candidates:
            return min(candidates, key=len), ""
        reasons = [r for r in (open_end, self._unknown_text()) if r]
        return None, "; ".join(reasons)

    # -- bounds and statistics ---------------------------------------------------------------
    def _bound_depth(self) -> int | None:
        """The depth up to which every run was searched, when not the whole graph."""
        bounds = []
        if self.depth_cut and self.max_depth is not None:
            bounds.append(self.max_depth)
        if self.cut_depth is not None:
            bounds.append(self.cut_depth)
        return min(bounds) if bounds else None

    def _truncation_text(self) -> str | None:
        parts = []
        if self.depth_cut:
            parts.append(self.bounds.depth_cut())
        if self.truncated:
            parts.append(self.truncated)
        if self.stopped_early:
            parts.append("every property was refuted, so the search stopped early")
        return "; ".join(parts) or None

    def _bound_text(self) -> str:
        if self.bound_depth is None and not self.stopped_early:
            n = len(self.states)
            return f"the whole reachable graph ({counted(n, 'state')})"
        if self.bound_depth is None:
            return f"stopped early at {counted(len(self.states), 'state')}"
        d = self.bound_depth
        return f"every run of at most {counted(d, 'step')}"


def cyclic_states(
    n: int, succ: Callable[[int], Iterable[tuple[int, str]]]
) -> dict[int, frozenset[int]]:
    """The states on a cycle (states 0..n-1), each mapped to its strongly connected
    component. Tarjan's algorithm, iterative (a long chain must not hit the recursion
    limit)."""
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = 0
    out: dict[int, frozenset[int]] = {}
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, iter(list(succ(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, it = work[-1]
            advanced = False
            for w, _ in it:
                if index[w] == -1:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(list(succ(w)))))
                    advanced = True
                    break
                if on_stack[w]:
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
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or any(t == v for t, _ in succ(v)):
                    members = frozenset(comp)
                    for w in comp:
                        out[w] = members
    return out


def alphabet_name(fixed: list[str] | None) -> str:
    if fixed is None:
        return "the completions the alphabet function chose per prompt"
    return f"the {len(fixed)}-completion alphabet"
