"""Deprecated path: the contrast moved to :mod:`agentic_machines.contrast`.

It is library code (drawing, experiments and the tutorial use it), so it left ``cli/``
(issue 26). This module re-exports the same names so that code written against the old
path, which ``docs/reference/contrast.md`` once documented, keeps working; import from
:mod:`agentic_machines.contrast` instead.

>>> from agentic_machines.cli.contrast import contrast_rows
>>> from agentic_machines import contrast
>>> contrast_rows is contrast.contrast_rows
True
"""

from __future__ import annotations

from ..contrast import *  # noqa: F403 (the deprecated path re-exports the whole module)
from ..contrast import __all__ as __all__
