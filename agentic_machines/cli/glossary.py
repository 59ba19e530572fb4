"""The definitions behind ``agentic-machines explain TERM``.

Each :class:`Term` gives the definition three ways: in symbols (the tutorial's notation),
in words, and as a short runnable example (the test suite executes every one). Terms
are found by name or alias, ignoring case, spaces, hyphens and underscores.

>>> print(lookup("spe").name)
SPE state
>>> lookup("halting")
Traceback (most recent call last):
  ...
agentic_machines.errors.InvalidArgument: unknown term 'halting' (did you mean HALT?); ...
"""

from __future__ import annotations

import difflib
import textwrap
from dataclasses import dataclass

from ..errors import InvalidArgument

__all__ = ["Term", "TERMS", "lookup", "suggest", "render", "term_names"]


@dataclass(frozen=True)
class Term:
    """One glossary entry: ``symbols`` (formal), ``words`` (plain) and a runnable ``example``.

    >>> lookup("F5").symbols
    "(X, x) ⊢ X'  ⇒  |S'| ≤ |succ(x) ∩ S|"
    """

    name: str
    symbols: str
    words: str
    example: str
    aliases: tuple[str, ...] = ()
    see: tuple[str, ...] = ()


TERMS: tuple[Term, ...] = (
    Term(
        "agentic machine",
        "X = (S, p, h),  p: S → P,  h: S × C → S ∪ {1, ↑}   (P = C = str)",
        "An LLM agent seen as a state machine: in each state s the model reads the prompt p(s) "
        "and writes one completion c; the harness h turns (s, c) into the next state, or into "
        "HALT (1) or DIVERGE (↑). Exactly one model call per transition; h is deterministic, "
        "so all randomness comes from the model.",
        """\
from agentic_machines import TableMachine, HALT
m = TableMachine({"ask": "yes or no?"}, {("ask", "yes"): HALT, ("ask", "no"): "ask"}, initial="ask")
print(m.prompt("ask"), "->", m.harness("ask", "no"), "/", m.harness("ask", "yes"))
""",
        aliases=("machine", "X"),
        see=("prompt function", "harness", "HALT", "DIVERGE"),
    ),
    Term(
        "prompt function",
        "p: S → P",
        "What the model sees in each state. Two states with the same prompt are "
        "indistinguishable to the model; embeddings must preserve prompts exactly.",
        """\
from agentic_machines.fixtures import fixture
m = fixture("f2-add")
print([m.prompt(s) for s in m.states])   # one prompt for both states
""",
        aliases=("prompt", "p"),
    ),
    Term(
        "harness",
        "h: S × C → S ∪ {1, ↑}",
        "The deterministic code around the model: it takes the current state and the model's "
        "completion and returns the next state, or HALT, or DIVERGE.",
        """\
from agentic_machines.fixtures import fixture
m = fixture("f2-mul")                     # h(a, b) = a·b
print({(a, b): m.harness(a, b) for a in m.states for b in m.completions})
""",
        aliases=("harness function", "h"),
    ),
    Term(
        "HALT",
        "1 ∈ outcomes, h(s, c) = 1",
        "The sentinel outcome for a run that ends normally. It is not a state: it has no "
        "prompt and no successors. Printed as 1.",
        """\
from agentic_machines import HALT, is_sentinel
from agentic_machines.fixtures import fixture
print(fixture("halt1").harness(0, "0") is HALT, is_sentinel(HALT), repr(HALT))
""",
        aliases=("1", "halting outcome"),
    ),
    Term(
        "DIVERGE",
        "↑ ∈ outcomes, h(s, c) = ↑",
        "The sentinel outcome for a harness that never returns to the model (an endless loop "
        "or a spent deterministic budget). Not a state. Printed as ↑.",
        """\
from agentic_machines import DIVERGE
from agentic_machines.fixtures import fixture
print(fixture("diverge1").harness(0, "1") is DIVERGE, repr(DIVERGE))
""",
        aliases=("↑", "divergence"),
    ),
    Term(
        "transition kernel",
        "T_M(s) = h(s, ·)_* M(p(s))   (the pushforward of the model's distribution)",
        "Given a model M that answers a prompt with a distribution over completions, the "
        "kernel at s is the distribution of the next outcome: add up the probability of every "
        "completion that leads there.",
        """\
from fractions import Fraction
from agentic_machines import kernel
from agentic_machines.fixtures import fixture
fair = lambda prompt: {"0": Fraction(1, 2), "1": Fraction(1, 2)}
print(kernel(fixture("f2-mul"), fair, 1))
""",
        aliases=("kernel", "T_M"),
    ),
    Term(
        "embedding",
        "e: S' ↪ S injective, p(e(s')) = p'(s'), h(e(s'), c) = e(h'(s', c)), e(1) = 1, e(↑) = ↑",
        "A copy of machine X' inside machine X: every state of X' has a distinct image with "
        "the same prompt, and the image moves exactly as the original on every completion. "
        "The model cannot tell a state from its image.",
        """\
from agentic_machines import Embedding, check_embedding
from agentic_machines.fixtures import fixture
add = fixture("f2-add")
print(bool(check_embedding(Embedding(add, add, {0: 0, 1: 1}))))   # the identity
print(check_embedding(Embedding(add, add, {0: 0, 1: 0})).obstruction.kind)   # not injective
""",
        aliases=("e", "check_embedding"),
    ),
    Term(
        "successors",
        "succ(x) = { h(x, c) : c ∈ C }",
        "Every outcome the harness can produce from x, one per completion. On an infinite "
        "completion space it can only be sampled.",
        """\
from agentic_machines import successors
from agentic_machines.fixtures import fixture
print(successors(fixture("f2-mul"), 1))
""",
        aliases=("succ", "successor"),
    ),
    Term(
        "completion-generation",
        "(X, x) ⊢ X'  ⇔  ∃ embedding e: X' ↪ X with e(S') ⊆ succ(x)",
        "From state x, one completion can put the machine into (a copy of) any state of X': "
        "the model can load every state of X' by choosing what to write.",
        """\
from agentic_machines import completion_generates
from agentic_machines.fixtures import fixture
v = completion_generates(fixture("diverge1"), 0, fixture("halt1"))
print(v.holds, v.method)
""",
        aliases=("completion generates", "completion_generates", "generates"),
        see=("loader", "SPE state"),
    ),
    Term(
        "loader",
        "c_{s'} with h(x, c_{s'}) = e(s')",
        "The completion that loads a target state: written by the model at x, it moves the "
        "machine straight to the image of s'. A witness of completion-generation is an "
        "embedding plus a loader.",
        """\
from agentic_machines import is_spe_state
from agentic_machines.fixtures import fixture
v = is_spe_state(fixture("f2-add"), 0)
print({s: v.witness.load(s) for s in (0, 1)})
""",
        aliases=("loader completion",),
    ),
    Term(
        "SPE state",
        "x is SPE  ⇔  (X, x) completion-generates X itself",
        "A state from which the model can, with one completion, reach a copy of every state "
        "of its own machine: the model programs its own execution. On a finite machine this "
        "means every state is a successor of x (F1).",
        """\
from agentic_machines import spe_states, is_spe_state
from agentic_machines.fixtures import fixture
m = fixture("f2-mul")
print(sorted(spe_states(m)), is_spe_state(m, 0).holds)
""",
        aliases=("spe", "self-programmed execution", "is_spe_state", "spe_states"),
    ),
    Term(
        "F1",
        "S finite:  x is SPE  ⇔  S ⊆ succ(x)   (hence |S| ≤ |C|)",
        "Finite characterisation: an injection of a finite set into itself is a bijection, so "
        "every state must itself be a successor of x, and then the identity works.",
        """\
from agentic_machines import is_spe_state, successors
from agentic_machines.fixtures import fixture
m = fixture("f2-mul")
print(set(successors(m, 1).values()) >= set(m.states), is_spe_state(m, 1).holds)
""",
        aliases=("finite characterisation", "finite characterization"),
    ),
    Term(
        "F2",
        "(X, x) ⊢ X'  ⇒  p'(S') ⊆ p(succ(x))",
        "Prompt obstruction: one state of X' whose prompt no successor of x has refutes "
        "completion-generation.",
        """\
from agentic_machines import TableMachine, HALT, completion_generates
x = TableMachine({"s": "A"}, {("s", "c"): "s"})
target = TableMachine({"t": "B"}, {("t", "c"): HALT})
v = completion_generates(x, "s", target)
print(v.holds, v.obstruction.kind)
""",
        aliases=("prompt obstruction",),
    ),
    Term(
        "F3",
        "∀ s, c: p(s) ⊏ p(h(s, c))   ⇒   no SPE states",
        "Prompt-monotone machines (every transition strictly extends the prompt, like a "
        "transcript that only grows) have no SPE state: x would need a successor with the "
        "prompt p(x) itself.",
        """\
from agentic_machines import FunctionMachine, HALT, is_spe_state
# The prompt is the transcript; each step appends the completion, until HALT.
grow = FunctionMachine(lambda s: "log:" + s, lambda s, c: s + c if len(s) < 2 else HALT,
                       states=["", "a", "b", "aa", "ab", "ba", "bb"], completions=["a", "b"])
print(is_spe_state(grow, "").holds)
""",
        aliases=("prompt-monotone", "prompt monotone"),
    ),
    Term(
        "F4",
        "e: Y ↪ X, x0 = e(y0):  (X, x0) ⊢ Z  ⇔  (Y, y0) ⊢ Z",
        "Invariance: whether a state completion-generates a machine does not change when "
        "the state is seen through an embedding.",
        """\
from agentic_machines import completion_generates
from agentic_machines.fixtures import fixture
add = fixture("f2-add")
print(completion_generates(add, 0, add).holds == completion_generates(add, 1, add).holds)
""",
        aliases=("invariance",),
    ),
    Term(
        "F5",
        "(X, x) ⊢ X'  ⇒  |S'| ≤ |succ(x) ∩ S|",
        "Cardinality: x has to reach as many distinct states as X' has; a state whose "
        "harness ignores the completion is an SPE state only of a one-state machine.",
        """\
from agentic_machines import is_spe_state
from agentic_machines.fixtures import fixture
print(is_spe_state(fixture("f2-const"), 0).holds)   # succ(0) = {0}, but |S| = 2
""",
        aliases=("cardinality",),
    ),
    Term(
        "F6",
        "e(s') chosen  ⇒  e(h'(s', c)) = h(e(s'), c) for every c",
        "Commutation propagation: once one image is chosen, commutation forces the images of "
        "all its successors; a search picks one image per unforced state and prunes on the "
        "first conflict. find_embeddings works this way.",
        """\
from agentic_machines import find_embeddings
from agentic_machines.fixtures import fixture
add = fixture("f2-add")
print(len(list(find_embeddings(add, add))))
""",
        aliases=("commutation propagation", "find_embeddings"),
    ),
    Term(
        "boundary state",
        "β = ⟨llm q, E, K⟩ with q an evaluated string;  p(β) = q",
        "A state of the CEK evaluator that is about to call the model: its control is "
        "(llm q). These are the states of the SPE agentic machine; between two boundaries "
        "the evaluator runs deterministically.",
        """\
from agentic_machines.cek import first_boundary
beta = first_boundary('(string-append "Dear " (llm "name?"))')
print(beta.prompt)
""",
        aliases=("boundary", "β"),
    ),
    Term(
        "seed state",
        "x* = first boundary of (let ((y (llm q))) (eval y))",
        "The initial state of the SPE machine: the model's completion is evaluated as a fresh "
        "program in tail position, so a completion can load any boundary state. x* is an SPE "
        "state (the central theorem).",
        """\
from agentic_machines.cek import AgenticEvaluator, first_boundary, loader, seed_state
beta = first_boundary('(if (llm "ok?") 1 2)')
print(AgenticEvaluator().harness(seed_state(), loader(beta)) == beta)
""",
        aliases=("seed", "x*"),
    ),
    Term(
        "CEK machine",
        "⟨C, E, K⟩ → ⟨C', E', K'⟩   (control, environment, continuation)",
        "The small-step evaluator of the project's Lisp: the control is the expression or "
        "value in hand, the environment binds variables, the continuation says what to do "
        "with the value. Written without Python recursion; llm calls are its boundaries.",
        """\
from agentic_machines.cek import evaluate, run_program
print(evaluate("(let ((x 20)) (+ x 22))"))
print(run_program('(string-append (llm "a?") "!")', ["hi"]).value)
""",
        aliases=("cek", "cek evaluator", "agentic evaluator"),
    ),
    Term(
        "HarnessMachine",
        "S = C*,  p(s) = prompt yielded after s,  h(s, c) = s·c | 1 | ↑",
        "Turns a generator function that yields prompts and receives completions into an "
        "agentic machine. Its states are trace states; HALT when the generator returns, "
        "DIVERGE when one step runs past its line budget.",
        """\
from agentic_machines import HarnessMachine
def echo():
    c = yield "say something"
    yield f"you said {c}"
m = HarnessMachine(echo)
print(m.prompt(m.harness(m.initial, "hi")))
""",
        aliases=("harness machine",),
        see=("trace state",),
    ),
    Term(
        "trace state",
        "s = (c_1, ..., c_n) ∈ C*",
        "A state of a HarnessMachine: the completions fed so far. Because the harness is "
        "deterministic, this tuple determines the prompt, the environment and everything else.",
        """\
from agentic_machines import TraceState
s = TraceState().then("a").then("b")
print(s.completions, s == TraceState(("a", "b")))
""",
        aliases=("TraceState", "trace"),
    ),
)


def _key(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch not in " -_")


_INDEX: dict[str, Term] = {}
for _term in TERMS:
    for _name in (_term.name, *_term.aliases):
        _INDEX.setdefault(_key(_name), _term)


def term_names() -> list[str]:
    """The names of all terms, in glossary order.

    >>> term_names()[:3]
    ['agentic machine', 'prompt function', 'harness']
    """
    return [t.name for t in TERMS]


def suggest(text: str, n: int = 3) -> list[str]:
    """Names of the terms closest to ``text`` (difflib), best first.

    >>> suggest("embeding", n=1)
    ['embedding']
    """
    keys = difflib.get_close_matches(_key(text), list(_INDEX), n=n * 2, cutoff=0.6)
    out: list[str] = []
    for k in keys:
        name = _INDEX[k].name
        if name not in out:
            out.append(name)
    return out[:n]


def lookup(text: str) -> Term:
    """The term named ``text`` (or one of its aliases); ``InvalidArgument`` with suggestions.

    >>> lookup("completion generates").name
    'completion-generation'
    """
    term = _INDEX.get(_key(text))
    if term is not None:
        return term
    close = suggest(text)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    raise InvalidArgument(
        f"unknown term {text!r}{hint}; run 'agentic-machines explain' to list all terms: "
        + ", ".join(term_names())
    )


def render(term: Term, width: int = 88) -> str:
    """The text ``explain`` prints: name, symbols, words, example.

    >>> print(render(lookup("HALT")).splitlines()[0])
    HALT
    """
    words = textwrap.fill(term.words, width=width, initial_indent="  ", subsequent_indent="  ")
    parts = [
        term.name,
        "=" * len(term.name),
        "",
        "In symbols:",
        f"  {term.symbols}",
        "",
        "In words:",
        words,
        "",
        "Example (Python):",
        textwrap.indent(term.example.rstrip(), "  "),
    ]
    if term.see:
        parts += ["", "See also: " + ", ".join(term.see)]
    return "\n".join(parts)
