"""A household task (ALFWorld-like) solved by REPL-Plan with two named helper REPLs.

Task: put two apples on the side table; one apple lies on the countertop, the other in
a closed cabinet. ``main`` loops twice over two helpers it calls before they exist:
``find_and_take_obj(kind, locations)`` visits locations, opens closed ones, takes the
first object of that kind and answers its name; ``put_obj_on(obj, target)`` carries it
to the target. Each helper is spawned once and reused once (its second prompt shows its
first invocation). Run: ``python experiments/household.py``.
"""

from __future__ import annotations

from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures.environments import Household, default_household

TASK = "Put two apples on sidetable 1. Apples may be on the countertop or inside cabinets."
POOL: dict = {}

MAIN = (
    'locations = ["countertop 1", "cabinet 1", "cabinet 2", "fridge 1"]\n'
    "for k in range(2):\n"
    '    apple = find_and_take_obj("apple", locations)\n'
    '    print(put_obj_on(apple, "sidetable 1"))'
)
FIND = (
    "import re\n"
    "kind, locations = get_args()\n"
    "for loc in locations:\n"
    '    obs = act(f"go to {loc}")\n'
    '    if "closed" in obs:\n'
    '        obs = act(f"open {loc}")\n'
    '    found = re.search(kind + r" \\d+", obs)\n'
    "    if found:\n"
    '        act(f"take {found.group(0)} from {loc}")\n'
    "        answer(found.group(0))\n"
    "answer(None)"
)
PUT = 'obj, target = get_args()\nact(f"go to {target}")\nanswer(act(f"put {obj} in/on {target}"))'
BLOCKS = {"main": [MAIN], "find_and_take_obj": [FIND, FIND], "put_obj_on": [PUT, PUT]}
DESCRIPTIONS = {
    "find_and_take_obj": "find an object of the given kind in the given locations, pick it up, answer its name",
    "put_obj_on": "carry the held object to the target receptacle and put it there",
}


def env() -> Household:
    """The default household of :mod:`agentic_machines.architectures.environments`."""
    return default_household()


def model() -> rp.RoutedModel:
    """The scripted model: one main block; each helper writes the same block twice."""
    return rp.scripted_model(BLOCKS, DESCRIPTIONS)


def main() -> rp.Result:
    result = rp.solve(TASK, model(), env(), pool=POOL)
    print("actions:")
    for a in result.actions:
        print("  >", a)
    print(
        "success:", result.success, "| status:", result.status, "| model calls:", result.model_calls
    )
    for name, rec in result.repls.items():
        print(f"REPL {name}: {rec.invocations} invocation(s); description: {rec.description}")
    print("main's transcript:\n" + result.repls["main"].transcript)
    return result


if __name__ == "__main__":
    main()
