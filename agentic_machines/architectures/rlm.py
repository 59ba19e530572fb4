"""RLM (recursive language model) as an agentic machine.

Source: Zhang et al., *Recursive Language Models* (arXiv 2512.24601) and the reference
code ``alexzhang13/rlm`` at the paper's commit (0f0cf9c); full citation and the fidelity
table, row by row with the reference text beside ours, in ``docs/sources.md``. Every
model call is one transition: root turns *and* ``llm_query`` sub-calls.

As the reference: the long input lives in the REPL as ``context``, never in the prompt;
the root prompt is the rendered message list ``[system (its RLM_SYSTEM_PROMPT), assistant
(its context metadata), user (its safeguard and user prompt), assistant (reply 1), user
(one "Code executed ... REPL output" message per block), user (its next user prompt),
...]``; ``repl`` blocks run in order in one namespace; a block's output is stdout, stderr
(an exception adds ``"\\n{Type}: {message}"``) and ``REPL variables: [...]``, joined
and truncated as there; ``llm_query`` never raises for a bad prompt (``"Error: ..."``),
and a batch with a bad item fails every item; ``max_depth`` > 1 nests child RLMs; the run
ends on the paper era's ``FINAL_VAR``/``FINAL`` patterns, and after ``max_turns`` one
more call asks for a final answer. ``SHOW_VARS()`` is the reference's of 2026-02.
``tests/test_rlm_reference.py`` holds a full episode's prompts against the reference's.

Ours: the turn messages stay in the history (as at the reference HEAD, so root prompts
extend each other) and each ends with ``Turn k/N.``, which the proof of
``proofs/rlm_obstruction.md`` reads; blocks run in a block runner of
:mod:`agentic_machines.execution.sandbox` (restricted builtins, a line budget past which
the step is ``DIVERGE``, the level default ``"strongest"``: :mod:`.options`); batches run
one item at a time, in order; ``max_turns`` and ``max_output`` (2 000 characters, the
original's 20 000) are small for the toy task.

The SPE question (:func:`analysis`): a successor of a root state is either a root turn
whose prompt extends the current one (ending with the next turn's message) or a sub-call
whose prompt is a rendered single user message, or (depth ≥ 2) a child RLM's first
prompt (``proofs/rlm_obstruction.md``), so by
F2 the initial state is not an SPE state.

>>> render_messages([("system", "S"), ("user", "U")])
'<|system|>\\nS\\n<|user|>\\nU\\n'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

from .._text import clip_prompt
from ..errors import BudgetExceeded, InvalidArgument
from ..execution.codeexec import Request, contained
from ..execution.sandbox import Scaffold
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict
from ._invariants import (
    InvariantAnalysis,
    completion_sampler,
    recorded_machine,
    scripted,
    strictly_extends,
)
from .options import ExecKeywords, ExecOptions, with_keywords

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "rlm_program",
    "RlmResult",
    "scripted_model",
    "SCRIPT",
    "DEPTH2_SCRIPT",
    "analysis",
    "successor_invariant",
    "is_single_user_message",
    "is_child_first_prompt",
    "REQUESTS",
    "INVARIANT_TEXT",
    "diagram_completions",
    "render_messages",
    "prompt_summary",
    "run_outline",
    "run_levels",
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
            raise InvalidArgument(f"unknown chat role {role!r}; use one of {ROLES}")
        out.append(f"<|{role}|>\n{content}\n")
    return "".join(out)


# The cited code's texts, character for character (alexzhang13/rlm at 0f0cf9c, MIT licence,
# (c) 2025 Alex Zhang): its RLM_SYSTEM_PROMPT as sent (never formatted, so the doubled
# braces and the escaped newlines of its examples reach the model as written), its user
# prompts and its safeguard. tests/golden/rlm/reference_episode.json holds them as that
# code sent them; docs/sources.md says how the file was made.
SYSTEM_PROMPT = (
    "You are tasked with answering a query with associated context. You can access, transform, and analyze this context interactively in a REPL environment that can recursively query sub-LLMs, which you are strongly encouraged to use as much as possible. You will be queried iteratively until you provide a final answer.\n"
    "\n"
    "The REPL environment is initialized with:\n"
    "1. A `context` variable that contains extremely important information about your query. You should check the content of the `context` variable to understand what you are working with. Make sure you look through it sufficiently as you answer your query.\n"
    "2. A `llm_query` function that allows you to query an LLM (that can handle around 500K chars) inside your REPL environment.\n"
    "3. A `llm_query_batched` function that allows you to query multiple prompts concurrently: `llm_query_batched(prompts: List[str]) -> List[str]`. This is much faster than sequential `llm_query` calls when you have multiple independent queries. Results are returned in the same order as the input prompts.\n"
    "4. The ability to use `print()` statements to view the output of your REPL code and continue your reasoning.\n"
    "\n"
    "You will only be able to see truncated outputs from the REPL environment, so you should use the query LLM function on variables you want to analyze. You will find this function especially useful when you have to analyze the semantics of the context. Use these variables as buffers to build up your final answer.\n"
    "Make sure to explicitly look through the entire context in REPL before answering your query. An example strategy is to first look at the context and figure out a chunking strategy, then break up the context into smart chunks, and query an LLM per chunk with a particular question and save the answers to a buffer, then query an LLM with all the buffers to produce your final answer.\n"
    "\n"
    "You can use the REPL environment to help you understand your context, especially if it is huge. Remember that your sub LLMs are powerful -- they can fit around 500K characters in their context window, so don't be afraid to put a lot of context into them. For example, a viable strategy is to feed 10 documents per sub-LLM query. Analyze your input data and see if it is sufficient to just fit it in a few sub-LLM calls!\n"
    "\n"
    "When you want to execute Python code in the REPL environment, wrap it in triple backticks with 'repl' language identifier. For example, say we want our recursive model to search for the magic number in the context (assuming the context is a string), and the context is very long, so we want to chunk it:\n"
    "```repl\n"
    "chunk = context[:10000]\n"
    'answer = llm_query(f"What is the magic number in the context? Here is the chunk: {{chunk}}")\n'
    "print(answer)\n"
    "```\n"
    "\n"
    "As an example, suppose you're trying to answer a question about a book. You can iteratively chunk the context section by section, query an LLM on that chunk, and track relevant information in a buffer.\n"
    "```repl\n"
    'query = "In Harry Potter and the Sorcerer\'s Stone, did Gryffindor win the House Cup because they led?"\n'
    "for i, section in enumerate(context):\n"
    "    if i == len(context) - 1:\n"
    '        buffer = llm_query(f"You are on the last section of the book. So far you know that: {{buffers}}. Gather from this last section to answer {{query}}. Here is the section: {{section}}")\n'
    '        print(f"Based on reading iteratively through the book, the answer is: {{buffer}}")\n'
    "    else:\n"
    '        buffer = llm_query(f"You are iteratively looking through a book, and are on section {{i}} of {{len(context)}}. Gather information to help answer {{query}}. Here is the section: {{section}}")\n'
    '        print(f"After section {{i}} of {{len(context)}}, you have tracked: {{buffer}}")\n'
    "```\n"
    "\n"
    "As another example, when the context isn't that long (e.g. >100M characters), a simple but viable strategy is, based on the context chunk lengths, to combine them and recursively query an LLM over chunks. For example, if the context is a List[str], we ask the same query over each chunk using `llm_query_batched` for concurrent processing:\n"
    "```repl\n"
    'query = "A man became famous for his book "The Great Gatsby". How many jobs did he have?"\n'
    "# Suppose our context is ~1M chars, and we want each sub-LLM query to be ~0.1M chars so we split it into 10 chunks\n"
    "chunk_size = len(context) // 10\n"
    "chunks = []\n"
    "for i in range(10):\n"
    "    if i < 9:\n"
    '        chunk_str = "\n'
    '".join(context[i*chunk_size:(i+1)*chunk_size])\n'
    "    else:\n"
    '        chunk_str = "\n'
    '".join(context[i*chunk_size:])\n'
    "    chunks.append(chunk_str)\n"
    "\n"
    "# Use batched query for concurrent processing - much faster than sequential calls!\n"
    'prompts = [f"Try to answer the following query: {{query}}. Here are the documents:\n'
    '{{chunk}}. Only answer if you are confident in your answer based on the evidence." for chunk in chunks]\n'
    "answers = llm_query_batched(prompts)\n"
    "for i, answer in enumerate(answers):\n"
    '    print(f"I got the answer from chunk {{i}}: {{answer}}")\n'
    'final_answer = llm_query(f"Aggregating all the answers per chunk, answer the original query about total number of jobs: {{query}}\\n\\nAnswers:\\n" + "\\n".join(answers))\n'
    "```\n"
    "\n"
    "As a final example, after analyzing the context and realizing its separated by Markdown headers, we can maintain state through buffers by chunking the context by headers, and iteratively querying an LLM over it:\n"
    "```repl\n"
    "# After finding out the context is separated by Markdown headers, we can chunk, summarize, and answer\n"
    "import re\n"
    "sections = re.split(r'### (.+)', context[\"content\"])\n"
    "buffers = []\n"
    "for i in range(1, len(sections), 2):\n"
    "    header = sections[i]\n"
    "    info = sections[i+1]\n"
    '    summary = llm_query(f"Summarize this {{header}} section: {{info}}")\n'
    '    buffers.append(f"{{header}}: {{summary}}")\n'
    'final_answer = llm_query(f"Based on these summaries, answer the original query: {{query}}\\n\\nSummaries:\\n" + "\\n".join(buffers))\n'
    "```\n"
    "In the next step, we can return FINAL_VAR(final_answer).\n"
    "\n"
    "IMPORTANT: When you are done with the iterative process, you MUST provide a final answer inside a FINAL function when you have completed your task, NOT in code. Do not use these tags unless you have completed your task. You have two options:\n"
    "1. Use FINAL(your final answer here) to provide the answer directly\n"
    "2. Use FINAL_VAR(variable_name) to return a variable you have created in the REPL environment as your final output\n"
    "\n"
    'Think step by step carefully, plan, and execute this plan immediately in your response -- do not just say "I will do this" or "I will do that". Output to the REPL environment and recursive LLMs as much as possible. Remember to explicitly answer the original query in your final answer.\n'
)
"""The root system message: the paper-era code's ``RLM_SYSTEM_PROMPT``, as it sends it."""

SAFEGUARD = (
    "You have not interacted with the REPL environment or seen your prompt / context yet. "
    "Your next action should be to look through and figure out how to answer the prompt, so "
    "don't just provide a final answer yet.\n\n"
)
_NEXT_ACTION = (
    "\n\nContinue using the REPL environment, which has the `context` variable, and querying "
    "sub-LLMs by writing to ```repl``` tags, and determine your answer. Your next action:"
)
USER_PROMPT = (
    "Think step-by-step on what to do using the REPL environment (which contains the context) "
    "to answer the prompt." + _NEXT_ACTION
)
USER_PROMPT_WITH_ROOT = (
    "Think step-by-step on what to do using the REPL environment (which contains the context) "
    'to answer the original prompt: "{root_prompt}".' + _NEXT_ACTION
)
HISTORY_NOTE = "The history before is your previous interactions with the REPL environment. "

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
# The paper era's FINAL pattern (the code of 2025-12-31, which the paper cites): lazy and
# unanchored at the end, so "FINAL(42) because ..." ends the run with 42 and "FINAL(f(x) = 3)"
# gives "f(x"; the code of 2026-01 to 2026-05 anchored it (``^\s*FINAL\((.*)\)\s*$``).
FINAL_PATTERN = re.compile(r"^\s*FINAL\((.*?)\)", re.MULTILINE | re.DOTALL)
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


def _up_to_close(reply: str, start: re.Pattern) -> str | None:
    # FINAL_VAR_PATTERN.search / FINAL_PATTERN.search: the first FINAL_VAR( (or FINAL()
    # that starts a line (after blanks), up to the first ")" after it; without one, no
    # later start has one either.
    match = start.search(reply)
    if match is None:
        return None
    close = reply.find(")", match.end())
    return None if close < 0 else reply[match.end() : close]


def _final_var_name(reply: str) -> str | None:
    return _up_to_close(reply, _LINE_START_FINAL_VAR)


def _final_text(reply: str) -> str | None:
    return _up_to_close(reply, _LINE_START_FINAL)


def find_final(
    reply: str, namespace: Mapping[str, Any] | Callable[[str], str | None]
) -> str | None:
    """The final answer a reply gives, or None to keep going (checked after the blocks ran).

    ``FINAL_VAR(name)`` is checked first: the value of ``name`` in the namespace as text (a
    missing name, or a value whose ``__str__`` raises, means "keep going"); then
    ``FINAL(answer)``; both must start a line. Matches as ``FINAL_VAR_PATTERN`` and
    ``FINAL_PATTERN`` (the reference's regexes) do, in linear time. ``namespace`` is a
    mapping, or a function giving the text of a name (a block runner's ``text_of``).

    >>> find_final("FINAL_VAR(ans)", {"ans": 42}), find_final("FINAL_VAR(nope)", {})
    ('42', None)
    >>> find_final("Done.\\nFINAL(the Seine)", {}), find_final("no answer yet", {})
    ('the Seine', None)
    """
    raw = _final_var_name(reply)
    if raw is not None:
        name = raw.strip().strip("\"'")
        if callable(namespace):
            text = namespace(name)
        elif name in namespace:
            # str() of a model value runs model code: whatever it raises means "keep going"
            text = contained(lambda: str(namespace[name]), lambda exc: None)
        else:
            text = None
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
    """One block's output text, joined as the paper-era code joins it: ``"\\n" + stdout``,
    ``"\\n" + stderr`` and ``"REPL variables: [...]\\n"``, each only when there is one,
    with a blank line between them ("No output" when none), then truncated.

    >>> format_output("4\\n", "", ["context", "x"], 100)
    "\\n4\\n\\n\\nREPL variables: ['context', 'x']\\n"
    """
    parts = [f"\n{p}" for p in (stdout, stderr) if p]
    names = list(names)
    if names:
        parts.append(f"REPL variables: {names}\n")
    text = "\n\n".join(parts) if parts else "No output"
    return truncate(text, limit)


def turn_message(turn: int, max_turns: int, query: str | None = None) -> str:
    """The harness-written user message that opens root turn ``turn`` (0-based): the
    paper-era code's (its safeguard at turn 0, its history note later, its user prompt
    with the query as ``root_prompt``), then our line ``Turn k/N.``, which the proof of
    ``proofs/rlm_obstruction.md`` reads (:func:`turn_of`).

    >>> print(turn_message(1, 8, "Why?"))
    The history before is your previous interactions with the REPL environment. Think step-by-step on what to do using the REPL environment (which contains the context) to answer the original prompt: "Why?".
    <BLANKLINE>
    Continue using the REPL environment, which has the `context` variable, and querying sub-LLMs by writing to ```repl``` tags, and determine your answer. Your next action:
    <BLANKLINE>
    Turn 2/8.
    """
    prompt = USER_PROMPT if query is None else USER_PROMPT_WITH_ROOT.format(root_prompt=query)
    head = SAFEGUARD if turn == 0 else HISTORY_NOTE
    return f"{head}{prompt}\n\nTurn {turn + 1}/{max_turns}."


def metadata_message(context: str) -> str:
    """The assistant message that describes the context without showing it, as the
    paper-era code writes it (a string context is one chunk).

    >>> metadata_message("abc")
    'Your context is a str with 3 total characters, and is broken up into chunks of char lengths: [3].'
    """
    n = len(context)
    return (
        f"Your context is a {type(context).__name__} with {n} total characters, "
        f"and is broken up into chunks of char lengths: {[n]}."
    )


def block_message(code: str, output: str) -> str:
    """The user message that reports one block: its code and its output (:func:`format_output`),
    as the paper-era code writes it, one message per block.

    >>> block_message("x = 1", "No output")
    'Code executed:\\n```python\\nx = 1\\n```\\n\\nREPL output:\\nNo output'
    """
    return f"Code executed:\n```python\n{code}\n```\n\nREPL output:\n{output}"


def reference_stderr(stderr: str, error: str) -> str:
    """An exception's text as the paper-era code shows it: ``"\\n{Type}: {message}"`` after
    what the block wrote (our block runner's traceback is cut to its last line; a syntax error's
    message gets the ``(<string>, line n)`` that ``exec`` would add).

    >>> tb = 'Traceback (most recent call last):\\n    f()\\nNameError: f is not defined\\n'
    >>> reference_stderr(tb, "NameError")
    '\\nNameError: f is not defined'
    """
    lines = stderr.rstrip("\n").split("\n")
    if lines and lines[0] == "Traceback (most recent call last):":
        lines = lines[1:]
    where = [ln for ln in lines if ln.startswith("  File ")]
    body = [ln for ln in lines if not ln.startswith(" ")]
    text = "\n".join(body) if body else error
    if error in ("SyntaxError", "IndentationError", "TabError") and where:
        line = re.search(r"line (\d+)", where[-1])
        if line:
            text += f" (<string>, line {line.group(1)})"
    return "\n" + text


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


DEPTH2_SCRIPT: tuple[str, ...] = (
    # root, turn 1: find the record
    "```repl\nhits = [line for line in context.split('\\n') if 'Eiffel' in line]\nprint(hits)\n```",
    # root, turn 2: hand it to a child RLM
    "```repl\nriver = rlm_query('Which river does this record name? ' + hits[0])\nprint(river)\n```",
    # child, turn 1: a batched query
    "```repl\nparts = llm_query_batched(['Name the river in: ' + context, "
    "'Name the city in: ' + context])\nprint(parts)\n```",
    "Seine",  # sub-call 1
    "Paris",  # sub-call 2
    # child, turn 2: answer from its own REPL
    "```repl\nanswer_text = parts[0]\n```\nFINAL_VAR(answer_text)",
    # root, turn 3
    "FINAL_VAR(river)",
)
"""The default task at ``max_depth=2``: the root hands the record to a child RLM, which
asks a batch of sub-calls and answers from its own REPL."""

DEFAULT_MAX_TURNS = 8
"""Root turns before the forced final-answer call (the original: 30)."""

_SCAFFOLD = ("context", "llm_query")

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
    max_depth: int = 1,
    options: ExecOptions = ExecOptions(),
) -> Generator[str, str, RlmResult]:
    """The RLM harness as a generator: root turns, sub-calls and child RLMs.

    ``max_depth`` is the reference's: 1 (the paper's experiments) makes every sub-call a
    plain model call; at 2, ``rlm_query`` starts a child RLM (its own REPL whose
    ``context`` is the prompt, its own history, the same ``max_turns``) whose own
    sub-calls are plain; and so on. A child's answer is the return value of the call in
    the parent's block. Blocks run as ``options`` say (:class:`ExecOptions`: the level,
    ``None`` is ``"strongest"``, the lines per block, the output shown); an isolated
    worker starts at the first block.

    >>> g = rlm_program(options=ExecOptions(isolation="inline"))
    >>> next(g).startswith("<|system|>\\nYou are tasked with answering a query")
    True
    """
    if type(max_depth) is not int or max_depth < 1:
        raise InvalidArgument(
            f"max_depth must be an integer >= 1 (1: plain sub-calls), got {max_depth!r}"
        )
    # a fresh block runner per start: replays restart the generator
    runner = options.runner()
    rt = _Rlm(runner, max_turns, options.max_output, options.block_lines, max_depth)
    try:
        return (yield from rt.session(context, query, 0))
    finally:
        runner.close()


_NS = "rlm"  # the root's namespace; a child RLM's is "rlm.<k>", k counting children
REQUESTS = ("llm_query", "llm_query_batched", "rlm_query", "rlm_query_batched")
"""The sub-call functions of every RLM's REPL (the reference's names)."""
SHOW_VARS = "SHOW_VARS"
"""The REPL function naming the variables and their types (the reference's of 2026-02)."""


class _Rlm:
    """One RLM episode: the block runner, the budgets, and the child RLMs started so far."""

    def __init__(
        self, runner: Any, max_turns: int, max_output: int, block_lines: int, max_depth: int
    ) -> None:
        self.runner = runner
        self.max_turns = max_turns
        self.max_output = max_output
        self.block_lines = block_lines
        self.max_depth = max_depth
        self.children = 0

    def session(
        self, context: str, query: str | None, depth: int
    ) -> Generator[str, str, RlmResult]:
        """The root loop of one RLM (the root at depth 0, a child RLM deeper)."""
        key = _NS if depth == 0 else f"{_NS}.{self.children}"
        runner, max_turns, max_output = self.runner, self.max_turns, self.max_output
        runner.namespace(
            key, Scaffold(values={"context": context}, requests=REQUESTS, show_vars=SHOW_VARS)
        )

        def handle(request: Request) -> Generator[str, str, Any]:
            return self.sub_call(request, depth)

        history: list[tuple[str, str]] = [
            ("system", SYSTEM_PROMPT),
            ("assistant", metadata_message(context)),
        ]
        for turn in range(max_turns):
            history.append(("user", turn_message(turn, max_turns, query)))
            reply = yield render_messages(history)
            outputs = []
            for code in find_code_blocks(reply):
                result = yield from runner.run_block(
                    key,
                    code,
                    handle=handle,
                    line_budget=self.block_lines,
                    max_output=max_output,
                    filename="<string>",  # exec's, as the reference runs blocks
                )
                if result.status == "budget":
                    # The original has no cell timeout: such a block hangs. That is divergence.
                    raise BudgetExceeded(self.block_lines)
                stderr = result.stderr
                if result.status == "error":
                    stderr = reference_stderr(stderr, result.error)
                # As at the reference HEAD: model code may rebind the reserved names; they come back.
                runner.restore_scaffold(key)
                names = _variables(runner.variables(key))
                output = format_output(result.stdout, stderr, names, max_output)
                outputs.append(("user", block_message(code, output)))
            answer = find_final(reply, lambda name: runner.text_of(key, name))
            if answer is not None:
                return RlmResult(answer, turn + 1)
            history.append(("assistant", reply))
            history.extend(outputs)
        answer = yield render_messages(history + [("assistant", FINAL_REQUEST)])
        return RlmResult(answer, max_turns, forced=True)

    def sub_call(self, request: Request, depth: int) -> Generator[str, str, Any]:
        """Fulfil one of :data:`REQUESTS` made by the RLM at ``depth``."""
        kind = request.kind
        if kind not in REQUESTS:
            raise NameError(f"unknown request {kind!r}")
        recursive = kind.startswith("rlm_") and depth + 1 < self.max_depth
        if not kind.endswith("_batched"):
            # The arguments are model values (a str subclass may override anything): read
            # them without running model code, or contain what runs.
            prompt = contained(lambda: _sub_call_prompt(request), lambda exc: None)
            if prompt is None:
                raise TypeError(f"{kind}() takes a prompt and an optional model name")
            if type(prompt) is _Refused:  # as the reference: an error string, never raised
                return f"Error: {prompt.error}"
            return (yield from self.ask(prompt, depth, recursive))
        prompts = contained(lambda: _batch_prompts(request), lambda exc: None)
        if prompts is None:
            raise TypeError(f"{kind}(prompts) takes a list of prompts (and an optional model name)")
        refused = [p for p in prompts if type(p) is _Refused]
        if refused:
            # The reference gathers the batch: the first failed item fails every item.
            return [f"Error: {refused[0].error}"] * len(prompts)
        answers: list[str] = []
        for prompt in prompts:  # in order: one model call (or child) at a time
            answers.append((yield from self.ask(prompt, depth, recursive)))  # type: ignore[arg-type]
        return answers

    def ask(self, prompt: str, depth: int, recursive: bool) -> Generator[str, str, str]:
        """A plain sub-call (one model call on a single user message), or a child RLM."""
        if not recursive:
            return (yield render_messages([("user", prompt)]))
        self.children += 1
        child = yield from self.session(prompt, None, depth + 1)
        return child.answer


@dataclass(frozen=True)
class _Refused:
    """A prompt the reference's model client refuses, with the error text it reports."""

    error: str


def _checked_prompt(prompt: Any, batched: bool) -> str | _Refused:
    # The reference sends the prompt to its handler, which answers a missing (falsy) prompt
    # of a single call, and its client answers a prompt that is not a string, with an error.
    if issubclass(type(prompt), str) and (prompt or batched):
        return str.__str__(prompt)  # an exact str, whatever subclass the model passed
    if not batched and not prompt:
        return _Refused("Missing 'prompt' or 'prompts' in request.")
    return _Refused(f"Invalid prompt type: <class '{type(prompt).__name__}'>")


def _batch_prompts(request: Request) -> list[str | _Refused] | None:
    # the prompts of a batched call; None when the call itself is malformed
    args, kwargs = list(request.args), dict(request.kwargs)
    prompts = args.pop(0) if args else kwargs.pop("prompts", None)
    kwargs.pop("model", None)
    if args or kwargs or type(prompts) not in (list, tuple):
        return None
    return [_checked_prompt(p, True) for p in prompts]


def _sub_call_prompt(request: Request) -> str | _Refused | None:
    args, kwargs = list(request.args), dict(request.kwargs)
    if not args and "prompt" not in kwargs:
        return None
    prompt = args.pop(0) if args else kwargs.pop("prompt")
    kwargs.pop("model", None)  # one model here: the name is accepted and ignored
    if args or kwargs:
        return None
    return _checked_prompt(prompt, False)


def _variables(names: list[tuple[str, bool]]) -> list[str]:
    # (name, value is simple data) pairs from the block runner, which checks types without
    # running model code
    return [k for k, simple in names if simple and not k.startswith("_") and k not in REQUESTS]


def machine(
    context: str = TOY_CONTEXT,
    query: str = TOY_QUERY,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_depth: int = 1,
    options: ExecOptions = ExecOptions(),
    **keywords: Unpack[ExecKeywords],
) -> HarnessMachine:
    """The RLM machine on a context and a query (default: the toy record log).

    ``options`` (or its fields as keywords: :mod:`.options`) say where and how model code
    runs. The machine does not know which model will drive it, so the default level is
    ``"strongest"``; pass ``isolation="inline"`` by name for trusted, scripted code. The
    level chosen is ``machine.kwargs["options"].isolation``. ``max_depth`` as in
    :func:`rlm_program`.

    >>> m = machine(isolation="inline")
    >>> m.name, m.kwargs["options"].isolation
    ('rlm', 'inline')
    """
    return recorded_machine(
        "rlm.machine",
        rlm_program,
        "rlm",
        ["context", "query"],
        dict(
            context=context,
            query=query,
            max_turns=max_turns,
            max_depth=max_depth,
            options=with_keywords(options, keywords, "rlm.machine").resolved(),
        ),
    )


def scripted_model() -> ScriptedModel:
    """A :class:`~agentic_machines.runtime.local_models.ScriptedModel` that solves the default task.

    >>> scripted_model().complete("any") == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


INVARIANT_TEXT = (
    "from a root state, a successor is either a root turn whose prompt strictly extends the "
    "current one and ends with the next turn's message (or the final-answer request), or a "
    "sub-call whose prompt is a rendered single user message, or (max_depth >= 2) the first "
    "turn of a child RLM (system, the metadata of a str context with no query, turn 1)"
)

_TURN = re.compile(r"\n\nTurn (\d+)/\d+\.\n\Z")
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


_CHILD_FIRST = re.compile(
    re.escape(render_messages([("system", SYSTEM_PROMPT)]))
    + re.escape("<|assistant|>\nYour context is a str with ")
    + r"\d+"
    + re.escape(" total characters, and is broken up into chunks of char lengths: [")
    + r"\d+"
    + re.escape("].\n<|user|>\n" + SAFEGUARD + USER_PROMPT + "\n\nTurn 1/")
    + r"\d+"
    + re.escape(".\n")
)


def is_child_first_prompt(prompt: str) -> bool:
    """True iff ``prompt`` is the first prompt of a child RLM: the system message, the
    metadata of a string context without a query, and the turn-1 message.

    >>> child = render_messages([("system", SYSTEM_PROMPT), ("assistant", metadata_message("q")),
    ...                          ("user", turn_message(0, 8))])
    >>> is_child_first_prompt(child), is_child_first_prompt(machine().prompt(initial))
    (True, False)
    """
    return _CHILD_FIRST.fullmatch(prompt) is not None


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved invariant of root states (``proofs/rlm_obstruction.md``).

    >>> p = machine().prompt(initial)
    >>> successor_invariant(p, "<|user|>\\nsub question\\n"), successor_invariant(p, p)
    (True, False)
    """
    if is_single_user_message(successor_prompt) or is_child_first_prompt(successor_prompt):
        return True
    if not strictly_extends(prompt, successor_prompt):
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


def prompt_summary(prompt: str) -> str:
    """What a prompt is in an RLM run: a root turn, a child RLM's turn, or a plain
    sub-call (diagrams label states with it, so a depth-2 run shows its nesting).

    >>> prompt_summary(machine().prompt(initial)), prompt_summary("<|user|>\\nWhich river?\\n")
    ('root RLM, turn 1', 'sub-call: Which river?')
    >>> child = render_messages([("system", SYSTEM_PROMPT), ("assistant", metadata_message("q")),
    ...                          ("user", turn_message(0, 8))])
    >>> prompt_summary(child)
    'child RLM (context of 1 characters), turn 1'
    """
    if is_single_user_message(prompt) and not prompt.startswith(_SYSTEM_HEAD):
        question = prompt[len("<|user|>\n") : -1].split("\n", 1)[0]
        return (
            f"sub-call: {clip_prompt(question.rstrip(), 40)}"  # the cut marked, as every prompt's
        )
    turn = turn_of(prompt)
    where = "final-answer request" if prompt.endswith(_FINAL_TAIL) else f"turn {turn}"
    meta, _, first_turn = prompt[len(_SYSTEM_HEAD) :].partition("\n<|user|>\n")
    if first_turn.startswith(_ROOT_FIRST_TURN):  # the root's turns carry the query
        return f"root RLM, {where}"
    size = re.match(r"Your context is a \w+ with (\d+) total characters", meta)
    return f"child RLM (context of {size.group(1) if size else '?'} characters), {where}"


def run_levels(prompts: Iterable[str]) -> list[tuple[int, str]]:
    """Each prompt of a run with its nesting level and :func:`prompt_summary`: root turns
    at 0, a child RLM's turns at 1, a plain sub-call one level below the RLM that made
    it. (Prompts tell a child from the root, not one child depth from another: at
    ``max_depth`` 2 the levels are exact.) :func:`run_outline` prints them;
    :func:`agentic_machines.drawing.nesting.draw_nesting` draws them as nested blocks.

    >>> run_levels([machine().prompt(initial), "<|user|>\\nRiver?\\n"])
    [(0, 'root RLM, turn 1'), (1, 'sub-call: River?')]
    """
    levels, level = [], 0
    for prompt in prompts:
        summary = prompt_summary(prompt)
        if summary.startswith("sub-call"):
            levels.append((level + 1, summary))
            continue
        level = 0 if summary.startswith("root") else 1
        levels.append((level, summary))
    return levels


def run_outline(prompts: Iterable[str]) -> str:
    """A run's prompts as an indented outline (the levels of :func:`run_levels`): root
    turns flush left, a child RLM's turns one level in, a plain sub-call one level below
    the RLM that made it.

    >>> child = render_messages([("system", SYSTEM_PROMPT), ("assistant", metadata_message("q")),
    ...                          ("user", turn_message(0, 8))])
    >>> print(run_outline([machine().prompt(initial), child, "<|user|>\\nRiver?\\n"]))
    root RLM, turn 1
      child RLM (context of 1 characters), turn 1
        sub-call: River?
    """
    return "\n".join("  " * level + summary for level, summary in run_levels(prompts))


_SYSTEM_HEAD = render_messages([("system", SYSTEM_PROMPT)]) + "<|assistant|>\n"
_ROOT_FIRST_TURN = SAFEGUARD + USER_PROMPT_WITH_ROOT.split("{root_prompt}")[0]


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
    every other successor is a single user message. The refutation is conditional on
    the invariant of ``proofs/rlm_obstruction.md`` (tested on ``n`` completions) and is
    given only for a machine built by :func:`machine` (its proof's scope, checked by the
    harness code's fingerprint and the recorded options); other machines are undecided.

    >>> v = analysis(n=50)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


ANALYSIS = InvariantAnalysis(
    name="rlm",
    build=machine,
    program=rlm_program,
    proof="proofs/rlm_obstruction.md",
    covers=(
        "machines built by rlm.machine() with any context, query and budgets (max_turns ≥ 3 "
        "for the turn-3 obstruction state), whose harness is the stock rlm_program"
    ),
    uncovered=lambda o: None,
    deep_script=SCRIPT[:2],
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(valid_completions, SCRIPT),
    default_options={"isolation": "inline"},
)
"""What ``proofs/rlm_obstruction.md`` is about: :func:`analysis` refutes only inside it."""
