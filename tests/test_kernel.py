"""Transition kernels and the kernel form T_M^X ∘ e = e_* ∘ T_M^{X'} of embeddings."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT, Embedding, check_kernel_form, kernel, pushforward
from agentic_machines.errors import InvalidArgument
from agentic_machines.fixtures import fixture
from agentic_machines.strategies import distributions, embeddings_into_any, examples


def prompt_models(letters, prompts=("a", "b", "⋆")):
    """A random distribution model: one finite distribution per prompt."""
    return st.tuples(*(distributions(letters) for _ in prompts)).map(
        lambda ds: dict(zip(prompts, ds)).__getitem__
    )


@settings(max_examples=examples(100, 2000))
@given(
    embeddings_into_any().flatmap(
        lambda pair: st.tuples(st.just(pair), prompt_models(pair[0].completions))
    )
)
def test_kernel_form_holds_for_random_embeddings_and_distributions(data):
    (sub, e), model = data
    v = check_kernel_form(e, model)
    assert v.holds is True and v.method == "exhaustive"
    for s in sub.states:
        assert kernel(e.target, model, e(s)) == pushforward(e, kernel(sub, model, s))
        assert sum(kernel(sub, model, s).values()) == 1


def test_kernel_form_fails_for_a_non_embedding_and_names_the_state():
    m = fixture("f2-mul")
    v = check_kernel_form(
        Embedding(m, m, {0: 1, 1: 0}), lambda p: {"0": Fraction(1, 2), "1": Fraction(1, 2)}
    )
    assert v.holds is False and v.obstruction.state == 0


def test_models_with_a_distribution_method_and_float_probabilities():
    class Coin:
        def distribution(self, prompt):
            return {"0": 0.1, "1": 0.2, "2": 0.7}

    m = fixture("f2-add")
    three = type(m)({0: "⋆", 1: "⋆"}, {(a, b): (a + int(b)) % 2 for a in (0, 1) for b in "012"})
    assert kernel(three, Coin(), 0) == pytest.approx({0: 0.8, 1: 0.2})
    swap = Embedding(three, three, {0: 1, 1: 0})
    assert check_kernel_form(swap, Coin()).holds is True


def test_kernel_skips_zero_probability_and_merges_outcomes():
    k = kernel(
        fixture("halt1"), lambda p: {"0": Fraction(1, 3), "1": Fraction(2, 3), "unknown": 0}, 0
    )
    assert k == {HALT: 1}


def test_bad_models_are_rejected_with_advice():
    with pytest.raises(InvalidArgument, match="negative"):
        kernel(fixture("halt1"), lambda p: {"0": -1}, 0)
    with pytest.raises(InvalidArgument, match="distribution"):
        kernel(fixture("halt1"), 42, 0)
