"""SPE: the CEK agentic evaluator with the seed state x*.

Source: the SPE paper and its formal appendix (``docs/sources.md``);
the machine is :class:`agentic_machines.cek.AgenticEvaluator`, whose states are the
boundary states of a small Lisp (a CEK state whose control is ``llm q``), and whose
initial state is x* = the first boundary of ``(let ((y (llm q))) (eval y))``.

Faithful: the machine is the evaluator itself, not a model of it; x* is the paper's
seed; the loader is the paper's (build, from a boundary state's continuation, a closed
program whose first boundary is that state).

Simplified: the language is the small Lisp of ``docs/design.md`` (the CEK evaluator), and a harness call has a
fuel bound (running out raises ``Undecided``, never a guess). The SPE verdict is
*sampled*: the loader equation h(x*, loader(β)) = β is checked on a sample of boundary
states reached by several programs and scripted completions (the central property test
``tests/test_cek*`` checks it on random programs); ``proofs/`` has the proof for all β.

>>> m = machine()
>>> m.prompt(initial)
'Write a program.'
>>> m.prompt(m.harness(initial, '(llm "Which river flows through Paris?")'))
'Which river flows through Paris?'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..cek import AgenticEvaluator, Boundary, first_boundary, loader, seed_program, seed_state
from ..cek.realize import realize, realize_react_toy
from ..cek.theorem import SEED_PROMPT
from ..embedding import identity
from ..fixtures import fixture
from ..generation import MIN_PREMISE_TESTS, cardinality_obstruction, is_spe_state
from ..verdict import Verdict
from ._invariants import scripted, states_within

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "sample_states",
    "SAMPLE_PROGRAMS",
    "SAMPLE_COMPLETIONS",
    "non_spe_state",
    "diagram_completions",
    "contrast_extras",
]

FUEL = 200_000
"""CEK steps per harness call for the default machine (the toy programs need far fewer)."""

initial: Boundary = seed_state(SEED_PROMPT)
"""x*: the first boundary of ``(let ((y (llm "Write a program."))) (eval y))``."""

SCRIPT: tuple[str, ...] = (
    '(string-append "The river is " (llm "Which river flows through Paris?"))',
    "the Seine",
)
"""The default task: asked for a program, the model writes one that asks a question."""

SAMPLE_PROGRAMS: tuple[str, ...] = (
    '(llm "a")',
    '(begin (llm "a") (llm "b"))',
    '(string-append "Dear " (llm "name?"))',
    '(let ((x (llm "yes or no?"))) (if (equal? x "yes") (llm "why yes?") (llm "why no?")))',
    '(letrec ((loop (lambda (n) (if (= n 0) "done" (begin (llm (number->string n)) (loop (- n 1)))))))'
    " (loop 3))",
    '(let ((f (lambda (s) (string-append s "!")))) (f (llm "shout?")))',
    '(list 1 (llm "second?") 3)',
    '(eval (llm "program?"))',
    '(let ((a (llm "first?"))) (let ((b (llm "second?"))) (string-append a b)))',
    '(cons (llm "head?") (cons (llm "tail?") nil))',
    '((lambda (x y) (string-append x (llm y))) "pre" "suffix?")',
    '(eval (string-append "(llm " (llm "quoted prompt?") ")"))',
    '(if (equal? (llm "ok?") "yes") (eval (llm "program?")) (llm "else?"))',
    seed_program(SEED_PROMPT),
)
"""Programs whose boundary states (with scripted completions) form the SPE sample."""

SAMPLE_COMPLETIONS: tuple[str, ...] = (
    "yes",
    "no",
    "",
    '(llm "deeper")',
    '(begin (llm "x") (llm "y"))',
    "42",
    '"quoted"',
    "(",
)
"""Completions fed to reach deeper sample states, and used for the embedding check."""


def machine(fuel: int = FUEL) -> AgenticEvaluator:
    """The SPE machine: the CEK agentic evaluator, with initial state x*.

    >>> machine().name
    'spe'
    """
    return AgenticEvaluator(fuel=fuel, initial=initial)


def scripted_model() -> ScriptedModel:
    """A :class:`~agentic_machines.runtime.local_models.ScriptedModel` that solves the default task.

    >>> scripted_model().complete("Write a program.") == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


def sample_states(
    depth: int = 3,
    programs: Iterable[str] = SAMPLE_PROGRAMS,
    completions: Sequence[str] = SAMPLE_COMPLETIONS,
) -> list[Boundary]:
    """Boundary states: the first boundary of each program, then ``depth`` rounds of
    feeding every sample completion, in breadth-first order without duplicates.

    >>> len(sample_states(depth=0)), all(isinstance(b, Boundary) for b in sample_states(depth=1))
    (14, True)
    """
    starts = [b for b in (first_boundary(p) for p in programs) if type(b) is Boundary]
    return states_within(machine(), starts, completions, depth)


def analysis(depth: int = 3) -> Verdict:
    """Is x* an SPE state? Holds (sampled) with the identity embedding and the loader.

    >>> v = analysis(depth=1)
    >>> v.status, v.method
    ('holds', 'sampled')
    """

    m = machine()
    states = sample_states(depth)
    completions = list(SAMPLE_COMPLETIONS)
    v = is_spe_state(
        m, initial, embedding=identity(m), loader=loader, states=states, completions=completions
    )
    details = {
        **dict(v.details),
        "states_checked": len(states),
        "completions_checked": len(completions),
    }
    if v.witness is not None:
        witness = dataclasses.replace(
            v.witness,
            description=(
                f"identity embedding with the loader of proofs/spe_theorem.md: h(x*, loader(β)) = β checked "
                f"on {len(states)} boundary states"
            ),
        )
        return dataclasses.replace(v, witness=witness, details=details)
    return dataclasses.replace(v, details=details)


NON_SPE_PROGRAM = '(begin (llm "a") (llm "b"))'
"""A program whose first boundary discards its completion: one successor, so not an SPE state (F5)."""


def non_spe_state() -> Verdict:
    """The first boundary of ``(begin (llm "a") (llm "b"))`` is not an SPE state (F5).

    Every completion leads to the same state (the ``(llm "b")`` boundary), so one
    successor cannot host two distinct states of the machine.

    >>> v = non_spe_state()
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F5', True)
    """
    from ..checking.sampling import completion_sample  # lazy: imports hypothesis

    m = machine()
    beta_a = first_boundary(NON_SPE_PROGRAM)
    return cardinality_obstruction(
        m,
        beta_a,
        m,
        reason='begin discards the value of (llm "a"), so h(β, c) is the (llm "b") boundary for every c',
        completions=completion_sample(
            list(SAMPLE_COMPLETIONS) + ["anything", '(llm "x")'], seed=0, n=MIN_PREMISE_TESTS + 10
        ),
        target_states=[beta_a, initial],
        proof="proofs/spe_theorem.md",
    )


def diagram_completions(prompt: str) -> list[str]:
    """A small completion alphabet for diagrams: two programs, a plain answer, and the seed
    program itself (which loads x* back: a self-loop).

    >>> diagram_completions("Write a program.")[-1] == seed_program()
    True
    """
    return ['(llm "a")', NON_SPE_PROGRAM, '"done"', seed_program(SEED_PROMPT)]


def contrast_extras() -> list[tuple[str, str, Verdict, str]]:
    """Rows for the contrast table beyond "is x* an SPE state?": which machines x*
    completion-generates (a finite fixture through ``realize``, the toy ReAct through
    its hand-written realization), and a non-SPE state inside the SPE machine.

    >>> [(q, v.status) for _, q, v, _ in contrast_extras()][0]
    ('x* completion-generates f2-mul (realize)?', 'holds')
    """

    finite = fixture("f2-mul")
    toy = realize_react_toy()
    loop = "Loop realization: e(s) = first boundary of E_s, loader(s) = E_s; checked on every state of the target and every completion of the target's finite alphabet (x* accepts every string; commutation is claimed on that alphabet only)"
    return [
        ("spe", f"x* completion-generates {finite.name} (realize)?", realize(finite).check(), loop),
        (
            "spe",
            f"x* completion-generates {toy.machine.name} (realize_react_toy)?",
            toy.check(),
            loop,
        ),
        (
            "spe",
            f"first boundary of {NON_SPE_PROGRAM} SPE?",
            non_spe_state(),
            "F5: h(β, ·) is constant (begin discards the completion), so β and x* cannot both be loaded",
        ),
    ]
