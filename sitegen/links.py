"""The built site's link check: every internal link and image of every page leads to a file.

MkDocs checks the links it understands in the Markdown, but a link to a page left out
of the site (``exclude_docs``) is only logged at INFO level, and links that appear in
generated HTML (the API pages, the notebook) are never checked. This looks at what a
reader gets: each ``href`` and ``src`` of each built HTML page, resolved as a browser
would, must name a file of the site. As an MkDocs hook (``mkdocs.yml``), it fails the
build on any miss.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from mkdocs.exceptions import PluginError

_ATTRIBUTE = re.compile(r"""\s(?:href|src)\s*=\s*(["'])(.*?)\1""", re.I | re.S)


def _target(site: Path, page: str, link: str) -> Path | None:
    """The file of the site ``link`` on ``page`` leads to, or None for an external link."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith(("#", "mailto:", "data:")):
        return None
    path = unquote(parts.path)
    if not path:
        return None
    if path.startswith("/"):
        joined = path.lstrip("/")
    else:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    target = site / joined
    return target / "index.html" if path.endswith("/") or target.is_dir() else target


def broken_links(site: Path) -> list[str]:
    """Each internal link of the built site at ``site`` whose file does not exist, as ``page: link``.

    >>> import tempfile
    >>> site = Path(tempfile.mkdtemp())
    >>> (site / "a").mkdir()
    >>> _ = (site / "a" / "index.html").write_text('<a href="../b/">b</a> <img src="x.png">')
    >>> _ = (site / "a" / "x.png").write_bytes(b"")
    >>> broken_links(site)
    ['a/index.html: ../b/']
    >>> (site / "b").mkdir(); _ = (site / "b" / "index.html").write_text('<a href="#top">')
    >>> broken_links(site)
    []
    """
    missing = []
    for page in sorted(site.rglob("*.html")):
        name = page.relative_to(site).as_posix()
        for _, link in _ATTRIBUTE.findall(page.read_text("utf-8", errors="replace")):
            target = _target(site, name, link.strip())
            if target is not None and not target.is_file():
                missing.append(f"{name}: {link.strip()}")
    return missing


def on_post_build(config) -> None:
    """Fail the build when a built page links to a file the site does not have."""
    missing = broken_links(Path(config.site_dir))
    if missing:
        raise PluginError(
            f"{len(missing)} broken internal link(s) in the built site; fix or remove them:\n  "
            + "\n  ".join(missing)
        )
