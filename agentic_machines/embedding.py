"""Embeddings of agentic machines (tutorial chapter 2; F6 in ``proofs/``).

An embedding of X' = (S', p', h') into X = (S, p, h) is an injection e: S' -> S,
extended by e(1) = 1 and e(↑) = ↑, that keeps prompts, p(e(s')) = p'(s'), and commutes
with the harness, h(e(s'), c) = e(h'(s', c)) for every completion c. The model cannot
tell a state from its image.

>>> from agentic_machines.fixtures import fixture
>>> add = fixture("f2-add")
>>> swap = Embedding(add, add, {0: 1, 1: 0})
>>> swap(0), swap(HALT)
(1, 1)
>>> print(check_embedding(swap))
Holds: {0: 1, 1: 0} embeds f2-add into f2-add. Method: exhaustive, every state and completion checked (4 checks).
>>> sorted(sorted(e.mapping.items()) for e in find_embeddings(add, add))
[[(0, 0), (1, 1)], [(0, 1), (1, 0)]]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from concurrent.futures import Executor
from typing import Any

from ._text import counted, plural
from .batches import harness_pairs
from .errors import InvalidArgument, InvalidEmbedding, InvalidMachine
from .machine import (
    DIVERGE,
    HALT,
    AgenticMachine,
    Outcome,
    check_closed,
    distinct_completions,
    distinct_states,
    is_sentinel,
    state_set,
)
from .verdict import Obstruction, Verdict, confirmed, undecided_as_verdict
from .verdict import short_repr as _short

__all__ = [
    "Embedding",
    "identity",
    "compose",
    "check_embedding",
    "find_embeddings",
]


class Embedding:
    """A map of states of ``source`` to states of ``target``, claimed to be an embedding.

    ``mapping`` is a dict (finite machines) or a callable (infinite ones). Calling the
    embedding maps a state; ``HALT`` and ``DIVERGE`` map to themselves. Building an
    ``Embedding`` checks nothing: use :func:`check_embedding` for that.

    >>> from agentic_machines.fixtures import fixture
    >>> m = fixture("f2-mul")
    >>> e = Embedding(m, m, lambda s: s)
    >>> e(1), e(DIVERGE), e.mapping is None
    (1, ↑, True)
    """

    __slots__ = ("source", "target", "_map", "_fn")

    def __init__(
        self,
        source: AgenticMachine,
        target: AgenticMachine,
        mapping: Mapping[Hashable, Hashable] | Callable[[Hashable], Hashable],
    ) -> None:
        self.source = source
        self.target = target
        if isinstance(mapping, Mapping):
            self._map: dict | None = dict(mapping)
            self._fn = None
        elif callable(mapping):
            self._map = None
            self._fn = mapping
        else:
            raise InvalidEmbedding(
                f"an embedding needs a dict state -> state or a callable, got {type(mapping).__name__}; "
                "pass e.g. {s: s for s in machine.states} or lambda s: s."
            )

    def __call__(self, state: Outcome) -> Outcome:
        if is_sentinel(state):
            return state
        if self._map is None:
            return self._fn(state)  # type: ignore[misc]
        try:
            return self._map[state]
        except KeyError:
            raise InvalidEmbedding(
                f"the embedding has no image for state {state!r}; add it to the mapping "
                f"(it maps {len(self._map)} states of {self.source.name!r})."
            ) from None

    @property
    def mapping(self) -> dict | None:
        """A copy of the state map when it is a dict, ``None`` when it is a callable."""
        return None if self._map is None else dict(self._map)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Embedding):
            return NotImplemented
        if self._map is None or other._map is None:
            return self is other
        return (
            self.source is other.source and self.target is other.target and self._map == other._map
        )

    def __hash__(self) -> int:
        if self._map is None:
            return id(self)
        return hash(frozenset(self._map.items()))

    def __repr__(self) -> str:
        if self._map is None:
            return f"Embedding({self.source.name} -> {self.target.name}, {getattr(self._fn, '__name__', 'callable')})"
        items = sorted(self._map.items(), key=lambda kv: rank(kv[0]))
        text = "{" + ", ".join(f"{k!r}: {v!r}" for k, v in items) + "}"
        return text if len(text) <= 80 else text[:79] + "…}"


def identity(machine: AgenticMachine) -> Embedding:
    """The identity embedding of ``machine`` into itself (a dict on finite machines).

    >>> from agentic_machines.fixtures import fixture
    >>> bool(check_embedding(identity(fixture("f2-const"))))
    True
    """
    declared = distinct_states(machine)
    if declared is not None:
        return Embedding(machine, machine, {s: s for s in declared})
    return Embedding(machine, machine, _identity_fn)


def _identity_fn(state: Hashable) -> Hashable:
    return state


def compose(outer: Embedding, inner: Embedding) -> Embedding:
    """``outer ∘ inner``: first ``inner`` (X'' -> X'), then ``outer`` (X' -> X).

    >>> from agentic_machines.fixtures import fixture
    >>> m = fixture("f2-add")
    >>> swap = Embedding(m, m, {0: 1, 1: 0})
    >>> compose(swap, swap).mapping
    {0: 0, 1: 1}
    """
    if inner.target is not outer.source:
        raise InvalidArgument(
            f"cannot compose: the inner embedding lands in {inner.target.name!r} but the outer one "
            f"starts from {outer.source.name!r}; compose(outer, inner) applies inner first."
        )
    if inner._map is not None:
        return Embedding(inner.source, outer.target, {s: outer(t) for s, t in inner._map.items()})
    return Embedding(inner.source, outer.target, lambda s: outer(inner(s)))


# ---------------------------------------------------------------------------------------
# check_embedding


def rank(value: Any) -> tuple[int, str]:
    """A total order on arbitrary states: shorter representations first, then by text.

    Used to report the *smallest* counterexample and to make searches deterministic;
    for small ints it is the numeric order, for trace states the shortest trace first.

    >>> sorted([10, 2, "b", "a"], key=rank)
    [2, 10, 'a', 'b']
    """
    text = repr(value)
    return (len(text), text)


@undecided_as_verdict(lambda embedding, *_, **__: _embedding_claim(embedding))
def check_embedding(
    embedding: Embedding,
    *,
    states: Iterable[Hashable] | None = None,
    completions: Iterable[str] | None = None,
    executor: Executor | None = None,
) -> Verdict:
    """Check that ``embedding`` is an embedding: injective, prompt-preserving, commuting.

    On a finite source with no ``states``/``completions`` given, every state and
    completion is checked (method ``"exhaustive"``); otherwise the given sample is
    checked (method ``"sampled"``). A failure carries the smallest counterexample as an
    :class:`Obstruction` of kind ``"injectivity"``, ``"prompt"`` or ``"commutation"``
    (or ``"domain"`` when a state has no image or its image is not a target state);
    injectivity is reported first, then prompts, then commutation. ``executor`` runs the
    commutation checks' harness calls in batches (:mod:`agentic_machines.batches`); the
    verdict and its counterexample are the serial ones.

    >>> from agentic_machines.fixtures import fixture
    >>> m = fixture("f2-mul")
    >>> v = check_embedding(Embedding(m, m, {0: 1, 1: 0}))
    >>> v.holds, v.obstruction.kind, v.obstruction.state, v.obstruction.completion
    (False, 'commutation', 0, '0')
    >>> print(v.obstruction)
    Commutation breaks at state 0 and completion '0': h(e(0), '0') = h(1, '0') = 0 but e(h'(0, '0')) = e(0) = 1.
    """
    source, target = embedding.source, embedding.target
    claim = _embedding_claim(embedding)
    declared = distinct_states(source)
    if states is None and declared is not None and len(declared) == 0:
        # The empty map is injective, keeps prompts and commutes, vacuously, whatever the
        # alphabets: a machine without states is a machine over every alphabet.
        return Verdict(
            True,
            claim,
            "exhaustive",
            0,
            reason=f"{source.name} has no states, so the empty map is an embedding (proofs/empty_machine.md)",
        )
    exhaustive = states is None and completions is None and source.is_finite
    state_list = list(declared) if states is None and declared is not None else list(states or ())
    if isinstance(completions, str):
        raise InvalidArgument(
            f"completions must be a list of strings, not the string {completions!r}; wrap it: [{completions!r}]"
        )
    own = distinct_completions(source)
    if completions is not None:
        alphabet = list(completions)
        outside = [c for c in alphabet if own is not None and c not in own]
        if outside:
            raise InvalidArgument(
                f"completion {outside[0]!r} is not in the alphabet of the source {source.name!r}; "
                "sample only its completions"
            )
    elif own is not None:
        alphabet = list(own)
    else:
        alphabet = list(distinct_completions(target) or ())
    # an empty alphabet is nothing to check only when it stands for every string
    if not state_list or (not alphabet and not exhaustive and source.completions is None):
        if exhaustive:  # a machine with no states embeds (vacuously) everywhere
            return Verdict(True, claim, "exhaustive", 0, reason="the source machine has no states")
        missing = "states=[...]" if not state_list else "completions=[...]"
        return Verdict(
            None,
            claim,
            "sampled",
            0,
            reason=f"the source machine is infinite and nothing was given to check; pass {missing} to sample it",
        )
    state_list = sorted(dict.fromkeys(state_list), key=rank)
    alphabet = list(dict.fromkeys(alphabet))
    method = "exhaustive" if exhaustive else "sampled"
    failure = _first_failure(embedding, state_list, alphabet, exhaustive, executor)
    checked = len(state_list) * max(len(alphabet), 1)
    details = {"states": len(state_list), "completions": len(alphabet)}
    if failure is not None:
        failure = confirmed(failure, claim, _recheck(embedding, failure))
        return Verdict(False, claim, method, checked, obstruction=failure, details=details)
    return Verdict(
        True, claim, method, checked, reason=alphabet_scope(source, target), details=details
    )


def alphabet_scope(source: AgenticMachine, target: AgenticMachine) -> str:
    """The alphabet convention, in the words every verdict about an embedding uses.

    An embedding of X' into X is checked on the completions of X' (its alphabet C'), which
    must all be completions of X: h(e(s'), c) = e(h'(s', c)) for every c in C'. A target
    with more completions (every string, or a larger finite alphabet) is not compared on
    the extra ones, the same way whether it is finite or not. The words are empty when the
    two alphabets are one (nothing to say then).

    >>> from agentic_machines.fixtures import fixture
    >>> from agentic_machines import FunctionMachine
    >>> alphabet_scope(fixture("f2-add"), FunctionMachine(lambda s: "⋆", lambda s, c: s))
    "commutation checked on the source's alphabet (2 completions); the target accepts every string, and commutation is claimed on that alphabet only"
    >>> alphabet_scope(fixture("f2-add"), fixture("f2-mul"))
    ''
    """
    own = distinct_completions(source)
    if own is None:
        return "commutation checked on the sampled completions (the source accepts every string)"
    theirs = distinct_completions(target)
    n = counted(len(own), "completion")
    if theirs is None:
        where = (
            "; the target accepts every string, and commutation is claimed on that alphabet only"
        )
    elif set(theirs) == set(own):
        return ""
    else:
        extra = len(set(theirs) - set(own))
        where = (
            f", inside the target's, whose {counted(extra, 'other completion')} "
            f"{plural(extra, 'is', 'are')} not compared"
        )
    return f"commutation checked on the source's alphabet ({n}){where}"


def _embedding_claim(embedding: Embedding) -> str:
    return f"{embedding!r} embeds {embedding.source.name} into {embedding.target.name}"


def _recheck(e: Embedding, o: Obstruction) -> str:
    """What is wrong with the obstruction ``o`` of ``e``, checked afresh ("" if nothing)."""
    source, target, s = e.source, e.target, o.state
    known = state_set(target)

    def image(state: Hashable) -> tuple[bool, Any]:
        try:
            return True, e(state)
        except InvalidEmbedding:
            return False, None

    if o.kind == "domain":
        ok, t = image(s)
        fine = ok and not is_sentinel(t) and (known is None or t in known)
        return f"e({s!r}) = {t!r} is a state of {target.name}" if fine else ""
    if o.kind == "injectivity":
        a, b = o.details["states"]
        return "" if a != b and image(a) == image(b) else f"e({a!r}) and e({b!r}) differ"
    ok, t = image(s)
    if not ok:
        return f"state {s!r} has no image"
    if o.kind == "prompt":
        same = source.prompt(s) == target.prompt(t)
        return f"p'({s!r}) = p(e({s!r}))" if same else ""
    if o.kind == "commutation":
        c = o.completion
        theirs = distinct_completions(target)
        if theirs is not None and c not in theirs:
            return ""  # a completion outside the target's alphabet: h(e(s), c) is undefined
        left = target.harness(t, c)
        ok, right = image(source.harness(s, c))
        if ok and left == right and is_sentinel(left) == is_sentinel(right):
            return f"h(e({s!r}), {c!r}) = e(h'({s!r}, {c!r})) = {left!r}"
        return ""
    return f"no re-check for an obstruction of kind {o.kind!r}"


def _first_failure(
    e: Embedding, states: list, alphabet: list[str], exhaustive: bool, executor: Any = None
) -> Obstruction | None:
    source, target = e.source, e.target
    images: dict[Hashable, Outcome] = {}
    known = state_set(target)
    # Domain: every state needs an image that is a state of the target.
    for s in states:
        try:
            t = e(s)
        except InvalidEmbedding:
            return Obstruction(
                "domain", s, f"State {s!r} has no image: the mapping does not define e({s!r})."
            )
        if is_sentinel(t) or (known is not None and t not in known):
            return Obstruction(
                "domain",
                s,
                f"e({s!r}) = {t!r}, which is not a state of {target.name}; an embedding maps states to states.",
            )
        images[s] = t
    # Injectivity: two states with one image. Report the pair whose larger state is smallest.
    seen: dict[Hashable, Hashable] = {}
    for s in states:
        t = images[s]
        if t in seen:
            first = seen[t]
            return Obstruction(
                "injectivity",
                s,
                f"Injectivity breaks: states {first!r} and {s!r} both map to {t!r}.",
                details={"states": (first, s), "image": t},
            )
        seen[t] = s
    # Prompts: the model must see the same prompt in a state and in its image.
    for s in states:
        p_src, p_tgt = source.prompt(s), target.prompt(images[s])
        if p_src != p_tgt:
            return Obstruction(
                "prompt",
                s,
                f"Prompt breaks at state {s!r}: p'({s!r}) = {_short(p_src)} but p(e({s!r})) = p({images[s]!r}) = {_short(p_tgt)}.",
                details={"source_prompt": p_src, "target_prompt": p_tgt},
            )
    # Alphabets (see alphabet_scope): every completion checked must be one of the target's.
    theirs = distinct_completions(target)
    missing = [] if theirs is None else sorted(set(alphabet) - set(theirs), key=rank)
    if missing:
        extra = missing[0]
        return Obstruction(
            "commutation",
            states[0],
            f"Commutation cannot hold: completion {extra!r} is in the source's alphabet but not in the target's, "
            f"so h(e(s'), {extra!r}) is not defined; an embedding is checked on the source's alphabet, which must "
            "be inside the target's.",
            completion=extra,
        )
    # Commutation: h(e(s'), c) = e(h'(s', c)) for every state and completion. With an
    # executor the harness calls run in batches first; the scan below is the same, and
    # meets the same first failure or exception.
    steps = harness_pairs(
        target,
        source,
        [(images[s], s, c) for s in states for c in alphabet],
        executor,
        what="check_embedding",
    )
    for s in states:
        for c in alphabet:
            left, inner = next(steps)
            try:
                right = e(inner)
            except InvalidEmbedding:
                return Obstruction(
                    "commutation",
                    s,
                    f"Commutation breaks at state {s!r} and completion {c!r}: h'({s!r}, {c!r}) = {inner!r} has no image under e.",
                    completion=c,
                )
            if left != right or is_sentinel(left) != is_sentinel(right):
                return Obstruction(
                    "commutation",
                    s,
                    f"Commutation breaks at state {s!r} and completion {c!r}: h(e({s!r}), {c!r}) = "
                    f"h({images[s]!r}, {c!r}) = {left!r} but e(h'({s!r}, {c!r})) = e({inner!r}) = {right!r}.",
                    completion=c,
                    details={"left": left, "right": right},
                )
    return None


# ---------------------------------------------------------------------------------------
# find_embeddings: commutation propagation (F6)

_CODE = {id(HALT): -1, id(DIVERGE): -2}
_MAX_ROUNDS = 64  # refinement rounds; a partial refinement is still sound, only less sharp


def find_embeddings(
    source: AgenticMachine,
    target: AgenticMachine,
    *,
    into: Iterable[Hashable] | None = None,
) -> Iterator[Embedding]:
    """Every embedding of the finite machine ``source`` into ``target``, one at a time.

    With ``into``, only embeddings whose image lies inside ``into`` (then ``target``
    may be infinite, as long as its completion alphabet is finite). The search picks an
    image for one unforced state and propagates e(h'(s', c)) = h(e(s'), c) (F6,
    ``proofs/F6_commutation_propagation.md``); a conflict (two images, a shared image, a prompt or halting mismatch, an image
    outside ``into``) prunes the branch. Candidate images are pre-filtered by prompt
    counts and by a bounded behaviour refinement, which every embedding respects.

    >>> from agentic_machines.fixtures import fixture
    >>> [e.mapping for e in find_embeddings(fixture("f2-mul"), fixture("f2-mul"))]
    [{0: 0, 1: 1}]
    >>> list(find_embeddings(fixture("halt1"), fixture("diverge1")))
    []
    """
    search = EmbeddingSearch(source, target, into)
    return search.embeddings()


class EmbeddingSearch:
    """Commutation-propagation search; remembers why it failed, for obstructions."""

    def __init__(
        self, source: AgenticMachine, target: AgenticMachine, into: Iterable[Hashable] | None
    ) -> None:
        declared = distinct_states(source)
        empty = declared is not None and len(declared) == 0
        if declared is None or (source.completions is None and not empty):
            raise InvalidArgument(
                f"find_embeddings needs a finite source machine; {source.name!r} has no finite "
                "states/completions. Check a given embedding with check_embedding(..., states=...) instead."
            )
        if into is None and target.states is None:
            raise InvalidArgument(
                f"the target {target.name!r} is infinite; pass into=[...] (a finite set of candidate images)."
            )
        # Finite means checked: the search reasons about the declared states only.
        check_closed(source)
        if into is None:
            check_closed(target)
        self.source, self.target = source, target
        # an empty source is a machine over every alphabet: take the target's then
        # An empty source is a machine over every alphabet: it takes the target's, even an
        # empty one (falling back to its own only when the target's is every string).
        own, theirs = distinct_completions(source), distinct_completions(target)
        if empty and theirs is not None:
            self.alphabet = list(theirs)
        else:
            self.alphabet = list(own or ())
        self.failure: tuple[str, Any, str, dict] | None = None
        self.stats = {"nodes": 0, "conflicts": 0}
        self.src = sorted(declared, key=rank)
        self.src_index = {s: i for i, s in enumerate(self.src)}
        # An empty machine is a machine over every alphabet (proofs/empty_machine.md), so
        # the alphabets are compared only when both sides have a state.
        theirs = distinct_completions(target)
        if self.src and theirs is not None and not set(self.alphabet) <= set(theirs):
            missing = sorted(set(self.alphabet) - set(theirs), key=rank)[0]
            self.ready = False
            self.failure = (
                "alphabet",
                self.src[0],
                f"completion {missing!r} of {source.name}'s alphabet is not a completion of {target.name}, so "
                "no map commutes on it (an embedding is checked on the source's alphabet, which must be inside "
                "the target's).",
                {},
            )
            return
        self.ready = True
        # Each transition is read once: when source and target are one machine (the SPE
        # question), the target's rows are the source's rows, not a second read.
        self._rows: dict[Hashable, list[Outcome]] = {}
        self.src_next = [self._codes(source, s, self.src_index, "source") for s in self.src]
        self._build_target(into)

    # -- tables ---------------------------------------------------------------------

    def _row(self, machine: AgenticMachine, s: Hashable) -> list[Outcome]:
        """h(s, c) for every completion, read once per state when source is target."""
        if machine is self.source and machine is self.target:
            row = self._rows.get(s)
            if row is None:
                row = self._rows[s] = [machine.harness(s, c) for c in self.alphabet]
            return row
        return [machine.harness(s, c) for c in self.alphabet]

    def _codes(self, machine: AgenticMachine, s: Hashable, index: dict, role: str) -> list[int]:
        row = self._row(machine, s)
        try:  # the common case in one C-level pass: every outcome a state or a sentinel
            return [index[o] if o is not HALT and o is not DIVERGE else _CODE[id(o)] for o in row]
        except (KeyError, TypeError):
            pass
        for c, o in zip(self.alphabet, row):
            if not is_sentinel(o) and o not in index:
                raise InvalidMachine(
                    f"the {role} machine {machine.name!r} sends ({s!r}, {c!r}) to {o!r}, which is not one of "
                    "its declared states; add it to `states` or fix the harness."
                )
        raise AssertionError("unreachable: a row that failed to encode has an undeclared outcome")

    def _build_target(self, into: Iterable[Hashable] | None) -> None:
        target = self.target
        known = state_set(target)
        if into is None:
            # __init__ refused an infinite target without into=, so known is a set here
            pool = list(distinct_states(target) or ())
        else:
            pool = [t for t in into if not is_sentinel(t)]
            if known is not None:
                pool = [t for t in pool if t in known]
        pool = sorted(dict.fromkeys(pool), key=rank)
        if target is self.source and pool == self.src:
            # The search of X inside all of X: the source rows were encoded, so every
            # outcome is a declared state or a sentinel and nothing leaves the pool.
            self.pool_size = len(pool)
            self.escape: tuple | None = None  # one (state, completion, outcome) leaving the pool
            self.tgt, self.tgt_index, self.tgt_next = self.src, self.src_index, self.src_next
            return
        alive = set(pool)
        # Images are closed under h (h(e(s'), c) = e(h'(s', c))), so keep the largest
        # subset of the pool whose state successors stay inside it.
        succ: dict[Hashable, list[Outcome]] = {t: self._row(target, t) for t in pool}
        preds: dict[Hashable, list[Hashable]] = {t: [] for t in pool}
        bad = []
        self.escape = None
        for t, row in succ.items():
            for c, o in zip(self.alphabet, row):
                if o is HALT or o is DIVERGE:
                    continue
                if o in preds:
                    preds[o].append(t)
                else:
                    bad.append(t)
                    if self.escape is None:
                        self.escape = (t, c, o)
        while bad:
            t = bad.pop()
            if t in alive:
                alive.discard(t)
                bad.extend(preds[t])
        self.pool_size = len(pool)
        self.tgt = [t for t in pool if t in alive]
        self.tgt_index = {t: i for i, t in enumerate(self.tgt)}
        index = self.tgt_index
        self.tgt_next = [
            [index[o] if o is not HALT and o is not DIVERGE else _CODE[id(o)] for o in succ[t]]
            for t in self.tgt
        ]

    # -- pruning ----------------------------------------------------------------------

    def _refine(self) -> bool:
        """Colour source and target states by prompt, then by behaviour; False if hopeless."""
        n, m = len(self.src), len(self.tgt)
        prompts: dict[str, int] = {}
        col = [prompts.setdefault(self.source.prompt(s), len(prompts)) for s in self.src]
        if (
            self.tgt_next is self.src_next
        ):  # one machine, the same states: one colouring serves both
            nxt = self.src_next
            classes = len(set(col))
            for _ in range(_MAX_ROUNDS):
                sigs1: dict[tuple, int] = {}
                col = [
                    sigs1.setdefault(
                        (col[v], tuple([col[w] if w >= 0 else w for w in nxt[v]])), len(sigs1)
                    )
                    for v in range(n)
                ]
                if len(sigs1) == classes:
                    break
                classes = len(sigs1)
            self.col_src = self.col_tgt = col
            return True
        col += [prompts.setdefault(self.target.prompt(t), len(prompts)) for t in self.tgt]
        if not self._counts_fit(col, 0):
            return False
        nxt = self.src_next + [[(i + n if i >= 0 else i) for i in row] for row in self.tgt_next]
        classes = len(set(col))
        for rnd in range(1, _MAX_ROUNDS + 1):
            sigs: dict[tuple, int] = {}
            new = [
                sigs.setdefault((col[v], tuple(col[w] if w >= 0 else w for w in nxt[v])), len(sigs))
                for v in range(n + m)
            ]
            col = new
            if not self._counts_fit(col, rnd):
                return False
            if len(sigs) == classes:
                break
            classes = len(sigs)
        self.col_src, self.col_tgt = col[:n], col[n:]
        return True

    def _counts_fit(self, col: list[int], rnd: int) -> bool:
        n = len(self.src)
        need: dict[int, list[int]] = {}
        have: dict[int, int] = {}
        for i in range(n):
            need.setdefault(col[i], []).append(i)
        for v in range(n, len(col)):
            have[col[v]] = have.get(col[v], 0) + 1
        for colour, members in need.items():
            if len(members) > have.get(colour, 0):
                s = self.src[members[0]]
                got = have.get(colour, 0)
                if rnd == 0:
                    kind = "prompt" if got == 0 else "cardinality"
                    text = (
                        f"state {s!r} has prompt {_short(self.source.prompt(s))}, which no candidate image has"
                        if got == 0
                        else f"{len(members)} states share the prompt {_short(self.source.prompt(s))} (e.g. {s!r}) but only "
                        f"{counted(got, 'candidate image')} {plural(got, 'has', 'have')} it, so an injective map runs out of images"
                    )
                elif got == 0:
                    kind = "behaviour"
                    text = (
                        f"state {s!r}: every candidate image with its prompt reacts differently to some sequence of "
                        f"at most {counted(rnd, 'completion')} (halting, diverging or prompts differ), so commutation fails"
                    )
                    example = self._distinguish(members[0])
                    if example:
                        text += f"; for example {example}"
                else:
                    kind = "cardinality"
                    text = (
                        f"{len(members)} states behave like {s!r} for {counted(rnd, 'step')} but only "
                        f"{counted(got, 'candidate image')} {plural(got, 'does', 'do')}, so an injective map "
                        "runs out of images"
                    )
                dropped = self.pool_size - len(self.tgt)
                if dropped and self.escape is not None:
                    if rnd == 0 and got == 0:
                        kind = "closure"
                    t, c, o = self.escape
                    text += (
                        f" ({dropped} of the {self.pool_size} allowed images were ruled out because images are closed "
                        f"under h and a completion leads from them out of the allowed set, e.g. h({t!r}, {c!r}) = {_short(o)})"
                    )
                self.failure = (
                    kind,
                    s,
                    text,
                    {"round": rnd, "needed": len(members), "available": got},
                )
                return False
        return True

    def _distinguish(self, i: int) -> str:
        """A shortest completion sequence on which source state i and a same-prompt candidate part ways."""
        prompt = self.source.prompt(self.src[i])
        j = next((j for j, t in enumerate(self.tgt) if self.target.prompt(t) == prompt), None)
        if j is None:
            return ""
        seen = {(i, j)}
        frontier: list[tuple[int, int, tuple[str, ...]]] = [(i, j, ())]
        while frontier:  # breadth-first over pairs, so the first difference found is a shortest one
            nxt = []
            for a, b, path in frontier:
                for k, c in enumerate(self.alphabet):
                    a2, b2, w = self.src_next[a][k], self.tgt_next[b][k], path + (c,)
                    if (
                        a2 < 0
                        or b2 < 0
                        or self.source.prompt(self.src[a2]) != self.target.prompt(self.tgt[b2])
                    ):
                        left = (
                            "HALT (1)"
                            if a2 == -1
                            else "DIVERGE (↑)"
                            if a2 == -2
                            else f"a state with prompt {_short(self.source.prompt(self.src[a2]))}"
                        )
                        right = (
                            "HALT (1)"
                            if b2 == -1
                            else "DIVERGE (↑)"
                            if b2 == -2
                            else f"a state with prompt {_short(self.target.prompt(self.tgt[b2]))}"
                        )
                        if left == right:
                            if (a2, b2) not in seen and a2 >= 0:
                                seen.add((a2, b2))
                                nxt.append((a2, b2, w))
                            continue
                        return (
                            f"after the completions {list(w)!r}, {self.src[i]!r} of {self.source.name} reaches {left} "
                            f"while the candidate {self.tgt[j]!r} of {self.target.name} reaches {right}"
                        )
                    if (a2, b2) not in seen:
                        seen.add((a2, b2))
                        nxt.append((a2, b2, w))
            frontier = nxt
        return ""

    # -- the search -----------------------------------------------------------------

    def embeddings(self) -> Iterator[Embedding]:
        if not self.ready or not self._refine():
            return
        n = len(self.src)
        by_colour: dict[int, list[int]] = {}
        for j, c in enumerate(self.col_tgt):
            by_colour.setdefault(c, []).append(j)
        cands = [by_colour.get(self.col_src[i], []) for i in range(n)]
        order = sorted(range(n), key=lambda i: (len(cands[i]), i))
        e = [-1] * n
        inv = [-1] * len(self.tgt)
        trail: list[int] = []
        src_next, tgt_next = self.src_next, self.tgt_next
        col_src, col_tgt = self.col_src, self.col_tgt
        stats = self.stats
        found = 0
        example: str | None = None

        src, tgt = self.src, self.tgt
        alphabet = self.alphabet
        conflict: list[str] = []

        def fail(why: str) -> bool:
            stats["conflicts"] += 1
            conflict[:] = [why]
            return False

        def why(via: tuple[int, int] | None) -> str:
            """Which commutation step forced the choice (a short phrase for conflicts)."""
            if via is None:
                return "it"
            a0, k = via
            return f"commutation at e({src[a0]!r}) with completion {alphabet[k]!r}"

        def assign(a: int, b: int, via: tuple[int, int] | None) -> bool:
            if e[a] != -1:
                return fail(
                    f"{why(via)} forces e({src[a]!r}) = {tgt[b]!r} while e({src[a]!r}) = {tgt[e[a]]!r} already"
                )
            if inv[b] != -1:
                return fail(
                    f"{why(via)} forces e({src[a]!r}) = {tgt[b]!r}, the image of {src[inv[b]]!r} already (not injective)"
                )
            if col_src[a] != col_tgt[b]:
                return fail(
                    f"{why(via)} forces e({src[a]!r}) = {tgt[b]!r}, whose prompt or halting behaviour differs"
                )
            e[a] = b
            inv[b] = a
            trail.append(a)
            return True

        def propagate(i: int, t: int) -> bool:
            # A forced pair is assigned (and checked) when it is found, then its row is scanned
            # once: each transition of each assigned state is looked at once, n x |C| in all.
            if e[i] == t:
                return True
            if not assign(i, t, None):
                return False
            queue = [i]
            while queue:
                a = queue.pop()
                rb = tgt_next[e[a]]
                for k, a2 in enumerate(src_next[a]):
                    b2 = rb[k]
                    if a2 < 0 or b2 < 0:
                        if a2 != b2:
                            return fail(
                                f"at completion {alphabet[k]!r} one side halts or diverges and the other does not"
                            )
                    elif e[a2] != b2:
                        if not assign(a2, b2, (a, k)):
                            return False
                        queue.append(a2)
            return True

        def undo(mark: int) -> None:
            while len(trail) > mark:
                a = trail.pop()
                inv[e[a]] = -1
                e[a] = -1

        def next_free(pos: int) -> int:
            while pos < n and e[order[pos]] != -1:
                pos += 1
            return pos

        pos = next_free(0)
        if pos == n:
            yield Embedding(self.source, self.target, {})
            return
        stack = [[pos, 0, 0]]  # order position, next candidate index, trail mark
        while stack:
            frame = stack[-1]
            p, ci, mark = frame
            undo(mark)
            i = order[p]
            if ci >= len(cands[i]):
                stack.pop()
                continue
            frame[1] = ci + 1
            t = cands[i][ci]
            if inv[t] != -1:
                continue
            stats["nodes"] += 1
            if not propagate(i, t):
                if len(stack) == 1 and example is None:
                    example = (
                        f"for example, choosing e({src[i]!r}) = {tgt[t]!r} fails: {conflict[0]}"
                    )
                continue
            q = next_free(p + 1)
            if q == n:
                found += 1
                yield Embedding(
                    self.source, self.target, {self.src[a]: self.tgt[e[a]] for a in range(n)}
                )
                continue
            stack.append([q, 0, len(trail)])
        if not found and self.failure is None:
            root = self.src[order[pos]]
            self.failure = (
                "search",
                root,
                f"every one of the {counted(len(cands[order[pos]]), 'candidate image')} of state {root!r} leads, by commutation "
                f"propagation, to a conflict (a state forced to two images, two states forced to one image, or a "
                f"prompt/halting mismatch); {example + '; ' if example else ''}{stats['nodes']} choices and "
                f"{stats['conflicts']} conflicts were explored",
                dict(stats),
            )
