"""Imports the package's modules by their own names before pytest collects any of its files.

``--doctest-modules --import-mode=importlib`` imports each module file it collects; when
the first file collected is a submodule (``pytest agentic_machines/machine.py``), that
import starts the package's ``__init__`` half-way through the submodule, and a second copy
of the submodule is executed, with its own ``HALT`` or its own node classes. Importing
every module first makes pytest find each one already in ``sys.modules``, so there is one
copy, whichever files a run names (``__main__`` is left out: importing it runs the CLI).
"""

import importlib
import pkgutil

import agentic_machines

# An adapter whose framework (an optional extra) is not installed cannot be imported: its
# doctests are not collected, and its tests skip naming the extra (pytest.importorskip).
collect_ignore = []

for _module in pkgutil.walk_packages(agentic_machines.__path__, "agentic_machines."):
    if _module.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(_module.name)
    except ImportError:
        if not _module.name.startswith("agentic_machines.adapters."):
            raise
        collect_ignore.append(_module.name.replace(".", "/") + ".py")
