"""The documentation site: built strictly, served on 127.0.0.1, looked at in Chromium.

The checks are those of ``experiments/site_screenshots.py`` (one piece of code for both):
the home page, a tutorial chapter, the gallery and an API page render with no console
error and every image loads; the tutorial's formulas are typeset; search finds "SPE state".

Needs the ``docs`` extra (in ``dev``) and a Chromium (Debian's ``chromium``, which
``.ci/run`` installs); without them the test says why it skips. The site is built once,
into ``build/site``, and rebuilt only when a file it is made from is newer than it.

Marked slow (CI runs it, after ``.ci/run``'s strict build, and so does the thorough profile):
building the site from a fresh checkout and starting a browser take a minute or more of
the README test command's five on two cores, and the site is the documentation's check,
not the package's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _helpers import experiment

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "build" / "site"
SOURCES = ["docs", "proofs", "agentic_machines", "sitegen", "mkdocs.yml"]


def _newest_source() -> float:
    newest = 0.0
    for name in SOURCES:
        path = ROOT / name
        files = [path] if path.is_file() else (p for p in path.rglob("*") if p.is_file())
        newest = max([newest, *(p.stat().st_mtime for p in files if "__pycache__" not in p.parts)])
    return newest


@pytest.fixture(scope="module")
def site_report():
    pytest.importorskip(
        "mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'"
    )
    pytest.importorskip(
        "playwright.sync_api", reason="the docs extra is not installed: pip install -e '.[docs]'"
    )
    shots = experiment("site_screenshots")
    if shots.find_chromium() is None:
        pytest.skip("no Chromium on this machine: apt-get install chromium (.ci/run installs it)")
    index = SITE / "index.html"
    if not index.exists() or index.stat().st_mtime < _newest_source():
        shots.build_site(SITE)
        os.utime(index)
    return shots.look_at_site(SITE)


def test_pages_render_without_console_errors(site_report):
    reports, _ = site_report
    assert [r.name for r in reports] == [
        "home",
        "tutorial",
        "gallery",
        "api",
        "api-checking",
        "cek-chapter",
    ]
    for r in reports:
        assert r.console_errors == [], f"{r.url}: {r.console_errors}"


def test_every_image_loads(site_report):
    reports, _ = site_report
    gallery = next(r for r in reports if r.name == "gallery")
    assert gallery.images >= 10, "the gallery page should show its figures inline"
    for r in reports:
        assert r.broken_images == [], f"{r.url}: images that did not load: {r.broken_images}"


def test_math_is_typeset(site_report):
    reports, _ = site_report
    tutorial = next(r for r in reports if r.name == "tutorial")
    assert tutorial.formulas >= 5, "the tutorial's formulas should reach the page as MathML"
    for r in reports:
        assert r.formulas_typeset == r.formulas, f"{r.url}: formulas left as text"


def test_search_finds_spe_state(site_report):
    _, results = site_report
    assert results, "search for 'SPE state' listed nothing"
    assert any("SPE state" in text for text in results)


def test_gallery_figures_are_readable_and_link_to_their_file(site_report):
    reports, _ = site_report
    for r in reports:
        assert r.small_images == [], f"{r.url}: figures shown too small: {r.small_images}"
        assert r.unlinked_images == [], f"{r.url}: figures with no link to their file"


def test_api_pages_show_links_not_roles(site_report):
    reports, _ = site_report
    checking = next(r for r in reports if r.name == "api-checking")
    assert checking.roles_shown == 0, "a Sphinx role is shown as text on the checking page"
    assert checking.api_links >= 20, "the checking page should link to the names it cites"
    api = next(r for r in reports if r.name == "api")
    assert api.title.startswith("agentic_machines.machine "), api.title


def test_a_cases_brace_stretches(site_report):
    reports, _ = site_report
    chapter = next(r for r in reports if r.name == "cek-chapter")
    assert chapter.flat_braces == 0, "a cases brace is drawn one line high"
