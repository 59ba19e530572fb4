"""smolagents agents as agentic machines: ToolCallingAgent and CodeAgent, driven by the
adapter's Model, the CodeAgent's code run by this project's block runner."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("smolagents", reason='needs the extra: pip install -e ".[smolagents]"')

from smolagents import CodeAgent, ToolCallingAgent, tool  # noqa: E402

from agentic_machines import DIVERGE, HALT, run  # noqa: E402
from agentic_machines.adapters.smolagents import machine, model  # noqa: E402
from agentic_machines.errors import InvalidArgument  # noqa: E402
from agentic_machines.models import ScriptedModel  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402


@tool
def lookup(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}"


def call(name: str, **arguments) -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]})


CALL = call("lookup", city="Paris")
FINAL = call("final_answer", answer="Sunny.")


def looked_up(m):
    """The cities of the lookups that really ran (in the worker processes): the effect log's."""
    return ["Paris" if "Paris" in args else args for _, tool, args, _ in m.effect_log()]


def test_tool_calls_are_steps_and_the_tool_runs_once_per_real_step():
    agent = ToolCallingAgent(tools=[lookup], model=model(), verbosity_level=0)
    m = machine(agent, "Weather in Paris?", max_steps=3)
    trace = run(m, ScriptedModel([CALL, FINAL]))
    assert trace.end is HALT and len(trace) == 2
    assert m.result(trace[-1].state, trace[-1].completion) == "Sunny."
    first, second = trace.prompts
    assert first.startswith("# agent: ToolCallingAgent\n## tools\n- lookup:")
    assert "[user] New task:\nWeather in Paris?" in first
    assert second.endswith("[tool-response] Observation:\nsunny in Paris")
    assert "'id': 'call_1_0'" in second  # the adapter's ids: the same in every run
    # explored, the branches replay the first step: its lookup ran once
    g = explore(m, completions=[CALL, FINAL], max_depth=2)
    assert len([s for s in g if s not in (HALT, DIVERGE)]) == 3
    assert looked_up(m) == ["Paris"] * 2  # at depth 1 and depth 2: one each


def test_a_reply_smolagents_cannot_parse_is_a_step_with_its_error_and_max_steps_ends_it():
    agent = ToolCallingAgent(tools=[lookup], model=model(), verbosity_level=0)
    m = machine(agent, "Weather in Paris?", max_steps=1)
    s = m.harness(m.initial, "It is sunny.")
    prompt = m.prompt(s)  # past max_steps smolagents asks once more for a final answer
    assert "Error while parsing tool call from model output" in prompt
    assert "## tools" not in prompt
    assert m.harness(s, "Sunny, I think.") is HALT
    assert m.result(s, "Sunny, I think.") == "Sunny, I think."
    unknown = call("nowhere")
    assert "Unknown tool nowhere" in m.prompt(m.harness(m.initial, unknown))


def code(text: str) -> str:
    return f"Thought: code.\n<code>\n{text}\n</code>"


@pytest.mark.parametrize("level", ["process", "inline"])
def test_code_agent_code_runs_in_our_runner_with_state_kept_between_steps(level):
    agent = CodeAgent(tools=[lookup], model=model(), verbosity_level=0)
    m = machine(agent, "Weather in Paris?", max_steps=4, code_isolation=level)
    first = code('w = lookup("Paris")\nprint(w)')
    s = m.harness(m.initial, first)
    assert "Execution logs:\nsunny in Paris" in m.prompt(s)
    done = code("final_answer(w.upper())")
    assert m.harness(s, done) is HALT and m.result(s, done) == "SUNNY IN PARIS"
    # smolagents' local executor allows `import random`; this project's runner does not,
    # so the refusal shows where the code ran
    s2 = m.harness(s, code("import random"))
    assert "ImportError" in m.prompt(s2) and "random" in m.prompt(s2)
    # a branch from s sees s's variables, not another branch's
    s3 = m.harness(s2, code("final_answer(w)"))
    assert s3 is HALT and m.result(s2, code("final_answer(w)")) == "sunny in Paris"
    assert looked_up(m) == ["Paris"]  # the tool ran once, called back from the code
    # code that never ends: the run diverges (the block's line budget)
    assert m.harness(m.initial, code("while True:\n    pass")) is DIVERGE


def test_bad_agents_and_isolations_are_refused_in_one_line():
    agent = ToolCallingAgent(tools=[lookup], model=model(), verbosity_level=0)
    with pytest.raises(InvalidArgument, match='isolation="process"'):
        machine(agent, "hi", isolation="inline")
    with pytest.raises(InvalidArgument, match="smolagents agent"):
        machine(object(), "hi")
    with pytest.raises(InvalidArgument, match="max_steps"):
        machine(agent, "hi", max_steps=0)
    with pytest.raises(InvalidArgument):
        machine(agent, "hi", code_isolation="nowhere")
    with pytest.raises(RuntimeError, match="only inside a machine"):
        model().generate([])
