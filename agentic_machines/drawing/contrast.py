"""The machine-checked contrast of agent architectures (``docs/contrast.md`` shows the table).

One row per architecture in :data:`~agentic_machines.architectures.ARCHITECTURES`: is
its initial state an SPE state, by which method, with which certificate, and on how
many states or completions it was checked. Then rows for what the SPE seed x*
completion-generates (a finite machine through ``realize``, the toy ReAct through its
hand-written realization) and for a state inside the SPE machine that is *not* an SPE
state. :func:`render_table` prints the rows for a terminal, :func:`to_markdown` for
``docs/contrast.md``.

The column "embeds ReAct" answers, for an architecture whose module has
``embeds_react()``, whether ReAct's machine (on the same task) embeds into it, with the
verdict's method and certificate; ``—`` means the question is not examined for that row.

>>> rows = [Row("toy", "refuted", "fact:F2", "prompt obstruction at s", "3 completions")]
>>> print(to_markdown(rows))
| machine | question | verdict | method | certificate | checked | embeds ReAct |
|---|---|---|---|---|---|---|
| toy | initial state SPE? | refuted | fact:F2 | prompt obstruction at s | 3 completions | — |
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._text import clip, one_line
from ..architectures import ARCHITECTURES
from ..architectures.catalog import resolve, scripted_machine
from ..verdict import Verdict
from ..verdict import short_repr as _short
from .diagrams import draw, to_mermaid

__all__ = [
    "Row",
    "contrast_rows",
    "architecture_row",
    "render_table",
    "to_markdown",
    "write_diagrams",
    "architecture_graph",
    "analyses_of",
    "SPE_QUESTION",
    "embeds_react_cell",
]

SPE_QUESTION = "initial state SPE?"

COLUMNS = ("machine", "question", "verdict", "method", "certificate", "checked", "embeds ReAct")
"""The table's column headers, in the order of :attr:`Row.cells`."""


@dataclass(frozen=True)
class Row:
    """One line of the contrast table.

    ``status`` is the verdict's status (``holds``, ``refuted``, ``undecided``);
    ``certificate`` says in one line why; ``checked`` says what was checked;
    ``question`` is what the row answers; ``verdict`` keeps the full verdict;
    ``conditional`` marks a refutation that rests on a premise the toolkit could only
    test (the verdict cell then reads ``refuted (conditional)``).

    >>> Row("toy", "holds", "exhaustive", "identity", "4 checked").question
    'initial state SPE?'
    """

    name: str
    status: str
    method: str
    certificate: str
    checked: str
    question: str = SPE_QUESTION
    verdict: Verdict | None = field(default=None, compare=False, repr=False)
    conditional: bool = False
    embeds_react: str = "—"

    @property
    def verdict_text(self) -> str:
        """The verdict cell: the status, marked when the refutation is conditional.

        >>> Row("a", "refuted", "fact:F2", "c", "1", conditional=True).verdict_text
        'refuted (conditional)'
        """
        return f"{self.status} (conditional)" if self.conditional else self.status

    @property
    def cells(self) -> tuple[str, ...]:
        """The row's cells, in the order of :data:`COLUMNS`.

        >>> Row("a", "holds", "sampled", "c", "1").cells[-1]
        '—'
        """
        return (
            self.name,
            self.question,
            self.verdict_text,
            self.method,
            self.certificate,
            self.checked,
            self.embeds_react,
        )

    @classmethod
    def of(
        cls,
        name: str,
        verdict: Verdict,
        *,
        question: str = SPE_QUESTION,
        certificate: str | None = None,
        checked: str | None = None,
    ) -> Row:
        """A row from a verdict (certificate and checked count derived when not given).

        >>> Row.of("x", Verdict(True, "c", "sampled", 4, reason="loader checked")).checked
        '4 checked'
        """
        return cls(
            name,
            verdict.status,
            verdict.method,
            certificate if certificate is not None else _one_line(verdict.certificate),
            checked if checked is not None else f"{verdict.checked} checked",
            question,
            verdict,
            verdict.conditional,
        )


def architecture_row(name: str, module: Any) -> Row:
    """The row of one architecture module: its ``analysis()`` verdict, summarised, and its
    ``embeds_react()`` verdict when the module has one (:func:`embeds_react_cell`).

    >>> from agentic_machines.architectures import react
    >>> row = architecture_row("react", react)
    >>> row.status, row.method, row.checked, row.verdict_text
    ('refuted', 'fact:F2', '300 completions', 'refuted (conditional)')
    """
    row = _spe_row(name, module)
    embeds = getattr(module, "embeds_react", None)
    if embeds is None:
        return row
    return replace(row, embeds_react=embeds_react_cell(embeds()))


def embeds_react_cell(v: Verdict) -> str:
    """The "embeds ReAct" cell of a verdict: status, method, certificate and count. An
    obstruction is named at its ReAct state (and completion), with the proof it rests on.

    >>> embeds_react_cell(Verdict(True, "c", "sampled", 12, reason="identity checked"))
    'holds (sampled): identity checked; 12 checked'
    """
    status = f"{v.status} (conditional)" if v.conditional else v.status
    o = v.obstruction
    if o is None:
        return f"{status} ({v.method}): {_one_line(v.certificate)}; {v.checked} checked"
    on = f" on {_short(o.completion)}" if o.completion is not None else ""
    given = f", given {v.premise.proof}" if v.premise is not None else ""
    return f"{status} ({v.method}): {o.kind} obstruction at ReAct's state {_short(o.state)}{on}{given}; {v.checked} checked"


def _spe_row(name: str, module: Any) -> Row:
    v: Verdict = module.analysis()
    details = dict(v.details)
    if v.obstruction is not None and v.method.startswith("fact:"):
        state = v.obstruction.state
        path = details.get("path")
        where = f"state {len(path)} steps from x" if path is not None else f"state {_short(state)}"
        machine = scripted_machine(module)
        # an architecture may say what identifies a prompt; by default it is the last
        # line, where most harnesses write their step label
        label = getattr(module, "prompt_summary", _tail)(machine.prompt(state))
        proof = details.get("proof") or v.obstruction.details.get("proof", "")
        also = details.get("initial_state")
        also_text = ", also at x" if isinstance(also, Verdict) and also.holds is False else ""
        given = "given the invariant of " if v.conditional else ""
        cert = f"{v.obstruction.kind} obstruction at {where} ({label}){also_text}; {given}{proof}"
        return Row.of(name, v, certificate=cert, checked=f"{v.checked} completions")
    if v.holds is None:
        return Row.of(
            name,
            v,
            certificate=_one_line(v.reason or "undecided"),
            checked=f"{v.checked} completions",
        )
    return Row.of(name, v, checked=_checked_text(v))


def contrast_rows(names: Iterable[str] | None = None) -> list[Row]:
    """All rows: one per architecture (or per name in ``names``), then the SPE extras.

    The extras (rows whose question is not the SPE question) come from
    ``spe.contrast_extras()`` when the SPE architecture is in the table, and from
    ``spell.contrast_extras()`` when Spell is (the naive re-run harness's refutation).

    >>> [(r.name, r.status, r.method) for r in contrast_rows(["react", "thread"])]
    [('react', 'refuted', 'fact:F2'), ('thread', 'refuted', 'fact:F2')]
    """
    chosen = list(ARCHITECTURES) if names is None else list(names)
    rows = [architecture_row(n, ARCHITECTURES[n]) for n in chosen]
    extras: list[Callable[[], list[tuple[str, str, Verdict, str]]]] = []
    if "spe" in chosen:
        extras.append(ARCHITECTURES["spe"].contrast_extras)
    if "spell" in chosen:  # the naive re-run harness Spell improves on
        extras.append(ARCHITECTURES["spell"].contrast_extras)
    for extra in extras:
        for name, question, verdict, certificate in extra():
            rows.append(
                Row.of(
                    name,
                    verdict,
                    question=question,
                    certificate=certificate,
                    checked=_checked_text(verdict),
                )
            )
    return rows


def render_table(rows: Sequence[Row], *, width: int = 130) -> str:
    """The rows as a plain-text table for a terminal (long cells shortened to ``width``).

    >>> print(render_table([Row("a", "holds", "sampled", "loader checked", "5 checked")]))
    machine  question            verdict  method   certificate     checked    embeds ReAct
    -------  ------------------  -------  -------  --------------  ---------  ------------
    a        initial state SPE?  holds    sampled  loader checked  5 checked  —
    """
    cells = [COLUMNS] + [tuple(_clip(x, width) for x in r.cells) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def to_markdown(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table (``|`` in cells escaped).

    >>> print(to_markdown([Row("a|b", "holds", "sampled", "x", "1 checked")]).splitlines()[-1])
    | a\\|b | initial state SPE? | holds | sampled | x | 1 checked | — |
    """
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(_md(x) for x in r.cells) + " |" for r in rows]
    return "\n".join(out)


def architecture_graph(
    name: str, *, depth: int | None = None, analysis: Verdict | None = None
) -> tuple[Any, dict[str, Any]]:
    """The explored graph of one architecture and the roles to highlight in it.

    The graph is explored from the initial state over the architecture's
    ``diagram_completions`` (which follow its scripted path); the roles are the initial
    state's successors and the obstruction state of ``analysis()`` (keyword arguments of
    :func:`agentic_machines.drawing.diagrams.draw` and ``to_mermaid``). The same picture as
    ``agentic-machines diagram NAME``: both use :mod:`agentic_machines.architectures.catalog`.
    ``analysis`` is the verdict of the module's ``analysis()`` when the caller already
    has it (a row's :attr:`Row.verdict`); it is computed here when ``None``.

    >>> graph, marks = architecture_graph("react", depth=2)
    >>> marks["obstruction"] in graph, graph.graph["stats"]["states"]
    (True, 5)
    """
    entry = resolve(name)
    machine = entry.machine()
    graph = entry.explore(machine, depth=depth)
    return graph, entry.highlights(machine, graph, analysis=analysis)


def write_diagrams(
    out_dir: str | Path,
    names: Iterable[str] | None = None,
    *,
    depth: int | None = None,
    analyses: Mapping[str, Verdict] | None = None,
) -> list[Path]:
    """Write ``<name>.png`` and ``<name>.mmd`` (Mermaid) for each architecture
    (see :func:`architecture_graph`); return the written paths.

    ``analyses`` maps an architecture's name to its ``analysis()`` verdict when the
    caller has it already (:func:`analyses_of` reads them off the table's rows), so the
    analysis, the costliest part of a row, is not run a second time for the diagram.

    >>> import tempfile
    >>> [p.name for p in write_diagrams(tempfile.mkdtemp(), ["react"], depth=1)]
    ['react.png', 'react.mmd']
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in list(ARCHITECTURES) if names is None else list(names):
        given = None if analyses is None else analyses.get(name)
        graph, marks = architecture_graph(name, depth=depth, analysis=given)
        png, mmd = out / f"{name}.png", out / f"{name}.mmd"
        title = f"{name}: initial state, its successors" + (
            " and the obstruction state" if "obstruction" in marks else ""
        )
        fig = draw(graph, png, title=title, **marks)
        fig.clear()  # made without pyplot: clearing frees it now rather than at collection
        mmd.write_text(to_mermaid(graph, **marks) + "\n", encoding="utf-8")
        written += [png, mmd]
    return written


def analyses_of(rows: Iterable[Row]) -> dict[str, Verdict]:
    """The ``analysis()`` verdict of each architecture row (the rows that answer
    :data:`SPE_QUESTION`), by name: what :func:`write_diagrams` takes as ``analyses``.

    >>> v = Verdict(True, "c", "sampled", 4, reason="loader checked")
    >>> analyses_of([Row.of("spe", v), Row.of("spe", v, question="other?")]) == {"spe": v}
    True
    """
    return {
        r.name: r.verdict
        for r in rows
        if r.question == SPE_QUESTION and r.verdict is not None and r.name in ARCHITECTURES
    }


def _checked_text(v: Verdict) -> str:
    details = dict(v.details)
    states, completions = details.get("states_checked"), details.get("completions_checked")
    if states is not None and completions is not None:
        return f"{states} states x {completions} completions"
    return f"{v.checked} checked"


def _tail(prompt: str, n: int = 24) -> str:
    lines = [line for line in prompt.split("\n") if line.strip()]
    last = lines[-1] if lines else ""
    return "last line " + repr(clip(last, n))


def _one_line(text: Any) -> str:
    return one_line(str(text))


def _clip(text: str, width: int) -> str:
    return clip(_one_line(text), width)


def _md(text: str) -> str:
    return _one_line(text).replace("|", "\\|")
