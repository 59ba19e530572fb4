"""RLM (recursive language model) as an agentic machine.

Source: Zhang et al., *Recursive Language Models* (arXiv 2512.24601) and the reference
code ``alexzhang13/rlm``; full citation in ``docs/sources.md``. Every model call is
one transition: root turns *and* ``llm_query`` sub-calls (the sub-calls are unfolded
into the machine rather than hidden inside a root step).

Faithful:

- the long input is never in the prompt: it lives in the REPL namespace as ``context``;
  the root prompt is the rendered message list ``[system (REPL instructions), user
  (context metadata: type and length), user (turn 1 with the "look first" safeguard),
  assistant (reply 1), user (REPL output), user (turn 2), ...]`` - the history is kept
  whole, as at HEAD, so root prompts extend each other;
- every `````repl`` block of a reply runs, in order, in one persistent namespace
  (globals = locals); other fences never run; a reply without blocks adds no output
  message; each block's text is stdout, then stderr, then ``REPL variables: [...]``,
  cut to ``max_output`` characters with a ``... + [N chars...]`` suffix;
- ``llm_query(q)`` is a sub-call: its prompt is the rendered single user message q (no
  system prompt); the answer is returned to the code (``docs/design.md``, model-written code: the block is
  interrupted at the call, the answer cached, the block rerun from the namespace it
  started with, so no call is made twice);
- exceptions in model code become stderr (a short traceback ending ``Type: message``) and
  the turn goes on;
- the run ends on ``FINAL_VAR(name)`` (checked first; a missing name means "keep going")
  or ``FINAL(answer)`` at the start of a line of the reply, parsed after the blocks ran
  (the paper-era protocol); after ``max_turns`` turns one more call is made with the
  harness-written assistant message asking for a final answer, and its completion is
  the answer.

Simplified:

- model code runs through :mod:`agentic_machines.execution.codeexec` with restricted builtins (no
  ``open``, ``eval``, ``exec``, ``compile``, ``input``, ``globals``, ``locals``; imports
  only of pure modules such as ``re`` and ``json``; the original keeps ``__import__`` and
  ``open``) and a deterministic line budget per block: a block that runs past
  it is ``DIVERGE`` (the original has no cell timeout and hangs);
- the history format mixes eras: the whole history is kept as at HEAD (so root prompts
  extend each other), while the run ends on the paper era's ``FINAL``/``FINAL_VAR``
  (HEAD ends on ``answer["ready"] = True``); the scaffold (``context``, ``llm_query``) is
  restored after every block, as at HEAD;
- depth 1 only (sub-calls are plain model calls, as in the paper's experiments); no
  batched calls, compaction, cost or time limits;
- a small ``max_turns`` and ``max_output`` for the toy task; the prompts are paraphrased.

The SPE question (:func:`analysis`): a successor of a root state is either a root turn
whose prompt extends the current one (ending with the next turn's message) or a sub-call
whose prompt is a rendered single user message (``proofs/rlm_obstruction.md``), so by
F2 the initial state is not an SPE state.

>>> render_messages([("system", "S"), ("user", "U")])
'<|system|>\\nS\\n<|user|>\\nU\\n'
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import BudgetExceeded
from ..execution.codeexec import Namespace, Request, contained, request_function, run_block
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict

if TYPE_CHECKING:
    from ..runtime.models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "rlm_program",
    "RlmResult",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "successor_invariant",
    "is_single_user_message",
    "INVARIANT_TEXT",
    "diagram_completions",
    "render_messages",
    "find_code_blocks",
    "find_final",
    "format_output",
    "truncate",
    "TOY_CONTEXT",
    "TOY_QUERY",
    "TOY_ANSWER",
    "SYSTEM_PROMPT",
    "FINAL_REQUEST",
]

ROLES = ("system", "user", "assistant")


def render_messages(messages: Iterable[tuple[str, str]]) -> str:
    """Render a chat message list to one prompt string (``docs/design.md``, chat rendering).

    Each message becomes ``<|role|>\\n`` + content + ``\\n``, so a prefix of the message
    list renders to a prefix of the string.

    >>> render_messages([("user", "hi")])
    '<|user|>\\nhi\\n'
    """
    out = []
    for role, content in messages:
        if role not in ROLES:
            raise ValueError(f"unknown chat role {role!r}; use one of {ROLES}")
        out.append(f"<|{role}|>\n{content}\n")
    return "".join(out)


SYSTEM_PROMPT = (
    "You are tasked with answering a query with associated context. You can access, transform "
    "and analyse this context interactively in a REPL environment that can recursively query "
    "sub-LLMs, which you are strongly encouraged to use as much as possible. You will be "
    "queried iteratively until you provide a final answer.\n"
    "\n"
    "The REPL environment is initialized with:\n"
    "1. A `context` variable that contains extremely important information about your query. "
    "Look through it before answering.\n"
    "2. A `llm_query(prompt)` function that asks a sub-LLM a question and returns its answer as "
    "a string. Give it the pieces of the context it needs: it sees only what you pass.\n"
    "3. `print()` to see the output of your code; only printed text is shown to you, truncated.\n"
    "\n"
    "To run Python code, wrap it in triple backticks with the `repl` language identifier:\n"
    "```repl\n"
    "chunk = context[:1000]\n"
    'print(llm_query(f"What is the magic number in this text? {chunk}"))\n'
    "```\n"
    "Variables persist between blocks. When you are done, answer on a line of its own with "
    "FINAL(your answer), or with FINAL_VAR(name) to return the value of a REPL variable."
)
"""The root system message (paraphrasing the paper-era ``RLM_SYSTEM_PROMPT``)."""

SAFEGUARD = (
    "You have not interacted with the REPL environment or seen your context yet. Look through "
    "the context first; do not give a final answer yet."
)

FINAL_REQUEST = (
    "Please provide a final answer to the user's question based on the information provided."
)
"""The assistant-role message the harness writes after the last turn (as the original does)."""

# The reference implementation's patterns (its code-block and FINAL parsers). They are the
# specification: the functions below give the same answers in linear time, because on a
# long reply with many unclosed starts (say "```repl\nA" repeated) these backtracking
# patterns take quadratic time, minutes for a megabyte, which no line budget can stop.
# tests/test_rlm.py checks the equivalence on random replies.
BLOCK_PATTERN = re.compile(r"```repl\s*\n(.*?)\n```", re.DOTALL)
FINAL_VAR_PATTERN = re.compile(r"^\s*FINAL_VAR\((.*?)\)", re.MULTILINE | re.DOTALL)
FINAL_PATTERN = re.compile(r"^\s*FINAL\((.*)\)\s*$", re.MULTILINE | re.DOTALL)
_LINE_START_FINAL_VAR = re.compile(
    r"^[^\S\n]*FINAL_VAR\(", re.MULTILINE
)  # linear: a bounded try per line
_LINE_START_FINAL = re.compile(r"^[^\S\n]*FINAL\(", re.MULTILINE)


def find_code_blocks(reply: str) -> list[str]:
    """The ``repl``-tagged code blocks of a reply, stripped, in order (other fences never run).

    The same blocks as ``BLOCK_PATTERN.finditer`` (the reference's regex), found in linear time.

    >>> find_code_blocks("a\\n```repl\\nx = 1\\n```\\n```python\\ny = 2\\n```\\n```repl\\nprint(x)\\n```")
    ['x = 1', 'print(x)']
    """
    out: list[str] = []
    n, pos = len(reply), 0
    while True:
        start = reply.find("```repl", pos)
        if start < 0:
            return out
        run_start = run_end = start + len("```repl")
        while run_end < n and reply[run_end].isspace():
            run_end += 1
        last_nl = reply.rfind("\n", run_start, run_end)
        if last_nl < 0:  # `\s*\n` needs a newline right after the tag: try the next tag
            pos = start + 1
            continue
        close = reply.find("\n```", last_nl + 1)
        if close >= 0:  # greedy \s* ends at the last newline; lazy (.*?) stops at the first close
            out.append(reply[last_nl + 1 : close].strip())
            pos = close + 4
            continue
        # Backtracking: the close may be the run's own last newline, with the body starting
        # after an earlier newline of the run (an empty, blank body).
        earlier = reply.rfind("\n", run_start, last_nl)
        if last_nl == run_end - 1 and reply.startswith("```", run_end) and earlier >= 0:
            out.append(reply[earlier + 1 : last_nl].strip())
            pos = last_nl + 4
            continue
        return out  # no close after this tag, so none after any later tag either


def _final_var_name(reply: str) -> str | None:
    # FINAL_VAR_PATTERN.search: the first FINAL_VAR( that starts a line (after blanks),
    # up to the first ")" after it; without one, no later FINAL_VAR( has one either.
    match = _LINE_START_FINAL_VAR.search(reply)
    if match is None:
        return None
    close = reply.find(")", match.end())
    return None if close < 0 else reply[match.end() : close]


def _final_text(reply: str) -> str | None:
    # FINAL_PATTERN.search: the first FINAL( that starts a line, up to the *last* ")"
    # followed only by blanks up to a newline or the end (greedy (.*), then \)\s*$).
    match = _LINE_START_FINAL.search(reply)
    if match is None:
        return None
    close = len(reply)
    while True:
        close = reply.rfind(")", match.end(), close)
        if close < 0:
            return None
        k = close + 1
        while k < len(reply) and reply[k] != "\n" and reply[k].isspace():
            k += 1
        if k == len(reply) or reply[k] == "\n":
            return reply[match.end() : close]


def find_final(reply: str, namespace: dict) -> str | None:
    """The final answer a reply gives, or None to keep going (checked after the blocks ran).

    ``FINAL_VAR(name)`` is checked first: the value of ``name`` in the namespace as text (a
    missing name, or a value whose ``__str__`` raises, means "keep going"); then
    ``FINAL(answer)``; both must start a line. Matches as ``FINAL_VAR_PATTERN`` and
    ``FINAL_PATTERN`` (the reference's regexes) do, in linear time.

    >>> find_final("FINAL_VAR(ans)", {"ans": 42}), find_final("FINAL_VAR(nope)", {})
    ('42', None)
    >>> find_final("Done.\\nFINAL(the Seine)", {}), find_final("no answer yet", {})
    ('the Seine', None)
    """
    raw = _final_var_name(reply)
    if raw is not None:
        name = raw.strip().strip("\"'")
        if name in namespace:
            # str() of a model value runs model code: whatever it raises means "keep going"
            text = contained(lambda: str(namespace[name]), lambda exc: None)
            if text is not None:
                return text
    text = _final_text(reply)
    return None if text is None else text.strip()


def truncate(text: str, limit: int) -> str:
    """Cut an output to ``limit`` characters, saying how much was dropped.

    >>> truncate("abcdef", 4)
    'abcd... + [2 chars...]'
    """
    return text if len(text) <= limit else text[:limit] + f"... + [{len(text) - limit} chars...]"


def format_output(stdout: str, stderr: str, names: Iterable[str], limit: int) -> str:
    """One block's output text: stdout, then stderr, then the REPL's variable names, truncated.

    >>> format_output("4\\n", "", ["context", "x"], 100)
    "4\\n\\nREPL variables: ['context', 'x']"
    """
    parts = [p for p in (stdout, stderr) if p]
    names = list(names)
    if names:
        parts.append(f"REPL variables: {names}")
    text = "\n".join(parts) if parts else "No output"
    return truncate(text, limit)


def turn_message(turn: int, max_turns: int) -> str:
    """The harness-written user message that opens root turn ``turn`` (0-based).

    >>> turn_message(1, 8)
    'Turn 2/8: continue with the REPL, or give your final answer.'
    """
    head = f"Turn {turn + 1}/{max_turns}: "
    if turn == 0:
        return SAFEGUARD + "\n" + head + "write ```repl``` code to look at the context."
    return head + "continue with the REPL, or give your final answer."


def metadata_message(context: str, query: str) -> str:
    """The user message that describes the context without showing it.

    >>> metadata_message("abc", "Why?")
    'Answer the following: Why?\\nYour context is a str of 3 total characters.'
    """
    return f"Answer the following: {query}\nYour context is a {type(context).__name__} of {len(context)} total characters."


def _toy_context() -> str:
    """A long, deterministic log of records; one of them names the river."""
    cities = ["Oslo", "Lima", "Kyoto", "Accra", "Quito", "Perth", "Turin", "Cork", "Hanoi", "Tartu"]
    topics = [
        "the weather was mild",
        "a market opened",
        "the library extended its hours",
        "a bridge was repainted",
        "the museum lent a painting",
        "a marathon was held",
        "the tram line was extended",
        "a choir gave a concert",
    ]
    lines = []
    for k in range(1, 241):
        if k == 137:
            lines.append(
                "Record 0137: The Eiffel Tower stands on the Champ de Mars in Paris, "
                "near the left bank of the Seine."
            )
            continue
        city, topic = cities[(k * 7) % len(cities)], topics[(k * 5) % len(topics)]
        lines.append(
            f"Record {k:04d}: In {city}, {topic}; nothing else of note was reported that day."
        )
    return "\n".join(lines)


TOY_CONTEXT = _toy_context()
"""The default context: 240 records (about 20 000 characters); record 137 names the river."""

TOY_QUERY = "According to the records, which river flows near the Eiffel Tower?"
"""The default query."""

TOY_ANSWER = "Seine"
"""Its answer."""

SCRIPT: tuple[str, ...] = (
    "Let me look at the context first.\n```repl\nprint(len(context))\nprint(context[:100])\n```",
    "I will keep the records that mention the tower.\n"
    "```repl\nhits = [line for line in context.split('\\n') if 'Eiffel' in line]\nprint(hits)\n```",
    "I will ask a sub-LLM to read that record.\n"
    "```repl\nriver = llm_query('Which river does this record name? Answer with one word.\\n' + hits[0])\n"
    "print(river)\n```",
    "Seine",
    "The sub-LLM found it.\nFINAL_VAR(river)",
)
"""Scripted completions solving the default task: three root turns, one sub-call, FINAL_VAR."""


DEFAULT_MAX_TURNS = 8
"""Root turns before the forced final-answer call (the original: 30)."""

DEFAULT_MAX_OUTPUT = 2_000
"""Characters of output shown per block (the original: 20 000)."""

DEFAULT_BLOCK_LINES = 20_000
"""Executed lines allowed per block (per attempt); more is ``DIVERGE``."""

_SCAFFOLD = ("context", "llm_query")
_SIMPLE = (str, int, float, bool, list, dict, tuple)

initial = TraceState(())
"""The initial state of :func:`machine`: the first root turn, before any reply."""


@dataclass(frozen=True)
class RlmResult:
    """What an RLM run returns: the final answer, the root turns used, and whether the
    turn limit forced the answer (``forced``).

    >>> RlmResult("Seine", 4).forced
    False
    """

    answer: str
    turns: int
    forced: bool = False


def rlm_program(
    context: str = TOY_CONTEXT,
    query: str = TOY_QUERY,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_output: int = DEFAULT_MAX_OUTPUT,
    block_lines: int = DEFAULT_BLOCK_LINES,
) -> Generator[str, str, RlmResult]:
    """The RLM harness as a generator: root turns and ``llm_query`` sub-calls.

    >>> g = rlm_program()
    >>> next(g).startswith("<|system|>\\nYou are tasked with answering a query")
    True
    """
    namespace = _fresh_namespace(context)  # fresh per start: replays restart the generator
    history: list[tuple[str, str]] = [
        ("system", SYSTEM_PROMPT),
        ("user", metadata_message(context, query)),
    ]
    for turn in range(max_turns):
        history.append(("user", turn_message(turn, max_turns)))
        reply = yield render_messages(history)
        outputs = []
        for code in find_code_blocks(reply):
            result = yield from run_block(
                code, namespace, handle=_sub_call, line_budget=block_lines, max_output=max_output
            )
            if result.status == "budget":
                # The original has no cell timeout: such a block hangs. That is divergence.
                raise BudgetExceeded(block_lines)
            _restore_scaffold(namespace, context)
            outputs.append(
                format_output(result.stdout, result.stderr, _variables(namespace), max_output)
            )
        answer = find_final(reply, namespace)
        if answer is not None:
            return RlmResult(answer, turn + 1)
        history.append(("assistant", reply))
        if outputs:
            history.append(("user", _outputs_message(outputs)))
    answer = yield render_messages(history + [("assistant", FINAL_REQUEST)])
    return RlmResult(answer, max_turns, forced=True)


def _sub_call(request: Request) -> Generator[str, str, str]:
    """Fulfil ``llm_query(prompt, model=None)``: one model call on a single user message."""
    if request.kind != "llm_query":
        raise NameError(f"unknown request {request.kind!r}")
    # The arguments are model values (a str subclass may override anything): read them
    # without running model code, or contain what runs.
    prompt = contained(lambda: _sub_call_prompt(request), lambda exc: None)
    if prompt is None:
        raise TypeError("llm_query(prompt) takes one string prompt (and an optional model name)")
    answer = yield render_messages([("user", prompt)])
    return answer


def _sub_call_prompt(request: Request) -> str | None:
    args, kwargs = list(request.args), dict(request.kwargs)
    prompt = args.pop(0) if args else kwargs.pop("prompt", None)
    kwargs.pop("model", None)  # one model here: the name is accepted and ignored
    if args or kwargs or not issubclass(type(prompt), str):
        return None
    return str.__str__(prompt)  # an exact str, whatever subclass the model passed


def _fresh_namespace(context: str) -> Namespace:
    return Namespace({"context": context, "llm_query": request_function("llm_query")})


def _restore_scaffold(namespace: dict, context: str) -> None:
    # As at the reference HEAD: model code may rebind the reserved names; they come back.
    namespace["context"] = context
    namespace["llm_query"] = request_function("llm_query")


def _variables(namespace: dict) -> list[str]:
    # type checks that run no model code (isinstance may read a model-defined __class__)
    return [
        k
        for k, v in dict.items(namespace)
        if type(k) is str
        and not k.startswith("_")
        and k != "llm_query"
        and issubclass(type(v), _SIMPLE)
    ]


def _outputs_message(outputs: list[str]) -> str:
    if len(outputs) == 1:
        return "REPL output:\n" + outputs[0]
    return "\n\n".join(f"REPL output (block {j}):\n{text}" for j, text in enumerate(outputs, 1))


def machine(
    context: str = TOY_CONTEXT,
    query: str = TOY_QUERY,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_output: int = DEFAULT_MAX_OUTPUT,
    block_lines: int = DEFAULT_BLOCK_LINES,
) -> HarnessMachine:
    """The RLM machine on a context and a query (default: the toy record log).

    >>> machine().name
    'rlm'
    """
    return HarnessMachine(
        rlm_program,
        context,
        query,
        max_turns=max_turns,
        max_output=max_output,
        block_lines=block_lines,
        name="rlm",
    )


def scripted_model() -> ScriptedModel:
    """A :class:`~agentic_machines.runtime.models.ScriptedModel` that solves the default task.

    >>> scripted_model().complete("any") == SCRIPT[0]
    True
    """
    from ..runtime.models import ScriptedModel

    return ScriptedModel(SCRIPT)


INVARIANT_TEXT = (
    "from a root state, a successor is either a root turn whose prompt strictly extends the "
    "current one and ends with the next turn's message (or the final-answer request), or a "
    "sub-call whose prompt is a rendered single user message"
)

_TURN = re.compile(r"<\|user\|>\n(?:[^\n]*\n)?Turn (\d+)/\d+: [^\n]*\n\Z")
_FINAL_TAIL = render_messages([("assistant", FINAL_REQUEST)])


def turn_of(prompt: str) -> int | None:
    """The number of the turn message that ends a root prompt, if it ends with one.

    >>> turn_of(machine().prompt(initial)), turn_of("<|user|>\\nhello\\n")
    (1, None)
    """
    match = _TURN.search(prompt)
    return int(match.group(1)) if match else None


def is_single_user_message(prompt: str) -> bool:
    """True iff ``prompt`` is ``render_messages([("user", q)])`` for some string q.

    >>> is_single_user_message(render_messages([("user", "2 + 2?")])), is_single_user_message(machine().prompt(initial))
    (True, False)
    """
    return prompt.startswith("<|user|>\n") and prompt.endswith("\n")


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved invariant of root states (``proofs/rlm_obstruction.md``).

    >>> p = machine().prompt(initial)
    >>> successor_invariant(p, "<|user|>\\nsub question\\n"), successor_invariant(p, p)
    (True, False)
    """
    if is_single_user_message(successor_prompt):
        return True
    if len(successor_prompt) <= len(prompt) or not successor_prompt.startswith(prompt):
        return False
    k = turn_of(prompt)
    return k is not None and (
        turn_of(successor_prompt) == k + 1 or successor_prompt.endswith(_FINAL_TAIL)
    )


def valid_completions() -> list[str]:
    """Well-formed replies: code, sub-calls, answers, and the awkward cases.

    >>> len(valid_completions()) > 10
    True
    """
    return [
        "```repl\nprint(len(context))\n```",
        "```repl\nx = llm_query('Summarise: ' + context[:50])\nprint(x)\n```",
        "```repl\na = llm_query('one')\nb = llm_query('two')\n```",
        "```repl\nllm_query(42)\n```",
        "```repl\nwhile True:\n    pass\n```",
        "```repl\nimport os\n```",
        "```repl\nraise SystemExit\n```",
        "```repl\ncontext = 'gone'\nllm_query = None\n```",
        "```repl\ndef f(n):\n    return 1 if n < 2 else n * f(n - 1)\nprint(f(5))\n```",
        "```repl\nprint('x' * 100000)\n```",
        "```repl\nsyntax error here(\n```",
        "```python\nprint('not run')\n```",
        "FINAL(Seine)",
        "FINAL_VAR(missing)",
        "```repl\nans = 'Seine'\n```\nFINAL_VAR(ans)",
        "Thinking, no code.",
        "```repl\ntry:\n    llm_query('q')\nexcept BaseException:\n    pass\n```",
    ]


SUB_CALL_REPLY = "```repl\nprint(llm_query('Summarise this: ' + context[:80]))\n```"
"""A reply whose block makes a sub-call (used in diagrams: a successor that is a single user message)."""


def diagram_completions(prompt: str) -> list[str]:
    """A small completion alphabet for diagrams. At turn 1: the scripted reply, a reply
    that makes a sub-call, and ``FINAL``; later: the next scripted reply; at a sub-call:
    its scripted answer. So the initial state's fan shows both kinds of successor, and
    the obstruction state of :func:`analysis` is drawn.

    >>> diagram_completions("<|user|>\\nWhich river?\\n")
    ['Seine']
    >>> diagram_completions(machine().prompt(initial)) == [SCRIPT[0], SUB_CALL_REPLY, "FINAL(Seine)"]
    True
    """
    if is_single_user_message(prompt):
        return [SCRIPT[3]]
    k = turn_of(prompt) or 1
    if k == 1:
        return [SCRIPT[0], SUB_CALL_REPLY, "FINAL(Seine)"]
    scripted = {2: SCRIPT[1], 3: SCRIPT[2], 4: SCRIPT[4]}
    return [scripted[k]] if k in scripted else ["FINAL(Seine)"]


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 200) -> Verdict:
    """Is the initial state of RLM an SPE state? Refuted by F2 with a concrete state.

    The obstruction state is the root state of turn 3, reached by two scripted root
    replies: its prompt extends the initial prompt but ends with the turn-3 message,
    while every root successor of the initial state ends with the turn-2 message, and
    every other successor is a single user message.

    >>> v = analysis(n=40)
    >>> v.status, v.method
    ('refuted', 'fact:F2')
    """
    from ._invariants import refute_by_invariant
    from .sampling import completion_sample, harness_strings

    m = m if m is not None else machine()
    return refute_by_invariant(
        m,
        m.initial,
        deep_script=SCRIPT[:2],
        invariant=successor_invariant,
        invariant_text=INVARIANT_TEXT,
        proof="proofs/rlm_obstruction.md",
        completions=completion_sample(
            valid_completions() + list(SCRIPT) + harness_strings(m), seed=seed, n=n
        ),
    )
