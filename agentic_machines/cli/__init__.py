"""The command-line layer: the ``agentic-machines`` command and what only it needs (the
catalog of machines by name, the demo, the glossary behind ``explain``, the contrast
table).

>>> callable(main)
True
"""

from .commands import main

__all__ = ["main"]
