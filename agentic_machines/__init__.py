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
from .harness import HarnessMachine, TraceState
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
