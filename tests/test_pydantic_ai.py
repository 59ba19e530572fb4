"""Pydantic AI agents as agentic machines, driven through the adapter's FunctionModel."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pydantic_ai", reason='needs the extra: pip install -e ".[pydantic-ai]"')

from pydantic import BaseModel  # noqa: E402
from pydantic_ai import Agent, ModelRetry  # noqa: E402

from agentic_machines import HALT, effect, run  # noqa: E402
from agentic_machines.adapters.pydantic_ai import machine  # noqa: E402
from agentic_machines.models import ScriptedModel  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402


class City(BaseModel):
    name: str
    country: str


def final(**arguments) -> str:
    return json.dumps({"tool_calls": [{"name": "final_result", "arguments": arguments}]})


def city_agent(retries=1):
    agent = Agent(output_type=City, retries=retries, name="cities")

    @agent.output_validator
    def only_paris(output: City) -> City:
        if output.name != "Paris":
            raise ModelRetry("Answer with the capital of France.")
        return output

    return agent


def test_validation_failures_and_model_retry_are_steps_and_structured_output_ends_the_run():
    m = machine(city_agent(retries=2), "The capital of France?")
    trace = run(
        m,
        ScriptedModel(
            [
                final(name="Paris"),
                final(name="Lyon", country="FR"),
                final(name="Paris", country="FR"),
            ]
        ),
    )
    assert trace.end is HALT and len(trace) == 3
    first_retry, second_retry = trace.prompts[1], trace.prompts[2]
    assert "country" in first_retry.split("## messages")[1]  # the missing field is reported
    assert "Answer with the capital of France." in second_retry
    assert m.result(trace[-1].state, trace[-1].completion) == City(name="Paris", country="FR")


def test_past_its_retries_the_agent_raises_an_outcome():
    m = machine(city_agent(retries=1), "The capital of France?")
    bad = final(name="Lyon", country="FR")
    s = m.harness(m.initial, bad)
    assert m.harness(s, bad) is HALT
    assert m.raised(s, bad).type == "UnexpectedModelBehavior"


def test_an_effect_tool_runs_once_per_real_step_however_often_explore_replays():
    sent = []
    agent = Agent(name="mailer")

    @agent.tool_plain
    @effect
    def send(text: str) -> str:
        """Send an email."""
        sent.append(text)
        return "sent"

    m = machine(agent, "Say hi by email.")
    call = json.dumps({"tool_calls": [{"name": "send", "arguments": {"text": "hi"}}]})
    explore(m, completions=[call, "Done."], max_depth=3)
    assert sent == ["hi"] * 3  # one per tool step of the three depths, none per replay


def test_refuses_what_is_not_an_agent():
    with pytest.raises(Exception, match="needs a pydantic_ai.Agent"):
        machine(object(), "hi")
