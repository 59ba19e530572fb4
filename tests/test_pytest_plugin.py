"""The pytest plugin ``agentic``: a test module that uses only its fixture, run by pytest
in a fresh folder (a subprocess: the plugin's hooks must not touch this suite's run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the test module of a user, written to a fresh folder with tests/mailer_agent.py beside it
AGENT = """
from agentic_machines.checking import halts_within, never_raises
from mailer_agent import send


def mailer(model):
    n = 0
    while n < 3:
        c = model(f"Send what? {n} sent so far.")
        if c == "stop":
            return n
        send(c)
        if c == "{BAD}":
            raise ValueError("cannot send that")
        n += 1
    return n


def test_calm(agentic):
    agentic.check(lambda model: model("ok?"), never_raises(), completions=["yes", "no"])


def test_mailer(agentic):
    agentic.check(mailer, never_raises(), halts_within(4), completions=["hi", "boom", "stop"])
"""


def pytest_run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    shutil.copy(Path(__file__).with_name("mailer_agent.py"), folder)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    plugin: list[str] = []
    if not list(entry_points(group="pytest11", name="agentic")):  # an install from before it
        plugin = ["-p", "agentic_machines.pytest_plugin"]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            *plugin,
            *args,
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_failing_agent_is_reported_saved_run_first_and_passes_once_fixed(tmp_path: Path) -> None:
    test_file = tmp_path / "test_agent.py"
    test_file.write_text(AGENT.replace("{BAD}", "boom"), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nagentic_depth = 5\n", encoding="utf-8")
    first = pytest_run(tmp_path, "-v")
    assert first.returncode == 1, first.stdout
    out = first.stdout
    # the report: the property, the numbered table, the step's effect, how it ended, the replay
    assert "never_raises() is refuted on 'mailer' (exhaustive" in out
    assert "  1  'Send what? 0 sent so far.'" in out and "'boom'" in out
    assert "effect send(('boom',), [])" in out
    assert "-> raised ValueError: cannot send that" in out
    assert "replay: agentic-machines run test_agent.py:mailer --replay .agentic/traces/" in out
    assert "PASS halts_within(4)" in out
    assert out.index("test_calm PASSED") < out.index("test_mailer FAILED")
    saved = list((tmp_path / ".agentic" / "examples").glob("*.json"))
    assert len(saved) == 1 and '"boom"' in saved[0].read_text(encoding="utf-8")

    # the replay command the report printed reproduces the failure
    trace = out.split("--replay ", 1)[1].split()[0]
    replay = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentic_machines",
            "run",
            "test_agent.py:mailer",
            "--replay",
            trace,
        ],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert replay.returncode == 1 and "raised ValueError: cannot send that" in replay.stdout

    # the next run tries the saved failing run first: its test runs first, and says so
    second = pytest_run(tmp_path, "-v")
    assert second.returncode == 1
    assert second.stdout.index("test_mailer FAILED") < second.stdout.index("test_calm PASSED")
    assert "(the saved failing run, tried first)" in second.stdout

    # fixed: it passes, and the saved run, which no longer fails, is forgotten
    test_file.write_text(AGENT.replace("{BAD}", "never sent"), encoding="utf-8")
    third = pytest_run(tmp_path, "-v")
    assert third.returncode == 0, third.stdout
    assert list((tmp_path / ".agentic" / "examples").glob("*.json")) == []


def test_options_and_off_switch(tmp_path: Path) -> None:
    (tmp_path / "test_agent.py").write_text(
        AGENT.replace("{BAD}", "never sent")
        + "\n\ndef test_deep(agentic):\n"
        + "    agentic.check(mailer, halts_within(2), completions=['hi', 'stop'])\n",
        encoding="utf-8",
    )
    # halts_within(2) is undecided at depth 1 (which fails the test too), refuted at depth 3
    shallow = pytest_run(tmp_path, "--agentic-depth", "1", "-k", "deep")
    assert shallow.returncode == 1 and "UNDECIDED halts_within(2)" in shallow.stdout
    deep = pytest_run(tmp_path, "--agentic-depth", "3", "-k", "deep")
    assert deep.returncode == 1 and "halts_within(2) is refuted" in deep.stdout
    off = pytest_run(tmp_path, "-p", "no:agentic", "-k", "calm")
    assert off.returncode == 1 and "fixture 'agentic' not found" in off.stdout


def test_importing_the_package_never_loads_pytest() -> None:
    code = "import sys, agentic_machines; print('pytest' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.strip() == "False", out.stderr


def test_the_entry_point_is_declared() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points.pytest11]\nagentic = "agentic_machines.pytest_plugin"' in text


def test_a_sampled_check_fails_with_a_shrunk_run(tmp_path: Path) -> None:
    from agentic_machines.checking import never_raises
    from agentic_machines.checking.report import Settings, check_agent

    def strict(model):
        while model("number?") != "0":
            if model("sure?") == "no":
                raise ValueError("unsure")

    out = check_agent(
        strict,
        [never_raises()],
        Settings(hypothesis=30, seed=1, depth=6),
        completions=["1", "yes", "no", "0"],
        database=tmp_path / "db",
    )
    assert (
        out.failure is not None and "never_raises() is refuted on 'strict' (sampled" in out.failure
    )
    assert (
        "-> raised ValueError: unsure" in out.failure
        or "AgentRaised(type='ValueError'" in out.failure
    )


KEYED = """
import pytest

from agentic_machines import HALT, FunctionMachine
from agentic_machines.checking import never_diverges


def capped():  # 'go' counts to 60, outside the prompt (the key); 'stop' halts
    h = lambda n, c: HALT if c == "stop" or n == 60 else n + 1
    return FunctionMachine(lambda n: "Go on, or stop?", h, initial=0, name="cap 60")


def test_within(agentic):
    m = capped()
    agentic.check(m, never_diverges(key=m.prompt), completions=["go", "stop"])


@pytest.mark.agentic(max_states=40)
def test_past(agentic):
    m = capped()
    agentic.check(m, never_diverges(key=m.prompt), completions=["go", "stop"])
"""


def test_a_keyed_loop_is_followed_as_far_as_the_state_bound_and_the_saved_run_keeps_its_note(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_keyed.py").write_text(KEYED, encoding="utf-8")
    # the default depth (6) would leave the 61-state loop unfinished: search it all
    first = pytest_run(tmp_path, "-v", "--agentic-depth", "100")
    out = first.stdout
    assert first.returncode == 1 and "test_within PASSED" in out and "test_past FAILED" in out, out
    note = "never_diverges(key=prompt) is refuted on 'cap 60' (by the key, not exhaustive, "
    assert note in out and "--agentic-max-states" in out, out
    # the saved failing run, tried first, still says how its refutation is known
    second = pytest_run(tmp_path, "-v", "--agentic-depth", "100", "-k", "past")
    assert second.returncode == 1
    assert note + "the saved failing run, tried first)" in second.stdout, second.stdout
