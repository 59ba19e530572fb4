"""Shared test configuration: Hypothesis profiles.

``ci`` (the default) keeps the whole suite under five minutes on two cores and is
derandomized, so a CI run is reproducible; ``thorough`` runs many more examples for
releases: ``HYPOTHESIS_PROFILE=thorough pytest``.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=100,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=2_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
# Per-test example counts that differ by profile: agentic_machines.strategies.examples.
