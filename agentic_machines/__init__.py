"""agentic-machines: the formal theory of LLM agents, executable.

The public API of DESIGN §4.1. Import everything from here:

>>> from agentic_machines import TableMachine, HALT, DIVERGE
>>> HALT, DIVERGE
(1, ↑)
"""
from .errors import (
    AgenticMachinesError,
    InvalidArgument,
    InvalidMachine,
    ScriptExhausted,
    Undecided,
)
from .embedding import Embedding, check_embedding, compose, find_embeddings, identity
from .generation import (
    cardinality_obstruction,
    completion_generates,
    is_spe_state,
    prompt_obstruction,
    spe_states,
    successors,
)
from .harness import HarnessMachine, TraceState
from .kernel import check_kernel_form, kernel, pushforward
from .machine import DIVERGE, HALT, AgenticMachine, FunctionMachine, Outcome, TableMachine, is_sentinel
from .run import Trace, run
from .verdict import Obstruction, Verdict, Witness

__version__ = "0.1.0"

__all__ = [
    "HALT",
    "DIVERGE",
    "Outcome",
    "is_sentinel",
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
