"""Unit tests of the toy environments (architectures/environments.py)."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines.architectures.environments import (
    CountEnv,
    GoalItem,
    Household,
    default_household,
    make_shop_task,
)
from agentic_machines.strategies import examples


def test_count_env():
    env = CountEnv(4)
    for x in ["1", "2", "3"]:
        assert env.step(x) == f"You said {x}."
        assert not env.done
    env.step(4)
    assert env.done and env.success and env.action_log == ["1", "2", "3", "4"]
    assert env.step("5").startswith("The episode is over") and env.action_log[-1] == "5"


def test_count_env_copies_are_independent():
    env = CountEnv()
    env.step("1")
    a, b = env.fresh(), copy.deepcopy(env)
    a.step("2")
    assert b.action_log == ["1"] and a.action_log == ["1", "2"]


def _solve_household(env):
    plan = [
        "go to countertop 1",
        "take apple 1 from countertop 1",
        "go to sidetable 1",
        "put apple 1 in/on sidetable 1",
        "go to cabinet 2",
        "take apple 2 from cabinet 2",
        "open cabinet 2",
        "take apple 2 from cabinet 2",
        "go to sidetable 1",
        "put apple 2 in/on sidetable 1",
    ]
    return [env.step(a) for a in plan]


def test_household_solves_and_refuses_bad_actions():
    env = default_household()
    obs = _solve_household(env)
    assert obs[4] == "You arrive at cabinet 2. The cabinet 2 is closed."
    assert obs[5] == "Nothing happens."  # closed
    assert obs[6] == "You open the cabinet 2. The cabinet 2 is open. In it, you see a apple 2."
    assert env.done and env.success and env.reward == 1.0


def test_household_heat_cool_clean_examine_inventory_look():
    env = Household(
        {
            "kitchen": {
                "countertop 1": ["egg 1"],
                "microwave 1": [],
                "fridge 1": [],
                "sinkbasin 1": [],
                "diningtable 1": [],
            }
        },
        (GoalItem("egg", "diningtable 1", state="hot"),),
    )
    assert env.step("look").startswith("You are in the kitchen.")
    env.step("go to countertop 1")
    env.step("take egg 1 from countertop 1")
    assert env.step("inventory") == "You are carrying: a egg 1."
    env.step("go to sinkbasin 1")
    assert env.step("clean egg 1 with sinkbasin 1") == "You clean the egg 1 using the sinkbasin 1."
    env.step("go to microwave 1")
    assert env.step("heat egg 1 with fridge 1") == "Nothing happens."
    env.step("heat egg 1 with microwave 1")
    assert env.step("examine egg 1") == "This is a clean hot egg 1."
    env.step("go to diningtable 1")
    env.step("put egg 1 in/on diningtable 1")
    assert env.success and env.done


@settings(max_examples=examples(30, 300))
@given(
    st.lists(
        st.sampled_from(
            [
                "look",
                "inventory",
                "go to cabinet 2",
                "open cabinet 2",
                "close cabinet 2",
                "take apple 2 from cabinet 2",
                "go to sidetable 1",
                "put apple 2 in/on sidetable 1",
                "nonsense",
                "go to living room",
            ]
        ),
        max_size=12,
    )
)
def test_household_is_deterministic_and_total(actions):
    a, b = default_household(), default_household()
    assert [a.step(x) for x in actions] == [b.step(x) for x in actions]
    assert a.action_log == actions


def test_shop_buy_exact_match_scores_one():
    env = make_shop_task(1)
    goal = env.goal
    match = next(
        p
        for p in env.products.values()
        if p.category == goal.category
        and set(goal.attributes) <= set(p.attributes)
        and p.price <= goal.max_price
        and all(v in dict(p.options).get(k, ()) for k, v in goal.options)
    )
    page = env.step(f"search[{' '.join(goal.attributes)} {goal.category}]")
    assert "[Back to Search]" in page
    page = env.step(f"click[{match.asin}]")
    assert "[Buy Now]" in page and "Description:" in page and len(page) > 500
    for _, v in goal.options:
        page = env.step(f"click[{v}]")
        assert f"[{v}]*" in page
    assert env.step("click[Buy Now]").startswith("Thank you")
    assert env.done and env.reward == 1.0 and env.success


def test_shop_partial_reward_and_navigation():
    env = make_shop_task(2)
    page = env.step(f"search[{env.goal.category}]")
    assert "[Next >]" in page
    page2 = env.step("click[Next >]")
    assert "Page 2" in page2 and "[< Prev]" in page2
    assert env.step("click[< Prev]") == page
    assert env.step("click[nonexistent]") == "Invalid action!"
    asin = page.splitlines()[4][1:-1]
    env.step(f"click[{asin}]")
    env.step("click[Buy Now]")
    assert env.done and 0 <= env.reward <= 1


def test_shop_tasks_are_deterministic_and_varied():
    tasks = [make_shop_task(s) for s in range(20)]
    assert len({t.instruction for t in tasks}) >= 15
    assert [t.instruction for t in tasks] == [make_shop_task(s).instruction for s in range(20)]
