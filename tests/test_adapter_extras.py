"""A target whose file needs a framework that is not installed: one line naming the extra."""

from __future__ import annotations

import sys

import pytest

from agentic_machines.cli.commands import main


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("langgraph.graph", "langgraph"),
        ("pydantic_ai", "pydantic-ai"),
        ("smolagents", "smolagents"),
    ],
)
def test_explore_names_the_missing_extra_in_one_line(tmp_path, monkeypatch, capsys, module, extra):
    for name in list(sys.modules):  # as if the framework were not installed
        if name == module.split(".")[0] or name.startswith(module.split(".")[0] + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module.split(".")[0], None)
    example = tmp_path / "example.py"
    example.write_text(f"import {module}\n\ndef agent(model):\n    return model('hi')\n")
    assert main(["explore", f"{example}:agent"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f'pip install -e ".[{extra}]"' in err and "example.py" in err
