"""Scale-out: explore with an executor gives the serial graph, whatever the executor.

Serial runs are compared with a ``ProcessPoolExecutor(2)`` and with a Dask
``LocalCluster(n_workers=2, processes=True)`` on random finite machines (with bounds that
cut the search in the middle of a level) and on an architecture: nodes, edges, their
attributes and order, and the statistics other than time must be identical.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import FunctionMachine, InvalidArgument
from agentic_machines.architectures import react
from agentic_machines.runtime.explore import explore
from agentic_machines.strategies import examples, table_machines

TIMELESS = ("seconds", "states_per_second")


def snapshot(graph) -> tuple:
    """Everything a user can read of an explored graph, but its timings."""
    stats = {k: v for k, v in graph.graph["stats"].items() if k not in TIMELESS}
    other = {k: v for k, v in graph.graph.items() if k != "stats"}
    return list(graph.nodes(data=True)), list(graph.edges(data=True)), stats, other


@pytest.fixture(scope="module")
def pool():
    with ProcessPoolExecutor(2) as executor:
        yield executor


@pytest.fixture(scope="module")
def dask_executor():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client.get_executor()


bounds = st.tuples(st.none() | st.integers(1, 6), st.none() | st.integers(0, 4))


@settings(max_examples=examples(15, 200))
@given(table_machines(max_states=6, max_completions=3), bounds, st.integers(1, 3))
def test_a_process_pool_gives_the_serial_graph(pool, machine, bound, batch) -> None:
    max_states, max_depth = bound
    start = min(machine.states) if machine.states else None
    if start is None:
        return
    serial = explore(machine, start, max_states=max_states, max_depth=max_depth, progress=False)
    parallel = explore(
        machine,
        start,
        max_states=max_states,
        max_depth=max_depth,
        progress=False,
        executor=pool,
        batch_size=batch,
    )
    assert snapshot(parallel) == snapshot(serial)


def test_dask_gives_the_serial_graph_on_random_machines_and_an_architecture(dask_executor) -> None:
    from hypothesis import find  # a fixed handful of machines: a cluster round trip is slow

    for n in (1, 3, 5):
        machine = find(
            table_machines(max_states=5, completions=("a", "b", "c")),
            lambda m, n=n: len(m.states) == n,
        )
        for max_states, max_depth in ((None, None), (2, None), (None, 1)):
            serial = explore(machine, 0, max_states=max_states, max_depth=max_depth)
            parallel = explore(
                machine,
                0,
                max_states=max_states,
                max_depth=max_depth,
                executor=dask_executor,
                batch_size=1,
            )
            assert snapshot(parallel) == snapshot(serial)
    m = react.machine()
    kw = dict(completions=react.diagram_completions, max_depth=4, progress=False)
    serial = explore(m, **kw)
    assert snapshot(explore(m, executor=dask_executor, **kw)) == snapshot(serial)


def test_an_architecture_explored_on_a_process_pool_is_the_serial_graph(pool) -> None:
    m = react.machine()
    kw = dict(completions=react.diagram_completions, max_depth=5, progress=False)
    assert snapshot(explore(m, executor=pool, **kw)) == snapshot(explore(m, **kw))


def test_an_unpicklable_machine_is_refused_with_what_failed_and_what_to_do(pool) -> None:
    m = FunctionMachine(lambda s: "p", lambda s, c: s, initial=0, completions=["a"], name="anon")
    with pytest.raises(InvalidArgument) as info:
        explore(m, executor=pool)
    text = str(info.value)
    assert "does not pickle" in text and "lambda" in text and "module level" in text
    # a thread pool shares the objects: no pickling, same graph
    with ThreadPoolExecutor(2) as threads:
        assert snapshot(explore(m, executor=threads)) == snapshot(explore(m))


def test_parallel_progress_reports_states_per_second() -> None:
    seen = []
    m = FunctionMachine(lambda s: f"{s}", lambda s, c: s + 1, initial=0, completions=["a"])
    import agentic_machines.runtime.search as ex

    old = ex.PROGRESS_AFTER
    ex.PROGRESS_AFTER = 0.0
    try:
        with ThreadPoolExecutor(2) as threads:
            explore(m, max_states=50, executor=threads, progress=seen.append)
    finally:
        ex.PROGRESS_AFTER = old
    assert seen and all("states_per_second" in s for s in seen)


def test_the_explore_command_gives_the_same_listing_with_workers_or_a_scheduler(
    capsys, dask_executor
) -> None:
    from agentic_machines.cli import main

    assert main(["explore", "react", "--depth", "3"]) == 0
    serial = capsys.readouterr().out
    assert main(["explore", "react", "--depth", "3", "--workers", "2"]) == 0
    assert capsys.readouterr().out == serial
    address = dask_executor._client.scheduler.address
    assert main(["explore", "react", "--depth", "3", "--scheduler", address]) == 0
    assert capsys.readouterr().out == serial


def test_bad_workers_and_an_unreachable_scheduler_are_one_line_errors(capsys) -> None:
    import socket

    from agentic_machines.cli import main

    assert main(["explore", "f2-mul", "--workers", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err
    with socket.socket() as s:  # a free port on this machine, with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["explore", "f2-mul", "--scheduler", f"tcp://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot reach the Dask scheduler" in err[0]


def test_sampled_verdicts_with_an_executor_are_the_serial_verdicts(pool) -> None:
    """is_spe_state / completion_generates / check_embedding on a sample, with the harness
    calls on a process pool: same verdict, same counts, same counterexample."""
    from agentic_machines import (
        Embedding,
        check_embedding,
        completion_generates,
        identity,
        is_spe_state,
    )
    from agentic_machines.architectures import spe
    from agentic_machines.cek import loader
    from agentic_machines.fixtures import fixture

    m = spe.machine()
    states = spe.sample_states(1)
    comps = list(spe.SAMPLE_COMPLETIONS)[:4]
    kw = dict(embedding=identity(m), loader=loader, states=states, completions=comps)
    serial = is_spe_state(m, spe.initial, **kw)
    parallel = is_spe_state(m, spe.initial, executor=pool, **kw)
    assert serial.holds is True and str(parallel) == str(serial)
    assert (parallel.checked, parallel.method) == (serial.checked, serial.method)
    # a refutation and a broken embedding: the same counterexample either way
    f_add, f_mul = fixture("f2-add"), fixture("f2-mul")
    for v_s, v_p in (
        (
            completion_generates(f_add, 0, f_mul),
            completion_generates(f_add, 0, f_mul, executor=pool),
        ),
        (
            check_embedding(Embedding(f_mul, f_mul, {0: 1, 1: 0})),
            check_embedding(Embedding(f_mul, f_mul, {0: 1, 1: 0}), executor=pool),
        ),
    ):
        assert str(v_p) == str(v_s) and v_p.holds is False


def test_check_properties_with_an_executor_gives_the_serial_result(pool) -> None:
    from agentic_machines.checking import halts_within, never_diverges, prompt_length_at_most
    from agentic_machines.checking.check import check_properties

    m = react.machine()
    props = [halts_within(3), never_diverges(), prompt_length_at_most(1500)]
    kw = dict(completions=react.diagram_completions, max_depth=5)
    serial = check_properties(m, m.initial, props, **kw)
    parallel = check_properties(m, m.initial, props, executor=pool, **kw)
    assert parallel.report("m") == serial.report("m")
    assert not serial  # halts_within(3) is refuted: a counterexample to compare
    anon = FunctionMachine(lambda s: "p", lambda s, c: s, initial=0, completions=["a"])
    with pytest.raises(InvalidArgument, match="does not pickle"):
        check_properties(anon, 0, [never_diverges()], executor=pool)


def test_the_test_command_takes_workers_and_file_targets(tmp_path, capsys) -> None:
    from agentic_machines.cli import main

    args = ["test", "react", "-p", "halts_within:3", "--max-depth", "4"]
    assert main(args) == 1
    serial = capsys.readouterr().out
    assert main([*args, "--workers", "2"]) == 1
    assert capsys.readouterr().out == serial
    assert main(["export", "halt1", "-o", str(tmp_path / "m.json")]) == 0
    capsys.readouterr()
    assert main(["test", str(tmp_path / "m.json"), "-p", "halts_within:1"]) == 0
    assert "halts_within(1)" in capsys.readouterr().out
