"""Honest verdicts (``docs/design.md``, honest verdicts).

A :class:`Verdict` says whether a relation holds (``True``), is refuted (``False``) or
was not decided (``None``), and *how* it knows: ``"exhaustive"`` (every state and
completion of a finite machine), ``"fact:F2"`` and friends (a named fact F1-F6 of
``proofs/`` whose premise was checked), or ``"sampled"`` (N sampled states and completions,
never called a proof). ``bool(verdict)`` is ``holds is True``, so an undecided verdict
is never mistaken for a success.

>>> v = Verdict(holds=None, claim="x is an SPE state", method="sampled", checked=0,
...             reason="no sample states were given")
>>> bool(v), v.status
(False, 'undecided')
>>> print(v)
Undecided: it is not known whether x is an SPE state. Method: sampled (0 checks). Reason: no sample states were given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, TypeVar

from ._outcome import show_outcome
from ._text import clip_prompt, plural
from .errors import CertificateError, Undecided, UnknownField

__all__ = [
    "Verdict",
    "Obstruction",
    "LazyObstruction",
    "Witness",
    "LazyVerdict",
    "Premise",
    "METHODS",
    "undecided_as_verdict",
    "confirmed",
]

METHODS = (
    "exhaustive",
    "sampled",
    "fact:F1",
    "fact:F2",
    "fact:F3",
    "fact:F4",
    "fact:F5",
    "fact:F6",
    "key",
)
"""Known method names; a method may also be ``"fact:<name>"`` for an architecture invariant.
``"key"``: a keyed ``never_diverges`` refuted by its key's claim (a loop that came back to
the same keys without an exact repeat), never called exhaustive."""


@dataclass(frozen=True)
class Obstruction:
    """Why a relation fails, pinned to a concrete state.

    ``kind`` names the broken condition (``"prompt"``, ``"cardinality"``,
    ``"injectivity"``, ``"commutation"``, ``"successor"``, ...); ``state`` is the
    concrete state that exhibits it; ``completion`` the completion involved, if any;
    ``explanation`` says it in plain words; ``details`` keeps the raw evidence.

    >>> o = Obstruction("prompt", 3, "State 3 has prompt 'stop?', which no successor has.")
    >>> o.kind, o.state, str(o)
    ('prompt', 3, "State 3 has prompt 'stop?', which no successor has.")
    """

    kind: str
    state: Any
    explanation: str
    completion: Any = None
    details: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        return self.explanation


def confirmed(obstruction: Obstruction, claim: str, problem: str) -> Obstruction:
    """``obstruction``, once a re-check of what it names found nothing wrong.

    The deciders re-check every obstruction they return, from the machines afresh (the
    named state is a state, the broken condition really fails there); ``problem`` is what
    that re-check found, empty when nothing. A problem is never returned as a
    certificate: it raises :class:`~agentic_machines.errors.CertificateError` (an internal
    error, or a harness that is not a function) naming the claim.

    >>> o = Obstruction("prompt", 3, "State 3 has prompt 'stop?', which no successor has.")
    >>> confirmed(o, "x is an SPE state", "") is o
    True
    >>> confirmed(o, "x is an SPE state", "state 3 has the successor 4's prompt")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.CertificateError: internal error: the obstruction to x is an SPE state did not re-check: state 3 has the successor 4's prompt. ...
    """
    if problem:
        raise CertificateError(claim, problem, "obstruction")
    return obstruction


class _Lazy:
    """A stand-in for an instance of a frozen dataclass (the class it is mixed into
    after this one) whose fields are built on first use.

    ``build()`` returns the real instance; the fields given as keywords are known at once
    and are read without building. The first read of any other field builds the real
    instance and keeps its fields. The stand-in compares, hashes, prints and pickles as
    the real instance: only its type tells them apart. A decider that answers many
    questions (``is_spe_state`` on every state of a machine) knows each answer at once,
    while saying why in words costs more than the decision: that waits until it is read.
    """

    _fields: frozenset[str] = frozenset()
    _real_type: type = object

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._real_type = next(c for c in cls.__mro__[1:] if is_dataclass(c) and c is not _Lazy)
        cls._fields = frozenset(f.name for f in fields(cls._real_type))

    def __init__(self, build: Callable[[], Any] | None = None, /, **known: Any) -> None:  # noqa: D107
        names = type(self)._fields
        if not known.keys() <= names:
            raise UnknownField(
                f"{type(self).__name__} has no {plural(len(known.keys() - names), 'field')} "
                f"{sorted(known.keys() - names)}; its fields are {sorted(names)}"
            )
        d = object.__getattribute__(self, "__dict__")
        d.update(known)
        if len(known) < len(names):
            if build is None:  # dataclasses.replace gives every field
                raise UnknownField(
                    f"{type(self).__name__} needs build() or every field ({sorted(names)})"
                )
            d["_build"] = build

    def __getattribute__(self, name: str) -> Any:
        d = object.__getattribute__(self, "__dict__")
        if "_build" in d and name not in d and (name == "__dict__" or name in type(self)._fields):
            real = d.pop("_build")()
            for f in type(self)._fields:
                if f not in d:
                    d[f] = getattr(real, f)
        return object.__getattribute__(self, name)

    def _real(self) -> Any:
        return self._real_type(**{f: getattr(self, f) for f in self._fields})

    def __reduce__(self) -> tuple:
        # Pickled as the real instance: its class called with the fields in their order.
        real = self._real_type
        return (real, tuple(getattr(self, f.name) for f in fields(real)))

    def __repr__(self) -> str:
        return repr(self._real())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, self._real_type):
            return NotImplemented
        return bool(self._real() == (other._real() if isinstance(other, _Lazy) else other))

    def __hash__(self) -> int:
        return hash(self._real())


@dataclass(frozen=True)
class Witness:
    """Evidence that completion-generation holds: an embedding and a loader.

    ``loader`` maps a state s' of the target machine to a completion c with
    h(x, c) = e(s'); it is a dict on finite machines and a callable otherwise.

    >>> Witness(None, {0: "0", 1: "1"}).load(1), Witness(None, lambda s: f"load:{s}").load(7)
    ('1', 'load:7')
    """

    embedding: Any
    loader: Mapping[Any, str] | Callable[[Any], str]
    description: str = ""

    def load(self, state: Any) -> str:
        """Return the loader completion for ``state``."""
        return self.loader[state] if isinstance(self.loader, Mapping) else self.loader(state)


@dataclass(frozen=True)
class Premise:
    """The premise a *conditional* refutation rests on, when it cannot be checked exhaustively.

    ``text`` states the premise (a successor-prompt invariant for F2, a constant
    harness for F5); ``proof`` is the file that proves it (it exists in the repository);
    ``tested`` is the number of completions it was property-tested on.

    >>> print(Premise("p(x) is a proper prefix of p(y)", "proofs/F3_prompt_monotone.md", 60))
    p(x) is a proper prefix of p(y) (proved in proofs/F3_prompt_monotone.md, tested on 60 completions)
    """

    text: str
    proof: str
    tested: int

    def __str__(self) -> str:
        plural = "" if self.tested == 1 else "s"
        return f"{self.text} (proved in {self.proof}, tested on {self.tested} completion{plural})"


@dataclass(frozen=True)
class Verdict:
    """The result of a check: ``holds`` is True, False or None (undecided).

    What each field guarantees:

    - ``holds``: ``True`` only when ``method`` established the claim over the scope it
      names (every state and completion, a named fact whose premise was checked, or, for
      ``"sampled"``, the sample only: never a proof); ``False`` only with evidence: an
      ``obstruction`` worked out from the whole of what it names (see below), or a
      counterexample (in ``details``, and a check's ``PropertyResult``) that was
      re-checked before it was returned: its completions were replayed on the machine,
      every outcome was the recorded one, every completion one of the alphabet the claim
      is about, and the property was checked again on the replayed run and is broken at
      its last step (a lasso comes back to its loop state; a stuck run is offered no
      completion). So ``run --replay`` reproduces it. A tool's double execution
      (``effects_at_most_once``) is an event, not a value of h: when the replay does not
      repeat it, ``reason`` says the executions are those the search saw. A
      counterexample that does not re-check is never returned: that raises
      :class:`~agentic_machines.errors.CertificateError` naming the property, and a replay
      that meets an unknown step makes the verdict ``None``. ``None`` whenever neither is
      known, with ``reason`` saying why and what to pass.
    - ``method``: how it is known (``"exhaustive"``, ``"fact:F1"`` ... ``"fact:F6"`` or an
      architecture invariant, ``"sampled"``, or ``"key"``: a keyed ``never_diverges``
      refuted by what its key claims, see :data:`METHODS`). A finite machine is always decided
      exactly: a sample or a witness given for it never makes its verdict ``"sampled"``.
    - ``checked``: how many checks (harness calls, or state and completion pairs) were
      made; a count, not a measure of confidence.
    - ``witness`` (only when ``holds`` is True): an embedding and a loader that were
      checked over the verdict's scope: h(x, loader(s)) = e(s) for every state s
      checked, and the embedding checked as :func:`~agentic_machines.embedding.check_embedding` does.
    - ``obstruction`` (only when ``holds`` is False): a concrete state that exhibits the
      broken condition, chosen after reading everything it claims about (a
      ``"successor"`` obstruction names a state that no completion reaches, found by
      reading the whole alphabet even when the decision needed less; a ``"prompt"`` one
      a state whose prompt no successor carries; a ``"commutation"`` one a state and
      completion at which the two sides differ). Before it is returned it is re-checked
      from the machines afresh (:func:`confirmed`): the named state is a state, and the
      condition fails there, by new harness and prompt calls (the ``"domain"``,
      ``"injectivity"``, ``"prompt"`` and ``"commutation"`` obstructions of
      ``check_embedding``, F1's ``"successor"``, F2's ``"prompt"`` and F5's
      ``"cardinality"`` of the finite deciders). The obstruction of a conditional
      refutation (F2/F5 on an infinite machine) names a checked state of the target and
      rests on its ``premise``; an exhaustive embedding search that found no embedding
      (kinds from its search) names where its last branch failed, and its claim is the
      search's exhaustiveness.
    - ``premise`` (only for a conditional refutation): what the refutation rests on and
      the proof of it, when the toolkit could only property-test it.
    - ``reason`` and ``details``: the evidence in words, and the raw numbers behind it.

    >>> v = Verdict(True, "1 is an SPE state of f2-mul", "fact:F1", 2,
    ...             witness=Witness(None, {0: "0", 1: "1"}, "the identity, loaded by '0' and '1'"))
    >>> bool(v), v.status, v.certificate
    (True, 'holds', "the identity, loaded by '0' and '1'")
    >>> print(v)
    Holds: 1 is an SPE state of f2-mul. Method: fact F1, the finite characterisation, proved in Coq as F1_finite_characterisation (2 checks). Witness: the identity, loaded by '0' and '1'.
    """

    holds: bool | None
    claim: str
    method: str
    checked: int = 0
    witness: Witness | None = None
    obstruction: Obstruction | None = None
    reason: str = ""
    details: Mapping[str, Any] = field(default_factory=dict, compare=False)
    premise: Premise | None = None

    def __bool__(self) -> bool:
        return self.holds is True

    @property
    def conditional(self) -> bool:
        """True for a refutation that rests on a :class:`Premise` the toolkit could only test.

        >>> v = Verdict(False, "x is an SPE state", "fact:F2", 60,
        ...             premise=Premise("an invariant", "proofs/F3_prompt_monotone.md", 60))
        >>> v.conditional, str(v).split(":")[0]
        (True, 'Refuted, given an invariant (proved in proofs/F3_prompt_monotone.md, tested on 60 completions)')
        """
        return self.holds is False and self.premise is not None

    @property
    def status(self) -> str:
        """``"holds"``, ``"refuted"`` or ``"undecided"``."""
        return {True: "holds", False: "refuted", None: "undecided"}[self.holds]

    @property
    def certificate(self) -> str:
        """A one-line summary of the evidence, for tables."""
        if self.obstruction is not None:
            # conditional implies a premise; testing the premise itself lets the checker see it
            premise = self.premise if self.conditional else None
            given = f" (conditional on {premise.proof})" if premise is not None else ""
            return f"{self.obstruction.kind} obstruction at {short_repr(self.obstruction.state, 60)}{given}"
        if self.witness is not None:
            return self.witness.description or "embedding + loader"
        return self.reason or "-"

    def __str__(self) -> str:
        """Two or three plain sentences: the result, how it is known, and the evidence."""
        headline = _HEADLINE[self.holds].format(claim=self.claim)
        if self.conditional:
            headline = f"Refuted, given {self.premise}: it is not true that {self.claim}."
        parts = [headline, f"Method: {self.how}."]
        if self.obstruction is not None:
            parts.append(f"Obstruction ({self.obstruction.kind}): {self.obstruction.explanation}")
        elif self.witness is not None and self.witness.description:
            parts.append(f"Witness: {self.witness.description}")
        if self.reason:
            parts.append(f"Reason: {self.reason}")
        if self.method == "sampled" and self.holds is True:
            parts.append("This is a sampled check, not a proof.")
        return " ".join(p if p.endswith(".") else p + "." for p in parts)

    @property
    def how(self) -> str:
        """The method in plain words, with the number of checks.

        >>> Verdict(False, "x is an SPE state", "fact:F1", 2).how
        'fact F1, the finite characterisation, proved in Coq as F1_finite_characterisation (2 checks)'
        """
        checks = f"{self.checked} check{'' if self.checked == 1 else 's'}"
        if self.method == "exhaustive":
            return f"exhaustive, every state and completion checked ({checks})"
        if self.method == "sampled":
            return f"sampled ({checks})"
        if self.method == "key":
            return (
                "by the key, not exhaustive: the loop came back to the same keys without an "
                f"exact repeat, and the key says those states are one situation ({checks})"
            )
        if self.method.startswith("fact:"):
            name = self.method[5:]
            if name not in _FACTS:
                return f"fact {name} ({checks})"
            gloss, theorem = _FACTS[name]
            return f"fact {name}, {gloss}, proved in Coq as {theorem} ({checks})"
        return f"{self.method} ({checks})"

    def _repr_markdown_(self) -> str:
        icon = {True: "✅", False: "❌", None: "❔"}[self.holds]
        lines = [
            f"**{icon} {self.status}**: {self.claim}",
            "",
            f"- method: `{self.method}`",
            f"- checked: {self.checked}",
        ]
        if self.obstruction is not None:
            lines.append(
                f"- obstruction (`{self.obstruction.kind}`): {self.obstruction.explanation}"
            )
        if self.witness is not None:
            lines.append(f"- witness: {self.witness.description or 'embedding + loader'}")
        if self.premise is not None:
            lines.append(f"- given (conditional): {self.premise}")
        if self.reason:
            lines.append(f"- reason: {self.reason}")
        return "\n".join(lines)


_HEADLINE = {
    True: "Holds: {claim}.",
    False: "Refuted: it is not true that {claim}.",
    None: "Undecided: it is not known whether {claim}.",
}

# The facts F1-F6, named as the proofs/ files name them, with the Coq theorem that proves
# each (proofs/coq/Fn.v; tests/test_coq.py compiles them and checks their assumptions).
_FACTS = {
    "F1": ("the finite characterisation", "F1_finite_characterisation"),
    "F2": ("the prompt obstruction", "F2_prompt_obstruction"),
    "F3": ("prompt-monotone machines have no SPE states", "F3_prompt_monotone"),
    "F4": ("invariance under embeddings", "F4_invariance"),
    "F5": ("the cardinality bound", "F5_cardinality"),
    "F6": ("commutation propagation", "F6_forcing"),
}


class LazyObstruction(_Lazy, Obstruction):
    """An :class:`Obstruction` worked out on first use: ``build()`` returns the real one.

    Naming a state that really fails, and saying why in words, can cost more than knowing
    *that* the state fails; it is done when a field is first read (then kept). It
    compares, prints and pickles as the obstruction it builds.

    >>> o = LazyObstruction(lambda: Obstruction("prompt", 3, "no successor has it"))
    >>> o.state, o.kind, o == Obstruction("prompt", 3, "no successor has it")
    (3, 'prompt', True)
    """


class LazyVerdict(_Lazy, Verdict):
    """A :class:`Verdict` whose answer is known at once and whose explanation (the claim,
    the evidence in words, the details) is built on first use by ``build()``.

    ``is_spe_state`` returns one per question on a finite machine: ``holds``, ``method``
    and ``checked`` are given, the rest waits until it is read. It compares, prints and
    pickles as the verdict it builds.

    >>> v = LazyVerdict(lambda: Verdict(True, "0 is an SPE state of m", "fact:F1", 2),
    ...                 holds=True, method="fact:F1", checked=2)
    >>> bool(v), v.claim, v == Verdict(True, "0 is an SPE state of m", "fact:F1", 2)
    (True, '0 is an SPE state of m', True)
    """


def short_repr(value: Any, limit: int = 40, among: Iterable[Any] = ()) -> str:
    """``repr(value)`` cut to ``limit`` characters with an ellipsis: states in explanations;
    cut by the one prompt rule (:func:`~agentic_machines._text.clip_prompt`) among the
    values named beside it (``among``: a state's repr holds its prompt or history, so the
    part where two states differ is what is kept).

    Shared by every module that names states in sentences, so they are cut alike, and by
    the loaders' error messages (a short, escaped excerpt of a file, never the file). A
    value nested too deeply for ``repr`` is described instead of crashing the report.

    The outcomes ``HALT`` and ``DIVERGE`` read ``HALT (1)`` and ``DIVERGE (↑)``
    (:func:`~agentic_machines.machine.show_outcome`), never like the state ``1``.

    >>> deep = []
    >>> for _ in range(100_000):
    ...     deep = [deep]
    >>> short_repr("a" * 50, 8), short_repr(3), short_repr(deep)
    ("'aaaaaa…", '3', '<a value nested too deeply to show>')
    >>> short_repr(("Ticket: kettle", "refund"), 12, [("Ticket: kettle", "replace")])
    "…, 'refund')"
    """
    try:
        text = show_outcome(value)
        context = [show_outcome(a) for a in among]
    except RecursionError:
        return "<a value nested too deeply to show>"
    return clip_prompt(text, limit, context)


_F = TypeVar("_F", bound=Callable[..., Verdict])


def undecided_as_verdict(claim: Callable[..., str], method: str = "sampled") -> Callable[[_F], _F]:
    """Decorate a function that returns a :class:`Verdict`: :class:`~agentic_machines.errors.Undecided`
    raised inside it (fuel that runs out in a harness, for example) becomes
    ``Verdict(holds=None, reason=...)`` instead of an exception.

    ``claim(*args, **kwargs)`` builds the claim from the decorated function's arguments.

    >>> @undecided_as_verdict(lambda n: f"{n} halts")
    ... def halts(n):
    ...     raise Undecided("out of fuel after 10 steps; pass fuel=")
    >>> v = halts(3)
    >>> v.status, v.reason
    ('undecided', 'out of fuel after 10 steps; pass fuel=')
    """

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Verdict:
            try:
                return fn(*args, **kwargs)
            except Undecided as exc:
                return Verdict(None, claim(*args, **kwargs), method, 0, reason=str(exc))

        return wrapper  # type: ignore[return-value]

    return decorate
