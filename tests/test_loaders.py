"""Loading never crashes: any trace or cassette file loads or raises one TraceError /
CassetteError that names ``path:line`` (issue 10)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentic_machines import HALT, TableMachine, Trace, _files, run
from agentic_machines.errors import (
    CassetteError,
    InvalidMachine,
    ReplayMismatch,
    TraceError,
)
from agentic_machines.runtime._jsonl import MAX_JSON_LINES_BYTES
from agentic_machines.runtime.harness import HarnessMachine
from agentic_machines.runtime.local_models import RecordingModel, ReplayModel, ScriptedModel

COUNTER = TableMachine(
    {(0, "a"): "p0", (1, "b"): "p1", (2, "c"): "p2"},
    {
        ((0, "a"), "+"): (1, "b"),
        ((1, "b"), "+"): (2, "c"),
        ((2, "c"), "+"): (0, "a"),
        ((0, "a"), "stop"): HALT,
        ((1, "b"), "stop"): HALT,
        ((2, "c"), "stop"): HALT,
    },
    initial=(0, "a"),
    name="counter",
)


def _words():
    words = ()
    while True:
        c = yield "said: " + " ".join(words)
        if c == "stop":
            return words
        words += (c,)


def trace_file(tmp_path, kind="table"):
    path = tmp_path / f"{kind}.jsonl"
    if kind == "table":
        run(COUNTER, ScriptedModel(["+", "+", "+", "stop"]), path=path)
    else:
        m = HarnessMachine(_words)
        run(m, ScriptedModel(["a", "b\nc", "stop"]), path=path)
    return path


def cassette_file(tmp_path):
    path = tmp_path / "c.jsonl"
    rec = RecordingModel(ScriptedModel(["x", "y", "z"]), path)
    for p in ("first", "second\nline", "third"):
        rec.complete(p)
    return path


def _lines(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _raises(exc, path, line, words):
    with pytest.raises(exc) as info:
        Trace.load(path) if exc is TraceError else ReplayModel(path)
    message = str(info.value)
    where = f"{path}:{line}:" if line else f"{path}:"
    assert message.startswith(where) and words in message, message
    return message


# -- each class of bad file, with the error it gives -----------------------------------------


def test_a_missing_field(tmp_path):
    path = trace_file(tmp_path)
    recs = _lines(path)
    del recs[1]["prompt"]
    _write(path, recs)
    _raises(TraceError, path, 2, "the step line has no 'prompt' field")


def test_wrong_types_and_a_prompt_that_is_not_a_string(tmp_path):
    path = trace_file(tmp_path)
    recs = _lines(path)
    recs[1]["index"] = "0"
    _write(path, recs)
    _raises(TraceError, path, 2, "'index' must be a whole number")
    recs[2].pop("prompt_keep", None), recs[2].pop("prompt_add", None)  # a whole prompt instead
    recs[1]["index"], recs[2]["prompt"] = 0, 7
    _write(path, recs)
    _raises(TraceError, path, 3, "'prompt' must be a string, got 7")
    recs[2]["prompt"], recs[0]["max_steps"] = "p1", "many"
    _write(path, recs)
    _raises(TraceError, path, 1, "'max_steps' must be a whole number")


def test_nan(tmp_path):
    path = trace_file(tmp_path)
    text = path.read_text(encoding="utf-8").replace('"max_steps": 1000', '"max_steps": NaN')
    path.write_text(text, encoding="utf-8")
    _raises(TraceError, path, 1, "NaN is not allowed")


def test_an_unknown_version(tmp_path):
    path = trace_file(tmp_path)
    recs = _lines(path)
    recs[0]["version"] = 99
    _write(path, recs)
    _raises(TraceError, path, 1, "unknown trace format version 99")


def test_an_end_line_whose_step_count_disagrees(tmp_path):
    path = trace_file(tmp_path)
    recs = _lines(path)
    recs[-1]["steps"] = 17
    _write(path, recs)
    _raises(TraceError, path, len(recs), "the end line says 17 steps but the file has 4")


def test_invalid_utf8_and_binary_data(tmp_path):
    path = trace_file(tmp_path)
    data = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(data[:2] + [b'{"kind": "st\xffep"}'] + data[2:]))
    _raises(TraceError, path, 3, "not UTF-8 text")
    path.write_bytes(b"\n".join(data[:1] + [b"\x00\x01\x02binary"] + data[1:]))
    _raises(TraceError, path, 2, "binary data")


def test_deeply_nested_json(tmp_path):
    path = trace_file(tmp_path)
    data = path.read_text(encoding="utf-8").split("\n")
    deep = '{"kind": "step", "state": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path.write_text("\n".join(data[:1] + [deep] + data[1:]), encoding="utf-8")
    _raises(TraceError, path, 2, "nested too deeply")


def test_an_unknown_state_encoding(tmp_path):
    path = trace_file(tmp_path)
    recs = _lines(path)
    recs[1]["state"] = {"sentinel": "x"}
    _write(path, recs)
    _raises(TraceError, path, 2, "unknown state encoding")
    recs[1]["state"] = {"frozenset": [[1]]}
    _write(path, recs)
    _raises(TraceError, path, 2, "not hashable")
    path = trace_file(tmp_path, "harness")
    recs = _lines(path)
    recs[0]["start"] = {"trace": [1, 2]}
    _write(path, recs)
    _raises(TraceError, path, 1, "a trace state is a list of strings")


def test_order_and_shape_of_lines(tmp_path):
    path = trace_file(tmp_path)
    recs = _lines(path)
    _write(path, recs[:2] + recs[3:])
    _raises(TraceError, path, 3, "step index 2 where 1 was expected")
    _write(path, recs + [recs[1]])
    _raises(TraceError, path, len(recs) + 1, "a line after the end line")
    _write(path, [])
    _raises(TraceError, path, None, "the file is empty")
    _raises(TraceError, tmp_path / "missing.jsonl", None, "cannot read it")
    _raises(TraceError, tmp_path, None, "is a directory, not a regular file")


def test_cassette_gaps_and_bad_lines(tmp_path):
    path = cassette_file(tmp_path)
    recs = _lines(path)
    _write(path, recs[:1] + recs[2:])
    _raises(CassetteError, path, 2, "index 2 where 1 was expected")
    recs[1]["prompt"] = ["not", "a", "string"]
    _write(path, recs)
    _raises(CassetteError, path, 2, "'prompt' must be a string")
    del recs[1]["completion"]
    _write(path, recs)
    recs[1]["prompt"] = "second"
    _write(path, recs)
    _raises(CassetteError, path, 2, "the line has no 'completion' field")
    path.write_bytes(b'{"index": 0, "prompt": "\xff", "completion": "c"}\n')
    _raises(CassetteError, path, 1, "not UTF-8 text")
    path.write_text('{"index": 0, "prompt": "p", "completion": NaN}\n', encoding="utf-8")
    _raises(CassetteError, path, 1, "NaN is not allowed")
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    _raises(CassetteError, path, 1, "nested too deeply")


def test_good_files_still_load(tmp_path):
    for kind in ("table", "harness"):
        path = trace_file(tmp_path, kind)
        t = Trace.load(path)
        assert t.end is HALT and len(t) >= 3
    assert [c for _, c in ReplayModel(cassette_file(tmp_path)).records] == ["x", "y", "z"]


# The property (mutated files load or raise one error) is in test_loader_fuzz.py, with the
# command's verbs and special files.


# -- found in review: /dev/zero, lone surrogates, a full disk --------------------------------


def test_dev_zero_is_refused_at_once_as_a_device():
    _raises(TraceError, "/dev/zero", None, "is a character device, not a regular file")
    _raises(CassetteError, "/dev/zero", None, "is a character device, not a regular file")


def test_a_lone_surrogate_in_a_completion_is_written_and_read_back(tmp_path):
    path = tmp_path / "s.jsonl"
    m = HarnessMachine(_words)
    t = run(m, ScriptedModel(["a", "\ud800", "stop"]), path=path)
    assert t.end is HALT and Trace.load(path).steps == t.steps
    cassette = tmp_path / "c.jsonl"
    assert RecordingModel(ScriptedModel(["\udc80"]), cassette).complete("p\ud801") == "\udc80"
    assert ReplayModel(cassette).records == [("p\ud801", "\udc80")]


def test_a_write_error_names_the_file():
    with pytest.raises(OSError) as info:
        run(COUNTER, ScriptedModel(["+", "stop"]), path="/dev/full")
    assert info.value.filename == "/dev/full"


# -- issue 23: special files, size caps, the three tracebacks, no echo of file content ------


def _special_files(tmp_path):
    """A path of each kind that is not a regular file, as a loader may be handed it."""
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # no writer: open() without O_NONBLOCK would block for ever
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(tmp_path / "loop2.jsonl")
    (tmp_path / "loop2.jsonl").symlink_to(loop)
    return {
        fifo: "is a FIFO (named pipe), not a regular file",
        Path("/dev/zero"): "is a character device, not a regular file",
        Path("/dev/null"): "is a character device, not a regular file",
        tmp_path: "is a directory, not a regular file",
        loop: "cannot read it: Too many levels of symbolic links",
    }


def test_only_regular_files_are_read_by_the_jsonl_loaders(tmp_path):
    for path, words in _special_files(tmp_path).items():
        _raises(TraceError, path, None, words)
        _raises(CassetteError, path, None, words)


def test_trace_and_cassette_files_have_a_size_cap_stated_in_the_message(tmp_path):
    path = trace_file(tmp_path)
    size = path.stat().st_size
    with pytest.raises(TraceError) as info:
        Trace.load(path, max_bytes=size - 1)
    assert f"is larger than {size - 1} bytes, the limit for a trace file" in str(info.value)
    assert str(info.value).endswith("load it in Python with Trace.load(path, max_bytes=...)")
    assert Trace.load(path, max_bytes=size).end is HALT
    assert MAX_JSON_LINES_BYTES == 64 * 1024 * 1024
    cassette = cassette_file(tmp_path)
    with pytest.raises(CassetteError, match=r"the limit for a cassette file; .*max_bytes="):
        ReplayModel(cassette, max_bytes=10)


def test_a_file_that_grows_past_the_cap_while_read_is_refused(tmp_path, monkeypatch):
    # A file in /proc says its size is 0: the cap is kept while reading, not only from stat.
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"{}\n" * 1000)
    monkeypatch.setattr(_files, "CHUNK", 16)
    monkeypatch.setattr(_files, "check_regular", lambda *a, **k: 0)
    with pytest.raises(TraceError, match="is larger than 100 bytes"):
        Trace.load(path, max_bytes=100)


def test_a_start_state_that_is_not_a_state_of_the_machine_is_a_replay_mismatch(tmp_path):
    # Was a TypeError traceback: the header's "start": [] reached the machine's prompt table.
    path = trace_file(tmp_path)
    recs = _lines(path)
    recs[0]["start"] = []
    _write(path, recs)
    trace = Trace.load(path)
    with pytest.raises(ReplayMismatch, match=r"the recorded start state \[\] is not a state"):
        trace.replay(COUNTER)


def test_a_table_machine_given_an_unhashable_state_says_so():
    with pytest.raises(InvalidMachine, match=r"\[0\] is not a state of 'counter'"):
        COUNTER.prompt([0])
    with pytest.raises(InvalidMachine, match=r"\(0, \[\]\) is not a state"):
        COUNTER.harness((0, []), "+")
    with pytest.raises(InvalidMachine, match="'x' is not in the completion alphabet"):
        COUNTER.harness((0, "a"), "x")


def test_error_messages_quote_a_short_escaped_excerpt_only(tmp_path):
    path = trace_file(tmp_path)
    recs = _lines(path)
    recs[1]["prompt"] = ["\x1b[2J" + "secret " * 10_000]
    _write(path, recs)
    message = _raises(TraceError, path, 2, "'prompt' must be a string")
    assert "\x1b" not in message and "\\x1b" in message
    assert message.count("secret") < 10
