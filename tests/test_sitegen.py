"""The site's own code (``sitegen/``): its link check fails a build, roles become links.

Fast checks of what tests/test_site.py (slow: a whole build and a browser) sees on the
built site. They need the ``docs`` extra (in ``dev``); without it they say why they skip.
"""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
griffe = pytest.importorskip(
    "griffe", reason="the docs extra is not installed: pip install -e '.[docs]'"
)
sys.path.insert(0, str(ROOT))
roles = importlib.import_module("sitegen.roles")


@pytest.mark.parametrize("name", ["sitegen.roles", "sitegen.links", "sitegen.hooks"])
def test_the_examples_in_sitegen_run(name):
    failed, tried = doctest.testmod(importlib.import_module(name))
    assert tried > 0 and failed == 0


def _site(tmp_path: Path, index: str) -> subprocess.CompletedProcess[str]:
    """Build a two-page site with the link check as its hook: ``secret.md`` is left out."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(index)
    (tmp_path / "docs" / "secret.md").write_text("# Secret\n")
    (tmp_path / "mkdocs.yml").write_text(
        textwrap.dedent(f"""\
            site_name: t
            theme: {{name: mkdocs}}
            exclude_docs: secret.md
            hooks: [{ROOT / "sitegen" / "links.py"}]
            """)
    )
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_link_to_a_page_left_out_of_the_site_fails_the_build(tmp_path):
    done = _site(tmp_path, "# Home\n\nSee [the secret](secret.md).\n")
    assert done.returncode != 0
    assert "1 broken internal link(s)" in done.stderr
    assert "index.html: secret/" in done.stderr


def test_a_site_whose_links_all_lead_somewhere_builds(tmp_path):
    done = _site(tmp_path, "# Home\n\nNo links here.\n")
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def package():
    extensions = griffe.load_extensions(roles.LinkRoles)
    return griffe.load("agentic_machines", search_paths=[str(ROOT)], extensions=extensions)


def _docstrings(obj):
    if obj.docstring is not None:
        yield obj.path, obj.docstring.value
    for member in obj.members.values():
        if not member.is_alias and member.parent is obj:
            yield from _docstrings(member)


def test_no_role_is_left_in_any_docstring(package):
    left = [path for path, text in _docstrings(package) if roles._ROLE.search(text)]
    assert left == []


def test_a_role_naming_a_documented_object_becomes_a_link_and_others_code(package):
    checking = package["checking"].docstring.value
    assert "[`check`][agentic_machines.checking.check]" in checking
    # agentic_machines._text is private: no API page has it, so its name is shown as code
    text = "\n".join(text for path, text in _docstrings(package["runtime.model_base"]))
    assert "`agentic_machines._text.clip_middle`" in text
    assert "][agentic_machines._text" not in text
