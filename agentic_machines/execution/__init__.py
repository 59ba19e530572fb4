"""The execution layer: running model-written code for the code-acting architectures
(RLM, REPL-Plan), with line budgets and isolation.

See ``docs/design.md`` for the layers and ``docs/reference/codeexec.md`` for what the
in-process runner does and does not stop.
"""
