"""Every reference in the code and the docs points inside the repository, and exists.

A reader who clones the repository must be able to follow every pointer: Markdown links
(to a file, and to a heading of a Markdown file), and backticked or bare paths such as
``docs/design.md#layers``, ``proofs/F1_finite_characterisation.md`` or
``experiments/contrast.py``. Pointers to the project's private briefing (a design brief
cited by section, notes in a shared folder) are not part of the repository and fail.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCANNED_DIRS = ("agentic_machines", "docs", "proofs", "experiments", "tests", "benchmarks")
SUFFIXES = {".py", ".md", ".ipynb"}


def scanned_files() -> list[Path]:
    files = [ROOT / "README.md"]
    for d in SCANNED_DIRS:
        files += sorted(p for p in (ROOT / d).rglob("*") if p.suffix in SUFFIXES and p.is_file())
    # This file shows dangling references on purpose, as examples for the checker.
    return [p for p in files if "__pycache__" not in p.parts and p != Path(__file__).resolve()]


# Built from pieces so that this file does not match itself.
FORBIDDEN = {
    "DESIGN" + " §": "a section of the private design brief; link docs/design.md instead",
    "../" + "shared": "a folder outside the repository",
    "shared/" + "reference": "briefing notes outside the repository; cite docs/sources.md",
    "shared/" + "seeds": "briefing documents outside the repository; cite docs/sources.md",
    ".md" + " §": "a section number of a Markdown file; link its heading (file.md#anchor)",
}

DELIBERATE = "NO_SUCH_"
"""A path that contains this names a file that must not exist (the examples of what a
verdict does with a missing proof file): it is not a reference to follow."""

MD_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
# A repository path written out in prose or code: docs/x.md, proofs/x.md#anchor, ...
BARE_PATH = re.compile(
    r"(?<![\w./-])((?:docs|proofs|experiments|tests|benchmarks|agentic_machines)"
    r"/[\w./-]*?\.(?:md|py|ipynb|png|mmd|json|toml))(#[\w-]+)?(?![\w])"
)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'.

    >>> slug("The facts F1–F6"), slug("`agentic_machines.cek`")
    ('the-facts-f1f6', 'agentic_machinescek')
    """
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for h in HEADING.findall(text):
        s = slug(h)
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    return frozenset(out)


def problems(path: Path, text: str | None = None) -> list[str]:
    """Every reference of ``path`` (or of ``text``, read as if it were at ``path``) that
    does not resolve inside the repository, one line each."""
    if text is None:
        text = path.read_text(encoding="utf-8")
    where = path.relative_to(ROOT)
    found = []

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    for needle, why in FORBIDDEN.items():
        for m in re.finditer(re.escape(needle), text):
            found.append(f"{where}:{line_of(m.start())}: {needle!r}: {why}")

    def check(target: Path, anchor: str, pos: int, shown: str) -> None:
        if DELIBERATE in shown:  # an example of a missing file, shown as one on purpose
            return
        if not target.exists():
            found.append(f"{where}:{line_of(pos)}: {shown} does not exist")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            found.append(
                f"{where}:{line_of(pos)}: {shown}: no heading with anchor #{anchor} in "
                f"{target.relative_to(ROOT)} (anchors: {sorted(anchors(target))})"
            )

    if path.suffix == ".md":
        for m in MD_LINK.finditer(text):
            link = m.group(1)
            if re.match(r"[a-z]+:", link):  # http:, https:, mailto:
                continue
            file_part, _, anchor = link.partition("#")
            target = (path.parent / file_part).resolve() if file_part else path
            check(target, anchor, m.start(), link)
    for m in BARE_PATH.finditer(text):
        if re.search(r"(^|/)[A-Z]+(\.\w+)?$", m.group(1)):  # a placeholder: experiments/NAME.py
            continue
        check(ROOT / m.group(1), (m.group(2) or "")[1:], m.start(), m.group(0))
    return found


@pytest.mark.parametrize("path", scanned_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_references_resolve_inside_the_repository(path: Path) -> None:
    assert not problems(path), "\n".join(problems(path))


def test_the_check_catches_dangling_references() -> None:
    # The checker itself must fail on the kinds of reference it exists to catch.
    found = problems(
        ROOT / "docs" / "probe.md",
        "See [the design](design.md#no-such-heading), [a page](nowhere.md),\n"
        "`proofs/no_such_proof.md`, " + "DESIGN" + " §2.1 and ../" + "shared/x.md.\n"
        "Fine: [layers](design.md#layers), `docs/sources.md`, [web](https://example.org).\n",
    )
    assert len(found) == 5, found
    assert any("#no-such-heading" in f for f in found)
    assert any("nowhere.md does not exist" in f for f in found)
    assert any("no_such_proof.md does not exist" in f for f in found)


ABSOLUTE_PATH = re.compile(r"(?<![\w.~])/(?:work|root|home|tmp)/[^\s`)\]'\"]*")


def absolute_paths(text: str) -> list[str]:
    """The absolute paths of one machine that a page names (a developer's checkout, home
    or scratch directory): they mean nothing to a reader.

    >>> absolute_paths("see /work/wt4/lead/x.py and docs/design.md, https://a.org/tmp/x")
    ['/work/wt4/lead/x.py']
    """
    return ABSOLUTE_PATH.findall(text)


def test_no_page_of_docs_names_an_absolute_path() -> None:
    # a page of docs/ (benchmarks' output included) is read on other machines: a path of
    # this one (a traceback's file names, a checkout under /work/ or /tmp/) is noise
    found = {
        str(page.relative_to(ROOT)): absolute_paths(page.read_text(encoding="utf-8"))
        for page in sorted((ROOT / "docs").rglob("*.md"))
    }
    found = {page: paths for page, paths in found.items() if paths}
    assert found == {}, (
        "write paths relative to the repository (benchmarks/x.py), or regenerate the page "
        f"after fixing what printed them: {found}"
    )
