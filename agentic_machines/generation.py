"""Successors, completion-generation and SPE states.

The facts F1–F6 the checks use are proved in ``proofs/`` (see ``docs/design.md``).

(X, x) *completion-generates* X' when some embedding e of X' into X lands inside the
successors of x: every state s' has a *loader* completion c with h(x, c) = e(s'). x is
an *SPE state* of X when (X, x) completion-generates X itself.

Finite machines are decided exactly: by F1 (S ⊆ succ(x)) for SPE states, by the
commutation-propagation search (F6) for completion-generation, after the cheap
refutations F2 (a prompt no successor has) and F5 (too few successors). Infinite
machines are checked over a sample when a witness (embedding + loader) is given, or
refuted by :func:`prompt_obstruction` / :func:`cardinality_obstruction` when their
premise can be checked; otherwise the verdict is undecided.

>>> from agentic_machines.fixtures import fixture
>>> mul = fixture("f2-mul")
>>> successors(mul, 0)
{'0': 0, '1': 0}
>>> sorted(spe_states(mul))
[1]
>>> print(is_spe_state(mul, 0))
Refuted: it is not true that 0 is an SPE state of f2-mul. Method: fact F1, the finite characterisation, proved in Coq as F1_finite_characterisation (2 checks). Obstruction (successor): State 1 is not a successor of 0: no completion c gives h(0, c) = 1 (succ(0) = {0}). By F1 a state of a finite machine is an SPE state only if every state is one of its successors.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Iterable, Mapping
from concurrent.futures import Executor
from typing import Any

from ._text import clip_prompt_repr, counted, plural
from .batches import harness_all
from .embedding import Embedding, EmbeddingSearch, check_embedding, identity, rank
from .errors import InvalidArgument
from .machine import (
    DIVERGE,
    HALT,
    AgenticMachine,
    FiniteParts,
    Outcome,
    check_closed,
    distinct_completions,
    distinct_states,
    finite_parts,
    is_sentinel,
    state_set,
)

# F2 and F5 on infinite machines live in obstruction (one concept each); their names stay
# importable from here, as before.
from .obstruction import (
    MIN_PREMISE_TESTS,
    cardinality_obstruction,
    check_state_of,
    claim_text,
    prompt_obstruction,
    proof_exists,
)
from .verdict import (
    LazyObstruction,
    LazyVerdict,
    Obstruction,
    Verdict,
    Witness,
    confirmed,
    undecided_as_verdict,
)
from .verdict import short_repr as _short

__all__ = [
    "successors",
    "completion_generates",
    "is_spe_state",
    "spe_states",
    "prompt_obstruction",
    "cardinality_obstruction",
    "MIN_PREMISE_TESTS",
    "proof_exists",
]

# A loader gives, for each target state s, the completion c with h(x, c) = e(s). Its key is
# the target's own state type (a Boundary, a TraceState), as in Witness.loader.
Loader = Mapping[Any, str] | Callable[[Any], str]


def successors(
    machine: AgenticMachine,
    state: Hashable,
    completions: Iterable[str] | None = None,
    *,
    executor: Executor | None = None,
) -> dict[str, Outcome]:
    """succ(x) as a dict completion -> h(state, completion), over ``completions``.

    ``completions`` defaults to the machine's finite alphabet; on a machine whose
    alphabet is infinite the successors can only be sampled, so pass them. ``executor``
    runs the harness calls on a process pool or cluster (:mod:`agentic_machines.batches`).

    >>> from agentic_machines.fixtures import fixture
    >>> successors(fixture("halt1"), 0)
    {'0': 1, '1': 1}
    """
    if completions is None:
        completions = distinct_completions(machine)
        if completions is None:
            raise InvalidArgument(
                f"{machine.name!r} has no finite completion alphabet, so its successors cannot be listed; "
                "pass completions=[...] to sample them."
            )
    comps = list(dict.fromkeys(completions))
    outcomes = harness_all(machine, [(state, c) for c in comps], executor, what="successors")
    return dict(zip(comps, outcomes))


def _set_text(items: Iterable[Any], limit: int = 6, beside: str | None = None) -> str:
    """A set in a sentence; a set of prompts (``beside``: the prompt they are compared
    with) each cut where it differs from the others, by the one rule for prompts."""
    items = sorted(items, key=rank)
    if beside is None:
        shown = ", ".join(_short(i, 20) for i in items[:limit])
    else:
        shown = ", ".join(clip_prompt_repr(i, 30, [*items, beside]) for i in items[:limit])
    return "{" + shown + (", …" if len(items) > limit else "") + "}"


def _witness_shape(
    machine: AgenticMachine,
    target: AgenticMachine,
    embedding: Embedding | None,
    loader: Loader | None,
) -> tuple[Embedding, Loader]:
    """A witness is an embedding of the target into the machine AND a loader: both, checked."""
    if embedding is None or loader is None:
        raise InvalidArgument(
            "a witness is an embedding AND a loader; pass both embedding= and loader=."
        )
    if not isinstance(embedding, Embedding):
        raise InvalidArgument(
            f"embedding= takes an Embedding(target, machine, mapping), got {type(embedding).__name__}"
        )
    if embedding.source is not target or embedding.target is not machine:
        raise InvalidArgument(
            f"the embedding must go from the target {target.name!r} into {machine.name!r}; "
            f"it goes from {embedding.source.name!r} into {embedding.target.name!r}."
        )
    return embedding, loader


# ---------------------------------------------------------------------------------------
# completion_generates


@undecided_as_verdict(lambda machine, state, target, *_, **__: claim_text(machine, state, target))
def completion_generates(
    machine: AgenticMachine,
    state: Hashable,
    target: AgenticMachine,
    *,
    embedding: Embedding | None = None,
    loader: Loader | None = None,
    states: Iterable[Hashable] | None = None,
    completions: Iterable[str] | None = None,
    executor: Executor | None = None,
) -> Verdict:
    """Does (machine, state) completion-generate ``target``?

    Exact when ``target`` is finite and ``machine`` has a finite completion alphabet:
    refuted by F2 (a target prompt that no successor has), by F5 (too few successors
    with a prompt) or by an exhaustive search for an embedding into succ(x) (F6);
    proved by the embedding found, with a loader completion for each target state.
    Then a given witness is only a hint and a ``states`` sample is not used: the exact
    decision looks at everything, so it never becomes ``"sampled"``.
    Otherwise a given ``embedding`` and ``loader`` are checked over the sample
    ``states`` (and ``completions``): method ``"sampled"``, never ``"exhaustive"``
    (only a finite target with no sample is checked in full, on its own alphabet).
    Without an accepted witness, F2 and F5 are still tried when ``machine`` has a
    finite completion alphabet (so succ(x) can be listed) against the target states
    known (``states`` or a finite target's states); if they do not refute, the
    verdict is undecided (``holds=None``) and its reason says what to pass.

    ``executor`` (a process pool, Dask's ``Client.get_executor()``) runs the harness calls
    of the sampled checks (the loader, commutation on the sample, the successors for F2/F5)
    in batches, merged in order: the verdict is the serial one (``docs/scaling_out.md``).

    >>> from agentic_machines.fixtures import fixture
    >>> v = completion_generates(fixture("f2-add"), 0, fixture("f2-add"))
    >>> v.holds, v.method, v.witness.loader
    (True, 'exhaustive', {0: '0', 1: '1'})
    >>> completion_generates(fixture("f2-add"), 0, fixture("f2-mul")).obstruction.kind
    'search'
    >>> v = completion_generates(fixture("diverge1"), 0, fixture("halt1"))
    >>> v.holds, v.method, v.obstruction.kind, v.obstruction.state
    (False, 'fact:F2', 'prompt', 0)

    An infinite target, refuted by F2 on a sampled state, or left undecided:

    >>> from agentic_machines import FunctionMachine
    >>> words = FunctionMachine(lambda w: "say " + w, lambda w, c: w + c, name="words")
    >>> v = completion_generates(fixture("f2-add"), 0, words, states=["", "a"])
    >>> v.holds, v.method, v.obstruction.state
    (False, 'fact:F2', '')
    >>> completion_generates(words, "", fixture("f2-add")).holds is None
    True
    """
    claim = claim_text(machine, state, target)
    check_state_of(machine, state)
    # Finite means checked: a finite machine must stay inside its declared states before
    # anything is decided about it (check_closed skips machines that are not finite).
    check_closed(target)
    check_closed(machine)
    declared = distinct_states(target)
    if declared is not None and len(declared) == 0:
        return _empty_target(machine, state, target, claim)
    parts = finite_parts(target)
    if parts is not None and machine.completions is not None:
        # Exact first: a finite question is decided over everything, whatever sample or
        # witness was given (a witness is only a hint, and a sample never makes a finite
        # decision 'sampled'), so the answer cannot depend on what the caller passed.
        verdict = _decide(machine, state, target, parts, claim)
        return _hint_note(verdict, machine, state, target, embedding, loader, claim)
    rejected: Verdict | None = None  # an undecided witness check, kept for its reason
    if embedding is not None or loader is not None:
        verdict = _check_witness(
            machine, state, target, embedding, loader, states, completions, claim, executor
        )
        if verdict.holds is not None:
            return verdict
        rejected = verdict
    # Not decidable exactly, but F2 and F5 still refute when every successor of x can be
    # listed (a finite completion alphabet) and some target states are known.
    if states is not None:
        sample = [
            s for s in dict.fromkeys(states) if not is_sentinel(s)
        ]  # sentinels are outcomes, not states
        known = state_set(target)
        if known is not None:
            unknown = [s for s in sample if s not in known]
            if unknown:
                raise InvalidArgument(
                    f"{_short(unknown[0])} is not a state of {target.name!r}; sample only its states."
                )
    else:
        sample = [] if declared is None else list(declared)
    checked = 0
    if machine.completions is None:
        why = (
            f"{machine.name} has no finite completion alphabet, so succ({_short(state)}) cannot be listed and "
            "F2/F5 cannot be checked here; refute with prompt_obstruction or cardinality_obstruction and a proved "
            "invariant"
        )
    elif not sample:
        why = (
            f"{target.name} is infinite and no states=[...] were given, so F2/F5 have no target state to test; "
            "pass a sample of its states"
        )
    else:
        succ = successors(machine, state, executor=executor)
        loaders = _successor_loaders(succ)
        targets = sorted(sample, key=rank)
        checked = len(succ)
        details = {
            "successor_states": len(loaders),
            "target_states_sampled": len(targets),
            "completions": len(succ),
            "premise": f"succ({_short(state)}) listed over the whole finite alphabet",
        }
        refuted = _refute_by_prompts(
            machine, state, target, targets, loaders, checked, claim, details
        )
        if refuted is not None:
            return _with_note(refuted, rejected)
        why = (
            f"F2 and F5 do not refute it: every successor of {_short(state)} was listed ({counted(len(loaders), 'state')}) "
            f"and the {counted(len(targets), 'sampled state')} of {target.name} {plural(len(targets), 'finds', 'find')} enough successors with their prompts"
        )
    if rejected is not None:
        return Verdict(
            None,
            claim,
            rejected.method,
            rejected.checked + checked,
            reason=f"{rejected.reason}; {why}",
            details=rejected.details,
        )
    return Verdict(
        None,
        claim,
        "sampled",
        checked,
        reason=f"no witness was given (pass embedding= and loader= with a sample states=) and {why}",
    )


def _empty_target(
    machine: AgenticMachine, state: Hashable, target: AgenticMachine, claim: str
) -> Verdict:
    """A machine with no states is completion-generated by every (X, x): the empty map is an
    embedding and needs no loader (proofs/empty_machine.md)."""
    empty = Embedding(target, machine, {})
    return Verdict(
        True,
        claim,
        "exhaustive",
        0,
        witness=Witness(
            empty,
            {},
            f"{target.name} has no states: the empty map is an embedding into succ({_short(state)}) and "
            "needs no loader completion",
        ),
        reason="the target has no states (proofs/empty_machine.md)",
    )


def _hint_note(
    verdict: Verdict,
    machine: AgenticMachine,
    state: Hashable,
    target: AgenticMachine,
    embedding: Embedding | None,
    loader: Any,
    claim: str,
) -> Verdict:
    """An exact verdict, with a note when a witness was given and is wrong: on a finite
    question the witness is only a hint, checked over everything after the decision."""
    if embedding is None and loader is None:
        return verdict
    hint = _check_witness(machine, state, target, embedding, loader, None, None, claim)
    return verdict if hint.holds is True else _with_note(verdict, hint)


def _with_note(verdict: Verdict, rejected: Verdict | None) -> Verdict:
    """Prefix the reason of a decided verdict with why a given witness was not used."""
    if rejected is None:
        return verdict
    note = f"the given witness was not accepted ({rejected.reason}); decided without it. "
    return Verdict(
        verdict.holds,
        verdict.claim,
        verdict.method,
        verdict.checked,
        verdict.witness,
        verdict.obstruction,
        note + verdict.reason,
        verdict.details,
    )


def _successor_loaders(succ: Mapping[str, Outcome]) -> dict[Hashable, str]:
    """Each successor state (sentinels left out) with the first completion that reaches it."""
    loaders: dict[Hashable, str] = {}
    for c, y in succ.items():
        if not is_sentinel(y):
            loaders.setdefault(y, c)
    return loaders


def _refute_by_prompts(
    machine: AgenticMachine,
    x: Hashable,
    target: AgenticMachine,
    targets: list,
    loaders: Mapping[Hashable, str],
    checked: int,
    claim: str,
    details: Mapping[str, Any],
) -> Verdict | None:
    """F2, then F5 per prompt, for ``targets`` against the whole of succ(x) (``loaders``).

    Sound whenever ``loaders`` lists *every* successor state of x (a finite completion
    alphabet) and ``targets`` are distinct states of ``target``: a sample of target
    states is enough to refute, because each of them needs its own image.
    """
    succ_prompts: dict[str, list[Hashable]] = {}
    for y in loaders:
        succ_prompts.setdefault(machine.prompt(y), []).append(y)
    target_prompts: dict[str, list[Hashable]] = {}
    for s in targets:
        target_prompts.setdefault(target.prompt(s), []).append(s)
    # F2: a target prompt that no successor state carries.
    for s in targets:
        p = target.prompt(s)
        if p not in succ_prompts:
            confirmed_absent = _prompt_not_reached(machine, x, target, s, p)
            where = (
                f"the successors of {_short(x)} carry the prompts {_set_text(succ_prompts, beside=p)}"
                if succ_prompts
                else f"{_short(x)} has no successor states at all (every completion halts or diverges)"
            )
            return Verdict(
                False,
                claim,
                "fact:F2",
                checked,
                obstruction=confirmed(
                    Obstruction(
                        "prompt",
                        s,
                        f"State {_short(s)} of {target.name} has prompt {clip_prompt_repr(p, 40, succ_prompts)}, but {where}; an embedding "
                        f"keeps prompts, so no successor can be the image of {_short(s)} (F2).",
                        details={"prompt": p},
                    ),
                    claim,
                    confirmed_absent,
                ),
                details=details,
            )
    # F5, per prompt: an injective map needs as many successors with a prompt as target states with it.
    for p, members in target_prompts.items():
        have = succ_prompts.get(p, [])
        if len(members) > len(have):
            s = members[len(have)]
            recount = _too_few(machine, x, target, targets, p)
            return Verdict(
                False,
                claim,
                "fact:F5",
                checked,
                obstruction=confirmed(
                    Obstruction(
                        "cardinality",
                        s,
                        f"{target.name} has {len(members)} states with prompt {_short(p)} but only {counted(len(have), 'successor')} "
                        f"of {_short(x)} {plural(len(have), 'has', 'have')} it ({_set_text(have)}); an embedding is injective, so a state such as "
                        f"{_short(s)} is left without an image in succ({_short(x)}) (F5: |S'| ≤ |succ(x) ∩ S| per prompt).",
                        details={"prompt": p, "needed": len(members), "available": len(have)},
                    ),
                    claim,
                    recount,
                ),
                details=details,
            )
    return None


def _fresh_successors(machine: AgenticMachine, x: Hashable) -> dict[Hashable, str]:
    """succ(x) read afresh over the whole finite alphabet (for re-checks): state -> completion."""
    out: dict[Hashable, str] = {}
    for c in distinct_completions(machine) or ():
        y = machine.harness(x, c)
        if not is_sentinel(y):
            out.setdefault(y, c)
    return out


def _prompt_not_reached(
    machine: AgenticMachine, x: Hashable, target: AgenticMachine, s: Hashable, p: str
) -> str:
    """The re-check of an F2 obstruction: "" when ``s`` has prompt ``p`` and no successor
    of ``x`` has it (read afresh), else what is wrong."""
    if target.prompt(s) != p:
        return f"p({_short(s)}) is not {_short(p)}"
    for y, c in _fresh_successors(machine, x).items():
        if machine.prompt(y) == p:
            return f"h({_short(x)}, {c!r}) = {_short(y)} has the prompt {_short(p)}"
    return ""


def _too_few(
    machine: AgenticMachine, x: Hashable, target: AgenticMachine, targets: list, p: str
) -> str:
    """The re-check of an F5 obstruction: "" when more of ``targets`` than successors of
    ``x`` (read afresh) have the prompt ``p``, else what is wrong."""
    needed = sum(target.prompt(t) == p for t in dict.fromkeys(targets))
    have = sum(machine.prompt(y) == p for y in _fresh_successors(machine, x))
    return (
        ""
        if needed > have
        else f"{counted(have, 'successor')} {plural(have, 'has', 'have')} the prompt {_short(p)}, enough for {needed}"
    )


def _decide(
    machine: AgenticMachine, x: Hashable, target: AgenticMachine, parts: FiniteParts, claim: str
) -> Verdict:
    """Exact decision: F2, then F5, then the F6 search inside succ(x) (``parts``: the
    finite target's S and C)."""
    succ = successors(machine, x)
    loaders = _successor_loaders(succ)
    checked = len(succ)
    targets = sorted(parts.states, key=rank)
    details = {
        "successor_states": len(loaders),
        "target_states": len(targets),
        "completions": len(succ),
    }
    refuted = _refute_by_prompts(machine, x, target, targets, loaders, checked, claim, details)
    if refuted is not None:
        return refuted
    search = EmbeddingSearch(target, machine, list(loaders))
    for e in search.embeddings():
        loader = {s: loaders[e(s)] for s in targets}
        checked += len(targets) * len(parts.completions)
        return Verdict(
            True,
            claim,
            "exhaustive",
            checked,
            witness=Witness(
                e,
                loader,
                f"embedding {e!r} into succ({_short(x)}) with loader "
                + ", ".join(f"{_short(s, 15)}←{c!r}" for s, c in list(loader.items())[:6])
                + (", …" if len(loader) > 6 else ""),
            ),
            details={**details, **search.stats},
        )
    kind, s, text, extra = search.failure or (
        "search",
        targets[0] if targets else None,
        "no embedding exists",
        {},
    )
    return Verdict(
        False,
        claim,
        "exhaustive",
        checked,
        obstruction=Obstruction(
            kind,
            s,
            f"No embedding of {target.name} lands in succ({_short(x)}) = {_set_text(loaders)}: {text}.",
            details=dict(extra),
        ),
        details={**details, **search.stats},
    )


def _check_witness(
    machine: AgenticMachine,
    x: Hashable,
    target: AgenticMachine,
    embedding: Embedding | None,
    loader: Loader | None,
    states: Iterable[Hashable] | None,
    completions: Iterable[str] | None,
    claim: str,
    executor: Executor | None = None,
) -> Verdict:
    embedding, loader = _witness_shape(machine, target, embedding, loader)
    sample = None if states is None else list(states)
    if sample is None:
        declared = distinct_states(target)
        if declared is None:
            return Verdict(
                None,
                claim,
                "sampled",
                0,
                reason=f"{target.name} is infinite; pass states=[...] to check the witness on a sample",
            )
        sample = list(declared)
    sample = sorted(dict.fromkeys(sample), key=rank)
    comp_list = None if completions is None else list(completions)
    load = loader.__getitem__ if isinstance(loader, Mapping) else loader
    loads: list[tuple[Hashable, str]] = []
    missing = None  # the first sampled state the loader has no completion for
    for s in sample:
        try:
            loads.append((s, load(s)))
        except (KeyError, LookupError):
            missing = s
            break
    # A loader completion must be a completion of the machine: h(x, c) is not defined
    # otherwise (a table machine would raise), so the witness is wrong there.
    own = distinct_completions(machine)
    for s, c in loads:
        if not isinstance(c, str) or (own is not None and c not in own):
            where = (
                "not a string (C = str)"
                if not isinstance(c, str)
                else f"not in the alphabet of {machine.name}"
            )
            return Verdict(
                None,
                claim,
                "sampled",
                0,
                reason=(
                    f"the given loader gives {_short(c)} for state {_short(s)}, which is {where}; the witness "
                    "is wrong, the relation itself is undecided"
                ),
                details={"state": s, "completion": c},
            )
    # The loader's harness calls, in batches when an executor is given; scanned in order,
    # so the first failure reported is the one the serial loop meets.
    outcomes = harness_all(machine, [(x, c) for _s, c in loads], executor, what="a witness check")
    checked = 0
    for (s, c), y in zip(loads, outcomes):
        image = embedding(s)
        checked += 1
        if y != image or is_sentinel(y):
            return Verdict(
                None,
                claim,
                "sampled",
                checked,
                reason=(
                    f"the given loader fails at {_short(s)}: h({_short(x)}, {_short(c)}) = {_short(y)} but "
                    f"e({_short(s)}) = {_short(image)}; the witness is wrong, the relation itself is undecided"
                ),
                details={"state": s, "completion": c},
            )
    if missing is not None:
        return Verdict(
            None,
            claim,
            "sampled",
            checked,
            reason=f"the loader gives no completion for state {_short(missing)}",
        )
    exhaustive = states is None and completions is None and target.is_finite
    ev = (
        check_embedding(embedding, executor=executor)
        if exhaustive
        else check_embedding(embedding, states=sample, completions=comp_list, executor=executor)
    )
    checked += ev.checked
    if ev.holds is not True:
        reason = (
            f"the given embedding is not an embedding: {ev.obstruction}"
            if ev.obstruction
            else ev.reason
        )
        return Verdict(
            None,
            claim,
            ev.method,
            checked,
            reason=reason + "; the relation itself is undecided",
            details={"embedding_check": ev},
        )
    method = "exhaustive" if exhaustive and ev.method == "exhaustive" else "sampled"
    if method == "exhaustive":
        scope = f"every state of {target.name} and every completion of its alphabet"
        if machine.completions is None:  # the claim is about the target's alphabet only
            scope += (
                f" (commutation is claimed on that alphabet; {machine.name} accepts every string)"
            )
    else:
        scope = f"a sample of {counted(len(sample), 'state')}"
    return Verdict(
        True,
        claim,
        method,
        checked,
        witness=Witness(embedding, loader, f"the given embedding and loader, checked on {scope}"),
        details={"states": len(sample), "embedding_check": ev},
    )


# ---------------------------------------------------------------------------------------
# SPE states


@undecided_as_verdict(lambda machine, state, *_, **__: claim_text(machine, state, machine))
def is_spe_state(
    machine: AgenticMachine,
    state: Hashable,
    *,
    embedding: Embedding | None = None,
    loader: Loader | None = None,
    states: Iterable[Hashable] | None = None,
    completions: Iterable[str] | None = None,
    executor: Executor | None = None,
) -> Verdict:
    """Is ``state`` an SPE state of ``machine`` (does (X, x) completion-generate X)?

    On a finite machine decided by F1: x is an SPE state iff every state is a successor
    of x (witness: the identity with a loader); a given witness or sample does not change
    that (a finite machine is always decided exactly). Otherwise as
    :func:`completion_generates` with ``target = machine`` (``executor`` too).

    >>> from agentic_machines.fixtures import fixture
    >>> v = is_spe_state(fixture("f2-add"), 0)
    >>> v.holds, v.method, v.witness.loader
    (True, 'fact:F1', {0: '0', 1: '1'})
    """
    parts = finite_parts(machine)
    if parts is None:
        return completion_generates(
            machine,
            state,
            machine,
            embedding=embedding,
            loader=loader,
            states=states,
            completions=completions,
            executor=executor,
        )
    # A finite machine is decided by F1 over everything: a witness is only a hint
    # (checked afterwards, for a note) and a sample of states is not used.
    if is_sentinel(state) or state not in parts.state_set:
        check_state_of(machine, state)  # raises, saying what to pass
    check_closed(machine)  # F1 is a fact about machines that stay inside S
    verdict = _f1_verdict(machine, parts, state)
    if embedding is None and loader is None:
        return verdict
    return _hint_note(verdict, machine, state, machine, embedding, loader, verdict.claim)


def _f1_verdict(machine: AgenticMachine, parts: FiniteParts, state: Hashable) -> Verdict:
    """F1 on a finite, closed machine (``parts``: its S and C): is every state a successor
    of ``state``? The answer is known after the scan; the verdict's words (its claim,
    witness description or obstruction, details) are written when first read."""
    states, alphabet = parts.states, parts.completions
    loaders, read = _f1_scan(machine, state, alphabet, len(states))
    # The machine is closed, so the successors reached are declared states: fewer of them
    # than |S| (or a scan stopped early) means some state is not a successor.
    holds = read == len(alphabet) and len(loaders) == len(states)
    build = functools.partial(_f1_explained, machine, parts, state, loaders, read, holds)
    return LazyVerdict(build, holds=holds, method="fact:F1", checked=read)


def _f1_explained(
    machine: AgenticMachine,
    parts: FiniteParts,
    state: Hashable,
    loaders: dict[Hashable, str],
    read: int,
    holds: bool,
) -> Verdict:
    """The whole F1 verdict, in words, from what the scan found."""
    states, alphabet = parts.states, parts.completions
    claim = claim_text(machine, state, machine)
    details = {
        "premise": "S and C are finite (checked)",
        "states": len(states),
        "completions": len(alphabet),
        "completions_read": read,
    }
    if not holds:
        # Naming a state that really is not a successor reads the rest of the alphabet:
        # it waits until the obstruction itself is read.
        return Verdict(
            False,
            claim,
            "fact:F1",
            read,
            obstruction=LazyObstruction(
                functools.partial(_f1_obstruction, machine, state, states, alphabet, loaders, read)
            ),
            details=details,
        )
    return Verdict(
        True,
        claim,
        "fact:F1",
        read,
        # Every state, each with the first completion that reaches it.
        witness=Witness(_identity(machine), loaders, _f1_description(state, loaders)),
        details=details,
    )


def _f1_description(state: Hashable, loaders: Mapping[Hashable, str]) -> str:
    """What an F1 witness is, in words: the identity, loaded by the completions found."""
    shown = ", ".join(f"{_short(s, 15)}←{c!r}" for s, c in itertools.islice(loaders.items(), 6))
    return (
        f"every state is a successor of {_short(state)} (F1), so the identity embedding works, "
        f"with loader completions {shown}" + (", …" if len(loaders) > 6 else "")
    )


def _identity(machine: AgenticMachine) -> Embedding:
    """The identity embedding of a finite machine, built once per (immutable) state tuple."""
    cached = machine.__dict__.get("_am_identity")
    if (
        cached is None
        or cached[0] is not machine.states
        or not isinstance(machine.states, (tuple, frozenset))
    ):
        cached = (machine.states, identity(machine))
        machine.__dict__["_am_identity"] = cached
    return cached[1]


def _by_rank(machine: AgenticMachine, states: tuple) -> list:
    """``states`` sorted by :func:`~agentic_machines.embedding.rank`, once per state tuple."""
    cached = machine.__dict__.get("_am_by_rank")
    if cached is None or cached[0] is not states:
        cached = (states, sorted(states, key=rank))
        machine.__dict__["_am_by_rank"] = cached
    return cached[1]


def _f1_obstruction(
    machine: AgenticMachine,
    x: Hashable,
    states: tuple,
    alphabet: tuple[str, ...],
    loaders: Mapping[Hashable, str],
    read: int,
) -> Obstruction:
    """The F1 obstruction of a refuted ``x``: the smallest state that no completion reaches.

    The scan may have stopped early, when the states not yet reached outnumbered the
    completions left; a state not yet reached then may still be reached. So the rest of
    the alphabet is read here, and the state named is one that *no* completion reaches.
    """
    succ = dict(loaders)
    for c in alphabet[read:]:
        y = machine.harness(x, c)
        if y is not HALT and y is not DIVERGE:
            succ.setdefault(y, c)
    # the smallest state by rank that is no successor: the states in rank order are sorted
    # once per machine (not once per refuted state: that made `check` quadratic in |S|),
    # and only the successors, at most |C| + 1 of them, are skipped here
    s = next(t for t in _by_rank(machine, states) if t not in succ)
    members = state_set(machine) or frozenset(states)
    reached_states = sum(1 for y in succ if y in members)
    reached = _fresh_successors(machine, x)  # the re-check: read the alphabet afresh
    problem = f"h({_short(x)}, {reached[s]!r}) = {_short(s)}" if s in reached else ""
    if not problem and s not in (state_set(machine) or ()):
        problem = f"{_short(s)} is not a state of {machine.name}"
    count = (
        f" |S| = {len(states)} > |C| = {len(alphabet)}, so this fails for every state."
        if len(states) > len(alphabet)
        else ""
    )
    early = (
        f" (The decision needed only {read} of the {len(alphabet)} completions: by then too few were left "
        "to reach the states not yet reached.)"
        if read < len(alphabet)
        else ""
    )
    found = Obstruction(
        "successor",
        s,
        f"State {_short(s)} is not a successor of {_short(x)}: no completion c gives "
        f"h({_short(x)}, c) = {_short(s)} (succ({_short(x)}) = {_set_text(succ)}). By F1 a state of "
        f"a finite machine is an SPE state only if every state is one of its successors.{count}{early}",
        details={"not_successors": len(states) - reached_states, "completions_read": read},
    )
    return confirmed(found, claim_text(machine, x, machine), problem)


def spe_states(machine: AgenticMachine) -> frozenset:
    """The SPE states of a finite machine, by F1 (x is one iff S ⊆ succ(x)).

    >>> from agentic_machines.fixtures import fixture
    >>> sorted(spe_states(fixture("f2-add"))), sorted(spe_states(fixture("f2-const")))
    ([0, 1], [])
    """
    parts = finite_parts(machine)
    if parts is None:
        raise InvalidArgument(
            f"spe_states needs a finite machine; {machine.name!r} has no finite states/completions. "
            "Use is_spe_state(machine, state, ...) on the states you care about."
        )
    check_closed(machine)  # F1 is a fact about machines that stay inside S
    states, everything, alphabet = parts
    if len(states) > len(alphabet):  # F1: S ⊆ succ(x) needs |S| ≤ |C|
        return frozenset()
    result = []
    for x in states:
        loaders, read = _f1_scan(machine, x, alphabet, len(states))
        if read == len(alphabet) and everything <= loaders.keys():
            result.append(x)
    return frozenset(result)


def _f1_scan(
    machine: AgenticMachine, x: Hashable, alphabet: tuple[str, ...], n_states: int
) -> tuple[dict[Hashable, str], int]:
    """Read h(x, c) over ``alphabet`` until F1 is settled: (loaders, completions read).

    ``loaders`` maps each successor state reached to the first completion reaching it.
    A completion that halts, diverges or repeats a successor is wasted; once more than
    |C| - |S| are wasted, the completions left cannot reach every state (pigeonhole),
    so the scan stops: ``read < len(alphabet)`` then means x is not an SPE state. The
    one loop serves :func:`spe_states` and :func:`is_spe_state`.

    >>> from agentic_machines.fixtures import fixture
    >>> _f1_scan(fixture("f2-add"), 0, ("0", "1"), 2), _f1_scan(fixture("f2-mul"), 0, ("0", "1"), 2)
    (({0: '0', 1: '1'}, 2), ({0: '0'}, 2))
    """
    harness = machine.harness
    slack = len(alphabet) - n_states  # completions that may be wasted
    loaders: dict[Hashable, str] = {}
    read = 0
    for read, c in enumerate(alphabet, 1):  # noqa: B007 (read is the count after the loop)
        y = harness(x, c)
        if y is HALT or y is DIVERGE or y in loaders:
            slack -= 1
            if slack < 0:
                break
        else:
            loaders[y] = c
    return loaders, read
