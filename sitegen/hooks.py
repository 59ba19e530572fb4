"""MkDocs hooks that turn the Markdown of ``docs/`` and ``proofs/`` into the site.

The Markdown files stay the source of truth and read well on their own (the tests run
every example in them); these hooks add only what a site needs:

- the navigation, built from the files so that a new page can never be left out;
- the proofs, which live in ``proofs/`` beside the package, as pages under ``proofs/``;
- one API page per public module, rendered from its docstrings by mkdocstrings;
- math: ``$...$`` becomes MathML at build time, so no script and no network is needed.

The built pages' links are checked by the other hook, ``sitegen/links.py``.
"""

from __future__ import annotations

import html
import pkgutil
import posixpath
import re
from pathlib import Path

import latex2mathml.converter
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
PROOFS = ROOT / "proofs"
PACKAGE = "agentic_machines"

# The tutorial's reading order and the order of the sections; pages not named here are
# listed after the named ones of their section, alphabetically.
TOP = ["index.md", "design.md", "sources.md"]
SECTIONS = [
    ("Tutorial", "tutorial/"),
    ("Guides", None),
    ("Results", None),
    ("Reference", "reference/"),
    ("API", "api/"),
    ("Proofs", "proofs/"),
]
GUIDES = [
    "machine-files.md",
    "openai-agents.md",
    "frameworks.md",
    "checking.md",
    "exercises.md",
    "glossary.md",
    "gallery.md",
    "viewing.md",
    "notebooks/tour.ipynb",
    "threat_model.md",
]


def _public_modules() -> list[str]:
    """Every importable module of the package whose dotted name has no private part."""
    names = [PACKAGE]
    for info in pkgutil.walk_packages([str(ROOT / PACKAGE)], prefix=PACKAGE + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def on_files(files: Files, config) -> Files:
    """Add the proofs and the generated API pages to the site's files."""
    for proof in sorted(PROOFS.glob("*.md")):
        files.append(
            File.generated(config, f"proofs/{proof.name}", content=proof.read_text("utf-8"))
        )
    # The Coq proofs: their README as a page, the .v files as they are (links from the
    # Markdown proofs point at them).
    for coq in sorted((PROOFS / "coq").rglob("*")):
        if coq.suffix in (".md", ".v"):
            files.append(
                File.generated(
                    config,
                    f"proofs/{coq.relative_to(PROOFS).as_posix()}",
                    content=coq.read_text("utf-8"),
                )
            )
    files.append(
        File.generated(
            config,
            "proofs/index.md",
            content="# Proofs\n\nOne page per fact and theorem; each ends with the check "
            "the test suite runs.\n\n"
            + "".join(f"- [{p.stem}]({p.name})\n" for p in sorted(PROOFS.glob("*.md")))
            + "\nThe facts F1–F6, proved again in Coq: [the Coq files](coq/README.md).\n",
        )
    )
    modules = _public_modules()
    for name in modules:
        # The title is the module's dotted name (MkDocs would make "Agentic machines.x" of
        # the file name).
        page = f"---\ntitle: {name}\n---\n\n::: {name}\n"
        files.append(File.generated(config, f"api/{name}.md", content=page))
    files.append(
        File.generated(
            config,
            "api/index.md",
            content="# API\n\nGenerated from the docstrings of every public module. The "
            "[reference pages](../reference/machine.md) add a runnable example to each.\n\n"
            + "".join(f"- [`{name}`]({name}.md)\n" for name in modules),
        )
    )
    return files


def _section_of(src: str) -> str:
    if src in TOP:
        return ""
    for title, prefix in SECTIONS:
        if prefix and src.startswith(prefix):
            return title
    return "Guides" if src in GUIDES else "Results"


def _stem(src: str) -> str:
    return src.rsplit(".", 1)[0]


def on_nav(nav, config, files):  # noqa: ARG001 (the hook's signature is MkDocs')
    """Rebuild the navigation from the files: every page is listed, in a fixed order."""
    from mkdocs.structure.nav import get_navigation

    pages = [f.src_uri for f in files.documentation_pages() if not f.src_uri.startswith("_")]
    grouped: dict[str, list[str]] = {}
    for src in pages:
        grouped.setdefault(_section_of(src), []).append(src)

    def order(section: str, items: list[str]) -> list[str]:
        wanted = {"": TOP, "Guides": GUIDES}.get(section, [])
        index = [s for s in items if s.endswith("/index.md")]
        named = [s for s in wanted if s in items]
        # By the name without its suffix, so that a module comes before its submodules.
        rest = sorted((s for s in items if s not in named and s not in index), key=_stem)
        return index + named + rest

    config.nav = order("", grouped.get("", [])) + [
        {title: order(title, grouped[title])} for title, _ in SECTIONS if title in grouped
    ]
    return get_navigation(files, config)


_LINK = re.compile(r"(\]\()([^)\s#]+)([^)]*\))")


def on_page_markdown(markdown: str, page, config, files):  # noqa: ARG001
    """Point links into ``proofs/`` (outside ``docs/``) at the proofs' pages and files on the site."""
    docs = Path(config.docs_dir).resolve()
    here = posixpath.dirname(page.file.src_uri)

    def rewrite(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            return match.group(0)
        on_disk = (docs / here / target).resolve()
        if not on_disk.is_relative_to(PROOFS):
            return match.group(0)
        new = posixpath.relpath(f"proofs/{on_disk.relative_to(PROOFS).as_posix()}", here or ".")
        return match.group(1) + new + match.group(3)

    return _LINK.sub(rewrite, markdown)


_MATH = re.compile(
    r'<(span|div) class="arithmatex">\s*(?:\\\((.*?)\\\)|\\\[(.*?)\\\]|\$\$(.*?)\$\$)\s*</\1>',
    re.S,
)


# Browsers implement MathML Core, where ``mathvariant`` means nothing but "normal": the
# font each variant names is given as a style instead (``\\mathtt`` would show as italics).
_VARIANT_STYLE = {
    "monospace": "font-family: monospace",
    "sans-serif": "font-family: sans-serif",
    "bold": "font-weight: bold",
    "italic": "font-style: italic",
}


def _mathml(match: re.Match[str]) -> str:
    inline = match.group(1) == "span"
    tex = html.unescape(next(g for g in match.groups()[1:] if g is not None)).strip()
    mathml = latex2mathml.converter.convert(tex, display="inline" if inline else "block")
    return re.sub(
        r'mathvariant="([a-z-]+)"',
        lambda m: (
            f'mathvariant="normal" style="{_VARIANT_STYLE[m.group(1)]}"'
            if m.group(1) in _VARIANT_STYLE
            else m.group(0)
        ),
        mathml,
    )


_IMAGE = re.compile(r"<img\b[^>]*?\bsrc=\"([^\"]+)\"[^>]*>")


def link_images(content: str) -> str:
    """Wrap each image that is not already a link in a link to its file (the full size).

    >>> link_images('<p><img alt="g" src="g.png" /></p>')
    '<p><a href="g.png"><img alt="g" src="g.png" /></a></p>'
    >>> link_images('<a href="x/"><img src="g.png"></a>')
    '<a href="x/"><img src="g.png"></a>'
    """

    def wrap(match: re.Match[str]) -> str:
        before = content[: match.start()]
        if before.rfind("<a ") > before.rfind("</a>"):
            return match.group(0)
        return f'<a href="{match.group(1)}">{match.group(0)}</a>'

    return _IMAGE.sub(wrap, content)


def on_page_content(content: str, page, config, files):  # noqa: ARG001
    """Replace each formula arithmatex found with its MathML; make each image a link to itself."""
    return link_images(_MATH.sub(_mathml, content))
