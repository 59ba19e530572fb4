"""Deprecated path: the catalog moved to :mod:`agentic_machines.catalog`.

It is library code (drawing, experiments and the tutorial use it), so it left ``cli/``
(issue 26). This module re-exports the same names so that code written against the old
path, which ``docs/reference/catalog.md`` once documented, keeps working; import from
:mod:`agentic_machines.catalog` instead.

>>> from agentic_machines.cli.catalog import resolve
>>> from agentic_machines import catalog
>>> resolve is catalog.resolve
True
"""

from __future__ import annotations

from ..catalog import *  # noqa: F403 (the deprecated path re-exports the whole module)
from ..catalog import __all__ as __all__
