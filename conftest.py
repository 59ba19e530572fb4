"""Imports the package's modules by their own names before pytest collects any of its files.

``--doctest-modules --import-mode=importlib`` imports each module file it collects; when
the first file collected is a submodule (``pytest agentic_machines/machine.py``), that
import starts the package's ``__init__`` half-way through the submodule, and a second copy
of the submodule is executed, with its own ``HALT`` or its own node classes. Importing
every module first makes pytest find each one already in ``sys.modules``, so there is one
copy, whichever files a run names (``__main__`` is left out: importing it runs the CLI).

The modules are imported when collection starts, not when this file is loaded: the
pytest-xdist controller of the README's command collects nothing (its workers do), and
importing every adapter's framework there cost each run about 5 s before the workers start.
After collection, what was imported and collected is frozen out of the cyclic collector's
walk (``gc.freeze``).
"""

import gc
import importlib
import pkgutil
from pathlib import Path

import pytest

import agentic_machines

# An adapter whose framework (an optional extra) is not installed cannot be imported: its
# doctests are not collected, and its tests skip naming the extra (pytest.importorskip).
_UNIMPORTABLE: set[Path] = set()
_ROOT = Path(agentic_machines.__file__).resolve().parent.parent


def import_every_module() -> None:
    """Import each module of the package by its own name (``__main__`` aside)."""
    for module in pkgutil.walk_packages(agentic_machines.__path__, "agentic_machines."):
        if module.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:
            if not module.name.startswith("agentic_machines.adapters."):
                raise
            _UNIMPORTABLE.add(_ROOT / (module.name.replace(".", "/") + ".py"))


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    # xdist's controller (its "dsession" plugin) hands collection to its workers
    if not session.config.pluginmanager.has_plugin("dsession"):
        import_every_module()


def pytest_collection_finish(session: pytest.Session) -> None:
    # The modules, frameworks and collected tests live until the process ends: moved out of
    # the cyclic collector's reach, its full collections stop walking them (440 000
    # objects in a worker of the README's command), which cut the CPU of the tests by
    # 10-55% where measured (most where a test makes the collector run often)
    gc.freeze()


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    return True if collection_path.resolve() in _UNIMPORTABLE else None
