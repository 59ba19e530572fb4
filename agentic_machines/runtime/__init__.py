"""The runtime layer: models, running a machine against a model, traces, exploration and
generator harnesses as machines.

It builds on the formal core (``agentic_machines.machine``) and knows nothing of the CEK
evaluator, the architectures or drawing. See ``docs/design.md`` for the layers.
"""

from collections.abc import Callable
from typing import Any

graph_viewer: Callable[..., Any] | None = None
"""The notebook view of an explored graph (``StateGraph.view``): registered by
``agentic_machines.drawing.display``, which the package imports, so that this layer never
imports the drawing layer."""
