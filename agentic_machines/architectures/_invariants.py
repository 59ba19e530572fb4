"""What the architectures share: one ``analysis()`` (the F2 refutation), one body of
``machine()`` and of ``embeds_react()``, and the small prompt predicates.

Each architecture with an invariant proves a successor-prompt invariant in ``proofs/`` and
refutes "the initial state is an SPE state" with
:func:`agentic_machines.generation.prompt_obstruction` at a concrete state reached by
a short script. This module holds what they share:

- :class:`InvariantAnalysis`, an architecture's description of its proof (the harness
  program, the options the proof covers, the invariant, the script to the obstruction
  state, the completion sample), and :meth:`InvariantAnalysis.analysis`, the one body
  of every ``analysis()``; :meth:`InvariantAnalysis.refute_embedding`, the body of every
  ``embeds_react()`` that refutes by prompts;
- :func:`recorded_machine` (every ``machine()``'s body: build the HarnessMachine and
  :func:`record` the options it was built with) and :func:`completion_sampler` (the
  ``sample`` of an analysis), and
  :func:`code_fingerprint`, which identifies the harness code: a refutation is given only
  for a machine whose harness *is* the stock one (same code, same helpers, same
  options), checked against the machine itself, never its name;
- :func:`refute_by_invariant` and :func:`reach`: the check at the deep state and at the
  initial state itself; :func:`states_within`, the states a few completions reach (the
  sample the SPE and Spell analyses check);
- :func:`header_kind` (a ``prompt_kind`` read off fixed headers) and
  :func:`strictly_extends` (the prompt growth the invariants allow).
"""

from __future__ import annotations

import dataclasses
import hashlib
import types
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ..errors import AgenticMachinesError, InvalidArgument
from ..generation import prompt_obstruction
from ..machine import AgenticMachine, is_sentinel
from ..obstruction import premise_verdict
from ..runtime.harness import HarnessMachine
from ..runtime.local_models import ScriptedModel
from ..runtime.search import Completions, Found, Reporter, Walk, plan, walk
from ..verdict import Obstruction, Verdict

__all__ = [
    "refute_by_invariant",
    "reach",
    "states_within",
    "InvariantAnalysis",
    "record",
    "recorded_machine",
    "scripted",
    "completion_sampler",
    "header_kind",
    "strictly_extends",
    "code_fingerprint",
    "refute_embedding_by_prompts",
]

_PACKAGE = __name__.split(".")[0]
_State = TypeVar("_State", bound=Hashable)


def code_fingerprint(function: Callable[..., Any]) -> str:
    """A hash of ``function``'s code and of everything of this package it reaches.

    Walks the code object (nested code included), the package functions and classes it
    names through its globals (and their methods, transitively), its closure cells, its
    defaults, and the simple constants (strings, numbers, tuples) it reads from its
    module (UPPER_CASE names). Replacing the function, a helper it calls, a method of a class it uses, or a
    constant it reads changes the fingerprint. Computed without recursion.

    >>> def f(x):
    ...     return x + 1
    >>> def g(x):
    ...     return x + 2
    >>> code_fingerprint(f) == code_fingerprint(f), code_fingerprint(f) == code_fingerprint(g)
    (True, False)
    """
    digest = hashlib.sha256()
    seen: set[int] = set()
    todo: list[Any] = [function]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, type):
            digest.update(f"class {obj.__module__}.{obj.__qualname__}".encode())
            for name, member in sorted(vars(obj).items()):
                member = getattr(member, "__func__", member)  # static and class methods
                if isinstance(member, (types.FunctionType, property)):
                    digest.update(name.encode())
                    todo.extend(
                        [member]
                        if isinstance(member, types.FunctionType)
                        else [f for f in (member.fget, member.fset) if f is not None]
                    )
            continue
        code = getattr(obj, "__code__", None)
        if not isinstance(code, types.CodeType):
            digest.update(repr(obj).encode())
            continue
        digest.update(f"def {obj.__module__}.{obj.__qualname__}".encode())
        names: list[str] = []
        codes = [code]
        while codes:
            c = codes.pop()
            digest.update(c.co_code)
            digest.update(repr(c.co_names).encode())
            names.extend(c.co_names)
            for const in c.co_consts:
                if isinstance(const, types.CodeType):
                    codes.append(const)
                else:
                    digest.update(repr(const).encode())
        digest.update(repr((obj.__defaults__, obj.__kwdefaults__)).encode())
        for cell in obj.__closure__ or ():
            try:
                todo.append(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
        scope = obj.__globals__
        for name in names:
            value = scope.get(name)
            if isinstance(value, types.ModuleType):
                if value.__name__.split(".")[0] == _PACKAGE:  # attributes read off our modules
                    todo.extend(getattr(value, attr) for attr in names if hasattr(value, attr))
            elif isinstance(value, (types.FunctionType, type)):
                if getattr(value, "__module__", "").split(".")[0] == _PACKAGE:
                    digest.update(name.encode())
                    todo.append(value)
            elif name.isupper() and isinstance(value, (str, bytes, int, float, tuple, frozenset)):
                # constants by convention (UPPER_CASE); lower-case globals are counters
                digest.update(f"{name}={value!r}".encode())
    return digest.hexdigest()


def record(machine: Any, builder: str, options: Mapping[str, Any]) -> Any:
    """Note on ``machine`` that ``builder`` (e.g. ``"react.machine"``) built it with ``options``.

    The note is only a claim: :meth:`InvariantAnalysis.analysis` rebuilds the machine from
    these options and compares the rebuilt harness with the machine's own before it
    trusts it. Returns ``machine``.

    >>> class Box: pass
    >>> record(Box(), "demo.machine", {"n": 1}).built_by
    ('demo.machine', {'n': 1})
    """
    machine.built_by = (builder, dict(options))
    return machine


def recorded_machine(
    builder: str,
    program: Callable[..., Any],
    name: str,
    positional: Sequence[str],
    options: Mapping[str, Any],
) -> Any:
    """``HarnessMachine(program, *positional options, name=name, **the other options)``,
    with the options :func:`record`-ed under ``builder``: the one body of every ``machine()``.

    A machine that runs model-written code records its
    :class:`~agentic_machines.architectures.options.ExecOptions` with the level resolved,
    so the machine rebuilt from them runs its blocks alike.

    >>> def echo(word, *, times):
    ...     yield word * times
    >>> m = recorded_machine("demo.machine", echo, "demo", ["word"], {"word": "a", "times": 2})
    >>> m.args, m.kwargs, m.built_by
    (('a',), {'times': 2}, ('demo.machine', {'word': 'a', 'times': 2}))
    """
    opts = dict(options)
    args = [opts[key] for key in positional]
    kwargs = {key: value for key, value in opts.items() if key not in positional}
    return record(HarnessMachine(program, *args, name=name, **kwargs), builder, opts)


def scripted(script: Sequence[str]) -> Any:
    """A :class:`~agentic_machines.runtime.local_models.ScriptedModel` answering ``script`` in
    order: the body of every architecture's ``scripted_model()`` (the models module is
    imported on first use, so importing an architecture does not load the HTTP client).

    >>> scripted(["a", "b"]).complete("anything")
    'a'
    """
    return ScriptedModel(script)


def strictly_extends(prompt: str, successor_prompt: str) -> bool:
    """True when ``successor_prompt`` is ``prompt`` followed by more text: the growth that
    the successor-prompt invariants of the architectures allow.

    >>> strictly_extends("ab", "abc"), strictly_extends("ab", "ab"), strictly_extends("ab", "xabc")
    (True, False, False)
    """
    return len(successor_prompt) > len(prompt) and successor_prompt.startswith(prompt)


def header_kind(prompt: str, kinds: Sequence[tuple[str, str]]) -> str:
    """The kind of the first ``(kind, header)`` pair whose header ``prompt`` starts with,
    ``"other"`` when none: an architecture's ``prompt_kind`` (its prompts start with fixed
    text, and model text only ever comes after it).

    >>> header_kind("Plan: x", [("ask", "Ask: "), ("plan", "Plan: ")]), header_kind("x", [])
    ('plan', 'other')
    """
    return next((kind for kind, header in kinds if prompt.startswith(header)), "other")


def completion_sampler(
    valid: Callable[[], Iterable[str]],
    script: Sequence[str] = (),
    *,
    harness: bool = True,
    **sizes: int,
) -> Callable[[Any, int, int], list[str]]:
    """The ``sample(machine, seed, n)`` of an :class:`InvariantAnalysis`: ``n`` seeded
    completions drawn from ``valid()``, the ``script`` and (when ``harness``) the strings
    the machine's harness code contains; ``sizes`` (``huge``, ``huge_size``) as for
    :func:`~agentic_machines.checking.sampling.completion_sample`.

    >>> sample = completion_sampler(lambda: ["ok"], harness=False, huge=0)
    >>> sample(None, 0, 3)[0]
    'ok'
    """

    def sample(machine: Any, seed: int, n: int) -> list[str]:
        from ..checking.sampling import (  # hypothesis: on first use
            completion_sample,
            harness_strings,
        )

        pool = [*valid(), *script, *(harness_strings(machine) if harness else [])]
        return completion_sample(pool, seed=seed, n=n, **sizes)

    return sample


def reach(machine: AgenticMachine, start: Hashable, script: Sequence[str]) -> Hashable:
    """The state reached from ``start`` by feeding ``script`` (each step must stay a state).

    >>> from agentic_machines.architectures import react
    >>> len(reach(react.machine(), react.initial, react.SCRIPT[:2]))
    2
    """
    state = start
    for i, c in enumerate(script):
        nxt = machine.harness(state, c)
        if is_sentinel(nxt):
            raise InvalidArgument(
                f"script step {i + 1} ({c!r}) ends the run with {nxt!r}; give a script that keeps "
                f"{machine.name!r} running to reach the obstruction state"
            )
        state = nxt
    return state


def states_within(
    machine: AgenticMachine,
    starts: Iterable[_State],
    completions: Completions,
    depth: int,
) -> list[_State]:
    """The distinct states reached from ``starts`` by up to ``depth`` of the
    ``completions``, breadth first, the starts first (HALT and DIVERGE are not states).

    It is the search kernel's walk (:func:`~agentic_machines.runtime.search.walk`) bounded
    at ``depth``, so it follows the kernel's rules: the alphabet is a list of strings (its
    duplicates dropped), a harness that returns ``None`` is refused, and a step the harness
    left undecided (or whose state's prompt the clock decided) reaches no state. No starts,
    no states.

    >>> from agentic_machines import FunctionMachine
    >>> m = FunctionMachine(lambda s: s, lambda s, c: (s + c)[-2:], initial="", name="m")
    >>> states_within(m, [""], ["a", "b"], 2)
    ['', 'a', 'b', 'aa', 'ab', 'ba', 'bb']
    >>> states_within(m, [""], "ab", 1)
    Traceback (most recent call last):
    ...
    agentic_machines.errors.InvalidArgument: completions must be a list of strings, not the single string 'ab'; wrap it: ['ab']
    """
    roots = list(starts)
    if not roots:
        return []
    task = plan(
        machine,
        None,
        completions,
        more=roots,
        max_depth=depth,
        what="states_within",
        every_state=False,
    )
    found = Found()
    walk(Walk(task, found), Reporter(False), 0.0)
    return list(found.prompts)  # the states in discovery order (sentinels are not in it)


# Attributes a HarnessMachine instance has of its own; anything else (a ``harness`` or
# ``prompt`` set on the instance, say) makes it a different machine.
_OWN_ATTRIBUTES = frozenset(
    {
        "program",
        "args",
        "kwargs",
        "line_budget",
        "on_error",
        "name",
        "initial",
        "_cache_size",
        "_live",
        "_prompts",
        "_results",
        "_clock",
        "divergent",
        "built_by",
    }
)


@dataclasses.dataclass(frozen=True)
class InvariantAnalysis:
    """What an architecture's proof in ``proofs/`` is about, and how ``analysis()`` uses it.

    ``name`` is the architecture (``"react"``); ``build`` its ``machine()``; ``program``
    the stock harness generator; ``proof`` the proof file; ``covers`` says in words which
    machines and options the proof covers, and ``uncovered(options)`` returns why given
    options are *not* covered (``None`` when they are). ``deep_script`` reaches the
    obstruction state; ``invariant``/``invariant_text`` are the proved invariant;
    ``sample(machine, seed, n)`` gives the completions it is property-tested on;
    ``default_options`` builds the machine analysed when none is given (``isolation:
    inline`` for the architectures that run code: the completions are the project's own
    fixed strings, trusted and scripted).
    """

    name: str
    build: Callable[..., Any]
    program: Callable[..., Any]
    proof: str
    covers: str
    uncovered: Callable[[Mapping[str, Any]], str | None]
    deep_script: Sequence[str]
    invariant: Callable[[str, str], bool]
    invariant_text: str
    sample: Callable[[Any, int, int], list[str]]
    default_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    stock: str = dataclasses.field(default="", compare=False)

    def __post_init__(self) -> None:
        # The stock fingerprint is taken when the architecture module is imported, so a
        # helper patched later no longer matches it.
        object.__setattr__(self, "stock", code_fingerprint(self.program))

    def subject(self, machine: Any = None) -> Any:
        """``machine``, or the one ``build(**default_options)`` makes when it is ``None``."""
        return self.build(**self.default_options) if machine is None else machine

    def not_covered(self, machine: Any) -> tuple[str | None, Any]:
        """Why the proof does not cover ``machine`` (``None`` if it does), and the machine
        rebuilt from its recorded options (the object the refutation is computed on)."""
        built = getattr(machine, "built_by", None)
        if type(machine) is not HarnessMachine:
            return (
                f"it is a {type(machine).__name__}, not a HarnessMachine built by {self.name}.machine()",
                None,
            )
        if not (
            isinstance(built, tuple) and len(built) == 2 and built[0] == f"{self.name}.machine"
        ):
            return f"it was not built by {self.name}.machine()", None
        extra = sorted(set(vars(machine)) - _OWN_ATTRIBUTES)
        if extra:
            return f"its instance overrides {', '.join(extra)}", None
        if machine.program is not self.program or code_fingerprint(machine.program) != self.stock:
            return (
                f"its harness program is not the stock {self.program.__name__} (the code fingerprint "
                "differs: the program, a helper it calls or a constant it reads was replaced)",
                None,
            )
        options = dict(built[1])
        try:
            fresh = self.build(**options)
        except Exception as exc:  # noqa: BLE001 - recorded options that do not rebuild
            return f"its recorded options do not rebuild it ({type(exc).__name__})", None
        same = (
            machine.args == fresh.args
            and machine.kwargs == fresh.kwargs
            and machine.line_budget == fresh.line_budget
            and machine.on_error == fresh.on_error
        )
        if not same:
            return "its harness arguments differ from the options recorded by machine()", None
        why = self.uncovered(options)
        return why, fresh

    def analysis(self, machine: Any = None, *, seed: int = 0, n: int = 200) -> Verdict:
        """The verdict of ``analysis()``: refuted (conditional on the invariant) for a
        machine the proof covers, otherwise undecided with a reason naming the proof and
        its scope (and a premise counterexample, when the sample finds one)."""
        machine = self.subject(machine)
        why, fresh = self.not_covered(machine)
        subject = fresh if why is None else machine
        try:
            verdict = refute_by_invariant(
                subject,
                subject.initial,
                deep_script=self.deep_script,
                invariant=self.invariant,
                invariant_text=self.invariant_text,
                proof=self.proof,
                completions=self.sample(subject, seed, n),
            )
        except AgenticMachinesError as exc:
            verdict = Verdict(
                None,
                f"{machine.initial!r} is an SPE state of {machine.name}",
                "fact:F2",
                0,
                reason=f"the obstruction state could not be reached: {exc}",
            )
        if why is None:
            return verdict
        scope = f"{self.proof} covers {self.covers}; this machine is not covered: {why}"
        reason = f"{verdict.reason}; besides, {scope}" if verdict.holds is None else scope
        return Verdict(
            None,
            verdict.claim,
            verdict.method,
            verdict.checked,
            reason=reason,
            details={**dict(verdict.details), "not_covered": why, "proof": self.proof},
        )

    def refute_embedding(
        self,
        source: AgenticMachine,
        source_state: Hashable,
        machine: Any = None,
        *,
        allowed: Callable[[Any, str], bool],
        allowed_text: str,
        seed: int = 0,
        n: int = 60,
        scripts: Sequence[Sequence[str]] = ((),),
    ) -> Verdict:
        """The verdict of an ``embeds_react()``: "``source`` embeds into ``machine``"
        refuted by prompts (:func:`refute_embedding_by_prompts`) on this analysis's proof.

        ``machine`` defaults as in :meth:`analysis`; the target is the machine rebuilt from
        its recorded options (``machine`` itself when it does not rebuild, and the verdict
        is then undecided). ``allowed(target, prompt)`` is the proved property of every
        prompt of the target (in words: ``allowed_text``); the premise is tested at the
        states the ``scripts`` reach from the target's initial state, on ``n`` completions
        of :attr:`sample` drawn with ``seed``.

        >>> from agentic_machines.architectures import react, tot
        >>> v = tot.ANALYSIS.refute_embedding(react.machine(), react.initial,
        ...     allowed=lambda target, p: p.startswith((tot.PROPOSE_HEADER, tot.VALUE_HEADER)),
        ...     allowed_text="every prompt starts with a ToT header")
        >>> v.status, v.obstruction.kind
        ('refuted', 'prompt')
        """
        machine = self.subject(machine)
        why, fresh = self.not_covered(machine)
        target = machine if fresh is None else fresh
        return refute_embedding_by_prompts(
            source,
            source_state,
            target,
            allowed=lambda prompt: allowed(target, prompt),
            allowed_text=allowed_text,
            proof=self.proof,
            completions=self.sample(target, seed, n),
            states=[reach(target, target.initial, script) for script in scripts],
            not_covered=why,
        )


def refute_by_invariant(
    machine: AgenticMachine,
    start: Hashable,
    *,
    deep_script: Sequence[str],
    invariant: Callable[[str, str], bool],
    invariant_text: str,
    proof: str,
    completions: Iterable[str],
) -> Verdict:
    """F2 at the state reached by ``deep_script``; the same check at ``start`` in details.

    The returned verdict is the deep state's (refuted, or undecided when the invariant
    fails on a tested completion). ``details`` adds ``"initial_state"`` (the verdict
    with ``start`` itself as the obstruction state), ``"path"`` (the script) and
    ``"completions_tested"``.

    >>> from agentic_machines.architectures import react
    >>> from agentic_machines.checking.sampling import completion_sample
    >>> m = react.machine()
    >>> v = refute_by_invariant(m, m.initial, deep_script=react.SCRIPT[:2],
    ...     invariant=react.successor_invariant, invariant_text=react.INVARIANT_TEXT,
    ...     proof="proofs/react_invariant.md",
    ...     completions=completion_sample(["x", " a\\nAction 1: Search[Paris]"], n=60))
    >>> v.status, v.checked, v.details["initial_state"].status
    ('refuted', 60, 'refuted')
    """
    completions = list(completions)
    deep = reach(machine, start, deep_script)
    memo = _Memo(machine)  # both checks step the same (start, c) pairs
    main, at_start = (
        prompt_obstruction(
            memo,
            start,
            memo,
            state,
            invariant=invariant,
            invariant_text=invariant_text,
            proof=proof,
            completions=completions,
        )
        for state in (deep, start)
    )
    details = {
        **dict(main.details),
        "initial_state": at_start,
        "path": tuple(deep_script),
        "completions_tested": len(completions),
        "invariant": invariant_text,
        "proof": proof,
    }
    return dataclasses.replace(main, details=details)


class _Memo(AgenticMachine):
    """The same machine, remembering h(s, c) so that a second pass costs nothing."""

    def __init__(self, inner: AgenticMachine) -> None:
        self.inner = inner
        self.name = inner.name
        self.initial = inner.initial
        self.states = inner.states
        self.completions = inner.completions
        self._steps: dict[tuple[Hashable, str], object] = {}

    def prompt(self, state: Hashable) -> str:
        return self.inner.prompt(state)

    def harness(self, state: Hashable, completion: str) -> object:
        key = (state, completion)
        if key not in self._steps:
            self._steps[key] = self.inner.harness(state, completion)
        return self._steps[key]


def refute_embedding_by_prompts(
    source: AgenticMachine,
    source_state: Hashable,
    target: AgenticMachine,
    *,
    allowed: Callable[[str], bool],
    allowed_text: str,
    proof: str,
    completions: Iterable[str],
    states: Iterable[Hashable] | None = None,
    not_covered: str | None = None,
) -> Verdict:
    """Refute "``source`` embeds into ``target``" at ``source_state`` by prompts.

    An embedding keeps prompts, so ``source_state`` needs a state of ``target`` with its
    prompt. The caller proves in ``proof`` that every prompt of ``target`` satisfies
    ``allowed`` (in words: ``allowed_text``); if ``source_state``'s prompt does not, no
    image exists. The premise is tested on ``states`` (default: the initial state of
    ``target``) and on every successor of them under ``completions``; a failure, a proof
    file that does not exist, fewer than ``MIN_PREMISE_TESTS`` completions or a
    ``not_covered`` reason (the machine is outside the proof's scope) make the verdict
    undecided. The refutation is conditional on the premise.

    >>> from agentic_machines import FunctionMachine
    >>> a = FunctionMachine(lambda s: "A" + s, lambda s, c: s + c, initial="", name="a")
    >>> b = FunctionMachine(lambda s: "B" + s, lambda s, c: s + c, initial="", name="b")
    >>> v = refute_embedding_by_prompts(a, "", b, allowed=lambda p: p.startswith("B"),
    ...     allowed_text="every prompt starts with B", proof="proofs/F3_prompt_monotone.md",
    ...     completions=[str(i) for i in range(60)])
    >>> v.status, v.obstruction.kind, v.conditional
    ('refuted', 'prompt', True)
    """
    claim = f"{source.name} embeds into {target.name}"
    method = "fact:prompt-keeping"
    if not_covered is not None:
        return Verdict(
            None, claim, method, 0, reason=f"{proof} does not cover this machine: {not_covered}"
        )
    p = source.prompt(source_state)
    if allowed(p):
        return Verdict(
            None,
            claim,
            method,
            0,
            reason=f"the premise ({allowed_text}) does not exclude the prompt of {source_state!r}",
        )
    starts = [target.initial] if states is None else list(states)
    tested = 0
    for state in starts:
        if not allowed(target.prompt(state)):
            return Verdict(
                None, claim, method, tested, reason=f"premise refuted at state {state!r}"
            )
    distinct = list(dict.fromkeys(completions))
    for state in starts:
        for c in distinct:
            tested += 1
            nxt = target.harness(state, c)
            if not is_sentinel(nxt) and not allowed(target.prompt(nxt)):
                return Verdict(
                    None,
                    claim,
                    method,
                    tested,
                    reason=f"premise refuted: {c!r} at {state!r} leads to a state whose prompt "
                    f"breaks it ({allowed_text})",
                )
    obstruction = Obstruction(
        "prompt",
        source_state,
        f"An embedding sends {source_state!r} of {source.name} to a state of {target.name} with "
        f"the same prompt, but every prompt of {target.name} satisfies: {allowed_text} (proved in "
        f"{proof}, tested on {tested} steps), and this prompt does not",
        details={"prompt": p, "states": len(starts), "completions": len(distinct)},
    )
    # the proof file and the number of tests decide as for every premise-based refutation
    return premise_verdict(
        target,
        claim,
        method,
        tested,
        False,
        allowed_text,
        proof,
        obstruction,
        {"states": len(starts), "completions": len(distinct)},
        premise_tests=len(distinct),
    )
