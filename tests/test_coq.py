"""The Coq proofs of proofs/coq/ compile, admit nothing and rest on no axiom.

Every file listed in ``proofs/coq/_CoqProject`` is compiled with ``coqc``, in the list's
order, in a copy of the folder (nothing is written into the checkout). No file may say
``Admitted``, ``admit``, ``Axiom``, ``Parameter`` or ``Conjecture``; ``Print Assumptions``
for every named theorem must print exactly the axioms ``ASSUMPTIONS`` lists for it (none:
the proofs use neither functional extensionality nor classical logic, see
proofs/coq/README.md). Each planted wrong statement of ``proofs/coq/planted/`` must be
rejected, with the message its ``(* expect: ... *)`` line gives. The fact -> theorem
table the verdicts print (``agentic_machines.verdict._FACTS``) names theorems that exist
and are checked here. Without ``coqc`` the tests skip and say how to install it.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agentic_machines import HALT, TableMachine, is_spe_state
from agentic_machines.verdict import _FACTS

COQ = Path(__file__).resolve().parent.parent / "proofs" / "coq"
COQC = shutil.which("coqc")
needs_coqc = pytest.mark.skipif(
    COQC is None,
    reason="coqc not installed: apt-get install coq (Debian's 8.16; .ci/run installs it)",
)

# theorem (module.name) -> the axioms Print Assumptions must list: none for any of them.
ASSUMPTIONS: dict[str, list[str]] = {
    name: []
    for name in (
        "Embedding.embedding_total_alphabet",
        "Embedding.identity_embedding",
        "Embedding.compose_embedding",
        "Embedding.embedding_alphabet_inside",
        "Finite.injective_surjective",
        "Generation.generates_loader_finite",
        "EmptyMachine.empty_embedding",
        "EmptyMachine.empty_embedding_unique",
        "EmptyMachine.empty_generated",
        "EmptyMachine.no_embedding_into_empty",
        "EmptyMachine.empty_no_spe_states",
        "F1.F1_finite_characterisation",
        "F1.F1_states_at_most_completions",
        "F1.F1_needs_finiteness",
        "F2.F2_prompt_obstruction",
        "F2.F2_refutes",
        "F2.F2_not_spe",
        "F2.F2_invariant",
        "F3.F3_prompt_monotone",
        "F3.F3_no_spe_states",
        "F4.F4_invariance",
        "F4.F4_invariance_choice",
        "F4.F4_witness",
        "F4.F4_from_source",
        "F5.F5_count",
        "F5.F5_cardinality",
        "F5.F5_at_most_completions",
        "F5.F5_by_prompt",
        "F5.F5_constant",
        "F5.F5_constant_spe",
        "F6.F6_forcing",
        "F6.F6_determination",
        "Decide.spe_decide_correct",
    )
}
FORBIDDEN = re.compile(r"\b(Admitted|admit|Axiom|Axioms|Parameter|Parameters|Conjecture)\b")


def project() -> tuple[list[str], list[str]]:
    """The coqc flags and the files of ``_CoqProject``, in their order."""
    flags: list[str] = []
    files: list[str] = []
    for line in (COQ / "_CoqProject").read_text(encoding="utf-8").splitlines():
        words = line.split()
        if not words:
            continue
        (files if words[0].endswith(".v") else flags).extend(words)
    return flags, files


def without_comments(text: str) -> str:
    """Coq source with its comments (nested ``(* ... *)``) removed."""
    out, depth, i = [], 0, 0
    while i < len(text):
        if text.startswith("(*", i):
            depth, i = depth + 1, i + 2
        elif depth and text.startswith("*)", i):
            depth, i = depth - 1, i + 2
        else:
            if not depth:
                out.append(text[i])
            i += 1
    return "".join(out)


def coqc(cwd: Path, flags: list[str], name: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [COQC or "coqc", *flags, name], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of proofs/coq/ with every file of _CoqProject compiled in order."""
    if COQC is None:
        pytest.skip("coqc not installed: apt-get install coq (Debian's 8.16; .ci/run installs it)")
    work = tmp_path_factory.mktemp("coq") / "coq"
    shutil.copytree(COQ, work)
    flags, files = project()
    for name in files:
        done = coqc(work, flags, name)
        assert done.returncode == 0, f"coqc {name} failed:\n{done.stdout}{done.stderr}"
    return work


def test_every_file_is_in_the_project():
    _, files = project()
    assert sorted(files) == sorted(p.name for p in COQ.glob("*.v")), (
        "list every proofs/coq/*.v in proofs/coq/_CoqProject, after the files it requires"
    )


def test_nothing_is_admitted_or_assumed():
    for path in sorted(COQ.rglob("*.v")):
        found = FORBIDDEN.findall(without_comments(path.read_text(encoding="utf-8")))
        assert not found, f"{path.relative_to(COQ)} uses {found}: prove it instead"


def test_the_forbidden_words_are_found():
    assert FORBIDDEN.findall(without_comments("Lemma a : False. Proof. admit. Admitted."))
    assert not FORBIDDEN.findall(without_comments("(* no Axiom (* nested *) here *) Qed."))


def print_assumptions(built: Path, terms: dict[str, str]) -> dict[str, str]:
    """What ``Print Assumptions`` says of each Coq term of ``terms`` (key -> term), in one
    coqc run over the compiled ``built`` folder."""
    flags, _ = project()
    modules = sorted(set(re.findall(r"@AM\.(\w+)\.", " ".join(terms.values()))))
    lines = [f"From AM Require {' '.join(modules)}."]
    for i, term in enumerate(terms.values()):
        lines.append(f"Definition checked{i} := {term}.")
        lines.append(f'Redirect "assumptions{i}" Print Assumptions checked{i}.')
    (built / "Assumptions.v").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = coqc(built, flags, "Assumptions.v")
    assert done.returncode == 0, done.stdout + done.stderr
    return {
        key: (built / f"assumptions{i}.out").read_text(encoding="utf-8").strip()
        for i, key in enumerate(terms)
    }


@needs_coqc
def test_print_assumptions(built: Path):
    # The theorems that must assume nothing are printed as one tuple: its assumptions are
    # those of all of them (a sixth of the time of 33 prints); each theorem is printed
    # alone when the tuple assumes something, to say which, and when it may assume axioms.
    closed = [name for name, axioms in ASSUMPTIONS.items() if not axioms]
    terms = {"all closed": "(" + ", ".join(f"@AM.{name}" for name in closed) + ")"}
    terms |= {name: f"@AM.{name}" for name, axioms in ASSUMPTIONS.items() if axioms}
    said = print_assumptions(built, terms)
    if said.pop("all closed") != "Closed under the global context":
        said |= print_assumptions(built, {name: f"@AM.{name}" for name in closed})
    for name, text in said.items():
        axioms = ASSUMPTIONS[name]
        if not axioms:
            assert text == "Closed under the global context", f"{name} assumes:\n{text}"
        else:
            listed = re.findall(r"^(\S+) :", text, re.M)
            assert text.startswith("Axioms:") and listed == axioms, f"{name} assumes:\n{text}"


@needs_coqc
def test_print_assumptions_of_a_tuple_lists_an_axiom_of_one_of_its_theorems(built: Path):
    # the check above can fail: a tuple holding one theorem proved from an axiom prints it
    flags, _ = project()
    (built / "UsesAxiom.v").write_text(
        "Axiom excluded : forall P : Prop, P \\/ ~ P.\n"
        "Theorem uses_axiom : forall P : Prop, P \\/ ~ P.\nProof. exact excluded. Qed.\n",
        encoding="utf-8",
    )
    done = coqc(built, flags, "UsesAxiom.v")
    assert done.returncode == 0, done.stdout + done.stderr
    text = print_assumptions(built, {"t": "(@AM.F1.F1_needs_finiteness, @AM.UsesAxiom.uses_axiom)"})
    assert text["t"].startswith("Axioms:") and "UsesAxiom.excluded" in text["t"], text


def test_the_verdicts_name_checked_theorems():
    for fact, (_, theorem) in _FACTS.items():
        assert f"{fact}.{theorem}" in ASSUMPTIONS, f"fact {fact}: {theorem} is not checked here"
        assert re.search(
            rf"\b(Theorem|Corollary|Lemma) {theorem}\b",
            (COQ / f"{fact}.v").read_text(encoding="utf-8"),
        )


@needs_coqc
def test_planted_wrong_statements_are_rejected(built: Path):
    flags, _ = project()
    planted = sorted((built / "planted").glob("*.v"))
    assert planted
    for path in planted:
        text = path.read_text(encoding="utf-8")
        expect = re.search(r"\(\* expect: (.*?) \*\)", text)
        assert expect, f"{path.name}: say which error coqc must give, in an (* expect: ... *) line"
        done = coqc(built, flags, f"planted/{path.name}")
        assert done.returncode != 0, f"{path.name} compiled: the planted statement was proved"
        assert expect.group(1) in done.stdout + done.stderr, done.stdout + done.stderr


PROOFS = COQ.parent
COQ_BLOCK = re.compile(r"^```coq\n(.*?)^```", re.S | re.M)
COQ_LINK = re.compile(r"\]\(coq/([\w/]+\.v)\)")


def test_the_markdown_quotes_the_coq_statements():
    """Each ```coq block of proofs/*.md quotes, declaration by declaration, a Coq file it
    links to (up to spaces and line breaks): the Markdown states what Coq proves."""
    quoted = 0
    for md in sorted(PROOFS.glob("*.md")):
        text = md.read_text(encoding="utf-8")
        blocks = COQ_BLOCK.findall(text)
        if not blocks:
            continue
        linked = {COQ / name for name in COQ_LINK.findall(text)}
        assert linked, f"{md.name} quotes Coq but links to no proofs/coq file"
        sources = " ".join(
            " ".join(without_comments(path.read_text(encoding="utf-8")).split())
            for path in sorted(linked)
        )
        for block in blocks:
            for declaration in re.split(r"(?<=\.)\n", block):
                words = " ".join(declaration.split())
                if words:
                    assert words in sources, f"{md.name}: not in {sorted(linked)}:\n{words}"
                    quoted += 1
    assert quoted >= 20


@needs_coqc
def test_the_coq_decider_agrees_with_is_spe_state(built: Path):
    """Decide.v's F1 decider, proved correct in Coq and run by vm_compute, against the
    Python decider on F1's executable check: every two-state, two-completion machine with
    transitions to 0, 1 or HALT (81 machines, 162 questions)."""
    outcomes = [0, 1, HALT]
    coq = {0: "state false", 1: "state true", HALT: "halt"}
    pairs = [(s, c) for s in (0, 1) for c in ("0", "1")]
    rows = list(itertools.product(outcomes, repeat=len(pairs)))
    tables = "; ".join("(" + ", ".join(coq[o] for o in row) + ")" for row in rows)
    (built / "Compare.v").write_text(
        "From Coq Require Import List.\nImport ListNotations.\n"
        "From AM Require Import Machine Decide.\n"
        f"Eval vm_compute in map decide_two_state [{tables}].\n",
        encoding="utf-8",
    )
    flags, _ = project()
    done = coqc(built, flags, "Compare.v")
    assert done.returncode == 0, done.stdout + done.stderr
    said = re.findall(r"\(\s*(true|false),\s*(true|false)\s*\)", done.stdout)
    by_coq = [(a == "true", b == "true") for a, b in said]
    by_python = []
    for row in rows:
        m = TableMachine({0: "⋆", 1: "⋆"}, dict(zip(pairs, row)), completions=["0", "1"])
        by_python.append((is_spe_state(m, 0).holds, is_spe_state(m, 1).holds))
    assert len(by_coq) == len(by_python) == 81
    assert by_coq == by_python
    assert 0 < sum(a + b for a, b in by_coq) < 162  # both answers occur
