"""OpenAI Agents SDK agents as agentic machines, driven without network or API key."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agents")

from agents import Agent, function_tool  # noqa: E402

from agentic_machines import DIVERGE, HALT, AgentRaised, effect, run  # noqa: E402
from agentic_machines.adapters.openai_agents import machine  # noqa: E402
from agentic_machines.errors import InvalidArgument  # noqa: E402
from agentic_machines.models import ScriptedModel  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402

CALL = json.dumps({"tool_calls": [{"name": "lookup", "arguments": {"city": "Paris"}}]})
FINAL = "It is sunny in Paris."


def weather_agent(calls):
    @function_tool
    @effect  # replays (explore branches) get the recorded result: the tool runs once per step
    def lookup(city: str) -> str:
        """The weather in a city."""
        calls.append(city)
        return f"sunny in {city}"

    return Agent(name="weather", instructions="Answer with the weather.", tools=[lookup])


def ran(m):
    """The cities the lookup tool really looked up: its executions, from the effect log
    (the agent runs in worker processes: the tool's own list is theirs)."""
    return ["Paris" if "Paris" in args else args for _, tool, args, _ in m.effect_log()]


def test_tool_call_then_final_answer_runs_the_tool_once_and_halts():
    calls = []
    m = machine(weather_agent(calls), "Weather in Paris?")
    trace = run(m, ScriptedModel([CALL, FINAL]))
    assert trace.end is HALT and len(trace) == 2
    assert ran(m) == ["Paris"]
    assert m.result(trace[-1].state, trace[-1].completion) == FINAL
    first, second = trace.prompts
    assert first.startswith("# agent: weather\n## instructions\nAnswer with the weather.")
    assert "- lookup: The weather in a city. | parameters {" in first
    assert second.endswith(
        '[tool call call_1_0] lookup {"city": "Paris"}\n[tool result call_1_0] sunny in Paris'
    )


def test_explored_on_three_completions_the_halting_leaves_are_the_final_answers():
    calls = []
    m = machine(weather_agent(calls), "Weather in Paris?")
    alphabet = [CALL, FINAL, "I do not know."]
    g = explore(m, completions=alphabet, max_depth=3)
    # Every state is a history of tool calls (a final message ends the run), so depth d
    # holds exactly one state; the two final messages halt from each of them.
    states = [n for n in g if n is not HALT and n is not DIVERGE]
    assert [len(s) for s in states] == [0, 1, 2, 3]
    halting = [(s, c) for s, t, e in g.edges(data=True) if t is HALT for c in e["completions"]]
    assert len(halting) == 2 * 3
    assert {m.result(s, c) for s, c in halting} == {FINAL, "I do not know."}
    assert all(c in (FINAL, "I do not know.") for _, c in halting)
    # The SDK really ran the tool (in its own worker thread), once per real step that
    # called it (three: one per depth), not again in the replays of the branches.
    assert ran(m) == ["Paris"] * 3


def test_a_malformed_tool_call_is_an_outcome_the_sdk_decides():
    calls = []
    m = machine(weather_agent(calls), "Weather in Paris?")
    unknown = json.dumps({"tool_calls": [{"name": "forecast", "arguments": {}}]})
    trace = run(m, ScriptedModel([unknown]))
    assert trace.end is HALT
    raised = m.raised(trace[-1].state, trace[-1].completion)
    assert isinstance(raised, AgentRaised) and raised.type == "ModelBehaviorError"
    assert "forecast" in raised.message
    # Arguments the tool cannot take: the SDK reports the error to the model as the
    # tool's output, and the run goes on.
    bad_args = json.dumps({"tool_calls": [{"name": "lookup", "arguments": "{not json"}]})
    s = m.harness(m.initial, bad_args)
    assert s is not HALT and "[tool result call_1_0]" in m.prompt(s)
    assert ran(m) == []
    # Broken JSON is not a tool call at all: a final message.
    assert m.harness(m.initial, '{"tool_calls": [') is HALT
    assert m.result(m.initial, '{"tool_calls": [') == '{"tool_calls": ['


def test_max_turns_and_handoffs():
    calls = []
    helper = Agent(name="helper", instructions="You help.")
    boss = Agent(name="boss", instructions="Delegate.", handoffs=[helper])
    m = machine(boss, "hi", max_turns=2)
    prompt = m.prompt(m.initial)
    assert "- transfer_to_helper: Handoff to the helper agent" in prompt and "| handoff |" in prompt
    handoff = json.dumps({"tool_calls": [{"name": "transfer_to_helper", "arguments": {}}]})
    s = m.harness(m.initial, handoff)
    assert m.prompt(s).startswith("# agent: helper\n## instructions\nYou help.")
    assert m.harness(s, "done") is HALT and m.result(s, "done") == "done"
    loop = machine(weather_agent(calls), "x", max_turns=1)
    assert loop.harness(loop.initial, CALL) is HALT
    assert loop.raised(loop.initial, CALL).type == "MaxTurnsExceeded"


def spanish_filter(data):
    """The SDK's handoffs/message_filter.py filter as it once was: it trims the history
    only when the SDK's default model is not a GPT-5 model."""
    from agents import HandoffInputData
    from agents.extensions import handoff_filters
    from agents.models import is_gpt_5_default

    if is_gpt_5_default():
        return data
    data = handoff_filters.remove_all_tools(data)
    history = data.input_history[2:] if isinstance(data.input_history, tuple) else ()
    return HandoffInputData(
        input_history=history,
        pre_handoff_items=tuple(data.pre_handoff_items),
        new_items=tuple(data.new_items),
    )


def filtered_spanish_prompt(**options):
    from agents import handoff

    spanish = Agent(name="Spanish Assistant", instructions="You only speak Spanish.")
    second = Agent(
        name="Assistant",
        instructions="If the user speaks Spanish, handoff to the Spanish assistant.",
        handoffs=[handoff(spanish, input_filter=spanish_filter)],
    )
    history = [
        {"role": "user", "content": "Hi, my name is Sora."},
        {"role": "assistant", "content": "Hi Sora."},
        {"role": "user", "content": "Por favor habla en español."},
    ]
    m = machine(second, history, **options)
    go = json.dumps({"tool_calls": [{"name": "transfer_to_spanish_assistant", "arguments": {}}]})
    return m.prompt(m.harness(m.initial, go)).split("## input\n")[1]


@pytest.mark.parametrize("environment", [None, "gpt-5", "gpt-4o"])
def test_the_default_model_name_of_the_environment_does_not_change_the_agent(
    monkeypatch, environment
):
    # The filter's trimming branch ran or not by OPENAI_DEFAULT_MODEL (the SDK's default
    # is a GPT-5 model): under the adapter the name is the adapter's, in every mode.
    if environment is None:
        monkeypatch.delenv("OPENAI_DEFAULT_MODEL", raising=False)
    else:
        monkeypatch.setenv("OPENAI_DEFAULT_MODEL", environment)
    for isolation in ("process", "inline"):
        shown = filtered_spanish_prompt(isolation=isolation)
        assert shown == "[user] Por favor habla en español.", isolation
    import os

    assert os.environ.get("OPENAI_DEFAULT_MODEL") == environment  # put back after the run


def test_model_name_is_the_sdk_default_model_name_under_the_adapter():
    untrimmed = filtered_spanish_prompt(model_name="gpt-5")
    assert untrimmed.startswith("[user] Hi, my name is Sora.\n[assistant] Hi Sora.\n")
    assert "[tool call call_1_0] transfer_to_spanish_assistant {}" in untrimmed
    with pytest.raises(InvalidArgument, match="model_name"):
        machine(Agent(name="a"), "hi", model_name="")


SEND = json.dumps({"tool_calls": [{"name": "send_email", "arguments": {"to": "boss"}}]})
NOTIFY = json.dumps({"tool_calls": [{"name": "notify", "arguments": {"to": "boss"}}]})


@function_tool
@effect  # the SDK tool itself is the effect
def send_email(to: str) -> str:
    """Send an email."""
    return f"sent to {to}"


@effect  # the effect is a helper the tool calls: the log names it, not the tool
def _deliver(to: str) -> str:
    return f"delivered to {to}"


@function_tool
def notify(to: str) -> str:
    """Notify someone."""
    return _deliver(to)


def effects_verdict(tool: str, depth: int):
    from agentic_machines.checking import check_properties, effects_at_most_once

    bot = Agent(name="mailer", instructions="Mail.", tools=[send_email, notify])
    m = machine(bot, "mail the boss", completions=[SEND, NOTIFY, "done"])
    return check_properties(m, properties=[effects_at_most_once(tool)], max_depth=depth)


def test_effects_at_most_once_refutes_a_double_send_through_an_sdk_tool():
    # two model requests that both ask for the same email: the SDK runs the tool twice
    verdict = effects_verdict("send_email", 2).results[0]
    assert verdict.verdict.holds is False
    assert verdict.counterexample.completions == (SEND, SEND)
    # one request sends once: nothing to refute
    assert effects_verdict("send_email", 1).results[0].verdict.holds is True


def test_an_sdk_tool_whose_effect_is_an_inner_helper_is_checked_by_the_helper_name():
    by_tool = effects_verdict("notify", 2).results[0].verdict
    # the tool's own name never ran as an effect: undecided, naming what did run
    assert by_tool.holds is None
    assert "'notify'" in by_tool.reason and "send_email, _deliver" in by_tool.reason
    by_helper = effects_verdict("_deliver", 2).results[0]
    assert by_helper.verdict.holds is False
    assert by_helper.counterexample.completions == (NOTIFY, NOTIFY)
    misspelled = effects_verdict("send_emial", 1).results[0].verdict
    assert misspelled.holds is None and "send_email, _deliver" in misspelled.reason
