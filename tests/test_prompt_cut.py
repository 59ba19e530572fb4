"""One rule cuts every prompt shown (issue 36, item 7): ``_text.clip_prompt`` keeps the
part after the longest common prefix with the prompts around it, with the cut marked, and
explore's listing and the text diagrams use it, so states whose prompts differ only at the
end stay apart."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import FunctionMachine
from agentic_machines._text import clip_prompt, clip_prompt_repr
from agentic_machines.cli.explore import describe_graph
from agentic_machines.drawing.diagrams import to_dot, to_mermaid
from agentic_machines.runtime.explore import explore
from agentic_machines.strategies import examples

texts = st.text(alphabet="ab \n", max_size=40)


def _shared(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@settings(max_examples=examples(200, 1000))
@given(prefix=texts, text=texts, other=texts, width=st.integers(3, 30))
def test_the_first_character_that_differs_is_shown(prefix, text, other, width) -> None:
    text, other = prefix + text, prefix + other
    shown = clip_prompt(text, width, [other])
    assert len(shown) <= width
    if len(text) <= width:
        assert shown == text
        return
    assert "…" in shown  # a cut is always marked
    core = shown.removeprefix("…")
    core = core.removesuffix("…") if core.endswith("…") and not text.endswith(core) else core
    at = _shared(text, other) if text != other else 0
    # what is shown is a piece of the prompt that holds its first different character
    if at < len(text):
        assert any(
            text[i : i + len(core)] == core and i <= at < i + len(core)
            for i in range(len(text) - len(core) + 1)
        ), (text, other, shown)


@settings(max_examples=examples(100, 500))
@given(text=texts, other=texts, width=st.integers(6, 40))
def test_the_quoted_cut_fits_and_is_closed(text, other, width) -> None:
    shown = clip_prompt_repr(text, width, [other])
    assert len(shown) <= max(width, 3) and shown[0] == shown[-1] and shown[0] in "'\""


def _tickets():
    ask = "Ticket: Customer bought a kettle that leaks and wants a refund or a new one. Decide."
    return FunctionMachine(
        lambda s: ask + "".join(f"\nObservation: you chose {c}" for c in s),
        lambda s, c: s + (c,) if len(s) < 2 else s,
        completions=["refund", "replace"],
        initial=(),
        name="tickets",
    )


def test_siblings_that_differ_at_the_end_stay_apart_in_explore_and_diagrams() -> None:
    g = explore(_tickets(), max_depth=1)
    listing = describe_graph(g)
    refund = next(line for line in listing.splitlines() if "('refund',)  depth" in line)
    replace = next(line for line in listing.splitlines() if "('replace',)  depth" in line)
    assert "you chose refund'" in refund and "you chose replace'" in replace
    assert "…" in refund  # the shared start was cut, visibly
    for text in (to_mermaid(g), to_dot(g)):
        assert "you chose refund" in text and "you chose replace" in text
