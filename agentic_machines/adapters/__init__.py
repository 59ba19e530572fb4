"""Adapters: agents built on frameworks, as agentic machines.

- :mod:`agentic_machines.adapters.openai_agents`: an OpenAI Agents SDK ``Agent`` (needs
  the optional extra ``pip install -e ".[agents]"``).

Adapters sit above the runtime layer: they turn a framework's agent loop into an agent
function and hand it to :func:`agentic_machines.agent_machine`.
"""
