"""run() and Trace: ends, JSON-lines files written as the run goes, load, replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import (
    DIVERGE,
    HALT,
    AgenticMachine,
    FunctionMachine,
    HarnessMachine,
    TableMachine,
    Trace,
    TraceState,
    run,
)
from agentic_machines.errors import InvalidArgument, ReplayMismatch, ScriptExhausted, Undecided
from agentic_machines.models import FunctionModel, MappingModel, ScriptedModel
from agentic_machines.runtime.run import Opaque, Step, decode_state, encode_state
from agentic_machines.strategies import examples

COUNTER = TableMachine(
    {0: "count 0", 1: "count 1", 2: "count 2"},
    {
        (0, "+"): 1,
        (1, "+"): 2,
        (2, "+"): 0,
        (0, "stop"): HALT,
        (1, "stop"): HALT,
        (2, "stop"): DIVERGE,
    },
    initial=0,
    name="counter",
)


# -- ends -------------------------------------------------------------------------------


def test_run_halts_and_records_each_step():
    t = run(COUNTER, ScriptedModel(["+", "stop"]))
    assert t.end is HALT and t.final is HALT
    assert t.steps == [Step(0, 0, "count 0", "+", 1), Step(1, 1, "count 1", "stop", HALT)]
    assert (
        t.completions == ["+", "stop"]
        and t.prompts == ["count 0", "count 1"]
        and t.states == [0, 1]
    )
    assert list(t) == t.steps and t[1].outcome is HALT and len(t) == 2


def test_run_diverges_and_respects_explicit_start():
    t = run(COUNTER, ScriptedModel(["stop"]), 2)
    assert t.end is DIVERGE and t.start == 2 and len(t) == 1


def test_max_steps_stops_the_run():
    t = run(COUNTER, ScriptedModel(["+"] * 10), max_steps=4)
    assert t.end == "max_steps" and len(t) == 4 and t.final == 1
    assert run(COUNTER, ScriptedModel([]), max_steps=0).end == "max_steps"
    assert "stopped at max_steps (4)" in str(t)
    with pytest.raises(InvalidArgument, match="max_steps"):
        run(COUNTER, ScriptedModel([]), max_steps=-1)


def test_start_is_required_when_the_machine_has_no_initial_state():
    m = TableMachine({0: "p"}, {(0, "x"): HALT}, name="bare")
    with pytest.raises(InvalidArgument, match="initial="):
        run(m, ScriptedModel(["x"]))
    assert run(m, ScriptedModel(["x"]), 0).end is HALT


def test_model_error_is_kept_or_reraised():
    t = run(COUNTER, ScriptedModel(["+"]))
    assert t.end == "model-error" and len(t) == 1
    assert isinstance(t.error, ScriptExhausted) and "call index 1" in t.message
    assert "model-error: ScriptExhausted" in str(t)
    with pytest.raises(ScriptExhausted):
        run(COUNTER, ScriptedModel(["+"]), raise_errors=True)


def test_a_model_answering_a_non_string_is_a_model_error():
    class Bad:
        def complete(self, prompt):
            return 3

    t = run(COUNTER, Bad())
    assert t.end == "model-error" and "C = str" in t.message


def _fuel_machine():
    # A harness that runs out of fuel on "think": the CEK evaluator's behaviour.
    def harness(state, c):
        if c == "think":
            raise Undecided("fuel ran out after 100 steps; raise fuel=")
        return HALT if c == "stop" else state + 1

    return FunctionMachine(lambda s: f"at {s}", harness, initial=0, name="fuel")


def test_undecided_ends_the_run_keeping_the_message_and_the_pending_call(tmp_path):
    t = run(_fuel_machine(), ScriptedModel(["go", "think", "unused"]), path=tmp_path / "t.jsonl")
    assert t.end == "undecided" and "fuel ran out" in t.message
    assert len(t) == 1 and t.pending == ("at 1", "think")
    loaded = Trace.load(tmp_path / "t.jsonl")
    assert loaded == t
    assert run(_fuel_machine(), loaded.to_model()) == t
    assert loaded.replay(_fuel_machine()) == t


def test_undecided_from_the_prompt_function():
    def prompt(s):
        if s == 2:
            raise Undecided("cannot render state 2")
        return "p"

    m = FunctionMachine(prompt, lambda s, c: s + 1, initial=0)
    t = run(m, ScriptedModel(["a"] * 5))
    assert t.end == "undecided" and len(t) == 2 and t.pending is None


# -- files ------------------------------------------------------------------------------


def test_the_file_is_written_as_the_run_goes(tmp_path):
    path = tmp_path / "run.jsonl"
    seen = []

    def model(prompt):
        # At each call, every earlier step is already on disk.
        seen.append(sum(1 for line in path.read_text().splitlines() if '"kind": "step"' in line))
        return "+"

    t = run(COUNTER, FunctionModel(model), max_steps=4, path=path)
    assert seen == [0, 1, 2, 3]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert (
        lines[0]["kind"] == "header" and lines[0]["machine"] == "counter" and lines[0]["start"] == 0
    )
    assert [line["kind"] for line in lines[1:]] == ["step"] * 4 + ["end"]
    assert lines[-1]["end"] == "max_steps"
    assert Trace.load(path) == t


class Killed(BaseException):
    """Stands for a kill: not an Exception, so run() does not catch it."""


def test_a_run_interrupted_after_k_steps_leaves_k_steps_on_disk(tmp_path):
    path = tmp_path / "run.jsonl"
    k = 3
    count = 0

    def model(prompt):
        nonlocal count
        if count == k:
            raise Killed()
        count += 1
        return "+"

    with pytest.raises(Killed):
        run(COUNTER, FunctionModel(model), path=path)
    loaded = Trace.load(path)
    assert loaded.end == "incomplete" and len(loaded) == k
    assert loaded.steps == run(COUNTER, ScriptedModel(["+"] * k), max_steps=k).steps
    assert "incomplete" in str(loaded)
    assert loaded.replay(COUNTER).steps == loaded.steps  # an incomplete trace replays its steps


def test_a_process_killed_half_way_leaves_its_steps(tmp_path):
    # os._exit skips every Python cleanup (no buffered write survives it): what is on
    # disk is what run() flushed step by step.
    path = tmp_path / "killed.jsonl"
    script = f"""
import os
from agentic_machines import TableMachine, HALT, run
from agentic_machines.models import FunctionModel
m = TableMachine({{0: "p0", 1: "p1"}}, {{(0, "a"): 1, (1, "a"): 0, (0, "b"): HALT, (1, "b"): HALT}}, initial=0)
calls = []
def model(prompt):
    if len(calls) == 5:
        os._exit(9)
    calls.append(prompt)
    return "a"
run(m, FunctionModel(model), path={str(path)!r})
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 9, proc.stderr
    loaded = Trace.load(path)
    assert loaded.end == "incomplete"
    assert loaded.completions == ["a"] * 5 and loaded.prompts == ["p0", "p1", "p0", "p1", "p0"]


def test_a_cut_off_last_line_is_ignored(tmp_path):
    path = tmp_path / "t.jsonl"
    run(COUNTER, ScriptedModel(["+", "+", "stop"]), path=path)
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    path.write_text("".join(lines[:3]) + lines[3][:10])  # header, 2 steps, half a third step
    loaded = Trace.load(path)
    assert len(loaded) == 2 and loaded.end == "incomplete"


def test_load_rejects_files_that_are_not_traces(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"prompt": "p", "completion": "c"}\n')
    with pytest.raises(InvalidArgument, match="not a trace file"):
        Trace.load(path)


def test_harness_machine_traces_round_trip(tmp_path):
    def guess(secret):
        tried = []
        while True:
            c = yield f"Guess. Tried: {tried}"
            if c == secret:
                return "found"
            tried.append(c)

    m = HarnessMachine(guess, "owl")
    t = run(m, MappingModel({"[]": "cat", "'cat']": "owl"}), path=tmp_path / "g.jsonl")
    assert t.end is HALT and t.states == [TraceState(()), TraceState(("cat",))]
    loaded = Trace.load(tmp_path / "g.jsonl")
    assert loaded == t and isinstance(loaded.steps[1].state, TraceState)
    assert loaded.replay(HarnessMachine(guess, "owl")) == t


def counting(n):
    i = 0
    while True:
        c = yield f"step {i}"
        i += 1
        if c == "stop" or i >= n:
            return i


def test_long_harness_runs_write_files_linear_in_length(tmp_path):
    path = tmp_path / "long.jsonl"
    t = run(
        HarnessMachine(counting, 10**6), ScriptedModel(["go"] * 2000), max_steps=2000, path=path
    )
    lines = path.read_text().splitlines()
    assert max(len(line) for line in lines) < 200  # no line repeats the growing completion list
    loaded = Trace.load(path)
    assert loaded == t and loaded.steps[-1].state == TraceState(("go",) * 1999)


def test_saved_harness_traces_that_jump_between_states_load_back(tmp_path):
    m = HarnessMachine(counting, 5)
    s1 = m.harness(m.initial, "a")
    s2 = m.harness(s1, "b")
    # Hand-built, not from run(): states that are not the previous outcome.
    t = Trace(
        "counting",
        m.initial,
        [Step(0, s2, "step 2", "c", s2.then("c")), Step(1, s1, "step 1", "stop", HALT)],
        end=HALT,
    )
    t.save(tmp_path / "t.jsonl")
    assert Trace.load(tmp_path / "t.jsonl") == t


@dataclass(frozen=True)
class Point:
    x: int


def test_unencodable_states_load_as_their_repr_and_replay_needs_the_start(tmp_path):
    m = FunctionMachine(
        lambda s: f"at {s.x}",
        lambda s, c: HALT if c == "stop" else Point(s.x + 1),
        initial=Point(0),
    )
    t = run(m, ScriptedModel(["go", "stop"]))
    t.save(tmp_path / "p.jsonl")
    loaded = Trace.load(tmp_path / "p.jsonl")
    assert loaded.start == Opaque("Point(x=0)") and repr(loaded.steps[1].state) == "Point(x=1)"
    assert loaded != t  # documented: repr-only values are not equal to the originals
    assert loaded.replay(m) == t  # the machine's initial state has the same encoding
    m.initial = None
    with pytest.raises(InvalidArgument, match="start="):
        loaded.replay(m)
    assert loaded.replay(m, start=Point(0)) == t


# -- replay -----------------------------------------------------------------------------


def test_replay_reports_a_changed_outcome_at_its_step():
    t = run(COUNTER, ScriptedModel(["+", "+", "stop"]))
    changed = TableMachine(
        COUNTER.prompts, {**COUNTER.transitions, (1, "+"): 0}, initial=0, name="counter"
    )
    with pytest.raises(ReplayMismatch) as info:
        t.replay(changed)
    assert info.value.index == 1 and "outcome is 0, recorded 2" in str(info.value)


def test_replay_reports_a_changed_prompt_before_the_machine_can_break():
    t = run(COUNTER, ScriptedModel(["+", "+", "stop"]))
    prompts = {**COUNTER.prompts, 2: "count two"}
    changed = TableMachine(prompts, COUNTER.transitions, initial=0)
    with pytest.raises(ReplayMismatch, match="step 2: .* at character 6"):
        t.replay(changed)


def test_replay_reports_a_different_end():
    t = run(COUNTER, ScriptedModel(["stop"]))
    changed = TableMachine(
        COUNTER.prompts, {**COUNTER.transitions, (0, "stop"): DIVERGE}, initial=0
    )
    with pytest.raises(ReplayMismatch):
        t.replay(changed)


# -- display ----------------------------------------------------------------------------


def test_str_and_markdown():
    t = run(COUNTER, ScriptedModel(["+", "stop"]))
    text = str(t)
    assert text.splitlines()[0] == "Trace of 'counter' from 0: 2 steps, ended with HALT (1)."
    assert "'count 0'" in text and "completion" in text
    md = t._repr_markdown_()
    assert md.startswith("**Trace**") and "| 1 | 1 | 'count 1' | 'stop' | HALT (1) |" in md


def test_long_traces_are_shortened_in_display():
    t = run(COUNTER, ScriptedModel(["+"] * 100), max_steps=100)
    text = str(t)
    assert "(75 more steps)" in text and len(text.splitlines()) < 30
    long_prompt = TableMachine({0: "x" * 500}, {(0, "c" * 300): HALT}, initial=0)
    line = str(run(long_prompt, ScriptedModel(["c" * 300]))).splitlines()[2]
    assert len(line) < 120


def test_pipes_are_escaped_in_markdown():
    m = TableMachine({0: "a|b"}, {(0, "x"): HALT}, initial=0)
    assert "'a\\|b'" in run(m, ScriptedModel(["x"]))._repr_markdown_()


# -- state encoding ---------------------------------------------------------------------

json_leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
hashable = st.recursive(
    st.one_of(
        json_leaves,
        st.sampled_from([HALT, DIVERGE]),
        st.lists(st.text(max_size=3), max_size=3).map(lambda cs: TraceState(tuple(cs))),
    ),
    lambda inner: st.one_of(st.tuples(inner, inner), st.frozensets(inner, max_size=3)),
    max_leaves=8,
)
values = st.recursive(
    hashable,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["a", "tuple", "sentinel", "repr", "dict", "trace"]), inner, max_size=2
        ),
        st.dictionaries(st.integers(), inner, max_size=2),
    ),
    max_leaves=10,
)


@settings(max_examples=examples(100, 2000))
@given(values)
def test_encode_decode_round_trip(value):
    encoded = encode_state(value)
    assert json.loads(json.dumps(encoded)) == encoded
    decoded = decode_state(json.loads(json.dumps(encoded)))
    assert decoded == value
    assert type(decoded) is type(value)


def test_deep_states_do_not_recurse():
    deep = ()
    for i in range(20_000):
        deep = (i, [deep])
    node = decode_state(encode_state(deep))  # (json and == are themselves recursive: walk it)
    for i in reversed(range(20_000)):
        assert type(node) is tuple and node[0] == i and type(node[1]) is list
        node = node[1][0]
    assert node == ()


# -- the round-trip property ------------------------------------------------------------

STATE_POOL = [0, 1, 2, "a", "b", ("t", 1), ("t", ("u", "v")), frozenset({1, 2}), -7, "", None]
ALPHABET = ["x", "y", "z", "x\ny"]


@st.composite
def table_machines(draw):
    """A small random TableMachine with a start state (local: shared strategies are elsewhere)."""
    states = draw(
        st.lists(
            st.sampled_from([s for s in STATE_POOL if s is not None]),
            min_size=1,
            max_size=5,
            unique=True,
        )
    )
    completions = draw(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=4, unique=True))
    prompts = {
        s: draw(st.sampled_from(["p", "q", "p|q", "ünï", ""])) + str(i)
        for i, s in enumerate(states)
    }
    outcomes = st.sampled_from(states + [HALT, DIVERGE])
    transitions = {(s, c): draw(outcomes) for s in states for c in completions}
    start = draw(st.sampled_from(states))
    return TableMachine(
        prompts, transitions, initial=start, name=draw(st.sampled_from(["m", "table ✓"]))
    )


@settings(max_examples=examples(100, 2000))
@given(table_machines(), st.data())
def test_run_save_load_to_model_run_gives_the_same_trace(machine, data):
    script = data.draw(st.lists(st.sampled_from(list(machine.completions)), max_size=12))
    max_steps = data.draw(st.integers(0, 10))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.jsonl")
        first = run(machine, ScriptedModel(script), max_steps=max_steps, path=path)
        loaded = Trace.load(path)
        assert loaded == first
        again = run(machine, loaded.to_model(), loaded.start, max_steps=loaded.max_steps)
        assert again == first
        assert again.message == first.message
        saved = os.path.join(tmp, "saved.jsonl")
        first.save(saved)
        assert Trace.load(saved) == first
        assert loaded.replay(machine) == first


# -- prompts stored as deltas (trace format version 2) ----------------------------------


class _Prompts(AgenticMachine):
    """Prompts given by a list, one per state: growing, shrinking, rewritten."""

    def __init__(self, prompts):
        self.prompts, self.initial, self.name = prompts, 0, "prompts"

    def prompt(self, state):
        return self.prompts[state]

    def harness(self, state, completion):
        return HALT if state + 1 == len(self.prompts) else state + 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab\n\u00e9\ud800", max_size=12), min_size=1, max_size=8))
def test_prompt_deltas_load_exactly(tmp_path_factory, prompts):
    # Whatever the prompts do (grow, shrink, change in the middle, hold lone surrogates),
    # the file loads back the same prompts.
    path = tmp_path_factory.mktemp("d") / "t.jsonl"
    trace = run(_Prompts(prompts), ScriptedModel(["c"] * len(prompts)), path=path)
    assert Trace.load(path) == trace and Trace.load(path).prompts == prompts


_WRITER_STATES = st.sampled_from(
    [
        0,
        7,
        -3,
        "s",
        "\u00e9",
        'q"\\\n',
        "\ud800",
        1.5,
        True,
        None,
        ("t", 1),
        frozenset({2}),
        HALT,
        DIVERGE,
    ]
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(_WRITER_STATES, st.just("trace"), st.just("previous")),
            st.text(alphabet="ab\n\u00e9\ud800", max_size=6),
            st.text(alphabet='c"\\\ud800', max_size=4),
            st.one_of(_WRITER_STATES, st.just("then")),
            st.booleans(),
        ),
        max_size=6,
    )
)
def test_each_step_line_is_the_json_of_its_dict(tmp_path_factory, rows):
    # The writer assembles a step's JSON by hand (for speed); it must be exactly the text
    # json.dumps gives for the step's dict (ASCII escapes when a lone surrogate is in it).
    from agentic_machines.runtime.run import TraceWriter, prompt_gain

    path = tmp_path_factory.mktemp("w") / "t.jsonl"
    previous, prompt, expected = 0, None, []
    with TraceWriter(path, "m", 0, None) as writer:
        for index, (state, added, completion, outcome, clock) in enumerate(rows):
            if state == "previous":  # as in a run: the previous outcome, the same object
                state = previous
            elif state == "trace":
                state = (  # equal to the previous outcome, not the same object
                    TraceState(previous.completions)
                    if isinstance(previous, TraceState)
                    else TraceState(("x",))
                )
            if outcome == "then":
                outcome = state.then(completion) if isinstance(state, TraceState) else 1
            new_prompt = (prompt or "") + added if index % 3 else added + "p"
            line = {"kind": "step", "index": index}
            if isinstance(state, TraceState) and state == previous:
                line["same_state"] = True
            else:
                line["state"] = encode_state(state)
            kept, rest = prompt_gain(prompt, new_prompt)
            line.update(
                {"prompt_keep": kept, "prompt_add": rest} if kept else {"prompt": new_prompt}
            )
            line["completion"] = completion
            if (
                isinstance(outcome, TraceState)
                and isinstance(state, TraceState)
                and outcome == state.then(completion)
            ):
                line["outcome_then"] = True
            else:
                line["outcome"] = encode_state(outcome)
            if clock:
                line["clock"] = True
            try:
                expected.append(json.dumps(line, ensure_ascii=False).encode("utf-8"))
            except UnicodeEncodeError:
                expected.append(json.dumps(line).encode("ascii"))
            writer.step(Step(index, state, new_prompt, completion, outcome, clock))
            previous, prompt = outcome, new_prompt
    assert path.read_bytes().splitlines()[1:] == expected


def _dumped(record):
    try:
        return json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(record).encode("ascii")


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet='m"\\\n\u00e9\ud800', max_size=5),
    _WRITER_STATES,
    st.one_of(st.none(), st.integers(0, 10**6), st.just(True)),
    st.one_of(_WRITER_STATES, st.sampled_from(["max_steps", "undecided", "incomplete"])),
    st.one_of(st.none(), st.text(alphabet='x"\\\n\ud800', max_size=5), st.just(3)),
    st.one_of(
        st.none(),
        st.tuples(st.text(alphabet='p"\ud800', max_size=3), st.text(alphabet="c\n", max_size=3)),
        st.just(("only one",)),
    ),
    st.integers(0, 3),
)
def test_header_and_end_lines_are_the_json_of_their_dicts(
    tmp_path_factory, machine, start, max_steps, end, message, pending, count
):
    # The header and end lines are assembled by hand too (a run pays for them cold); each
    # must be exactly json.dumps of its dict, whatever the values (a message that is not a
    # string or a pending that is not a pair takes the generic encoder, as before).
    from agentic_machines.runtime.run import TraceWriter

    path = tmp_path_factory.mktemp("h") / "t.jsonl"
    trace = Trace(machine=machine, start=start, max_steps=max_steps)
    trace.steps = [Step(i, 0, "p", "c", 0) for i in range(count)]
    trace.end, trace.message, trace.pending = end, message, pending
    with TraceWriter(path, machine, start, max_steps) as writer:
        writer.end(trace)
    header = {
        "format": "agentic-machines-trace",
        "version": 2,
        "kind": "header",
        "machine": machine,
        "start": encode_state(start),
        "max_steps": max_steps,
    }
    ending = {
        "kind": "end",
        "end": encode_state(end),
        "steps": count,
        "message": message,
        "pending": list(pending) if pending else None,
    }
    assert path.read_bytes().splitlines() == [_dumped(header), _dumped(ending)]


def test_a_growing_prompt_is_written_once(tmp_path):
    base = "x" * 10_000
    prompts = [base + "".join(f" step {i}" for i in range(k)) for k in range(50)]
    path = tmp_path / "t.jsonl"
    run(_Prompts(prompts), ScriptedModel(["c"] * 50), path=path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 52 and sum(len(line) for line in lines) < 10_000 + 50 * 200
    assert '"prompt_keep": 10000, "prompt_add": ""' not in lines[2]  # step 1 adds " step 0"
    assert json.loads(lines[2])["prompt_add"] == " step 0"


def test_a_version_1_file_still_loads(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(
        '{"format": "agentic-machines-trace", "version": 1, "kind": "header", "machine": "m",'
        ' "start": 0, "max_steps": 10}\n'
        '{"kind": "step", "index": 0, "state": 0, "prompt": "Q?", "completion": "a", "outcome": 1}\n'
        '{"kind": "step", "index": 1, "state": 1, "prompt": "Q? a", "completion": "b",'
        ' "outcome": {"sentinel": "1"}}\n'
        '{"kind": "end", "end": {"sentinel": "1"}, "steps": 2, "message": null, "pending": null}\n',
        encoding="utf-8",
    )
    trace = Trace.load(path)
    assert trace.prompts == ["Q?", "Q? a"] and trace.end is HALT


@pytest.mark.parametrize(
    "change,problem",
    [
        ({"prompt_keep": 99}, "'prompt_keep' is 99 but the previous prompt has 2 characters"),
        ({"prompt_keep": 0}, "'prompt_keep' is 0"),
        ({"prompt_keep": "2"}, "'prompt_keep' must be a whole number"),
        ({"prompt_add": 3}, "'prompt_add' must be a string"),
        ({"prompt": "x"}, "needs a version 2 file and no 'prompt' field"),
    ],
)
def test_a_bad_prompt_delta_is_reported(tmp_path, change, problem):
    from agentic_machines.errors import TraceError

    path = tmp_path / "t.jsonl"
    run(_Prompts(["Q?", "Q? a"]), ScriptedModel(["a", "b"]), path=path)
    recs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    recs[2].update(change)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    with pytest.raises(TraceError, match=":3: .*" + problem.replace("(", r"\(")[:40]):
        Trace.load(path)


def test_one_write_per_step(tmp_path, monkeypatch):
    # Each completed step reaches the file with a single os.write (no buffer, no flush).
    import agentic_machines.runtime._jsonl as jsonl

    calls = []
    real = os.write
    monkeypatch.setattr(jsonl.os, "write", lambda fd, data: calls.append(data) or real(fd, data))
    run(_Prompts(["a", "ab", "abc"]), ScriptedModel(["x"] * 3), path=tmp_path / "t.jsonl")
    assert len(calls) == 1 + 3 + 1 and all(c.endswith(b"\n") and c.count(b"\n") == 1 for c in calls)


def test_run_prints_every_step_readably(tmp_path, capsys):
    from agentic_machines.cli.commands import main

    script = tmp_path / "s.json"
    script.write_text(
        json.dumps([" I will look.\nAction 1: Search[Paris]", " Done.\nAction 2: Finish[Seine]"])
    )
    assert main(["run", "react", "--script", str(script)]) == 0
    out = capsys.readouterr().out
    assert "  completion  ' I will look.\\nAction 1: Search[Paris]'" in out  # whole
    # the part the harness added (the Observation), not the answer repeated (issue 36)
    assert "  prompt +    (after 1149 kept) '…\\nObservation 1: Paris is the capital" in out
    assert all(len(line) <= 100 for line in out.splitlines() if not line.startswith("  completion"))
    assert main(["run", "react", "--script", str(script), "--full"]) == 0
    full = capsys.readouterr().out
    assert (
        "    | Question: Which river flows through the city where the Eiffel Tower stands?" in full
    )


def chatty_agent(model):
    print("starting")
    first = model("first?")
    print(f"got {first}")
    second = model("second?")
    print("done")
    return first + second


def test_an_agents_prints_are_kept_with_their_step_by_save_and_load(tmp_path, capsys):
    from agentic_machines import agent_machine
    from agentic_machines.cli import main

    m = agent_machine(chatty_agent)
    streamed = tmp_path / "streamed.jsonl"
    trace = run(m, ScriptedModel(["a", "b"]), path=streamed)
    # the worker captured them: the caller's terminal saw none, the trace has each once
    assert "starting" not in capsys.readouterr().out
    assert trace.outputs == {0: "starting\ngot a\n", 1: "done\n"}
    saved = tmp_path / "saved.jsonl"
    trace.save(saved)
    for path in (streamed, saved):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert [line.get("output") for line in lines] == [None, "starting\ngot a\n", "done\n", None]
        loaded = Trace.load(path)
        assert loaded == trace and loaded.outputs == trace.outputs
    # a saved trace still replays, on the command line too
    assert Trace.load(saved).replay(m) == trace
    target = f"{__file__}:chatty_agent"
    assert main(["run", target, "--replay", str(saved)]) == 0
    assert "every step as recorded" in capsys.readouterr().out


def test_a_trace_line_whose_output_is_not_text_is_refused(tmp_path):
    path = tmp_path / "bad.jsonl"
    run(FunctionMachine(str, lambda s, c: HALT, initial=0), ScriptedModel(["x"]), path=path)
    head, step, end = path.read_text().splitlines()
    path.write_text("\n".join([head, step[:-1] + ', "output": 3}', end]) + "\n")
    with pytest.raises(Exception, match="'output' must be a string, got 3"):
        Trace.load(path)
