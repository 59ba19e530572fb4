"""Imports the package by its own name before pytest collects any of its files.

``--doctest-modules --import-mode=importlib`` imports each module file it collects; when
the first file collected is a submodule (``pytest agentic_machines/machine.py``), that
import starts the package's ``__init__`` half-way through the submodule, and a second copy
of the submodule is executed, with its own ``HALT`` and ``DIVERGE``. Importing the package
first makes pytest find every module already in ``sys.modules``, so there is one copy.
"""

import agentic_machines  # noqa: F401
