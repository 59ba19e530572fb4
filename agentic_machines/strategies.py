"""Hypothesis strategies and profiles for testing agentic machines.

Public so that users can property-test their own machines and harnesses with the
same generators we use. ``examples(ci, thorough)`` picks an example count by the active
profile: the default ``ci`` profile keeps a suite fast; ``HYPOTHESIS_PROFILE=thorough``
runs the larger number.

>>> examples(100, 5000) in (100, 5000)
True
"""
from __future__ import annotations

import os

__all__ = ["examples", "thorough"]


def thorough() -> bool:
    """True when the ``thorough`` Hypothesis profile is selected (``HYPOTHESIS_PROFILE``)."""
    return os.environ.get("HYPOTHESIS_PROFILE") == "thorough"


def examples(ci: int, thorough_count: int) -> int:
    """The number of examples for a property test under the active profile.

    >>> examples(10, 10)
    10
    """
    return thorough_count if thorough() else ci
