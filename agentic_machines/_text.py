"""Text cut to fit a message, a label or a table cell: one rule for the whole package
(and the one line that ends a run's description, :func:`ending_line`).

A long value is cut at the end and marked with an ellipsis (``…``, or ``...`` where the
text is shown as program output), so that what is shown is never longer than asked and
a cut is always visible. A prompt is cut by :func:`clip_prompt`, the one rule for every
prompt shown (listings, diagrams, counterexamples, traces): prompts of one run share
their beginning, so it keeps the part after the longest common prefix with the prompts
around it (its parent's, its siblings'), where states differ.

Code that the line budget counts (harness programs, what runs while a model-written block
runs) keeps its own inline cut: a call here would be lines charged to the model's budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "clip",
    "clip_prompt",
    "clip_prompt_repr",
    "echoes",
    "graph_context",
    "shared_prefix",
    "clip_middle",
    "short_text",
    "one_line",
    "before_stops",
    "ending_line",
    "counted",
    "plural",
]


def clip(text: str, width: int, ellipsis: str = "…") -> str:
    """``text`` when it has at most ``width`` characters, else its start and ``ellipsis``,
    ``width`` characters in all (at least one character of the text is kept).

    >>> clip("abcdef", 4), clip("abc", 4), clip("abcdef", 5, "...")
    ('abc…', 'abc', 'ab...')
    """
    if len(text) <= width:
        return text
    return text[: max(width - len(ellipsis), 1)] + ellipsis


def clip_prompt(text: str, width: int, context: Iterable[str] = (), ellipsis: str = "…") -> str:
    """``text`` (a prompt) when it has at most ``width`` characters, else the part that
    tells it apart from the prompts of ``context`` (its parent's, its siblings'): what
    follows the longest prefix it shares with one of them (or, when that is short, its
    last ``width`` characters), marked with ``ellipsis`` at the front (and at the end when
    still too long), ``width`` characters in all. With no shared prefix the start is
    kept, as :func:`clip` does.

    >>> ask = "Ticket: a kettle leaks. Decide."
    >>> clip_prompt(ask + " Observation: refund", 30, [ask, ask + " Observation: replace"])
    '…. Decide. Observation: refund'
    >>> clip_prompt(ask + " Observation: refund", 16, [ask + " Observation: replace"])
    '…rvation: refund'
    >>> clip_prompt(ask, 12), clip_prompt("short", 12, [ask])
    ('Ticket: a k…', 'short')
    """
    if len(text) <= width:
        return text
    shared = max((shared_prefix(text, o) for o in context if o != text), default=0)
    room = max(width - len(ellipsis), 1)
    start = min(shared, len(text) - room)  # earlier when the end is near: the width is used
    if start <= 0:
        return clip(text, width, ellipsis)
    return ellipsis + clip(text[start:], room, ellipsis)


def clip_prompt_repr(text: str, width: int, context: Iterable[str] = ()) -> str:
    """``repr`` of :func:`clip_prompt`'s cut, in at most ``width`` characters with its
    escapes (``\\n`` is two) counted: the quotes are always closed.

    >>> clip_prompt_repr("Q\\n\\n\\nA: one", 10, ["Q\\n\\n\\nA: two"])
    "'…A: one'"
    """
    room = max(width - 2, 1)
    while True:
        shown = repr(clip_prompt(text, room, context))
        if len(shown) <= width or room == 1:
            return shown
        room = max(room - (len(shown) - width), 1)


def echoes(completion: str) -> tuple[str, ...]:
    """The starts of a prompt that repeats ``completion`` (the model's last answer) before
    what the harness added: as ``context`` of :func:`clip_prompt`, the part kept is the
    harness's addition (an Observation), which the model did not write.

    >>> clip_prompt(" search[owl]\\nObservation: owls hoot", 20, echoes("search[owl]"))
    '…\\nObservation: owls…'
    """
    return (completion, " " + completion, "\n" + completion)


def graph_context(graph: Any, node: Any, nodes: bool = False) -> list[Any]:
    """The prompts around ``node`` in an explored graph, for :func:`clip_prompt`: its
    parents' and its siblings' (the other states its parents step to); with ``nodes``,
    those states themselves.

    >>> import networkx as nx
    >>> g = nx.DiGraph([(0, 1), (0, 2)])
    >>> nx.set_node_attributes(g, {0: "Q", 1: "Q a", 2: "Q b"}, "prompt")
    >>> graph_context(g, 1), graph_context(g, 1, nodes=True)
    (['Q', 'Q b'], [0, 2])
    """
    around: dict[Any, None] = {}
    for parent in graph.predecessors(node):
        around[parent] = None
        around.update((s, None) for s in graph.successors(parent) if s != node)
    if nodes:
        return list(around)
    prompts = (graph.nodes[n].get("prompt") for n in around)
    return [p for p in prompts if isinstance(p, str)]


def shared_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``: where they first differ.

    >>> shared_prefix("Thought 1: look", "Thought 2: look"), shared_prefix("ab", "abc")
    (8, 2)
    """
    if b.startswith(a) or a.startswith(b):  # one prompt extends the other: at C speed
        return min(len(a), len(b))
    low, high = 0, min(len(a), len(b))
    while low < high:  # bisection, a slice compared in C each probe: long prompts stay fast
        mid = (low + high + 1) // 2
        if b.startswith(a[:mid]):
            low = mid
        else:
            high = mid - 1
    return low


def clip_middle(text: str, width: int, ellipsis: str = "…") -> str:
    """``text`` when it has at most ``width`` characters, else its start, ``ellipsis`` and
    its end, ``width`` characters in all (the start gets the odd one): for texts that
    are no prompt and whose both ends matter (a server's error text: what it is, then
    the detail); a prompt is cut by :func:`clip_prompt`.

    >>> clip_middle("abcdefghij", 7), clip_middle("abc", 7), clip_middle("abcdefghij", 7, "...")
    ('abc…hij', 'abc', 'ab...ij')
    """
    if len(text) <= width:
        return text
    keep = max(width - len(ellipsis), 0)
    head = keep - keep // 2
    tail = keep - head
    return text[:head] + ellipsis + (text[-tail:] if tail else "")


def before_stops(text: str, *stops: str) -> str:
    """What precedes the first occurrence of any of ``stops`` in ``text`` (all of it when
    none occurs): a model API's stop sequences, applied to a completion.

    >>> before_stops("a\\nObservation 1: b", "\\nObservation 1:"), before_stops("x;y,z", ",", ";")
    ('a', 'x')
    """
    at = min((i for i in (text.find(s) for s in stops) if i >= 0), default=len(text))
    return text[:at]


_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """``text`` with every terminal control character but newline and tab shown as an
    escape (``\\x1b``): model output printed as text cannot move the cursor, clear the
    screen, retitle the window or ring the bell.

    >>> escape_controls("red \\x1b[31mtext\\x07\\r\\nnext") == "red \\\\x1b[31mtext\\\\x07\\\\x0d\\nnext"
    True
    """
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def short_text(text: str, limit: int = 24, context: Iterable[str] = ()) -> str:
    """``text`` on one line, cut to ``limit`` characters by :func:`clip_prompt` among
    ``context`` (the texts shown beside it, e.g. the reprs of a state's parent and
    siblings, which hold their prompts: the part where it differs is kept).

    Newlines are shown as ``⏎`` and the empty string as ``""`` so that a label is
    never blank.

    >>> short_text("Thought 1: search\\nAction 1: Search[owl]", 20)
    'Thought 1: search⏎A…'
    >>> short_text("")
    '""'
    >>> short_text("S('Ticket: kettle', 'refund')", 12, ["S('Ticket: kettle', 'replace')"])
    "…, 'refund')"
    """
    if not isinstance(text, str):
        text = repr(text)
    if text == "":
        return '""'
    line = _line(text)
    if len(line) <= limit:  # no cut: the context is not looked at (it may be long)
        return line
    return clip_prompt(line, limit, [_line(c) for c in context])


def _line(text: str) -> str:
    return escape_controls(text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\t", " "))


def one_line(text: str) -> str:
    """``text`` with every run of white space (newlines too) made one space, ends trimmed.

    >>> one_line("  a\\n  b\\tc ")
    'a b c'
    """
    return " ".join(text.split())


def ending_line(value: Any, error: BaseException | None, show: Callable[[Any], str]) -> str:
    """The last line of a run's description: ``value: <show(value)>`` for a run that
    ended normally, ``error: <type>: <message>`` for one that ``error`` stopped (the CEK
    program runs and the Spell sessions print their ends alike).

    >>> ending_line(3, None, repr), ending_line(None, ValueError("no"), repr)
    ('value: 3', 'error: ValueError: no')
    """
    if error is None:
        return f"value: {show(value)}"
    return f"error: {type(error).__name__}: {error}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` (thousands separated) and ``noun``, in the plural unless ``n`` is 1: the one
    rule for a count in a message (``plural`` when adding ``s`` is wrong).

    >>> counted(1, "completion"), counted(0, "state"), counted(12345, "property", "properties")
    ('1 completion', '0 states', '12,345 properties')
    """
    return f"{n:,} {_plural(n, noun, plural)}"


def plural(n: int, noun: str, plural: str | None = None) -> str:
    """``noun`` in the plural unless ``n`` is 1, without the count (:func:`counted`'s rule,
    for a word that names a list shown after it, or a verb that agrees with a count).

    >>> plural(1, "picture"), plural(2, "picture"), plural(1, "has", "have"), plural(3, "has", "have")
    ('picture', 'pictures', 'has', 'have')
    """
    return _plural(n, noun, plural)


def _plural(n: int, noun: str, plural: str | None) -> str:
    return noun if n == 1 else plural or noun + "s"
