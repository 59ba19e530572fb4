"""The models' documented import path: ``from agentic_machines.models import ...``.

The models live in the runtime layer (:mod:`agentic_machines.runtime.local_models`, which
re-exports :mod:`~agentic_machines.runtime.model_base` and
:mod:`~agentic_machines.runtime.http_model`); this module names the same objects, so
users import them from one short place and the package has one copy of each.

>>> from agentic_machines.models import ScriptedModel
>>> from agentic_machines.runtime import local_models
>>> ScriptedModel is local_models.ScriptedModel
True
"""

from __future__ import annotations

from .runtime.local_models import (
    DistributionModel,
    FunctionModel,
    MappingModel,
    Model,
    ModelBase,
    OpenAICompatibleModel,
    RandomModel,
    RecordingModel,
    ReplayModel,
    ScriptedModel,
    describe_difference,
    shorten,
)

__all__ = [
    "Model",
    "ModelBase",
    "ScriptedModel",
    "MappingModel",
    "FunctionModel",
    "DistributionModel",
    "RandomModel",
    "RecordingModel",
    "ReplayModel",
    "OpenAICompatibleModel",
    "shorten",
    "describe_difference",
]
