"""The small defects of issue 36 (item 8), each pinned by a test that fails on the code
before the fix."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentic_machines import HALT, FunctionMachine, TableMachine
from agentic_machines.checking import check_properties, never_diverges, never_raises, unreachable
from agentic_machines.embedding import Embedding, check_embedding
from agentic_machines.errors import CertificateError, InvalidMachine
from agentic_machines.machinefile import dump_machine, load_machine
from agentic_machines.runtime.explore import explore
from agentic_machines.runtime.search import Reporter
from agentic_machines.spell.spell_machine import SpellMachine


def test_dump_machine_of_an_empty_alphabet_loads_back(tmp_path) -> None:
    path = tmp_path / "m.json"
    dump_machine(TableMachine({0: "p"}, {}, initial=0), path)
    m = load_machine(path)
    assert (tuple(m.states), tuple(m.completions), m.initial) == ((0,), (), 0)


def test_one_and_true_are_never_a_false_lasso() -> None:
    # h tells 1 and True apart; the search's tables cannot: the replay says so instead of
    # returning a lasso through a state the run never comes back to
    def h(s, c):
        if s is True:
            return HALT
        return True if s == 1 else 1

    m = FunctionMachine(lambda s: "p", h, initial=0, name="flags")
    with pytest.raises(InvalidMachine) as info:
        check_properties(m, properties=[never_diverges()], completions=["a"])
    # the machine's fault, said as such, with the fix: not an "internal error" to report
    message = str(info.value)
    assert not isinstance(info.value, CertificateError) and "internal error" not in message
    assert message.startswith("flags reaches 1 (int) and, at the step 'a' from 1, True (bool)")
    assert "give such states values that == tells apart too" in message


def _last(s):
    return s[-1] if isinstance(s, tuple) else s


def _one_then_true(wrap):
    """A machine that goes 0 -> 1 -> True -> HALT (each ``wrap``ped): 1 == True."""

    def h(s, c):
        if _last(s) is True:
            return HALT
        return wrap(1) if _last(s) == 0 else wrap(True)

    return FunctionMachine(lambda s: f"at {s!r}", h, initial=wrap(0), name="flags")


@pytest.mark.parametrize("wrap", [lambda x: x, lambda x: ("flag", x)], ids=["bare", "in-tuple"])
@pytest.mark.parametrize("explored", [False, True], ids=["machine", "explored-graph"])
def test_a_machine_that_reaches_one_and_true_never_holds_wrongly(wrap, explored) -> None:
    # the search merged True into 1, and a verdict that holds is never replayed: it said
    # "holds" of a state the machine reaches; now the machine is refused, saying what to do
    m = _one_then_true(wrap)
    with pytest.raises(InvalidMachine, match=r"equal by == but not the same .* tells apart"):
        check_properties(
            explore(m, completions=["a"]) if explored else m,  # explore refuses it first
            properties=[unreachable(lambda s: _last(s) is True)],
            completions=["a"],
        )


def _flags(s, c):
    if s is True:
        return HALT
    return True if s == 1 else 1


FLAGS = FunctionMachine(lambda s: "p", _flags, initial=0, name="flags", completions=["a"])


@pytest.mark.parametrize("wrap", [lambda x: x, lambda x: ("flag", x)], ids=["bare", "in-tuple"])
def test_explore_refuses_one_and_true_as_check_does(wrap) -> None:
    # explore merged True into 1 (one node, no word said); now it refuses the machine with
    # the very error check_properties gives, from the one guard both searches share
    m = _one_then_true(wrap)
    with pytest.raises(InvalidMachine) as explored:
        explore(m, completions=["a"])
    with pytest.raises(InvalidMachine) as checked:
        check_properties(m, properties=[never_raises()], completions=["a"])
    assert str(explored.value) == str(checked.value)
    assert str(explored.value).startswith(f"flags reaches {wrap(1)!r} (")
    # a machine whose equal states are of one type still explores (a rebuilt tuple)
    ring = FunctionMachine(lambda s: "p", lambda s, c: ((s[0] + 1) % 3,), initial=(0,))
    assert explore(ring, completions=["a"]).number_of_nodes() == 3


@pytest.mark.parametrize("json", [[], ["--json"]], ids=["listing", "json"])
def test_the_explore_command_refuses_one_and_true_in_one_line(json, capsys) -> None:
    from agentic_machines.cli.commands import main

    assert main(["explore", "tests.test_small_defects:FLAGS", *json]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert "flags reaches 1 (int) and, at the step 'a' from 1, True (bool)" in err


def test_states_equal_with_equal_types_are_still_one_state() -> None:
    # a rebuilt tuple (equal, of the same types, another object) is the same state
    m = FunctionMachine(
        lambda s: "p", lambda s, c: ((s[0] + 1) % 3,), initial=(0,), name="ring", completions=["a"]
    )
    r = check_properties(m, properties=[never_diverges()])
    assert r.coverage.states == 3 and r.counterexample("never_diverges()").loop == 0


@pytest.mark.parametrize("how", ["check", "explore"])
def test_an_unhashable_outcome_is_a_clear_error(how) -> None:
    m = FunctionMachine(lambda s: "p", lambda s, c: [s], initial=0, name="lists")
    with pytest.raises(InvalidMachine, match=r"returned \[0\], which is not hashable"):
        if how == "check":
            check_properties(m, properties=[never_raises()], completions=["a"])
        else:
            explore(m, completions=["a"])


def test_library_progress_goes_to_logging_not_stderr(capsys, caplog, monkeypatch) -> None:
    monkeypatch.setattr(
        logging.getLogger("agentic_machines"), "handlers", []
    )  # as in a process where no CLI ran
    r = Reporter(None, lambda values, final: f"checked {values['states']} states")
    r.began -= 10  # as if the search had run for ten seconds
    with caplog.at_level(logging.INFO, logger="agentic_machines"):
        r.tick(lambda: {"states": 5})
    assert capsys.readouterr().err == ""
    assert [rec.getMessage() for rec in caplog.records] == ["checked 5 states"]


def test_more_roots_than_max_states_are_cut_and_said() -> None:
    m = TableMachine({i: "p" for i in range(6)}, {(i, "a"): HALT for i in range(6)})
    stats = explore(m, roots=list(range(6)), max_states=2).graph["stats"]
    assert stats["states"] == 2 and stats["truncated"] is True
    assert "4 of 6 start states left out" in stats["truncated_reason"]


def test_a_spell_record_holding_a_builtin_has_a_repr() -> None:
    m = SpellMachine()
    m.load("(quine q (list 1 (list car)))")
    assert repr(m.last_record.value) == "<list (1 (<builtin car>))>"
    assert "value=<list (1 (<builtin car>))>" in repr(m.last_record)
    m.load("(quine q (cons 1 car))")  # an error message that prints the builtin
    assert "got <builtin car>" in str(m.last_record.error)


def _table(name, table):
    def harness(s, c):
        if table[(s, c)] == "raise":
            raise ValueError(f"{name} raised at {(s, c)}")
        return table[(s, c)]

    return FunctionMachine(lambda s: "p", harness, states=[0, 1], completions=["a", "b"], name=name)


SAME = {(0, "a"): 0, (0, "b"): HALT, (1, "a"): 1, (1, "b"): HALT}


@pytest.mark.parametrize(
    "source_changes, target_changes",
    [
        ({(0, "a"): "raise"}, {(1, "b"): "raise"}),  # both raise: the source's call comes first
        ({(1, "b"): "raise"}, {(1, "a"): "raise"}),  # the target's call comes first
        ({}, {(1, "a"): 0, (0, "b"): "raise"}),  # a commutation failure before the raise
    ],
)
def test_an_executor_meets_what_the_serial_check_meets(source_changes, target_changes) -> None:
    # with e = {0: 1, 1: 0} the serial scan asks h(e(s), c) then h'(s, c), pair by pair
    source = _table("S", {**SAME, **source_changes})
    target = _table("T", {**SAME, **target_changes})
    e = Embedding(source, target, {0: 1, 1: 0})

    def outcome(executor):
        try:
            return str(check_embedding(e, executor=executor))
        except ValueError as exc:
            return f"raised {exc}"

    with ThreadPoolExecutor(2) as pool:
        assert outcome(pool) == outcome(None)


def test_a_count_of_one_is_singular_in_checks_first_line(tmp_path, capsys) -> None:
    from agentic_machines.cli.commands import main

    path = tmp_path / "one.json"
    dump_machine(TableMachine({"a": "p"}, {("a", "go"): HALT}, initial="a", name="one"), path)
    main(["check", str(path)])
    assert capsys.readouterr().out.splitlines()[0] == "one: TableMachine, 1 state, 1 completion"
    main(["export", str(path), "-o", str(tmp_path / "again.json")])
    assert capsys.readouterr().out.rstrip().endswith("one, 1 state, 1 completion")
