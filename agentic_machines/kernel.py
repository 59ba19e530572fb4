"""Transition kernels and the kernel form of embeddings (``proofs/kernel_form.md``).

Given a model M that answers a prompt with a *finite distribution* over completions,
the transition kernel of X at s is the pushforward of M(p(s)) along h(s, ·):
T_M(s)(o) = Σ_{c : h(s, c) = o} M(p(s))(c). An embedding e satisfies the kernel form
T_M^X(e(s')) = e_*(T_M^{X'}(s')) for every model M: the model sees the same prompt, and
the harness maps each completion to corresponding outcomes.

A distribution model is a callable ``prompt -> {completion: probability}`` or an
object with a ``.distribution(prompt)`` method. Probabilities may be ``Fraction`` (exact
comparisons) or ``float`` (compared with a tolerance).

>>> from fractions import Fraction
>>> from agentic_machines.fixtures import fixture
>>> fair = lambda prompt: {"0": Fraction(1, 2), "1": Fraction(1, 2)}
>>> kernel(fixture("f2-mul"), fair, 0)
{0: Fraction(1, 1)}
>>> kernel(fixture("f2-mul"), fair, 1)
{0: Fraction(1, 2), 1: Fraction(1, 2)}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from .embedding import Embedding, rank
from .errors import InvalidArgument
from .machine import AgenticMachine, Outcome
from .verdict import Obstruction, Verdict

__all__ = ["kernel", "pushforward", "check_kernel_form", "Probability"]

Probability = Fraction | float | int


def _distribution(model: Any, prompt: str) -> Mapping[str, Probability]:
    if hasattr(model, "distribution"):
        dist = model.distribution(prompt)
    elif callable(model):
        dist = model(prompt)
    else:
        raise InvalidArgument(
            f"a distribution model is a callable prompt -> {{completion: probability}} or has .distribution(prompt); "
            f"got {type(model).__name__}."
        )
    if not isinstance(dist, Mapping):
        raise InvalidArgument(
            f"the model returned {type(dist).__name__} for prompt {prompt!r}; return a dict completion -> probability."
        )
    for c, p in dist.items():
        if p < 0:
            raise InvalidArgument(
                f"probability {p!r} of completion {c!r} is negative; probabilities must be ≥ 0."
            )
    return dist


def kernel(
    machine: AgenticMachine, distribution_model: Any, state: Hashable
) -> dict[Outcome, Probability]:
    """T_M(state): the distribution of the next outcome when the model answers p(state).

    Completions with probability 0 are skipped (h need not be defined on them);
    outcomes are listed in order of first appearance.

    >>> from agentic_machines.fixtures import fixture
    >>> kernel(fixture("halt1"), lambda p: {"0": 0.25, "1": 0.75}, 0)
    {1: 1.0}
    """
    dist = _distribution(distribution_model, machine.prompt(state))
    out: dict[Outcome, Probability] = {}
    for c, p in dist.items():
        if p == 0:
            continue
        o = machine.harness(state, c)
        out[o] = out.get(o, 0) + p
    return out


def pushforward(
    embedding: Embedding | Callable[[Outcome], Outcome], dist: Mapping[Outcome, Probability]
) -> dict[Outcome, Probability]:
    """e_*(dist): move each outcome's mass to its image (sentinels stay where they are).

    >>> from agentic_machines.fixtures import fixture
    >>> from agentic_machines import DIVERGE
    >>> m = fixture("f2-add")
    >>> pushforward(Embedding(m, m, {0: 1, 1: 0}), {0: 0.5, DIVERGE: 0.5})
    {1: 0.5, ↑: 0.5}
    """
    out: dict[Outcome, Probability] = {}
    for o, p in dist.items():
        image = embedding(o)
        out[image] = out.get(image, 0) + p
    return out


def _same(a: Mapping[Outcome, Probability], b: Mapping[Outcome, Probability]) -> bool:
    keys = set(a) | set(b)
    for k in keys:
        x, y = a.get(k, 0), b.get(k, 0)
        if isinstance(x, float) or isinstance(y, float):
            if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif x != y:
            return False
    return True


def check_kernel_form(
    embedding: Embedding,
    distribution_model: Any,
    *,
    states: Iterable[Hashable] | None = None,
) -> Verdict:
    """Check T_M^X ∘ e = e_* ∘ T_M^{X'} for one model M, on every (or the given) source state.

    Exhaustive on a finite source without ``states``, else sampled. A failure names
    the first source state (in the :func:`rank` order) where the two kernels differ.

    >>> from fractions import Fraction
    >>> from agentic_machines.fixtures import fixture
    >>> m = fixture("f2-add")
    >>> model = lambda p: {"0": Fraction(1, 3), "1": Fraction(2, 3)}
    >>> check_kernel_form(Embedding(m, m, {0: 1, 1: 0}), model).holds
    True
    >>> check_kernel_form(Embedding(fixture("f2-mul"), fixture("f2-mul"), {0: 1, 1: 0}), model).obstruction.state
    0
    """
    source, target = embedding.source, embedding.target
    claim = f"T_M ∘ e = e_* ∘ T_M' for {embedding!r} from {source.name} into {target.name}"
    exhaustive = states is None and source.states is not None
    sample = (
        list(source.states) if states is None and source.states is not None else list(states or ())
    )
    if not sample:
        return Verdict(
            None,
            claim,
            "sampled",
            0,
            reason="the source is infinite; pass states=[...] to sample it",
        )
    sample = sorted(dict.fromkeys(sample), key=rank)
    method = "exhaustive" if exhaustive else "sampled"
    for i, s in enumerate(sample):
        left = kernel(target, distribution_model, embedding(s))
        right = pushforward(embedding, kernel(source, distribution_model, s))
        if not _same(left, right):
            return Verdict(
                False,
                claim,
                method,
                i + 1,
                obstruction=Obstruction(
                    "kernel",
                    s,
                    f"At state {s!r}: T_M(e({s!r})) = {left!r} but e_*(T_M'({s!r})) = {right!r}.",
                    details={"left": left, "right": right},
                ),
            )
    return Verdict(True, claim, method, len(sample))
