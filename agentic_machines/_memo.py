"""Results of a pure function of texts, kept for the texts seen last: one rule for the
package (the reader's parse, Spell's balance and reopen, the compiled model-written
blocks).

A text is looked up only when it is an exact ``str`` (a subclass could hash or compare in
its own way) no longer than the limit (a long text is not worth keeping); anything else
is computed afresh. An exception is not kept: the call raises it again. The function's
results must be immutable, since one object serves every caller.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["kept_for_texts"]

F = TypeVar("F", bound=Callable[..., Any])


def kept_for_texts(maxsize: int, max_chars: int) -> Callable[[F], F]:
    """A decorator keeping ``fn``'s results for its ``maxsize`` last argument tuples,
    looked up only when every argument is an exact ``str`` and the first has at most
    ``max_chars`` characters.

    >>> calls = []
    >>> @kept_for_texts(maxsize=4, max_chars=3)
    ... def shout(text, mark):
    ...     calls.append(text)
    ...     return text.upper() + mark
    >>> shout("ab", "!"), shout("ab", "!"), shout("long", "!"), shout("long", "!"), calls
    ('AB!', 'AB!', 'LONG!', 'LONG!', ['ab', 'long', 'long'])
    """

    def decorate(fn: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def lookup(*texts: Any) -> Any:
            for text in texts:  # a loop, not all(): parse is called this way per read
                if type(text) is not str:
                    return fn(*texts)
            if len(texts[0]) > max_chars:
                return fn(*texts)
            return cached(*texts)

        return lookup  # type: ignore[return-value]

    return decorate
