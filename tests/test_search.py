"""The search kernel's rules (runtime/search.py) hold the same for every search built on it:
``explore`` (serial and on an executor) and ``check_properties``."""

from __future__ import annotations

import gc
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentic_machines import HALT, FunctionMachine, TableMachine
from agentic_machines.checking import check_properties, halts_within, never_diverges
from agentic_machines.errors import InvalidArgument
from agentic_machines.runtime.explore import explore
from agentic_machines.runtime.search import Bounds, alphabet, collector_paused, offered

M = TableMachine(
    {0: "p", 1: "q"}, {(0, "a"): 1, (0, "b"): HALT, (1, "a"): 0, (1, "b"): 1}, initial=0
)


def _explore_both(machine, **kw):
    serial = explore(machine, **kw)
    with ThreadPoolExecutor(2) as pool:
        parallel = explore(machine, executor=pool, **kw)
    assert list(serial.nodes(data=True)) == list(parallel.nodes(data=True))
    assert list(serial.edges(data=True)) == list(parallel.edges(data=True))
    assert serial.graph["stats"]["truncated_reason"] == parallel.graph["stats"]["truncated_reason"]
    return serial


def test_an_empty_alphabet_is_a_function_that_offers_nothing():
    # An alphabet is a set of strings, and the empty set is one: every state expanded is
    # stuck (no completion to follow), exactly as with a function that offers nothing.
    fixed = _explore_both(M, completions=[])
    chosen = _explore_both(M, completions=lambda prompt: [])
    for g in (fixed, chosen):
        assert list(g.nodes) == [0] and not g.edges
        assert g.nodes[0]["expanded"] is True
        assert g.graph["stats"]["truncated"] is False
    assert alphabet(M, []) == ([], None)


def test_check_properties_reads_an_empty_alphabet_as_explore_does():
    # The same rule in the checker: the start is stuck, a run that has not halted.
    props = [halts_within(3), never_diverges()]
    for completions in ([], lambda prompt: []):
        r = check_properties(M, properties=props, completions=completions)
        assert r.coverage.states == 1 and r.coverage.stuck == 1
        assert r["never_diverges()"].verdict.holds is True
        cx = r.counterexample("halts_within(3)")
        assert cx.completions == () and cx.states == (0,) and "stuck" in cx.explanation


def test_duplicates_and_non_strings_follow_one_rule_for_lists_and_functions():
    assert alphabet(M, ["b", "a", "b"]) == (["b", "a"], None)
    assert offered(lambda p: ["b", "a", "b"], "p", 0) == ["b", "a"]
    with pytest.raises(InvalidArgument, match="completions are strings"):
        explore(M, completions=["a", 1])
    for kw in ({}, {"executor": ThreadPoolExecutor(1)}):
        with pytest.raises(InvalidArgument, match="non-strings"):
            explore(M, completions=lambda p: ["a", 1], **kw)
        with pytest.raises(InvalidArgument, match="single string"):
            explore(M, completions=lambda p: "ab", **kw)
    with pytest.raises(InvalidArgument, match="list of strings or a function"):
        explore(M, completions=3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("max_states", "max_depth", "words"),
    [
        (0, None, "max_states must be a whole number, at least 1"),
        (True, None, "max_states must be a whole number"),
        (2.5, None, "max_states must be a whole number"),
        (None, -1, "max_depth must be a whole number, 0 or more"),
        (None, 1.0, "max_depth must be a whole number"),
    ],
)
def test_one_bound_rule(max_states, max_depth, words):
    with pytest.raises(InvalidArgument, match=words):
        explore(M, max_states=max_states, max_depth=max_depth)
    with pytest.raises(InvalidArgument, match=words):
        check_properties(M, properties=halts_within(2), max_states=max_states, max_depth=max_depth)
    with pytest.raises(InvalidArgument, match=words):
        Bounds(max_states, max_depth)


def test_bounds_cut_the_same_way_serial_and_parallel():
    counter = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + int(c), initial=0)
    g = _explore_both(counter, completions=["1", "2"], max_states=4)
    assert g.graph["stats"]["truncated_reason"] == Bounds(4, None).full(4)
    g = _explore_both(counter, completions=["1", "2"], max_depth=2)
    assert g.graph["stats"]["truncated_reason"] == Bounds(None, 2).depth_cut()


def test_check_properties_names_the_bounds_as_explore_does():
    counter = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + int(c), initial=0)
    r = check_properties(counter, properties=never_diverges(), completions=["1"], max_depth=2)
    assert r.coverage.truncated == Bounds(None, 2).depth_cut()
    r = check_properties(counter, properties=never_diverges(), completions=["1"], max_states=4)
    assert r.coverage.truncated == Bounds(4, None).full(4)
    assert explore(counter, completions=["1"], max_states=4).graph["stats"]["states"] == 4


def test_the_start_rule_is_shared():
    no_start = FunctionMachine(lambda n: "p", lambda n, c: n, name="nowhere")
    for call in (
        lambda: explore(no_start, completions=["a"]),
        lambda: check_properties(no_start, properties=never_diverges(), completions=["a"]),
    ):
        with pytest.raises(InvalidArgument, match="'nowhere' has no initial state"):
            call()
    for call in (
        lambda: explore(M, HALT),
        lambda: check_properties(M, HALT, never_diverges()),
    ):
        with pytest.raises(InvalidArgument, match="from the sentinel"):
            call()


@pytest.mark.parametrize("enabled", [True, False])
def test_every_search_pauses_the_collector_and_leaves_it_as_it_found_it(enabled):
    # explore and check_properties pause the cyclic collector for the search (its cost
    # would grow with the states held) and must give the caller's setting back, also
    # when the search raises.
    seen = []

    def h(n, c):
        seen.append(gc.isenabled())
        return None if n == 2 else n + 1  # a missing return at state 2: InvalidMachine

    m = FunctionMachine(lambda n: f"at {n}", h, initial=0)
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        for search in (
            lambda: explore(m, completions=["a"], max_depth=1),
            lambda: check_properties(
                m, properties=[never_diverges()], completions=["a"], max_depth=1
            ),
        ):
            search()
            assert gc.isenabled() is enabled
        with pytest.raises(Exception, match="returned None"):
            explore(m, completions=["a"])
        assert gc.isenabled() is enabled
        with pytest.raises(Exception, match="returned None"):
            check_properties(m, properties=[never_diverges()], completions=["a"])
        assert gc.isenabled() is enabled
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert seen and not any(seen)  # every harness call ran with the collector paused


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a process")
@pytest.mark.parametrize("enabled", [True, False])
def test_a_process_forked_inside_a_search_gets_the_collector_the_search_found(enabled):
    # A process pool's worker forked while a search runs never leaves the search's pause:
    # it must not keep the collector off for good (a review found such workers with it off).
    was = gc.isenabled()
    read, write = os.pipe()
    try:
        (gc.enable if enabled else gc.disable)()
        with collector_paused():
            with collector_paused():  # nested: the outermost pause's finding counts
                pid = os.fork()
                if pid == 0:  # the child: report and leave at once
                    os.write(write, b"1" if gc.isenabled() else b"0")
                    os._exit(0)
        os.waitpid(pid, 0)
        assert os.read(read, 1) == (b"1" if enabled else b"0")
        assert gc.isenabled() is enabled
        # code inside a pause that turns the collector on does not leave it on
        with collector_paused():
            gc.enable()
        assert gc.isenabled() is enabled
    finally:
        os.close(read)
        os.close(write)
        (gc.enable if was else gc.disable)()
