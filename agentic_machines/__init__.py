"""agentic-machines: the formal theory of LLM agents, executable.

Layout, one folder per layer (``docs/design.md`` says what flows between them):

- this folder, the formal core: ``machine`` (agentic machines, HALT, DIVERGE),
  ``embedding``, ``generation`` (completion-generation, SPE states), ``kernel``,
  ``verdict``, ``errors``, ``fixtures`` and the Hypothesis ``strategies``;
- ``runtime/``: models, ``run`` and traces, ``explore`` (and ``parallel``), generator
  harnesses as machines;
- ``execution/``: running model-written code (line budgets, the executor);
- ``cek/``: the CEK agentic evaluator (syntax, values, expr, reader, printer, machine,
  evaluator, theorem, realize);
- ``architectures/``: ReAct, RLM, REPL-Plan, THREAD and SPE as agentic machines, and
  the ``Architecture`` protocol they follow;
- ``drawing/``: diagrams, notebook display, the gallery;
- ``exercises/``: checkers for the tutorial's exercises;
- ``cli/``: the ``agentic-machines`` command, the catalog, demo, glossary and contrast.

Layers import downwards only: the core imports nothing above it; ``cli`` may import
everything (``docs/design.md`` lists the three exceptions and why). Import
the public API from here:

>>> from agentic_machines import TableMachine, HALT, DIVERGE
>>> HALT, DIVERGE
(1, ↑)
"""

from . import models  # noqa: F401 (agentic_machines.models, the models' documented path)
from .drawing import display as _display  # noqa: F401 (importing it attaches the notebook display)
from .embedding import Embedding, check_embedding, compose, find_embeddings, identity
from .errors import (
    AgenticMachinesError,
    InvalidArgument,
    InvalidMachine,
    ScriptExhausted,
    Undecided,
)
from .generation import (
    cardinality_obstruction,
    completion_generates,
    is_spe_state,
    prompt_obstruction,
    spe_states,
    successors,
)
from .kernel import check_kernel_form, kernel, pushforward
from .machine import (
    DIVERGE,
    HALT,
    AgenticMachine,
    FunctionMachine,
    Outcome,
    TableMachine,
    is_sentinel,
    show_outcome,
)
from .runtime.agent import AgentRaised, agent_machine, effect
from .runtime.harness import HarnessMachine, TraceState
from .runtime.run import Trace, run
from .verdict import Obstruction, Verdict, Witness

__version__ = "0.1.0"

__all__ = [
    "HALT",
    "DIVERGE",
    "Outcome",
    "is_sentinel",
    "show_outcome",
    "AgenticMachine",
    "TableMachine",
    "FunctionMachine",
    "Embedding",
    "identity",
    "compose",
    "check_embedding",
    "find_embeddings",
    "successors",
    "completion_generates",
    "is_spe_state",
    "spe_states",
    "prompt_obstruction",
    "cardinality_obstruction",
    "kernel",
    "pushforward",
    "check_kernel_form",
    "HarnessMachine",
    "agent_machine",
    "effect",
    "AgentRaised",
    "TraceState",
    "run",
    "Trace",
    "Verdict",
    "Obstruction",
    "Witness",
    "AgenticMachinesError",
    "InvalidArgument",
    "InvalidMachine",
    "ScriptExhausted",
    "Undecided",
]
