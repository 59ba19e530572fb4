"""Deprecated path: golden files moved to :mod:`agentic_machines.testing`.

Golden files of prompts and traces are test support that users get too, so they left
``architectures/`` (issue 26). This module re-exports the same names so that code written
against the old path keeps working; import from :mod:`agentic_machines.testing` instead.

>>> from agentic_machines.architectures.goldens import check_golden
>>> from agentic_machines import testing
>>> check_golden is testing.check_golden
True
"""

from __future__ import annotations

from ..testing import *  # noqa: F403 (the deprecated path re-exports the whole module)
from ..testing import __all__ as __all__
