"""A shop task (WebShop-like) decomposed as in REPL-Plan's WebShop trajectory.

``main`` reads the instruction and calls four helpers before they exist, so each is
spawned as a child REPL, as in the paper's WebShop decomposition:

- ``generate_query(instruction)``: the "fuzzy" step: the model writes the search query;
- ``select_best_product(results, instruction)``: opens candidates page by page and asks
  ``check_requirements(instruction, page)`` (a grandchild REPL, reused for every
  candidate) whether the product fits;
- ``buy_best_product(asin, instruction)``: opens the product, picks the options, buys.

The model is a scripted *policy*: a function of the prompt that writes what a capable
model would write (it reads the instruction from the ``#CALL#`` line, like an LLM
reading its prompt). :class:`ShopPolicy` is also used by
``experiments/repl_plan_ablations.py``. Run: ``python experiments/shop.py``.
"""

from __future__ import annotations

import ast
import re

from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures.environments import Shop, make_shop_task

TASK = "Buy the product that the instruction on the shop's start page asks for."
POOL: dict = {}

MAIN_BLOCK = (
    'instruction = get_obs().split("\\n")[1]\n'
    "query = generate_query(instruction)\n"
    'results = act(f"search[{query}]")\n'
    "best = select_best_product(results, instruction)\n"
    "print(buy_best_product(best, instruction))"
)
# Demonstration bugs (ablation, as in the paper: bugs injected into demonstration code): an
# unescaped quote, and a misspelt variable. See buggy_pool().
BUGGY_UNESCAPED = MAIN_BLOCK.replace(
    "query = generate_query", "note = 'the shopper's request'\nquery = generate_query"
)
BUGGY_UNDEFINED = MAIN_BLOCK.replace('act(f"search[{query}]")', 'act(f"search[{qeury}]")')
FIX_UNDEFINED = MAIN_BLOCK.split("\n", 2)[
    2
]  # continue after the failing line: query exists already

SELECT_BLOCK = (
    "import re\n"
    "results, instruction = get_args()\n"
    "while True:\n"
    '    for asin in re.findall(r"^\\[(B0\\w+)\\]$", results, re.M):\n'
    '        page = act(f"click[{asin}]")\n'
    "        ok = check_requirements(instruction, page)\n"
    '        act("click[< Prev]")\n'
    "        if ok:\n"
    "            answer(asin)\n"
    '    if "[Next >]" not in results:\n'
    "        answer(None)\n"
    '    results = act("click[Next >]")'
)

DESCRIPTIONS = {
    "generate_query": "write a short search query for the shopping instruction",
    "select_best_product": "open the search results one by one and answer the id of the first product that fits",
    "check_requirements": "answer True if the product page meets the instruction's attributes, options and price",
    "buy_best_product": "open the product, choose the options the instruction asks for, and buy it",
}

_INSTR = re.compile(
    r"i am looking for a (.+?) (\S+) with (.+?), and price lower than ([0-9.]+) dollars"
)


def parse_instruction(text: str) -> tuple[list[str], str, list[str], float] | None:
    """(attributes, category, option values, max price) of an instruction, or None."""
    m = _INSTR.search(text)
    if not m:
        return None
    attrs, category, opts, price = m.groups()
    values = [o.rsplit(" ", 1)[0] for o in opts.split(" and ")]
    return attrs.split(" and "), category, values, float(price)


def page_fits(page: str, instruction: str) -> bool:
    """What check_requirements decides (also used by the flat policy, in the model)."""
    wanted = parse_instruction(instruction)
    price = re.search(r"Price: \$([0-9.]+)", page)
    features = re.search(r"Features: (.*)", page)
    if wanted is None or price is None or features is None:
        return False
    attrs, category, values, max_price = wanted
    title = page.split("\nPrice:")[0].split("\n")[-1]
    options = re.findall(r"\[([^\]]+)\]", page)
    have = features.group(1).split(", ")
    return (
        float(price.group(1)) < max_price
        and all(a in have for a in attrs)
        and all(v in options for v in values)
        and title.endswith(category)
    )


def _last_call(prompt: str) -> tuple[str, list[str]]:
    """The REPL name and the string arguments (parsable ones) of the current #CALL# line."""
    line = prompt[prompt.rfind("\n#CALL# ") + len("\n#CALL# ") :].split("\n", 1)[0]
    name = line.split("(", 1)[0]
    args: list[str] = []
    try:
        call = ast.parse(line, mode="eval").body
        for a in call.args:
            try:
                args.append(ast.literal_eval(a))
            except ValueError:
                args.append("")
    except SyntaxError:  # a truncated argument: fall back to the first quoted string
        m = re.search(r"\('((?:[^'\\]|\\.)*)'", line)
        args = [m.group(1)] if m else []
    return name, args


def _own_transcript(prompt: str) -> str:
    return prompt[prompt.rfind("\n#START#\n") + len("\n#START#\n") :]


def buggy_pool(bug: str) -> dict[str, rp.Demo]:
    """A k-shot pool whose ``main`` demonstration is a solved trajectory with a bug injected
    into its code: ``"unescaped"`` (an unescaped quote) or ``"undefined"`` (a misspelt variable)."""
    code = {"unescaped": BUGGY_UNESCAPED, "undefined": BUGGY_UNDEFINED}[bug]
    lines = code.split("\n")
    block = ">>> " + lines[0] + "".join("\n... " + line for line in lines[1:]) + "\n"
    return {
        "main": rp.Demo(
            "buy the product the instruction asks for", (f"#CALL# main()\n{block}#ANSWER# None\n",)
        )
    }


def demo_first_block(prompt: str) -> str | None:
    """The code of the first block of the first demonstration in ``prompt`` (None without one)."""
    start = prompt.find("\n#DEMO#\n")
    if start < 0:
        return None
    demo = prompt[start : prompt.find("\n#END#\n", start)].split("\n")
    first = next((k for k, line in enumerate(demo) if line.startswith(">>> ")), None)
    if first is None:
        return None
    code = [demo[first][4:]]
    for line in demo[first + 1 :]:
        if not line.startswith("... "):
            break
        code.append(line[4:])
    return "\n".join(code)


class ShopPolicy:
    """The scripted shop model: ``mode`` is ``"children"`` (the paper's decomposition) or
    ``"flat"`` (one REPL, no helpers). With child REPLs, main's first block copies the
    first block of main's demonstration when the prompt shows one (a capable model
    imitates its k-shot examples), bugs included (:func:`buggy_pool`); the policy then
    fixes the bug from the error it reads in the next prompt."""

    def __init__(self, mode: str = "children") -> None:
        self.mode = mode
        self.calls: list[tuple[str, str]] = []

    def complete(self, prompt: str) -> str:
        out = self._complete(prompt)
        self.calls.append((prompt, out))
        return out

    def _complete(self, prompt: str) -> str:
        first = prompt.split("\n", 1)[0]
        if first.startswith("DESCRIBE: "):
            return DESCRIPTIONS.get(first[len("DESCRIBE: ") :], "do the sub-task")
        name = rp.repl_name(prompt)
        if name == "main":
            return self._flat(prompt) if self.mode == "flat" else self._main(prompt)
        _, args = _last_call(prompt)
        instruction = next((a for a in args if isinstance(a, str) and "looking for" in a), "")
        wanted = parse_instruction(instruction)
        if name == "generate_query":
            return (
                f"answer({' '.join(wanted[0] + [wanted[1]])!r})"
                if wanted
                else "answer(get_args()[0])"
            )
        if name == "select_best_product":
            return SELECT_BLOCK
        if name == "check_requirements":
            if wanted is None:
                return "answer(False)"
            attrs, category, values, price = wanted
            return (
                "import re\n"
                "instruction, page = get_args()\n"
                'price = float(re.search(r"Price: \\$([0-9.]+)", page).group(1))\n'
                'features = re.search(r"Features: (.*)", page).group(1).split(", ")\n'
                'title = page.split("\\nPrice:")[0].split("\\n")[-1]\n'
                'options = re.findall(r"\\[([^\\]]+)\\]", page)\n'
                f"answer(price < {price} and all(a in features for a in {attrs!r})\n"
                f"       and all(v in options for v in {values!r}) and title.endswith({category!r}))"
            )
        if name == "buy_best_product":
            clicks = "".join(f"act({f'click[{v}]'!r})\n" for v in (wanted[2] if wanted else []))
            return f'asin, instruction = get_args()\nact(f"click[{{asin}}]")\n{clicks}act("click[Buy Now]")\nanswer(asin)'
        return "answer(None)"

    def _main(self, prompt: str) -> str:
        own = _own_transcript(prompt)
        n_blocks = sum(1 for line in own.split("\n") if line.startswith(">>> ")) - 1
        if n_blocks == 0:
            return demo_first_block(prompt) or MAIN_BLOCK
        if "SyntaxError" in own and n_blocks == 1:
            return MAIN_BLOCK
        if "REPLNameError" in own and n_blocks == 1:
            return FIX_UNDEFINED
        return "answer(None)"

    def _flat(self, prompt: str) -> str:
        own = _own_transcript(prompt)
        if "\n>>> " not in "\n" + own[:-4]:
            return "print(get_obs())"
        last = own[: -len(">>> ")]
        last = last[last.rfind("\n>>> ") + 1 :] if "\n>>> " in last else last
        m = re.search(r"Instruction: (.*)", own)
        instruction = m.group(1) if m else ""
        wanted = parse_instruction(instruction)
        if "SyntaxError" in last or wanted is None:
            return "print(get_obs())"
        if "Page " in last and "Total results" in last:
            clicked = set(re.findall(r"click\[(B0\w+)\]", own))
            for asin in re.findall(r"^\[(B0\w+)\]$", last, re.M):
                if asin not in clicked:
                    return f'print(act("click[{asin}]"))'
            if "[Next >]" in last:
                return 'print(act("click[Next >]"))'
            return "answer(None)"
        if "[Buy Now]" in last:
            if page_fits(last, instruction):
                clicks = "".join(f'act("click[{v}]")\n' for v in wanted[2])
                return clicks + 'print(act("click[Buy Now]"))'
            return 'print(act("click[< Prev]"))'
        if "Instruction:" in last:
            return f'print(act("search[{" ".join(wanted[0] + [wanted[1]])}]"))'
        return "answer(None)"


def env(seed: int = 0) -> Shop:
    """A generated shop task (default: seed 0)."""
    return make_shop_task(seed)


def model() -> ShopPolicy:
    """The scripted policy with child REPLs."""
    return ShopPolicy("children")


def main() -> rp.Result:
    result = rp.solve(TASK, model(), env(), pool=POOL)
    print(result.env.instruction)
    print("actions:", list(result.actions))
    print(
        "reward:", result.reward, "| success:", result.success, "| model calls:", result.model_calls
    )
    for name, rec in result.repls.items():
        print(f"REPL {name}: {rec.invocations} invocation(s)")
    return result


if __name__ == "__main__":
    main()
