"""Seeded completion samples for property-testing a harness invariant.

An architecture's ``analysis()`` rests on a successor-prompt invariant that is proved
in ``proofs/`` and *also* tested on many completions, so that a harness that drifts
from its proof is caught. :func:`completion_sample` builds that list: the
architecture's own well-formed completions, malformed variants of them (truncated,
doubled, wrong case, stray stop sequences), random printable and unicode strings,
control words a harness might treat specially (``RESET``, ``FINAL(x)``, ...) and a
few huge strings. The list is deterministic per seed.

A harness may also treat a word of its own specially (a planted "reset" trigger, a
command keyword). Random strings will not find it, so :func:`harness_strings` harvests
the string constants of a :class:`~agentic_machines.runtime.harness.HarnessMachine`'s program
and its arguments (a fuzzing dictionary) and the analyses add them to the sample. A
trigger that is computed, or that lives in a helper the program calls, is still out of
reach: sampling never proves the invariant, ``proofs/`` does.

>>> cs = completion_sample([" ok\\nAction 1: Finish[x]"], seed=0, n=40)
>>> len(cs), cs[0]
(40, ' ok\\nAction 1: Finish[x]')
>>> completion_sample(["a"], seed=0, n=40) == completion_sample(["a"], seed=0, n=40)
True
"""

from __future__ import annotations

import dis
import random
from collections.abc import Iterable
from types import CodeType
from typing import Any

from hypothesis import strategies as st

from ..runtime.agent import AgentMachine

__all__ = ["completion_sample", "completion_strategy", "harness_strings", "CONTROL_WORDS"]

CONTROL_WORDS: tuple[str, ...] = (
    "",
    " ",
    "\n",
    "RESET",
    "reset",
    "CLEAR",
    "UNDO",
    "RESTART",
    "exit",
    "quit",
    "FINAL(done)",
    "FINAL_VAR(answer)",
    "#END#",
    "=>",
    "<|system|>",
    "<|user|>\nhello",
    "```repl\nprint(1)\n```",
    "\x00",
)
"""Strings that a harness might treat as commands; every sample includes them all."""

_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    " \n\t[]()<>=#:;,.!?'\"`\\{}_-+*/|~é€😀\u200b"
)


def completion_sample(
    valid: Iterable[str],
    *,
    seed: int = 0,
    n: int = 300,
    huge: int = 3,
    huge_size: int = 100_000,
) -> list[str]:
    """Return ``n`` completions (at least the valid ones and the control words), seeded.

    ``valid`` are well-formed completions of the architecture; they come first, then
    the control words, then huge strings (``huge`` of them, ``huge_size`` characters
    each), then malformed mutations of the valid ones and random strings until there
    are ``n``. Duplicates are dropped.

    >>> cs = completion_sample(["Finish[x]"], seed=1, n=60, huge_size=1000)
    >>> "RESET" in cs and max(map(len, cs)) >= 1000
    True
    """
    rng = random.Random(seed)
    valid = list(valid)
    out: dict[str, None] = dict.fromkeys(valid)
    out.update(dict.fromkeys(CONTROL_WORDS))
    for k in range(huge):
        unit = valid[k % len(valid)] if valid else "x"
        out[(unit * (huge_size // max(1, len(unit)) + 1))[:huge_size]] = None
    pool = valid or ["x"]
    while len(out) < n:
        roll = rng.random()
        if roll < 0.45:
            out[_mutate(rng, rng.choice(pool))] = None
        elif roll < 0.9:
            out["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40)))] = None
        else:
            out[rng.choice(pool) + rng.choice(CONTROL_WORDS) + rng.choice(pool)] = None
    return list(out)[: max(n, len(valid) + len(CONTROL_WORDS) + huge)]


def completion_strategy(
    valid: Iterable[str],
    *,
    text_size: int = 60,
    cut: int = 60,
    extra: Iterable[str] = (),
) -> st.SearchStrategy[str]:
    """The Hypothesis counterpart of :func:`completion_sample`, for property tests.

    Draws a valid completion, a control word, random text (up to ``text_size``
    characters), a valid completion with random text appended, a valid completion cut
    after at most ``cut`` characters, or one of ``extra`` (huge or hostile strings of the
    architecture), so a shrunk failure is as small and as readable as the harness allows.

    >>> from agentic_machines.strategies import first_and_shrunk
    >>> near = completion_strategy(["Finish[x]"])
    >>> fails = lambda c: c.startswith("Finish[x]") and c != "Finish[x]"
    >>> first, shrunk = first_and_shrunk(near, fails)
    >>> fails(shrunk), len(shrunk) <= len(first)  # still fails, and no longer
    (True, True)
    """
    pool = list(valid)
    options = [
        st.sampled_from(pool),
        st.sampled_from(CONTROL_WORDS),
        st.text(max_size=text_size),
        st.builds(lambda a, b: a + b, st.sampled_from(pool), st.text(max_size=20)),
        st.builds(lambda a, k: a[:k], st.sampled_from(pool), st.integers(0, cut)),
    ]
    extra = list(extra)
    if extra:
        options.append(st.sampled_from(extra))
    return st.one_of(options)


def harness_strings(machine: Any, *, max_len: int = 500, limit: int = 100) -> list[str]:
    """String constants of a harness program (its code, nested functions included) and of
    the arguments it was built with: candidate trigger words for the sample.

    Strings longer than ``max_len`` are left out, and at most ``limit`` are returned, in
    a fixed order (arguments first, then code constants). The program is a
    :class:`~agentic_machines.runtime.harness.HarnessMachine`'s generator function or an
    :class:`~agentic_machines.runtime.agent.AgentMachine`'s agent function (its commands
    are the strings it compares the model's answers with); any other machine gives ``[]``.

    >>> from agentic_machines import HarnessMachine
    >>> def echo(stop):
    ...     c = yield "say something"
    ...     while c != "xyzzy":
    ...         c = yield "again: " + c
    >>> harness_strings(HarnessMachine(echo, "halt"))
    ['halt', 'say something', 'xyzzy', 'again: ']
    """
    program = _program_of(machine)
    if program is None:
        return []
    out: dict[str, None] = {}
    values: list[Any] = [getattr(machine, "args", ()), getattr(machine, "kwargs", {})]
    while values:  # iterative: arguments may nest
        v = values.pop(0)
        if isinstance(v, str):
            out[v] = None
        elif isinstance(v, dict):
            values.extend([*v.keys(), *v.values()])
        elif isinstance(v, (list, tuple, set, frozenset)):
            values.extend(sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v)
    code = getattr(program, "__code__", None)
    todo = [code] if isinstance(code, CodeType) else []
    while todo:
        c = todo.pop(0)
        for k in c.co_consts:
            if isinstance(k, str):
                out[k] = None
            elif isinstance(k, CodeType):
                todo.append(k)
    doc = getattr(program, "__doc__", None)
    return [t for t in out if len(t) <= max_len and t != doc][:limit]


_STRING_TESTS = frozenset({"startswith", "endswith", "removeprefix", "removesuffix"})


def compared_strings(machine: Any) -> list[str]:
    """The string constants a harness program (or agent function) compares text with:
    ``x == "done"``, ``x in ("yes", "no")``, ``x.startswith("buy ")``, in nested functions
    too. These are the commands the program reacts to, so runs built from them go deep.

    Read from the compiled code (its instructions), in order of appearance.

    >>> from agentic_machines import agent_machine
    >>> def shop(model):
    ...     note = "Welcome."
    ...     while True:
    ...         reply = model(note)
    ...         if reply == "done":
    ...             return
    ...         if reply.startswith("buy ") or reply in ("pay", "retry"):
    ...             note = "ok"
    >>> compared_strings(agent_machine(shop))
    ['done', 'buy ', 'pay', 'retry']
    """
    program = _program_of(machine)
    code = getattr(program, "__code__", None)
    todo = [code] if isinstance(code, CodeType) else []
    out: dict[str, None] = {}
    while todo:
        ins = list(dis.get_instructions(todo.pop(0)))
        for k, i in enumerate(ins):
            if i.opname != "LOAD_CONST":
                if isinstance(i.argval, CodeType):
                    todo.append(i.argval)
                continue
            value = i.argval
            if isinstance(value, CodeType):
                todo.append(value)
                continue
            after = ins[k + 1].opname if k + 1 < len(ins) else ""
            before = ins[k - 1] if k else None
            tested = after in ("COMPARE_OP", "CONTAINS_OP") or (
                before is not None
                and before.opname in ("LOAD_METHOD", "LOAD_ATTR")
                and before.argval in _STRING_TESTS
            )
            if not tested:
                continue
            # a set literal is a frozenset constant, whose order changes with the hash seed:
            # sorted, so the strategies drawing these words are the same in every process
            members = sorted(value, key=repr) if isinstance(value, frozenset) else value
            for v in members if isinstance(value, (tuple, frozenset)) else (value,):
                if isinstance(v, str) and v:
                    out[v] = None
    return list(out)


def _program_of(machine: Any) -> Any:
    """The Python function a machine runs: a generator harness's or an agent function."""
    return machine.fn if isinstance(machine, AgentMachine) else getattr(machine, "program", None)


def _mutate(rng: random.Random, text: str) -> str:
    """One malformed variant of a well-formed completion."""
    kind = rng.randrange(7)
    if kind == 0 and text:
        return text[: rng.randrange(len(text))]  # truncated
    if kind == 1:
        return text + text  # doubled (two actions in one reply)
    if kind == 2:
        return text.swapcase()
    if kind == 3:
        cut = rng.randrange(len(text) + 1)
        return (
            text[:cut]
            + rng.choice(["\n", "\nObservation 1: fake", "=>", "\n```", "<="])
            + text[cut:]
        )
    if kind == 4:
        return text.replace("[", "(").replace("]", ")")
    if kind == 5:
        return "\n".join(reversed(text.split("\n")))
    return " " * rng.randrange(4) + text + "\n" * rng.randrange(3)
