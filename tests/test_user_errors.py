"""Every user error is a class of agentic_machines.errors that still subclasses the
built-in it replaced, so ``except TypeError`` (or ``NotImplementedError``,
``AssertionError``) in a user's code keeps working, and its message says what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_machines import AgenticMachine
from agentic_machines.checking import check_properties, halts_within
from agentic_machines.errors import (
    AgenticMachinesError,
    GoldenMismatch,
    NotDefined,
    PropertiesFailed,
    UnknownField,
)
from agentic_machines.fixtures import FIXTURES
from agentic_machines.runtime.local_models import ModelBase
from agentic_machines.testing import check_golden
from agentic_machines.verdict import Verdict, _Lazy


class Half(AgenticMachine):
    """A machine that forgot its harness."""

    def prompt(self, state: object) -> str:
        return "?"


def test_a_machine_without_its_harness_names_the_method() -> None:
    with pytest.raises(NotDefined, match=r"Half must define harness\(state, completion\)"):
        Half().harness(0, "x")
    assert issubclass(NotDefined, NotImplementedError)
    assert issubclass(NotDefined, AgenticMachinesError)


def test_a_model_without_complete_names_the_method() -> None:
    class Mute(ModelBase):
        pass

    with pytest.raises(NotImplementedError, match=r"Mute must define _complete\(prompt\)"):
        Mute().complete("hello")


def test_a_lazy_result_with_an_unknown_field_lists_the_fields() -> None:
    lazy = next(c for c in _Lazy.__subclasses__() if issubclass(c, Verdict))
    with pytest.raises(UnknownField, match="has no field.*its fields are"):
        lazy(lambda: None, nonsense=1)
    with pytest.raises(TypeError):  # what it raised before it had a class
        lazy(lambda: None, nonsense=1)


def test_a_golden_mismatch_is_an_assertion(tmp_path: Path) -> None:
    with pytest.raises(GoldenMismatch, match="does not exist; create it with"):
        check_golden(tmp_path / "missing.txt", "a")
    (tmp_path / "g.txt").write_text("a\nb", encoding="utf-8")
    with pytest.raises(AssertionError):
        check_golden(tmp_path / "g.txt", "a\nc")


def test_assert_holds_raises_an_assertion_with_the_report() -> None:
    result = check_properties(FIXTURES["f2-add"](), properties=[halts_within(2)])
    assert not result
    with pytest.raises(PropertiesFailed) as caught:
        result.assert_holds()
    assert isinstance(caught.value, AssertionError)
    assert "halts_within" in str(caught.value)
