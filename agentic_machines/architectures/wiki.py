"""A deterministic toy Wikipedia: the environment of the ReAct and THREAD machines.

It follows the action semantics of ReAct's ``wikienv.py`` (``search[e]``, ``lookup[k]``,
``finish[x]``, ``think[...]``; see ``docs/sources.md``, ReAct) on a fixed dict of
pages instead of HTTP Wikipedia:

- ``search[e]``: an exact (case-insensitive) title match opens the page and shows its
  first five sentences; otherwise ``Could not find e. Similar: [...]`` with up to five
  titles that share a word with ``e``. Searching resets the lookup state.
- ``lookup[k]``: the next sentence of the open page containing ``k`` (case-insensitive),
  as ``(Result j / n) ...``; ``No more results.`` after the last one.
- ``finish[x]``: records the answer and ends the episode; the reward is exact match
  after normalisation (lower case, no punctuation, no articles).
- anything else: ``Invalid action: a``.

A :class:`WikiEnv` is mutable (open page, lookup cursor); harnesses build a fresh one
every time they start, because :class:`~agentic_machines.runtime.harness.HarnessMachine`
replays them from the start.

>>> env = WikiEnv(TOY_PAGES, gold="Seine")
>>> env.step("search[Eiffel Tower]")[0][:40]
'The Eiffel Tower is a wrought-iron latti'
>>> env.step("lookup[Paris]")
('(Result 1 / 1) The Eiffel Tower stands in Paris.', False)
>>> env.step("finish[the Seine]"), env.reward
(('Episode finished, reward = 1\\n', True), 1)
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

__all__ = ["WikiEnv", "TOY_PAGES", "TOY_QUESTION", "TOY_ANSWER", "normalize_answer", "sentences"]

TOY_PAGES: dict[str, str] = {
    "Eiffel Tower": (
        "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars. "
        "It is named after the engineer Gustave Eiffel. "
        "The Eiffel Tower stands in Paris. "
        "It was the tallest structure in the world from 1889 to 1930. "
        "Locally it is nicknamed La dame de fer."
    ),
    "Paris": (
        "Paris is the capital and largest city of France. "
        "It has an estimated population of two million residents. "
        "Paris is a major centre of finance, diplomacy, commerce and science. "
        "The city is divided into twenty arrondissements. "
        "Paris hosted the Summer Olympics in 1900, 1924 and 2024. "
        "The Seine river flows through the centre of Paris."
    ),
    "Seine": (
        "The Seine is a river in northern France. "
        "It flows through Paris into the English Channel at Le Havre."
    ),
    "Gustave Eiffel": (
        "Gustave Eiffel was a French civil engineer. "
        "His company built the Eiffel Tower for the 1889 World's Fair."
    ),
    "Thames": "The Thames is a river that flows through southern England, including London.",
    "London": "London is the capital and largest city of England. The Thames flows through London.",
}
"""The default pages: two hops from the Eiffel Tower to the Seine."""

TOY_QUESTION = "Which river flows through the city where the Eiffel Tower stands?"
"""The default question of the ReAct and THREAD machines."""

TOY_ANSWER = "Seine"
"""Its gold answer."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_ACTION = re.compile(r"^(search|lookup|finish|think)\[(.*)\]$", re.DOTALL)


def sentences(text: str) -> list[str]:
    """Split a page into sentences (at ``.``, ``!`` or ``?`` followed by white space).

    >>> sentences("A b. C d! E?")
    ['A b.', 'C d!', 'E?']
    """
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def normalize_answer(text: str) -> str:
    """HotpotQA answer normalisation: lower case, drop punctuation and articles, squeeze spaces.

    >>> normalize_answer("The  Seine!")
    'seine'
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


class WikiEnv:
    """A toy wiki with ReAct's actions; ``step(action) -> (observation, done)``.

    >>> WikiEnv(TOY_PAGES).step("dance")
    ('Invalid action: dance', False)
    """

    def __init__(self, pages: Mapping[str, str] = TOY_PAGES, *, gold: str | None = None) -> None:
        self.pages = dict(pages)
        self.gold = gold
        self.page: str | None = None
        self.answer: str | None = None
        self.reward = 0
        self.done = False
        self._keyword: str | None = None
        self._hits: list[str] = []
        self._cursor = 0
        self.log: list[str] = []

    def step(self, action: str) -> tuple[str, bool]:
        """Run one action and return ``(observation, done)``."""
        action = action.strip()
        self.log.append(action)
        match = _ACTION.match(action)
        if self.done:
            return "The episode is over.", True
        if match is None:
            return f"Invalid action: {action}", False
        verb, arg = match.group(1), match.group(2)
        if verb == "search":
            return self._search(arg), False
        if verb == "lookup":
            return self._lookup(arg), False
        if verb == "think":
            return "Nice thought.", False
        self.answer = arg
        self.done = True
        if self.gold is not None:
            self.reward = int(normalize_answer(arg) == normalize_answer(self.gold))
        return f"Episode finished, reward = {self.reward}\n", True

    def _search(self, entity: str) -> str:
        self._keyword, self._hits, self._cursor = None, [], 0
        titles = {t.lower(): t for t in self.pages}
        title = titles.get(entity.strip().lower())
        if title is None:
            words = set(entity.lower().split())
            similar = [t for t in sorted(self.pages) if words & set(t.lower().split())][:5]
            return f"Could not find {entity}. Similar: {similar}."
        self.page = title
        return " ".join(sentences(self.pages[title])[:5])

    def _lookup(self, keyword: str) -> str:
        if self.page is None:
            return "No page is open. Search for an entity first."
        if keyword != self._keyword:
            self._keyword = keyword
            self._hits = [
                s for s in sentences(self.pages[self.page]) if keyword.lower() in s.lower()
            ]
            self._cursor = 0
        if self._cursor >= len(self._hits):
            return "No more results.\n"
        self._cursor += 1
        return f"(Result {self._cursor} / {len(self._hits)}) {self._hits[self._cursor - 1]}"
