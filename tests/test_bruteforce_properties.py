"""Every property kind against a brute force written here, several at once (issue 36,
item 9): random small machines whose steps may raise and run tools, properties with
duplicate names (conjunctions too), the search with stop_early on and off, and every
counterexample replayed on the table: it must really break its property, and be a
shortest one where the checker promises that.

A state is ``(q, done)``: a row ``q`` of the table and the requests its run has executed
so far. So a state determines its history, as ``effects_at_most_once`` needs for an exact
verdict, and a shortest violating run visits no state twice before its last step
(cutting a loop out keeps the state, its history, and the violation at the end). The
brute force enumerates those runs. On a finite machine a keyed ``never_diverges`` is
refuted exactly when the unkeyed one is: a loop followed for ever through finitely many
states goes round a cycle of states, and a cycle repeats its keys.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT, AgenticMachine, TraceState, agent_machine, effect
from agentic_machines.checking import (
    EffectsAtMostOnce,
    HaltsWithin,
    Invariant,
    NeverDiverges,
    NeverRaises,
    Raised,
    Transition,
    all_of,
    check_properties,
    effects_at_most_once,
    halts_within,
    never_diverges,
    never_raises,
    unreachable,
    unreachable_prompt,
)
from agentic_machines.strategies import examples

N = examples(30, 300)
RAISE = "raise"  # a table entry on which the harness raises (after running its tools)
REQUESTS = [("ping", 1), ("charge", 1), ("charge", 2)]


class Tool:
    """A tool that logs each request it executes, as ``effects_at_most_once`` reads it."""

    def __init__(self) -> None:
        self.calls: list = []

    def __call__(self, request) -> None:
        self.calls.append(request)


class Table(AgenticMachine):
    def __init__(self, n, alphabet, prompts, table, effects):
        self.name, self.S, self.C = "T", list(range(n)), alphabet
        self.prompts, self.table, self.effects = prompts, table, effects
        self.completions, self.initial = alphabet, (0, frozenset())
        self.tools = {"ping": Tool(), "charge": Tool()}

    def prompt(self, state):
        return f"{self.prompts[state[0]]} at {state[0]}"

    def harness(self, state, completion):
        for tool, request in self.effects[(state[0], completion)]:
            self.tools[tool](request)
        out = step(self, state, completion)[0]
        if out == RAISE:
            raise ValueError(f"no step from {state} by {completion}")
        return out


def step(m, state, c):
    """The definition of h(state, c), running nothing: (outcome, requests executed)."""
    q, done = state
    out, ran = m.table[(q, c)], m.effects[(q, c)]
    return ((out, done | frozenset(ran)) if type(out) is int else out), ran


@st.composite
def tables(draw):
    n = draw(st.integers(1, 4))
    alphabet = ["a", "b", "c"][: draw(st.integers(1, 3))]
    outcomes = list(range(n)) + [HALT, DIVERGE, RAISE]
    table, effects = {}, {}
    for s in range(n):
        for c in alphabet:
            table[(s, c)] = draw(st.sampled_from(outcomes))
            effects[(s, c)] = tuple(draw(st.lists(st.sampled_from(REQUESTS), max_size=2)))
    prompts = {s: draw(st.sampled_from(["p", "q"])) for s in range(n)}
    return Table(n, alphabet, prompts, table, effects)


def is_state(x) -> bool:
    return type(x) is tuple


def runs(m, k=None):
    """Every run of at most ``k`` steps from the start, as (completions, outcomes,
    requests per step); with no ``k``, every run that visits no state twice before its
    last step (finitely many: the states are)."""
    out = frontier = [((), (m.initial,), ())]
    while frontier and (k is None or len(frontier[0][0]) < k):
        frontier = [
            (cs + (c,), ss + (t,), rs + (ran,))
            for cs, ss, rs in frontier
            if is_state(ss[-1]) and (k is not None or ss[-1] not in ss[:-1])
            for c in m.C
            for t, ran in [step(m, ss[-1], c)]
        ]
        out = out + frontier
    return out


def twice(rs, tool) -> bool:
    """Whether the requests ``rs`` (per step) execute one request of ``tool`` twice."""
    return max(Counter(r for ran in rs for t, r in ran if t == tool).values(), default=0) > 1


def violations(m, p, simple) -> list[int]:
    """The lengths of the runs that break the part ``p`` (of ``simple``, or of at most k
    steps for ``halts_within(k)``), from the definitions of the property kinds."""
    if isinstance(p, HaltsWithin):
        return [
            len(cs)
            for cs, ss, _ in runs(m, p.k)
            if ss[-1] is DIVERGE or (is_state(ss[-1]) and len(cs) == p.k)
        ]
    if isinstance(p, NeverDiverges):  # a DIVERGE, or back in a state: a cycle
        return [
            len(cs)
            for cs, ss, _ in simple
            if ss[-1] is DIVERGE or (is_state(ss[-1]) and ss[-1] in ss[:-1])
        ]
    if isinstance(p, NeverRaises):
        return [len(cs) for cs, ss, _ in simple if ss[-1] == RAISE]
    if isinstance(p, Invariant):
        return [
            len(cs)
            for cs, ss, _ in simple
            if is_state(ss[-1]) and not p.fn(ss[-1], m.prompt(ss[-1]))
        ]
    if isinstance(p, Transition):
        return [len(cs) for cs, ss, _ in simple if cs and not p.fn(ss[-2], cs[-1], ss[-1])]
    assert isinstance(p, EffectsAtMostOnce), p
    return [len(cs) for cs, _, rs in simple if twice(rs, p.tool)]


def follows(m, cx) -> list:
    """The requests of each step of ``cx``'s run, after checking that the run is the
    table's: every outcome as the definition says, a raise only at the end."""
    assert cx.states[0] == m.initial, cx
    rs = []
    for i, c in enumerate(cx.completions):
        t, ran = step(m, cx.states[i], c)
        rs.append(ran)
        want = cx.states[i + 1]
        if t == RAISE:
            assert type(want) is Raised and i == len(cx) - 1, cx
        else:
            assert want is t or want == t, cx
    return rs


def loops_for_ever(m, cx, key=None) -> bool:
    """Whether the lasso ``cx`` really loops: its end has the key of ``states[loop]``, and
    repeating ``completions[loop:]`` from there brings back the same keys, one by one,
    until a state recurs at the same place of the loop (so for ever)."""
    key = key or (lambda s: s)
    if cx.loop is None or not is_state(cx.end) or key(cx.end) != key(cx.states[cx.loop]):
        return False
    loop, keys = cx.completions[cx.loop :], [key(s) for s in cx.states[cx.loop + 1 :]]
    x, seen = cx.end, set()
    while True:
        for i, c in enumerate(loop):
            if (x, i) in seen:
                return True
            seen.add((x, i))
            x = step(m, x, c)[0]
            if not is_state(x) or key(x) != keys[i]:
                return False


def breaks(m, p, cx) -> bool:
    """Whether the run ``cx``, replayed on the table, breaks the part ``p``."""
    rs = follows(m, cx)
    if isinstance(p, HaltsWithin):  # a lasso never halts; else k steps and no halt
        if cx.loop is not None:
            return loops_for_ever(m, cx)
        return (cx.end is DIVERGE and len(cx) <= p.k) or (is_state(cx.end) and len(cx) == p.k)
    if isinstance(p, NeverDiverges):
        return cx.end is DIVERGE or loops_for_ever(m, cx, p.key)
    if isinstance(p, NeverRaises):
        return type(cx.end) is Raised
    if isinstance(p, Invariant):
        return is_state(cx.end) and not p.fn(cx.end, m.prompt(cx.end))
    if isinstance(p, Transition):
        return len(cx) > 0 and not p.fn(cx.states[-2], cx.completions[-1], cx.end)
    return twice(rs, p.tool)  # effects_at_most_once: a request of its tool ran twice


def nearest_cycles(m) -> tuple[int | None, dict]:
    """The depth of the states on a cycle nearest the start, and the length of the
    shortest cycle through each of them (breadth-first, from the definition of h)."""
    succ, depth, layer, d = {}, {m.initial: 0}, [m.initial], 0
    while layer:
        for s in layer:
            succ[s] = [t for c in m.C for t in [step(m, s, c)[0]] if is_state(t)]
        layer, d = list(dict.fromkeys(t for s in layer for t in succ[s] if t not in depth)), d + 1
        depth.update(dict.fromkeys(layer, d))

    def cycle(v):  # the fewest steps from v back to v, None when it never comes back
        seen, layer, n = set(), [v], 0
        while layer:
            n += 1
            nxt = [t for s in layer for t in succ[s]]
            if v in nxt:
                return n
            layer = [t for t in dict.fromkeys(nxt) if t not in seen]
            seen.update(layer)
        return None

    cycles = {v: n for v in depth if (n := cycle(v)) is not None}
    if not cycles:
        return None, {}
    low = min(depth[v] for v in cycles)
    return low, {v: n for v, n in cycles.items() if depth[v] == low}


SAFETY = (Invariant, Transition, NeverRaises, EffectsAtMostOnce)  # shortest runs promised


@settings(max_examples=N, deadline=None)
@given(tables(), st.integers(0, 4), st.booleans(), st.data())
def test_every_property_kind_agrees_with_every_run(m, k, tools, data):
    t1, t2 = data.draw(st.integers(1, len(m.S))), data.draw(st.integers(0, len(m.S)))
    safety = [
        unreachable(lambda s: s[0] == t1),  # two properties with one name: both checked
        unreachable(lambda s: s[0] == t2),
        never_raises(),
        Transition("no end at q", lambda s, c, o: is_state(o) or m.prompts[s[0]] != "q"),
    ]
    effects = [
        effects_at_most_once("ping"),
        effects_at_most_once("charge"),
        effects_at_most_once("ping", name="tool"),  # two tools under one name
        effects_at_most_once("charge", name="tool"),
    ]
    keyed = [never_diverges(key=lambda s: s[0] % 2), never_diverges(key=lambda s: s[0])]
    mixed = [halts_within(k), keyed[0], *(effects[2:] if tools else safety[:2])]
    # (property, the parts it was built of): a conjunction's verdict is its parts'
    checks = [(p, (p,)) for p in [halts_within(k), never_diverges(), *keyed, *safety]]
    checks += [(all_of(safety), tuple(safety)), (all_of(*mixed), tuple(mixed))]
    names = [
        f"halts_within({k})",
        "never_diverges()",
        "never_diverges(key=<lambda>)",
        "never_diverges(key=<lambda>)#2",
        "unreachable(<lambda>)",
        "unreachable(<lambda>)#2",
        "never_raises()",
        "no end at q",
        "unreachable(<lambda>) & unreachable(<lambda>) & never_raises() & no end at q",
        " & ".join(p.name for p in mixed),
    ]
    if tools:  # the effects properties; without them the checker watches no tool
        last = (effects[3], *safety[2:], effects[2])
        checks += [(p, (p,)) for p in effects]
        checks.append((all_of(effects[3], safety[2:], effects[2]), last))
        names += [
            "effects_at_most_once(ping)",
            "effects_at_most_once(charge)",
            "effects_at_most_once(tool)",
            "effects_at_most_once(tool)#2",
            "effects_at_most_once(tool) & never_raises() & no end at q & "
            "effects_at_most_once(tool)",
        ]
    simple = runs(m)
    truth = {}  # part -> the lengths of the runs that break it
    for _, parts in checks:
        for q in parts:
            truth.setdefault(q, violations(m, q, simple))
    diverge = [len(cs) for cs, ss, _ in simple if ss[-1] is DIVERGE]
    low, nearest = nearest_cycles(m)
    for early in (True, False):
        r = check_properties(
            m, properties=[p for p, _ in checks], completions=m.C, stop_early=early
        )
        assert [x.name for x in r] == names
        alone = {p: x.counterexample for (p, parts), x in zip(checks, r) if parts == (p,)}
        for (p, parts), x in zip(checks, r):
            broken = [q for q in parts if truth[q]]
            assert x.verdict.holds is (not broken), (early, x.name, r.report())
            cx = x.counterexample
            assert (cx is None) is (not broken), (early, x.name)
            if cx is None:
                continue
            # the counterexample is the table's run, and it breaks a part of the property
            assert any(breaks(m, q, cx) for q in parts), (early, x.name, cx)
            safe = [min(truth[q]) for q in broken if isinstance(q, SAFETY)]
            if all(isinstance(q, SAFETY) for q in parts):
                assert len(cx) == min(safe), (early, x.name, cx)  # a shortest one
            elif safe:
                assert len(cx) <= min(safe), (early, x.name, cx)
            # a conjunction's counterexample is the shortest of its parts' (each checked alone)
            assert len(cx) == min(len(alone[q]) for q in broken), (early, x.name, cx)
            if isinstance(p, HaltsWithin):  # the shortest run, or a lasso no longer
                if cx.loop is None:
                    assert len(cx) == min(truth[p]), (early, cx)
                    assert early or not nearest or low + max(nearest.values()) > len(cx), cx
                else:
                    assert len(cx) <= min(truth[p]), (early, cx)
            # on the whole graph, never_diverges() gives the shorter of a shortest run to
            # DIVERGE and the lasso through a cycle nearest the start, round a shortest cycle
            if not early and x.name == "never_diverges()" and cx.loop is None:
                assert cx.end is DIVERGE and len(cx) == min(diverge), cx
                assert not nearest or len(cx) <= low + max(nearest.values()), cx
            elif not early and x.name == "never_diverges()":
                assert cx.loop == low and len(cx) - low == nearest[cx.states[low]], cx
                assert len(cx) < min(diverge, default=len(cx) + 1), cx


# -- the same tables as agent functions whose tools are @effect ---------------------------

DEPTH = 3  # the runs an agent's check searches: its states, histories, never repeat


@effect
def ping(request):
    return "pong"


@effect
def charge(request):
    return "ok"


def table_agent(model, tm):
    """The table ``tm`` as an agent loop: a model call per step, then the step's tools."""
    q = 0
    while True:
        c = model(tm.prompt((q, None)))
        for tool, request in tm.effects[(q, c)]:
            {"ping": ping, "charge": charge}[tool](request)
        out = tm.table[(q, c)]
        if out == RAISE:
            raise ValueError(f"no step from {q} by {c}")
        if out is HALT:
            return "done"
        while out is DIVERGE:  # no model call again: the line budget makes it DIVERGE
            pass
        q = out


def on_table(tm, cx):
    """``cx``, an agent's counterexample, with the table's states: after checking that its
    states are the histories of its completions, with the table's prompts and ends."""
    states = [tm.initial]
    for c in cx.completions:
        states.append(step(tm, states[-1], c)[0])
    assert len(cx.states) == len(states), cx
    for i, (a, t) in enumerate(zip(cx.states, states)):
        if is_state(t):
            assert a == TraceState(cx.completions[:i]), cx
        else:
            assert a is t or (t == RAISE and type(a) is Raised), cx
    assert cx.prompts == tuple(tm.prompt(t) for t in states if is_state(t)), cx
    return replace(cx, states=tuple(t if is_state(t) else a for a, t in zip(cx.states, states)))


@settings(max_examples=N, deadline=None)
@given(tables(), st.integers(0, DEPTH), st.data())
def test_agent_functions_with_effects_agree_with_every_run(tm, k, data):
    m = agent_machine(table_agent, tm, isolation="inline", line_budget=200)
    t1, t2 = data.draw(st.integers(1, len(tm.S))), data.draw(st.integers(0, len(tm.S)))
    effects = [
        effects_at_most_once("ping"),
        effects_at_most_once("charge"),
        effects_at_most_once("ping", name="tool"),  # two tools under one name
        effects_at_most_once("charge", name="tool"),
    ]
    parts = [
        halts_within(k),
        never_diverges(),
        never_raises(),
        unreachable_prompt(lambda p: p.endswith(f"at {t1}")),  # two with one name
        unreachable_prompt(lambda p: p.endswith(f"at {t2}")),
        Transition("no halt after b", lambda s, c, o: not (o is HALT and c == "b")),
        *effects,
    ]
    checks = [(p, (p,)) for p in parts]
    both = (effects[3], parts[3], parts[2], effects[2], parts[4])
    checks.append((all_of(*both), both))
    bounded = runs(tm, DEPTH)
    truth = {p: violations(tm, p, bounded) for p in parts}
    truth[parts[1]] = [len(cs) for cs, ss, _ in bounded if ss[-1] is DIVERGE]  # no cycles seen
    # an effect that never ran within the bound: the check cannot pass (undecided)
    ran = {tool for _, _, rs in bounded for step_ran in rs for tool, _ in step_ran}
    for early in (True, False):
        r = check_properties(
            m,
            properties=[p for p, _ in checks],
            completions=tm.C,
            max_depth=DEPTH,
            stop_early=early,
        )
        assert [x.name for x in r][4:10] == [
            "unreachable_prompt(<lambda>)#2",
            "no halt after b",
            "effects_at_most_once(ping)",
            "effects_at_most_once(charge)",
            "effects_at_most_once(tool)",
            "effects_at_most_once(tool)#2",
        ]
        for (_, ps), x in zip(checks, r):
            broken = [q for q in ps if truth[q]]
            silent = [q for q in ps if isinstance(q, EffectsAtMostOnce) and q.tool not in ran]
            want = False if broken else None if silent else True
            assert x.verdict.holds is want, (early, x.name, r.report())
            cx = x.counterexample
            assert (cx is None) is (not broken), (early, x.name)
            if cx is not None:  # the table's run, breaking a part, and a shortest one
                assert cx.loop is None and any(breaks(tm, q, on_table(tm, cx)) for q in ps), cx
                assert len(cx) == min(min(truth[q]) for q in broken), (early, x.name, cx)


# -- keyed loops followed to the search's bound: decided exactly, or by the key -----------


def comes_back(m, cx, key) -> bool:
    """Whether the lasso ``cx`` is what a loop followed a round shows: its end has the
    key of ``states[loop]``, and one more round of ``completions[loop:]`` from there
    brings back the same keys, one by one (a divergence only by the key's claim)."""
    if cx.loop is None or not is_state(cx.end) or key(cx.end) != key(cx.states[cx.loop]):
        return False
    x = cx.end
    for c, s in zip(cx.completions[cx.loop :], cx.states[cx.loop + 1 :]):
        x = step(m, x, c)[0]
        if not is_state(x) or key(x) != key(s):
            return False
    return True


# 0 -a-> 1 -a-> 2 -a-> 3 -a-> HALT, no tools: by the key len(done) the loop from 1 comes
# back to key 0 after one round with no repeat; the graph has no cycle, so it holds
CHAIN = Table(
    4,
    ["a"],
    dict.fromkeys(range(4), "p"),
    {(0, "a"): 1, (1, "a"): 2, (2, "a"): 3, (3, "a"): HALT},
    dict.fromkeys([(0, "a"), (1, "a"), (2, "a"), (3, "a")], ()),
)


def forward(m):
    """``m`` with every step back to a row at or before its own turned into HALT: no
    cycle, so a keyed loop's pending refutation must be withdrawn after the search."""
    table = {(q, c): HALT if type(t) is int and t <= q else t for (q, c), t in m.table.items()}
    return Table(len(m.S), m.C, m.prompts, table, m.effects)


@settings(max_examples=N, deadline=None)
@given(tables(), st.booleans())
@example(CHAIN, False)
def test_keyed_loops_cut_short_are_decided_exactly_or_by_the_key(m, acyclic):
    m = forward(m) if acyclic else m
    # the last key is one for all states: every loop comes back to it after a round
    keys = (lambda s: s[0] % 2, lambda s: s[0], lambda s: len(s[1]), lambda s: 0)
    keyed = [never_diverges(key=k) for k in keys]
    both = all_of(keyed[0], never_raises())
    checks = [(p, (p,)) for p in keyed] + [(both, tuple(both.parts))]
    simple = runs(m)
    # on a finite table a keyed never_diverges is refuted exactly when the unkeyed one is
    truth = {
        q: violations(m, never_diverges() if q in keyed else q, simple)
        for _, ps in checks
        for q in ps
    }
    for bound in (None, 2):
        # None: the default bound, past every table here, so every keyed loop is followed
        # to an exact repeat or a stop; 2: a loop is followed 2 rounds only (the search's
        # max_states), the path where a refutation rests on the key
        seen: dict[str, set] = {}
        for early in (True, False):
            r = check_properties(
                m,
                properties=[p for p, _ in checks],
                completions=m.C,
                stop_early=early,
                **({} if bound is None else {"max_states": bound}),
            )
            for (_, parts), x in zip(checks, r):
                broken = [q for q in parts if truth[q]]
                v, cx = x.verdict, x.counterexample
                seen.setdefault(x.name, set()).add((v.holds, v.method))
                if v.method == "key":  # only a loop followed to the bound rests on the key
                    assert bound is not None and v.holds is False, (early, x.name, r.report())
                    follows(m, cx)  # the table's run
                    assert any(comes_back(m, cx, q.key) for q in keyed if q in parts), cx
                    continue
                assert v.method == "exhaustive", (early, x.name, v.method)
                if cx is not None:  # a counterexample is real, whatever the bound
                    assert any(breaks(m, q, cx) for q in parts), (early, x.name, cx)
                if bound is None:
                    assert v.holds is (not broken), (early, x.name, r.report())
                    assert (cx is None) is (not broken), (early, x.name)
        if bound is None:  # stopping early never changes a verdict
            assert all(len(v) == 1 for v in seen.values()), seen
