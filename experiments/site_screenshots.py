"""Build the documentation site, serve it on 127.0.0.1, and look at it in headless Chromium.

    python experiments/site_screenshots.py            # PNGs into build/site-screenshots/
    python experiments/site_screenshots.py OUT_DIR    # ... or somewhere else

For each page a reader meets first (the home page, a tutorial chapter, the gallery and an
API page) it saves a full-page screenshot and prints what it found: console errors,
images that failed to load, formulas typeset, and whether search finds "SPE state".
tests/test_site.py runs the same checks and fails on any finding.

It needs the ``docs`` extra (MkDocs and Playwright's Python driver) and a Chromium: Debian's
``chromium`` (``apt-get install chromium``; ``.ci/run`` installs it). Playwright drives that
browser; it never downloads one of its own.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "site-screenshots"

# The pages a reader meets first, by their path on the site.
PAGES = {
    "home": "",
    "tutorial": "tutorial/01_agentic_machines/",
    "gallery": "gallery/",
    "api": "api/agentic_machines.machine/",
    "api-checking": "api/agentic_machines.checking/",
    "cek-chapter": "tutorial/04_cek_evaluator/",
}
# An image is shown at a readable size when it is this wide on the page (CSS pixels), or
# at its own width when that is smaller; and each one links to its full-size file.
READABLE_WIDTH = 600
SEARCH_TERM = "SPE state"

# Chromium as root in a container, with no network to phone home to.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def find_chromium() -> str | None:
    """The path of a Chromium this machine has, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def build_site(site_dir: Path) -> None:
    """``mkdocs build --strict`` into ``site_dir``; a warning fails it with its output."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}")


@contextlib.contextmanager
def serve(site_dir: Path) -> Iterator[str]:
    """Serve ``site_dir`` on 127.0.0.1 (a free port) until the block ends; yields the URL."""
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@dataclass
class PageReport:
    """What one page showed in the browser."""

    name: str
    url: str
    console_errors: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)
    images: int = 0
    formulas: int = 0
    formulas_typeset: int = 0
    small_images: list[str] = field(default_factory=list)
    unlinked_images: list[str] = field(default_factory=list)
    roles_shown: int = 0
    api_links: int = 0
    title: str = ""
    flat_braces: int = 0
    screenshot: Path | None = None


# Every <img> of the page's content: its src, whether the browser decoded it, its width
# on the page and its own, and whether a link around it leads to its file.
_IMAGES_JS = """() => Array.from(document.querySelectorAll('article img')).map(i => {
  const a = i.closest('a');
  return [i.currentSrc || i.src, i.complete && i.naturalWidth > 0,
          i.getBoundingClientRect().width, i.naturalWidth, !!a && a.href === i.src]; })"""
# Sphinx roles left as text (``:func:`x```) and cross-references rendered as links.
_ROLES_JS = """() => [(document.body.innerText.match(/:(func|class|meth|mod|data|attr|exc|obj):\\S/g)
  || []).length, document.querySelectorAll('a.autorefs-internal').length]"""
# Stretchy operators (a cases brace) of display formulas that are no taller than a line.
_BRACES_JS = """() => Array.from(document.querySelectorAll('math[display="block"] mo[stretchy="true"]'))
  .filter(o => o.closest('mrow').querySelector('mtable')
               && o.getBoundingClientRect().height < 1.5 * parseFloat(getComputedStyle(o).fontSize))
  .length"""
# Every MathML formula, and how many the browser laid out as math (display 'math'
# or 'block math', with a size): MathML the browser ignored would be inline text.
_MATH_JS = """() => { const m = Array.from(document.querySelectorAll('math'));
  const ok = m.filter(e => getComputedStyle(e).display.includes('math')
                        && e.getBoundingClientRect().width > 0);
  return [m.length, ok.length]; }"""


def look(browser, base: str, name: str, path: str, shots: Path | None) -> PageReport:
    """Open one page, wait for it to settle, and report what it shows."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    report = PageReport(name, base + path)
    page.on("console", lambda m: m.type == "error" and report.console_errors.append(m.text))
    page.on("pageerror", lambda e: report.console_errors.append(str(e)))
    response = page.goto(report.url, wait_until="load")
    if response is None or not response.ok:
        report.console_errors.append(f"HTTP {response.status if response else '?'}")
    page.wait_for_load_state("networkidle")
    for src, ok, width, natural, linked in page.evaluate(_IMAGES_JS):
        report.images += 1
        if not ok:
            report.broken_images.append(src)
        if width + 1 < min(natural, READABLE_WIDTH):
            report.small_images.append(f"{src} at {width:.0f} px of {natural}")
        if not linked:
            report.unlinked_images.append(src)
    report.formulas, report.formulas_typeset = page.evaluate(_MATH_JS)
    report.roles_shown, report.api_links = page.evaluate(_ROLES_JS)
    report.flat_braces = page.evaluate(_BRACES_JS)
    report.title = page.title()
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        report.screenshot = shots / f"{name}.png"
        page.screenshot(path=str(report.screenshot), full_page=True)
    page.close()
    return report


def search(browser, base: str, term: str, shots: Path | None) -> list[str]:
    """Type ``term`` into the site's search box; the titles of the results it lists."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(base, wait_until="load")
    page.click("label.md-search__icon, .md-search__input")
    page.fill("input.md-search__input", term)
    page.wait_for_selector(".md-search-result__item", timeout=30_000)
    titles = page.locator(".md-search-result__item").all_inner_texts()
    if shots is not None:
        page.screenshot(path=str(shots / "search.png"))
    page.close()
    return titles


def look_at_site(site_dir: Path, shots: Path | None = None) -> tuple[list[PageReport], list[str]]:
    """Serve the built site and report on every page of :data:`PAGES` and on search."""
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("no Chromium found: apt-get install chromium")
    with serve(site_dir) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            reports = [look(browser, base, n, p, shots) for n, p in PAGES.items()]
            results = search(browser, base, SEARCH_TERM, shots)
        finally:
            browser.close()
    return reports, results


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    site = ROOT / "build" / "site"
    build_site(site)
    reports, results = look_at_site(site, out)
    for r in reports:
        print(
            f"{r.name:9} {r.url}\n  console errors: {r.console_errors or 'none'}; "
            f"images: {r.images} ({len(r.broken_images)} broken); "
            f"formulas: {r.formulas_typeset}/{r.formulas} typeset; screenshot: {r.screenshot}"
        )
    print(f"search {SEARCH_TERM!r}: {len(results)} results; first: {results[:1]}")
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main(sys.argv[1:]))
