"""The runtime layer: models, running a machine against a model, traces, exploration and
generator harnesses as machines.

It builds on the formal core (``agentic_machines.machine``) and knows nothing of the CEK
evaluator, the architectures or drawing. See ``docs/design.md`` for the layers.
"""
