"""A Griffe extension: turn the docstrings' Sphinx roles into links on the API pages.

The docstrings cite each other the way Sphinx does (``:func:`explore```,
``:class:`~agentic_machines.errors.TraceError```); mkdocstrings would print those roles
as they are. Once the whole package is loaded, each role whose target is a documented
public object becomes an autorefs link (``[`explore`][agentic_machines.runtime.explore.explore]``),
which mkdocs-autorefs resolves to the anchor on that object's API page; any other role
(a private helper, a standard-library name) becomes plain code. A link autorefs cannot
resolve is a warning, and the strict build fails on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import griffe

PACKAGE = "agentic_machines"
# A target may be wrapped onto the next line after a dot (the source's lines are short).
_ROLE = re.compile(
    r":(?:func|class|meth|mod|data|attr|exc|obj):`(~?)([\w.]+(?:\n\s*[\w.]+)?)(\(\))?`"
)


def rewrite_roles(text: str, target_of: Callable[[str], str | None]) -> str:
    """Replace each role in ``text`` by a link to ``target_of(name)``, or by code when that is None.

    Fenced code (the doctests) is left as it is.

    >>> where = {"explore": "pkg.explore.explore", "pkg.explore.explore": "pkg.explore.explore"}.get
    >>> rewrite_roles("See :func:`explore` and :class:`~pkg.Other`.", where)
    'See [`explore`][pkg.explore.explore] and `Other`.'
    >>> rewrite_roles("```pycon\\n>>> ':func:`x`'\\n```", where).splitlines()[1]
    ">>> ':func:`x`'"
    >>> rewrite_roles("by :func:`~pkg.explore.\\n    explore`", where)
    'by [`explore`][pkg.explore.explore]'
    """

    def replace(match: re.Match[str]) -> str:
        short, parens = match.group(1), match.group(3) or ""
        name = re.sub(r"\s+", "", match.group(2))
        shown = (name.rsplit(".", 1)[-1] if short else name) + parens
        target = target_of(name)
        return f"[`{shown}`][{target}]" if target else f"`{shown}`"

    # Prose and fences alternate; only the prose (even chunks) is rewritten.
    chunks = re.split(r"(^[ \t]*```.*?^[ \t]*```[ \t]*$)", text, flags=re.M | re.S)
    return "".join(c if i % 2 else _ROLE.sub(replace, c) for i, c in enumerate(chunks))


def _documented(obj: griffe.Object) -> bool:
    """Whether the API pages render ``obj`` with an anchor: public all the way, with a docstring."""
    parts = obj.path.split(".")
    if parts[0] != PACKAGE or any(part.startswith("_") for part in parts):
        return False
    return obj.is_module or obj.docstring is not None


def _lookup(root: griffe.Module, path: str) -> griffe.Object | None:
    """The object at a dotted ``path`` under ``root``, following imports to their definition."""
    if path != PACKAGE and not path.startswith(PACKAGE + "."):
        return None
    try:
        found = root if path == PACKAGE else root[path[len(PACKAGE) + 1 :]]
        return found.final_target if found.is_alias else found
    except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _target(root: griffe.Module, scope: griffe.Object, name: str) -> str | None:
    """The path of the documented object ``name`` means in ``scope``, or None."""
    head, _, rest = name.partition(".")
    if head == PACKAGE:
        path = name
    else:
        try:
            path = scope.resolve(head) + (f".{rest}" if rest else "")
        except griffe.NameResolutionError:
            return None
    found = _lookup(root, path)
    return found.path if found is not None and _documented(found) else None


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if not member.is_alias and member.parent is obj:
            yield from _objects(member)


class LinkRoles(griffe.Extension):
    """Rewrite the roles of every docstring in the package once it is completely loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:  # noqa: ARG002
        if pkg.path != PACKAGE:
            return
        for obj in _objects(pkg):
            if obj.docstring is not None:
                scope = obj if not obj.is_attribute else obj.parent
                obj.docstring.value = rewrite_roles(
                    obj.docstring.value, lambda name, s=scope: _target(pkg, s, name)
                )
