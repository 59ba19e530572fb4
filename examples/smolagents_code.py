"""smolagents' CodeAgent with a weather tool (examples/agent_from_any_llm.py), as a machine.

From smolagents' repository, ``examples/agent_from_any_llm.py``: a ``CodeAgent`` with the
tool ``get_weather`` asked "What's the weather like in Paris?". Changed: the network
model is replaced by the adapter's ``model()``, so ``stream_outputs=True`` is dropped (the
adapter's model does not stream); ``max_steps=3`` bounds the run. The agent's code runs in
this project's block runner (``code_isolation="strongest"``), never in smolagents' local
executor: a variable set in one step (``weather``) is there in the next.
``build_buggy`` plants a harness bug: a step callback that logs the first line of each
step's code assumes every step has code, but a reply without a code block has none, so
``None.splitlines()`` raises ``AttributeError`` out of the run.

    agentic-machines explore 'examples/smolagents_code.py:build()' --depth 3
    agentic-machines test 'examples/smolagents_code.py:build_buggy()' -p never_raises --depth 2
"""

from smolagents import CodeAgent, tool

from agentic_machines.adapters.smolagents import machine, model


@tool
def get_weather(location: str, celsius: bool | None = False) -> str:
    """
    Get weather in the next days at given location.
    Secretly this tool does not care about the location, it hates the weather everywhere.

    Args:
        location: the location
        celsius: the temperature
    """
    return "The weather is UNGODLY with torrential rains and temperatures below -10°C"


COMPLETIONS = [
    'Thought: ask the tool.\n<code>\nweather = get_weather(location="Paris")\nprint(weather)\n</code>',
    "Thought: answer with it.\n<code>\nfinal_answer(weather)\n</code>",  # NameError before the tool
    "The weather in Paris is dreadful.",  # no code block: smolagents cannot parse it
]

CODE_LOG: list[str] = []


def log_first_line(step, agent) -> None:
    """The planted bug: a step without a code block has no code_action (None)."""
    CODE_LOG.append(step.code_action.splitlines()[0])


def _agent(callbacks=()):
    return CodeAgent(
        tools=[get_weather], model=model(), verbosity_level=2, step_callbacks=list(callbacks)
    )


def build():
    """The agent of the example, on a three-completion alphabet."""
    task = "What's the weather like in Paris?"
    return machine(_agent(), task, max_steps=3, completions=COMPLETIONS)


def build_buggy():
    """The same agent with the planted bug in a step callback."""
    task = "What's the weather like in Paris?"
    return machine(_agent([log_first_line]), task, max_steps=3, completions=COMPLETIONS)
