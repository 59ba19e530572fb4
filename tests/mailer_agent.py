"""A tool with a side effect, shared by tests/test_agent_machine.py and the test module
that tests/test_pytest_plugin.py writes for a fresh pytest run (copied next to it)."""

from agentic_machines import effect

sent: list[str] = []  # every real execution of send, in this process


@effect
def send(text: str) -> int:
    """Send ``text``; the receipt is how many were sent so far."""
    sent.append(text)
    return len(sent)
