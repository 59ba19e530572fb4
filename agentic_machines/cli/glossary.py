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
    """One glossary entry: ``symbols`` (formal), ``words`` (plain), a runnable ``example``
    and ``result``, exactly what the example prints.

    >>> lookup("F5").symbols
    "(X, x) ⊢ X'  ⇒  |S'| ≤ |succ(x) ∩ S|"
    """

    name: str
    symbols: str
    words: str
    example: str
    result: str = ""
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
        result="yes or no? -> ask / 1\n",
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
        result="['⋆', '⋆']\n",
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
        result="{(0, '0'): 0, (0, '1'): 0, (1, '0'): 0, (1, '1'): 1}\n",
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
        result="True True 1\n",
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
        result="True ↑\n",
        aliases=("↑", "divergence"),
    ),
    Term(
        "prompt space",
        "P = C = str   (prompt space P, completion space C)",
        "What the model can be shown (P) and what it can write (C). Here both are Python "
        "strings; a finite machine may list its alphabet of completions, and then "
        "exhaustive checks range over it.",
        """\
from agentic_machines.fixtures import fixture
m = fixture("f2-mul")
print(m.completions, m.prompt(0))
""",
        result="('0', '1') ⋆\n",
        aliases=("completion space", "P", "C", "alphabet"),
    ),
    Term(
        "model",
        "M: P → Δ(C)",
        "The language model as a map from a prompt to a distribution over completions: all "
        "the randomness of a run lives here. In code, any object with complete(prompt) -> "
        "str; ScriptedModel replays a list of completions, so every run in the docs is "
        "reproducible.",
        """\
from agentic_machines.models import ScriptedModel
model = ScriptedModel(["yes", "no"])
print(model.complete("continue?"), model.complete("continue?"))
""",
        result="yes no\n",
        aliases=("M", "ScriptedModel", "language model", "LLM"),
        see=("transition kernel", "run"),
    ),
    Term(
        "run",
        "s_0, c_0 = M(p(s_0)), s_1 = h(s_0, c_0), ...  until 1 or ↑",
        "Driving a machine with a model: ask the model the prompt of the current state, feed "
        "its completion to the harness, repeat until HALT, DIVERGE or a step limit. The "
        "result is a trace of (state, prompt, completion, outcome) steps.",
        """\
from agentic_machines.fixtures import fixture
from agentic_machines.models import ScriptedModel
from agentic_machines.runtime.run import run
trace = run(fixture("f2-mul"), ScriptedModel(["1", "0"]), 1, max_steps=2)
print([(step.state, step.completion, step.outcome) for step in trace], trace.end)
""",
        result="[(1, '1', 1), (1, '0', 0)] max_steps\n",
        aliases=("run()", "Trace"),
        see=("model", "trace state"),
    ),
    Term(
        "line budget",
        "one harness step (or one block of model code) may execute at most n lines; more is ↑",
        "A deterministic limit that makes divergence decidable in practice: a harness step "
        "that runs past its budget is DIVERGE, the same on every machine and every run, "
        "unlike a wall-clock timeout.",
        """\
from agentic_machines.execution.budget import LineBudget
with LineBudget(1000) as budget:
    total = sum(range(10))
print(total, budget.exhausted)
""",
        result="45 False\n",
        aliases=("LineBudget", "budget"),
        see=("DIVERGE", "HarnessMachine"),
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
        result="{0: Fraction(1, 2), 1: Fraction(1, 2)}\n",
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
        result=("True\ninjectivity\n"),
        aliases=("e", "check_embedding"),
    ),
    Term(
        "kernel form",
        "T_M^X ∘ e = e_* ∘ T_M^{X'}   for every model M",
        "An embedded copy behaves like the original in distribution, step for step: asking "
        "the model in e(s') and then applying nothing equals asking it in s' and mapping the "
        "outcome through e. It follows from the embedding conditions; check_kernel_form "
        "checks it for one model.",
        """\
from fractions import Fraction
from agentic_machines import Embedding
from agentic_machines.kernel import check_kernel_form
from agentic_machines.fixtures import fixture
add = fixture("f2-add")
model = lambda prompt: {"0": Fraction(1, 3), "1": Fraction(2, 3)}
print(check_kernel_form(Embedding(add, add, {0: 1, 1: 0}), model).holds)
""",
        result="True\n",
        aliases=("check_kernel_form", "kernel-form"),
        see=("embedding", "transition kernel"),
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
        result="{'0': 0, '1': 1}\n",
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
        result="False fact:F2\n",
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
        result="{0: '0', 1: '1'}\n",
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
        result="[1] False\n",
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
        result="True True\n",
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
        result="False prompt\n",
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
        result="False\n",
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
        result="True\n",
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
        result="False\n",
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
        result="2\n",
        aliases=("commutation propagation", "find_embeddings"),
    ),
    Term(
        "boundary state",
        "β = ⟨(llm q), ρ, κ⟩ with q an evaluated string;  p(β) = q",
        "A state of the CEK evaluator that is about to call the model: its control is "
        "(llm q). These are the states of the SPE agentic machine; between two boundaries "
        "the evaluator runs deterministically.",
        """\
from agentic_machines.cek import first_boundary
beta = first_boundary('(string-append "Dear " (llm "name?"))')
print(beta.prompt)
""",
        result="name?\n",
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
        result="True\n",
        aliases=("seed", "x*"),
    ),
    Term(
        "CEK machine",
        "(e, ρ, κ) → (e', ρ', κ')   (control e, environment ρ, continuation κ)",
        "The small-step evaluator of the project's Lisp: the control is the expression or "
        "value in hand, the environment binds variables, the continuation says what to do "
        "with the value. Written without Python recursion; llm calls are its boundaries.",
        """\
from agentic_machines.cek import evaluate, run_program
print(evaluate("(let ((x 20)) (+ x 22))"))
print(run_program('(string-append (llm "a?") "!")', ["hi"]).value)
""",
        result=("42\nhi!\n"),
        aliases=("cek", "cek evaluator", "agentic evaluator"),
    ),
    Term(
        "continuation",
        "κ ::= [] | F :: κ   (a frame F waits for a value; [] ends the run)",
        "What the CEK machine will do with the value in hand: a stack of frames, shown as the "
        "rest of the program with a hole [] where the value goes. (+ 1 []) is 'add one to "
        "it'; the empty continuation [] halts with the value. A boundary state's continuation "
        "is where the model's completion goes.",
        """\
from agentic_machines.cek import first_boundary
from agentic_machines.cek.stepper import kont_text
print(kont_text(first_boundary('(+ 1 (string-length (llm "word?")))').kont))
""",
        result="(+ 1 (string-length []))\n",
        aliases=("κ", "kappa", "kont"),
        see=("CEK machine", "environment"),
    ),
    Term(
        "environment",
        "ρ: Var → Value   (written {x ↦ v, ...})",
        "The variables the expression in hand may use and their values. A closure keeps the "
        "environment it was made in; eval --step and play's :state show ρ with only the "
        "variables the code still uses.",
        """\
from agentic_machines.cek import first_boundary
from agentic_machines.cek.stepper import show_boundary
print(show_boundary(first_boundary('(let ((n 2)) (+ n (llm "q") n))')))
""",
        result='⟨(llm "q"), {n ↦ 2}, (+ 2 [] n)⟩\n',
        aliases=("ρ", "rho", "env"),
        see=("CEK machine", "continuation"),
    ),
    Term(
        "define",
        "⟨(define (f x) b) ... body, ρ, κ⟩ → ⟨body, ρ|body + closures, κ⟩;  (define x e) body as ((lambda (x) body) e)",
        "A definition at the start of a body (a program, a lambda, let, let*, letrec, cond clause, when, unless): a run of procedure definitions binds them all at once (so they may call each other), as letrec does, and a value definition evaluates e first and binds x, as let does; each has the define rule of its own in the CEK machine, which eval --step names.",
        """\
from agentic_machines.cek import evaluate
print(evaluate("(define (fact n) (if (< n 2) 1 (* n (fact (- n 1))))) (fact 20)"))
""",
        result="2432902008176640000\n",
        aliases=(),
        see=("CEK machine",),
    ),
    Term(
        "body",
        "⟨(begin e1 e ...), ρ, κ⟩ → ⟨e1, ρ|e1, begin(e ..., ρ) :: κ⟩;  ⟨v, begin(e ...) :: κ⟩ → ⟨e, ρ, ...⟩",
        "A body of several forms (of a program, a lambda, let, let*, letrec, a cond clause, when, unless) is a begin: its forms are evaluated in order, definitions first, and its value is the last form's, evaluated in tail position.",
        """\
from agentic_machines.cek import evaluate
print(evaluate("(define (f x) (define y (* x 2)) (+ y 1)) (f 20)"))
""",
        result="41\n",
        aliases=("begin", "bodies"),
        see=("define", "CEK machine"),
    ),
    Term(
        "list primitives",
        "⟨(p v ...), κ⟩ → ⟨p(v ...), κ⟩ for p in length, append, list?, <=, >=, >, ...",
        "Primitives are applied in one step, like any procedure: length counts a list, append joins lists, list? asks whether a value is a proper list, and <=, >=, > compare integers; a wrong type or arity is a run-time error, which halts the run with its message.",
        """\
from agentic_machines.cek import evaluate, unparse
print(unparse(evaluate("(list (length '(1 2 3)) (append '(1) '(2 3)) (list? '(1)) (<= 1 2) (>= 1 2))")))
""",
        result="(3 (1 2 3) #t #t #f)\n",
        aliases=("length", "append", "list?", "<=", ">=", "primitive"),
        see=("CEK machine",),
    ),
    Term(
        "cond",
        "⟨(cond (t e) c ...), ρ, κ⟩ → ⟨t, ρ|t, cond(e c ..., ρ) :: κ⟩",
        "Clauses tried in order: the first test that is not #f gives its body's value (a clause (t) gives t's value), else the else clause; with no clause left the value is nil. when and unless are one-clause conds.",
        """\
from agentic_machines.cek import evaluate, unparse
print(unparse(evaluate("(cond ((> 1 2) 'a) (else 'b))")))
""",
        result="b\n",
        aliases=("when", "unless"),
        see=("CEK machine",),
    ),
    Term(
        "and",
        "⟨(and e1 e ...), ρ, κ⟩ → ⟨e1, ρ|e1, and(e ..., ρ) :: κ⟩;  ⟨#f, and(...) :: κ⟩ → ⟨#f, κ⟩",
        "Evaluates its parts left to right and stops at the first #f; otherwise its value is the last part's, evaluated in tail position. (and) is #t.",
        """\
from agentic_machines.cek import evaluate
print(evaluate("(and 1 2 3)"), evaluate("(and 1 #f (car nil))"))
""",
        result="3 #f\n",
        aliases=(),
        see=("CEK machine",),
    ),
    Term(
        "or",
        "⟨(or e1 e ...), ρ, κ⟩ → ⟨e1, ρ|e1, or(e ..., ρ) :: κ⟩;  ⟨v, or(...) :: κ⟩ → ⟨v, κ⟩ for v ≠ #f",
        "Evaluates its parts left to right and stops at the first value that is not #f, which is its value; otherwise the last part's value, in tail position. (or) is #f.",
        """\
from agentic_machines.cek import evaluate
print(evaluate("(or #f 2 (car nil))"))
""",
        result="2\n",
        aliases=(),
        see=("CEK machine",),
    ),
    Term(
        "let*",
        "⟨(let* ((x e) b ...) body), ρ, κ⟩ → ⟨e, ρ|e, let*(x (let* (b ...) body), ρ) :: κ⟩;  ⟨v, let*(x r, ρ) :: κ⟩ → ⟨r, {x ↦ v} + ρ, κ⟩",
        "Bindings made one after another, so a later one sees the earlier ones (and a name bound again shadows the earlier binding): let* has a rule of its own in the CEK machine, which evaluates one binding's expression (an atom's value at once), binds it, and goes on with the next; the body is in tail position, and (let* () body) is its body.",
        """\
from agentic_machines.cek import evaluate, unparse
print(evaluate("(let* ((a 1) (b (+ a 1))) (* a b 10))"), unparse(evaluate("(let* ((x 1) (x (+ x 1))) (list x))")))
""",
        result="20 (2)\n",
        aliases=("let star",),
        see=("CEK machine",),
    ),
    Term(
        "variadic lambda",
        "apply closure of (a . rest) to v1 v2 ...  →  ⟨body, {a ↦ v1, rest ↦ (v2 ...)} + ρ, κ⟩",
        "A lambda whose parameter list ends with . rest, or is a single name, takes any number of further arguments: the last parameter is bound to the list of them. The reader accepts a dotted list only there.",
        """\
from agentic_machines.cek import evaluate, unparse
print(unparse(evaluate("((lambda (a . rest) rest) 1 2 3)")), evaluate("((lambda args args))"))
""",
        result="(2 3) nil\n",
        aliases=("rest parameter", "dotted parameter list"),
        see=("CEK machine",),
    ),
    Term(
        "witness",
        "(e, c_·) with e: X' ↪ X an embedding and h(x, c_{s'}) = e(s') for every s'",
        "What a 'holds' verdict of completion-generation carries: the embedding and, for each "
        "state of X', the completion that loads its image from x. Anyone can re-check it "
        "without repeating the search.",
        """\
from agentic_machines import is_spe_state
from agentic_machines.fixtures import fixture
w = is_spe_state(fixture("f2-add"), 0).witness
print(w.embedding.mapping, w.load(1))
""",
        result="{0: 0, 1: 1} 1\n",
        aliases=("Witness", "certificate"),
        see=("loader", "verdict"),
    ),
    Term(
        "obstruction",
        "a state s with the broken condition named: successor (F1), prompt (F2), "
        "cardinality (F5), injectivity or commutation",
        "What a 'refuted' verdict carries: one concrete state where the relation fails, and "
        "which condition it breaks, in words you can check by hand.",
        """\
from agentic_machines import is_spe_state
from agentic_machines.fixtures import fixture
o = is_spe_state(fixture("f2-mul"), 0).obstruction
print(o.kind, o.state)
""",
        result="successor 1\n",
        aliases=("Obstruction", "counterexample"),
        see=("verdict", "F2", "F5"),
    ),
    Term(
        "verdict",
        "holds | refuted | undecided,  with method ∈ {exhaustive, fact:F…, sampled, key}",
        "The answer of every check, with how it knows: exhaustive (every state and "
        "completion), by a named fact whose premise was checked, sampled N times (never "
        "called a proof), or by a never_diverges key's claim (a loop that came back to the "
        "same keys without an exact repeat, on a graph not searched whole). A holding verdict carries a witness, a refuted one an obstruction; "
        "undecided says what is missing.",
        """\
from agentic_machines import is_spe_state
from agentic_machines.fixtures import fixture
for s in (0, 1):
    v = is_spe_state(fixture("f2-mul"), s)
    print(s, v.status, v.method)
""",
        result=("0 refuted fact:F1\n1 holds fact:F1\n"),
        aliases=("Verdict", "holds", "refuted", "undecided"),
        see=("witness", "obstruction"),
    ),
    Term(
        "invariant",
        "I(p(s), p(y)) for every successor y = h(s, c)   ⇒   p(s) ∉ p(succ(s))",
        "A property every step of an architecture keeps, checked on prompts: ReAct's next "
        "prompt strictly extends the current one. If no successor can have the current "
        "prompt, F2 refutes SPE for the initial state: that is how the architectures' "
        "verdicts are proved.",
        """\
from agentic_machines.architectures import react
m = react.machine()
y = m.harness(react.initial, react.valid_completions()[0])
print(react.successor_invariant(m.prompt(react.initial), m.prompt(y)), react.step_label(m.prompt(y)))
""",
        result="True 2\n",
        aliases=("successor invariant", "successor_invariant"),
        see=("F2", "F3", "ReAct"),
    ),
    Term(
        "realizable machine",
        "X realizable: S ↪ Lisp values injectively, p and h given by pure Prompt/Step programs",
        "A machine the CEK evaluator can simulate: its states encode injectively as values "
        "and its prompt and step functions are programs of the evaluator's language. The "
        "seed x* completion-generates every realizable machine (universality): the loader of "
        "a state is the text of a program that resumes the machine there.",
        """\
from agentic_machines.cek.realize import realize_react_toy
r = realize_react_toy()
toy = r.machine
y = toy.harness(toy.initial, toy.completions[0])
print(r.evaluator.harness(r.seed, r.loader(y)) == r.embedding(y))
""",
        result="True\n",
        aliases=("realizable", "universality", "realize"),
        see=("seed state", "loader"),
    ),
    Term(
        "F2 fixtures",
        "S = C = {0, 1},  p ≡ ⋆,  h(a, b) = a + b (mod 2),  a·b  or  a",
        "The smallest examples over the field F2: with addition every state is SPE, with "
        "multiplication only 1, with the constant harness none. Named f2-add, f2-mul and "
        "f2-const.",
        """\
from agentic_machines import spe_states
from agentic_machines.fixtures import fixture
print({name: sorted(spe_states(fixture(name))) for name in ("f2-add", "f2-mul", "f2-const")})
""",
        result="{'f2-add': [0, 1], 'f2-mul': [1], 'f2-const': []}\n",
        aliases=("fixtures", "f2-add", "f2-mul", "f2-const"),
        see=("SPE state", "F1"),
    ),
    Term(
        "ReAct",
        "S = trace states,  p(s) = the transcript (Thought k / Action k / Observation k)",
        "An agent loop that interleaves the model's thoughts and tool actions with the "
        "observations the tools return, all in one growing transcript. Every step extends "
        "the prompt, so its initial state is not SPE (F2 with that invariant).",
        """\
from agentic_machines.architectures import react
print(react.analysis().status, react.machine().prompt(react.initial).splitlines()[-1])
""",
        result="refuted Thought 1:\n",
        aliases=("react",),
        see=("invariant", "F3"),
    ),
    Term(
        "RLM",
        "root turns with a REPL holding the context;  llm_query(...) = a sub-call",
        "Recursive language model: a root model writes code for a REPL that holds the long "
        "context, and may call llm_query for sub-calls on pieces of it; FINAL(answer) ends. "
        "Its initial state is not SPE: no successor shows the first turn's prompt again.",
        """\
from agentic_machines.architectures import rlm
m = rlm.machine()
y = m.harness(rlm.initial, rlm.valid_completions()[0])
print(m.prompt(rlm.initial).splitlines()[-1], "->", m.prompt(y).splitlines()[-1])
""",
        result="Turn 1/8. -> Turn 2/8.\n",
        aliases=("rlm", "recursive language model"),
        see=("invariant",),
    ),
    Term(
        "THREAD",
        "a thread's prompt = task + its response so far;  a spawned child starts afresh",
        "Threads that write their response and spawn child threads for subtasks; a child's "
        "result is spliced back into the parent's response. Its initial state is not SPE.",
        """\
from agentic_machines.architectures import thread
print(thread.analysis().status, thread.machine().prompt(thread.initial).splitlines()[-1])
""",
        result="refuted #START#\n",
        aliases=("thread",),
        see=("invariant",),
    ),
    Term(
        "REPL-Plan",
        "a tree of LLM-REPLs;  an undefined name spawns a child REPL;  reruns reuse cached calls",
        "The model writes code in REPLs; calling a name that is not defined spawns a child "
        "REPL (the model describes it) that answers the call, and a REPL reruns from the top "
        "with its earlier model calls cached. Its initial state is not SPE.",
        """\
from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures.environments import CountEnv
r = rp.solve(rp.TASK, rp.scripted_model(), CountEnv(4))
print(r.actions, list(r.repls), r.model_calls)
""",
        result="('1', '2', '3', '4') ['main', 'count_even'] 4\n",
        aliases=("repl_plan", "repl plan", "replplan"),
        see=("invariant",),
    ),
    Term(
        "SPE architecture",
        "X = the CEK agentic evaluator, x0 = x*  (the model's completion is evaluated)",
        "The agent whose completions are programs: the seed state evaluates what the model "
        "writes, so one completion can load any boundary state. Its initial state is SPE: "
        "the one architecture here whose verdict holds.",
        """\
from agentic_machines.architectures import spe
print(spe.analysis().status, spe.machine().prompt(spe.initial))
""",
        result="holds Write a program.\n",
        aliases=("spe machine", "spe (architecture)"),
        see=("seed state", "Spell"),
    ),
    Term(
        "Spell",
        "Spell = the programming language of the SPE paper",
        "Spell is the SPE paper's language: programs whose llm calls are the model's turns. "
        "Here it is a dialect of the CEK evaluator's small Lisp (agentic_machines.spell; "
        "explain quine, trailing expression, effect boundary, !call-now, recovery form), "
        "and the spell architecture runs it as an agentic machine.",
        """\
from agentic_machines.cek import run_program
print(run_program('(string-append "Hello, " (llm "name?"))', ["Ada"]).value)
""",
        result="Hello, Ada\n",
        aliases=("spell language",),
        see=("SPE architecture", "CEK machine"),
    ),
    Term(
        "quine",
        "(quine q e ...)  evaluates e ... with q bound to the whole (quine q e ...) form, as data",
        "The form every Spell program is: the program can read its own text through q. A "
        "model's turn appends to that text, so the program the model sees and extends is "
        "the program that runs (agentic_machines.spell).",
        """\
from agentic_machines.spell import pr_str, run_text
print(pr_str(run_text("(quine q (car (cdr q)))")))
""",
        result="q\n",
        aliases=("quine form",),
        see=("Spell", "trailing expression"),
    ),
    Term(
        "trailing expression",
        "turn_kind(program) ∈ {halt, turn, fork}, read from the program's last form",
        "What a Spell program ends with decides what happens next: a plain value halts the "
        "session with it; a quoted (!llm-self ...) form asks the model for another turn "
        "(its text is the next prompt); several such forms fork.",
        """\
from agentic_machines.spell import turn_kind
print(turn_kind("(quine c (eval (do 'x)) 42)"), turn_kind("(quine c (eval (do '(!llm-self \\"go\\"))))"))
""",
        result="halt turn\n",
        aliases=("trailing form", "turn kind"),
        see=("quine", "effect boundary"),
    ),
    Term(
        "effect boundary",
        "(quine completion (eval (do ... 'T)))  tools are bound only inside the outer eval",
        "In Spell the outer eval of the wrapper quine is the only place where tools (effects) "
        "run; what is quoted is inert data. So re-reading or re-running the program text "
        "never repeats an effect, which is what makes the runtime's states loadable.",
        """\
from agentic_machines.spell import run_spell
r = run_spell("(quine completion (eval (do '(!llm-self \\"Pick a number.\\"))))", ["7"])
print(r.value, len(r.states))
""",
        result="7 1\n",
        aliases=("effect boundaries", "outer eval"),
        see=("!call-now", "quine"),
    ),
    Term(
        "!call-now",
        "'(!call-now name (tool ...))  runs the tool once, now, and splices (def name value) into the text",
        "A Spell turn that calls a tool at once and records its result in the program as a "
        "definition: the next prompt shows the value, and later turns read it without "
        "calling the tool again.",
        """\
from agentic_machines.architectures import spell
m = spell.machine()
s = m.harness(m.initial, " '(!call-now todo (read-file \\"todo.txt\\"))")
print(m.prompt(s)[-32:])
""",
        result='(def todo "buy milk\\ncall Bob") \n',
        aliases=("call-now", "!call now"),
        see=("effect boundary",),
    ),
    Term(
        "recovery form",
        'failed program P  ↦  P + (do "spell-recovery" k error ...) (prune 2) (eval (do \'(!llm-self ...)))',
        "When a Spell turn fails (a run-time or parse error), the runtime does not crash the "
        "session: it appends a recovery form that records the error as inert data, prunes the "
        "failed form and asks the model again, at most RETRY_BUDGET times.",
        """\
from agentic_machines.cek import parse, unparse
from agentic_machines.errors import EvaluationError
from agentic_machines.spell import recovery_for_error
p = parse("(quine completion (eval (do '(car nil))))")
print(unparse(recovery_for_error(p, EvaluationError("car: bad")))[41:74])
""",
        result='(do "spell-recovery" 1 "evaluatio\n',
        aliases=("recovery", "error recovery"),
        see=("trailing expression",),
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
        result="you said hi\n",
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
        result="('a', 'b') True\n",
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
    """The text ``explain`` prints: name, symbols, words, the example and what it prints.

    The printed result is stored with the term (the test suite runs every example and
    checks it prints exactly that), so ``explain`` answers at once.

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
        "",
        "It prints:",
        textwrap.indent(term.result.rstrip(), "  "),
    ]
    if term.see:
        parts += ["", "See also: " + ", ".join(term.see)]
    return "\n".join(parts)
