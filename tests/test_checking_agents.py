"""The checker on agent loops (agent_machine): never_raises sees an exception the agent
raised, and effects_at_most_once sees a side effect repeated by the loop itself, while the
effect-wrapped tool replayed by exploration does not count as a repeat."""

from __future__ import annotations

from agentic_machines import agent_machine, effect
from agentic_machines.checking import effects_at_most_once, never_raises
from agentic_machines.checking.check import check_properties


def shop(model, pay_twice: bool = False):
    paid = []

    @effect
    def charge(order: int) -> str:
        paid.append(order)
        return "ok"

    for _turn in range(3):
        reply = model("What next? (pay N, or done)").strip()
        if reply == "done":
            return "bye"
        if reply.startswith("pay "):
            order = int(reply.split()[1])  # a malformed number raises: the planted crash
            charge(order)
            if pay_twice:
                charge(order)  # the planted bug: the same request charged again
    return "turns used up"


ALPHABET = ["pay 1", "pay x", "done"]


def test_never_raises_finds_the_agent_crash_at_its_shortest() -> None:
    m = agent_machine(shop, name="shop")
    result = check_properties(m, m.initial, [never_raises()], completions=ALPHABET)
    assert not result
    cx = result.counterexample("never_raises()")
    assert cx.completions == ("pay x",)


def test_effects_at_most_once_finds_a_repeated_charge_and_passes_the_fixed_loop() -> None:
    buggy = agent_machine(shop, pay_twice=True, name="shop-buggy")
    result = check_properties(
        buggy, buggy.initial, [effects_at_most_once("charge")], completions=["pay 1", "done"]
    )
    assert (
        not result and len(result.counterexample("effects_at_most_once(charge)").completions) == 1
    )
    fixed = agent_machine(shop, name="shop")
    # one step: a second "pay 1" later in the run would be a real second request, which
    # the property (same arguments twice in a run) also flags; the bug is within one step
    ok = check_properties(
        fixed,
        fixed.initial,
        [effects_at_most_once("charge")],
        completions=["pay 1", "done"],
        max_depth=1,
    )
    assert ok, ok.report("fixed")


def test_an_effect_defined_inside_the_agent_runs_once_per_real_step_across_replays() -> None:
    # charge is a new function object on every replay; it is still recognised (by its
    # code), so each "pay 1" step of the search executes it exactly once, and the
    # property sees no repeat where the loop itself makes none
    m = agent_machine(shop, name="shop")
    result = check_properties(
        m, m.initial, [effects_at_most_once("charge")], completions=["pay 1", "done"], max_depth=1
    )
    assert result
    assert [(len(s), tool.rsplit(".", 1)[-1]) for s, tool, _, _ in m.effect_log()] == [
        (1, "charge")
    ]
    # deeper, each pay step is one execution: the log grows with the steps, never with replays
    deep = agent_machine(shop, name="shop")
    check_properties(
        deep, deep.initial, [never_raises()], completions=["pay 1", "pay 2", "done"], max_depth=3
    )
    pay_steps = 2 + 2 * 2 + 2 * 2 * 2  # states reached by a pay completion, depth 1 to 3
    assert len(deep.effect_log()) == pay_steps
    assert len(deep.effect_log(5)) == pay_steps - 5
