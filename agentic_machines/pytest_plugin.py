"""The pytest plugin ``agentic``: an agent and its properties as a pytest test.

Installed with the package (the ``pytest11`` entry point ``agentic``); ``pytest -p
no:agentic`` turns it off. The fixture ``agentic`` checks an agent, which may be an agent
function ``fn(model)``, an :class:`~agentic_machines.machine.AgenticMachine` (an
adapter's ``machine(...)`` is one) or a framework's agent object with ``input=``::

    def test_weather(agentic):
        agentic.check(build(), never_raises(), halts_within(4))

The check is exhaustive to a bound (``--agentic-depth``, ``--agentic-max-states``) or,
with ``hypothesis=N``, N sampled runs (``--agentic-seed``); ``--agentic-line-budget``
bounds an agent function's lines per step. Each option has an ini setting of the same
name with underscores (``agentic_depth = 6`` under ``[tool.pytest.ini_options]``), and
``@pytest.mark.agentic(depth=..., max_states=..., hypothesis=...)`` sets them per test.

A failure is reported in pytest's terms: the property, the shortest counterexample as a
numbered table of prompts (each cut to where it differs from the one before) and
completions, each step's effects, and the command that replays it. Each failing run is
saved in a database under the rootdir (``.agentic/``, ini ``agentic_database``), as
Hypothesis keeps its examples: the next run of the test replays it before any search,
and tests with a saved failure run first. The report's text is
:func:`agentic_machines.checking.report.failure_report`'s.

Importing the package never imports this module, and this module imports the package's
checkers only when a test uses the fixture.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["AgenticChecker", "pytest_addoption", "pytest_configure", "agentic"]

_OPTIONS = (
    # (name, type, default, help)
    ("depth", int, 6, "steps the exhaustive search follows from the start (default 6)"),
    ("max_states", int, 2_000, "states the exhaustive search records at most (default 2000)"),
    (
        "line_budget",
        int,
        100_000,
        "Python lines an agent function's step may run without calling the model (default 100000)",
    ),
    ("seed", int, None, "seed of the sampled runs of hypothesis=N checks (default: derandomized)"),
)

_NAMES = {option[0] for option in _OPTIONS}


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--agentic-depth``, ``--agentic-max-states``, ``--agentic-line-budget``,
    ``--agentic-seed`` and their ini settings; ``agentic_database`` (ini only)."""
    group = parser.getgroup("agentic", "agentic-machines: agents checked as tests")
    for name, kind, default, text in _OPTIONS:
        flag = "--agentic-" + name.replace("_", "-")
        group.addoption(flag, dest="agentic_" + name, type=kind, default=None, help=text)
        parser.addini("agentic_" + name, text, default=None if default is None else str(default))
    parser.addini(
        "agentic_database",
        "folder (relative to the rootdir) of the saved failing runs (default .agentic)",
        default=".agentic",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "agentic(depth=None, max_states=None, line_budget=None, seed=None, hypothesis=None): "
        "settings of the agentic fixture's checks in this test",
    )


def pytest_collection_modifyitems(session: pytest.Session, config: Any, items: list) -> None:
    """Tests with a saved failing run go first (as ``--failed-first`` does for failures)."""
    database = _database(config)
    if database is None or not items:
        return
    failing = [i for i in items if database.has(i.nodeid)]
    if failing:
        rest = [i for i in items if not database.has(i.nodeid)]
        items[:] = failing + rest


def _database(config: Any) -> Any:
    from .checking.database import ExampleDatabase  # the package only when it is needed

    folder = config.rootpath / (config.getini("agentic_database") or ".agentic")
    return ExampleDatabase(folder) if folder.is_dir() else None


def _setting(request: Any, name: str) -> Any:
    marker = request.node.get_closest_marker("agentic")
    if marker is not None and marker.kwargs.get(name) is not None:
        return marker.kwargs[name]
    if name not in _NAMES:  # a marker-only setting (hypothesis=N)
        return None
    value = request.config.getoption("agentic_" + name)
    if value is not None:
        return value
    text = request.config.getini("agentic_" + name)
    if text in (None, ""):
        return None
    try:
        return int(text)
    except ValueError:
        raise pytest.UsageError(
            f"ini setting agentic_{name} = {text!r} is not an integer; write a whole number"
        ) from None


class AgenticChecker:
    """What the ``agentic`` fixture gives a test: :meth:`check`."""

    def __init__(self, request: Any) -> None:
        self._request = request

    def check(
        self,
        agent: Any,
        *properties: Any,
        completions: Any = None,
        input: Any = None,
        start: Any = None,
        hypothesis: int | None = None,
        target: str | None = None,
        stop_early: bool = True,
    ) -> Any:
        """Check ``properties`` of ``agent``; fail the test with the report when one is
        refuted or undecided, return the :class:`~agentic_machines.checking.CheckResult`
        when all hold. ``target`` is the command-line target the replay command names
        (default: the agent function's own ``file.py:name``, when it has one).
        ``stop_early=False`` searches the whole graph instead of stopping once every
        property has a counterexample (slower; a keyed loop is followed as far either
        way: as many rounds as ``max_states``)."""
        from .adapters import machine_for  # the package only when used
        from .checking.report import Settings, check_agent  # as above

        request = self._request
        if input is not None:  # a framework's agent object: its adapter makes the machine
            agent = machine_for(agent, input)
        settings = Settings(
            depth=_setting(request, "depth"),
            max_states=_setting(request, "max_states"),
            line_budget=_setting(request, "line_budget"),
            seed=_setting(request, "seed"),
            hypothesis=hypothesis if hypothesis is not None else _setting(request, "hypothesis"),
            stop_early=stop_early,
        )
        config = request.config
        folder = config.rootpath / (config.getini("agentic_database") or ".agentic")
        outcome = check_agent(
            agent,
            list(properties),
            settings,
            completions=completions,
            start=start,
            database=folder,
            test_id=request.node.nodeid,
            target=target,
            rootdir=config.rootpath,
        )
        if outcome.failure is not None:
            pytest.fail(outcome.failure, pytrace=False)
        return outcome.result


@pytest.fixture
def agentic(request: pytest.FixtureRequest) -> AgenticChecker:
    """The fixture: ``agentic.check(agent, *properties, completions=..., hypothesis=N)``."""
    return AgenticChecker(request)
