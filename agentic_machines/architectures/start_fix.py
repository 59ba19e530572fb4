"""The ``#START#`` fix of the REPL-Plan paper's appendix, shared by REPL-Plan and THREAD.

The REPL-Plan paper reports (appendix, on the authors' codebase) that GPT-4o-series
models tended to *loop* after an observation: they generated the ``#START#`` token that
opens the model's part of a prompt and began the response again, and THREAD with
GPT-4o-mini always looped. Its fix: a generation that contains ``#START#`` is queried
again, and if the token recurs, a "don't loop" prompt is added. :func:`requery` is that
fix, as a generator that sits between a harness and its model calls: each query is one
model call (so one machine transition), and a model that loops for ever spends the
harness's model-call budget, which ends the run (never a hang).

Our choices (the paper gives no text): the first re-query repeats the prompt unchanged
(a sampling model may answer differently); from the second on, the prompt is the same
prompt followed by the architecture's ``note``, a comment line in the architecture's own
syntax. A prompt is therefore the base prompt, or the base prompt plus the note:
:func:`base_prompt` recovers the base, which is what the successor-prompt invariants of
``proofs/repl_plan_invariant.md`` and ``proofs/thread_invariant.md`` compare.

>>> def ask(prompt):
...     return (yield prompt)
>>> g = requery(ask, "p", note="# stop\\n")
>>> [next(g), g.send("#START#\\nloop"), g.send("#START#\\nloop")]
['p', 'p', 'p# stop\\n']
"""

from __future__ import annotations

from collections.abc import Callable, Generator

__all__ = ["START_TOKEN", "requery", "base_prompt", "loops"]

START_TOKEN = "#START#"
"""The token whose appearance in a generation means the model started the response again."""


def loops(completion: str) -> bool:
    """True when ``completion`` contains the ``#START#`` token (the model is looping).

    >>> loops("act('1')"), loops("#START#\\n#CALL# main()")
    (False, True)
    """
    return START_TOKEN in completion


def requery(
    ask: Callable[[str], Generator[str, str, str]],
    prompt: str,
    *,
    note: str,
    enabled: bool = True,
) -> Generator[str, str, str]:
    """Ask ``prompt`` through ``ask`` (a generator yielding a prompt and returning the
    completion); while the completion contains ``#START#``, ask again: the same prompt
    the first time, ``prompt + note`` from then on. With ``enabled=False`` one query,
    taken as it is (the behaviour of the original code).

    >>> def ask(prompt):
    ...     return (yield prompt)
    >>> g = requery(ask, "p", note="!", enabled=False)
    >>> next(g)
    'p'
    >>> try:
    ...     g.send("#START# x")
    ... except StopIteration as stop:
    ...     print(stop.value)
    #START# x
    """
    completion = yield from ask(prompt)
    retries = 0
    while enabled and loops(completion):
        retries += 1
        completion = yield from ask(prompt if retries == 1 else prompt + note)
    return completion


def base_prompt(prompt: str, note: str) -> str:
    """``prompt`` without a trailing ``note`` (the prompt before the "don't loop" note).

    >>> base_prompt("p# stop\\n", "# stop\\n"), base_prompt("p", "# stop\\n")
    ('p', 'p')
    """
    return prompt[: -len(note)] if note and prompt.endswith(note) else prompt
