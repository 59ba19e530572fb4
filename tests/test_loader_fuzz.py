"""The loader fuzz (issue 23): mutated files and special files never crash or hang a loader.

Good files of every kind a user hands the toolkit (traces, cassettes, machine files in JSON
and TOML, scripts as lines or a JSON list, exercise answers) are mutated by Hypothesis:
byte flips, truncations, inserted bytes, dropped or repeated lines, and values swapped for
any JSON value. Each mutant goes through its public loader, which must load it or raise the
loader's own error class, and through a command verb run in-process (``main(argv)``), which
must exit 0, 1 or 2, and on 2 print exactly one ``agentic-machines: error:`` line and no
traceback. Special files (a FIFO with no writer, ``/dev/zero``, ``/dev/null``, a directory,
a socket, a symbolic-link loop) go through every loader and every file argument of the
command, and must give one error line each.

No timer bounds a case: each is bounded by its input (mutants are at most a few kilobytes;
every run has ``--max-steps``, every search ``--depth`` or ``--max-states``; a replay runs
out of recorded completions), so a hang would show as a test that never ends. The FIFO case
alone runs in a subprocess with a generous timeout, because a regression there blocks
``open`` itself. ``HYPOTHESIS_PROFILE=thorough`` runs thousands of mutants instead of 100.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import Trace, run
from agentic_machines.cli.commands import MAX_MESSAGE, main, read_script
from agentic_machines.errors import (
    AgenticMachinesError,
    CassetteError,
    InvalidArgument,
    InvalidMachineFile,
    TraceError,
)
from agentic_machines.exercises import load_answer
from agentic_machines.fixtures import fixture
from agentic_machines.machinefile import load_machine
from agentic_machines.runtime.local_models import RecordingModel, ReplayModel, ScriptedModel
from agentic_machines.strategies import examples

# -- the good files -----------------------------------------------------------------------


ECHO_SOURCE = """
from agentic_machines.runtime.harness import HarnessMachine


def _echo():
    said = ()
    while True:
        c = yield "so far: " + " | ".join(said)
        if c == "stop":
            return said
        said += (c,)


machine = HarnessMachine(_echo)
"""
"""A machine of trace states; the command reaches it as the target FILE.py:machine."""
_namespace: dict = {}
exec(ECHO_SOURCE, _namespace)
ECHO = _namespace["machine"]


def _originals(folder: Path) -> dict[str, bytes]:
    """One good file of each kind, made by the toolkit itself."""
    script = folder / "script.txt"
    script.write_text("1\n0\n1\n", encoding="utf-8")
    (folder / "echo.py").write_text(ECHO_SOURCE, encoding="utf-8")
    trace = folder / "trace.jsonl"
    with _quiet():
        assert main(["run", "f2-mul", "--script", str(script), "--save", str(trace)]) == 2
    harness = folder / "harness.jsonl"
    run(ECHO, ScriptedModel(["a", "b\nc", "stop"]), path=harness)
    cassette = folder / "cassette.jsonl"
    rec = RecordingModel(ScriptedModel(["x", "y"]), cassette)
    rec.complete("first")
    rec.complete("second\nline")
    files = {}
    for suffix in (".json", ".toml"):
        out = folder / f"machine{suffix}"
        with _quiet():
            assert main(["export", "f2-add", "-o", str(out)]) == 0
        files[f"machine{suffix}"] = out.read_bytes()
    return {
        "trace": trace.read_bytes(),
        "trace_v1": TRACE_V1,
        "harness": harness.read_bytes(),
        "cassette": cassette.read_bytes(),
        **files,
        "script": script.read_bytes(),
        "json_script": json.dumps(["1", "0", "1"]).encode(),
        "answer": json.dumps({"spe": ["s0", "s1"]}, indent=1).encode(),
    }


TRACE_V1 = b"""\
{"format": "agentic-machines-trace", "version": 1, "kind": "header", "machine": "f2-mul", "start": 0, "max_steps": 1000}
{"kind": "step", "index": 0, "state": 0, "prompt": "\xe2\x8b\x86", "completion": "1", "outcome": 0}
{"kind": "step", "index": 1, "state": 0, "prompt": "\xe2\x8b\x86", "completion": "0", "outcome": 0}
{"kind": "end", "end": "model-error", "steps": 2, "message": "ScriptExhausted: the script ran out", "pending": null}
"""
"""A trace in format version 1, kept as written before traces stored prompts as deltas:
"trace" above is whatever the writer writes now, so both formats are fuzzed."""

SUFFIX = {"machine.json": ".json", "machine.toml": ".toml", "json_script": ".json"}
SUFFIX.update(answer=".json", script=".txt")


def _load(kind: str, path: Path) -> None:
    """The public loader of ``kind``, and what a loaded file is used for."""
    if kind in ("trace", "trace_v1"):
        Trace.load(path).replay(fixture("f2-mul"))
    elif kind == "harness":
        Trace.load(path).replay(ECHO)
    elif kind == "cassette":
        ReplayModel(path).complete("first")
    elif kind.startswith("machine"):
        load_machine(path)
    elif kind == "answer":
        load_answer(path)
    else:
        read_script(path)


LOADER_ERROR = {
    "trace": TraceError,
    "trace_v1": TraceError,
    "harness": TraceError,
    "cassette": CassetteError,
    "machine.json": InvalidMachineFile,
    "machine.toml": InvalidMachineFile,
    "answer": InvalidArgument,
    "script": InvalidArgument,
    "json_script": InvalidArgument,
}
"""The error each loader raises for a bad file (a replay may raise other package errors)."""

_MACHINE_VERBS = [
    ["check", "{f}"],
    ["explore", "{f}", "--depth", "2"],
    ["run", "{f}", "--script", "{s}", "--max-steps", "20"],
    ["test", "{f}", "--max-states", "50"],
    ["diagram", "{f}", "--format", "mermaid", "--max-states", "50"],
    ["export", "{f}", "-o", "{o}.json"],
]
_SCRIPT_VERBS = [
    ["run", "f2-mul", "--script", "{f}", "--max-steps", "20"],
    ["eval", '(llm "q")', "--script", "{f}"],
    ["test", "f2-mul", "--alphabet", "{f}", "--max-states", "50"],
    ["explore", "f2-mul", "--completions", "{f}", "--depth", "2"],
]
VERBS = {
    "trace": [["run", "f2-mul", "--replay", "{f}"]],
    "trace_v1": [["run", "f2-mul", "--replay", "{f}"]],
    "harness": [["run", "{e}:machine", "--replay", "{f}"]],
    "cassette": [],
    "machine.json": _MACHINE_VERBS,
    "machine.toml": _MACHINE_VERBS,
    "answer": [["exercise", "3.1", "{f}"]],
    "script": _SCRIPT_VERBS,
    "json_script": _SCRIPT_VERBS,
}
"""The command lines that read a file of each kind ({f}); {s} is a good script, {o} an
output, {e} the Python file of the machine the harness traces were recorded on."""


def _names(folder: Path) -> dict[str, Path]:
    return {"s": folder / "script.txt", "o": folder / "out", "e": folder / "echo.py"}


@contextlib.contextmanager
def _quiet():
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def command(argv: list[str]) -> tuple[int, str]:
    """Run the command in-process; check it ended cleanly; return (status, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)  # an exception other than the package's escapes here: a failure
    text = out.getvalue() + err.getvalue()
    assert "Traceback" not in text, (argv, text[-2000:])
    assert status in (0, 1, 2), (argv, status)
    if status == 2:
        lines = err.getvalue().splitlines()
        assert len(lines) == 1, (argv, err.getvalue()[-2000:])
        assert lines[0].startswith("agentic-machines: error: "), (argv, lines)
        assert len(lines[0]) <= len("agentic-machines: error: ") + MAX_MESSAGE, lines[0]
        assert lines[0].isprintable(), lines[0]  # a file's control characters come escaped
    return status, err.getvalue()


# -- mutations ----------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _swap_somewhere(draw, doc):
    """``doc`` with one value anywhere inside it (or the whole) replaced by any JSON value."""
    slots = [(None, None)]
    stack = [doc] if isinstance(doc, (list, dict)) else []
    while stack:
        node = stack.pop()
        keys = range(len(node)) if isinstance(node, list) else list(node)
        for key in keys:
            slots.append((node, key))
            if isinstance(node[key], (list, dict)):
                stack.append(node[key])
    node, key = draw(st.sampled_from(slots))
    value = draw(JSON)
    if node is None:
        return value
    node[key] = value
    return doc


@st.composite
def mutations(draw, data: bytes):
    """Up to three edits of ``data``: truncation, a byte changed, bytes inserted, a line
    dropped or repeated, a field of a JSON line swapped or deleted, a value anywhere in a
    JSON document swapped."""
    ops = draw(st.lists(st.integers(0, 6), min_size=1, max_size=3))
    lines = data.split(b"\n")
    for op in ops:
        if op == 0:  # truncate
            blob = b"\n".join(lines)
            lines = blob[: draw(st.integers(0, len(blob)))].split(b"\n")
        elif op == 1 and lines:  # change one byte
            i = draw(st.integers(0, len(lines) - 1))
            if lines[i]:
                j = draw(st.integers(0, len(lines[i]) - 1))
                lines[i] = lines[i][:j] + bytes([draw(st.integers(0, 255))]) + lines[i][j + 1 :]
        elif op == 2 and lines:  # insert random bytes
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:j] + draw(st.binary(max_size=8)) + lines[i][j:]
        elif op == 3 and lines:  # drop or repeat a line
            i = draw(st.integers(0, len(lines) - 1))
            lines = (
                lines[:i] + (lines[i : i + 1] * 2 if draw(st.booleans()) else []) + lines[i + 1 :]
            )
        elif op in (4, 5) and lines:  # swap or delete a field of one JSON line
            i = draw(st.integers(0, len(lines) - 1))
            try:
                rec = json.loads(lines[i])
            except ValueError:
                continue
            if isinstance(rec, dict) and rec:
                key = draw(st.sampled_from(sorted(rec)))
                if op == 4:
                    rec[key] = draw(JSON)
                else:
                    del rec[key]
                lines[i] = json.dumps(rec).encode()
        elif op == 6:  # swap a value anywhere in the whole JSON document
            try:
                doc = json.loads(b"\n".join(lines))
            except ValueError:
                continue
            lines = json.dumps(_swap_somewhere(draw, doc), indent=1).encode().split(b"\n")
    return b"\n".join(lines)


# -- the property -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def originals(folder) -> dict[str, bytes]:
    return _originals(folder)


def test_every_original_loads_and_every_verb_accepts_it(originals, folder):
    # The property below would pass on a loader that refuses everything: the good files
    # must load, and each verb must read them without a usage error.
    for kind, data in originals.items():
        path = folder / f"good-{kind.replace('.', '-')}{SUFFIX.get(kind, '.jsonl')}"
        path.write_bytes(data)
        _load(kind, path)
        for argv in VERBS[kind]:
            args = [a.format(f=path, **_names(folder)) for a in argv]
            status, err = command(args)
            assert status in (0, 1) or "ScriptedModel has only" in err, (args, err)


KINDS = sorted(LOADER_ERROR)


@settings(max_examples=examples(100, 3000))
@given(data=st.data(), kind=st.sampled_from(KINDS))
def test_mutated_files_load_or_raise_one_error_and_verbs_print_one_line(
    kind, data, originals, folder
):
    blob = data.draw(mutations(originals[kind]), label="file")
    path = folder / f"mutant{SUFFIX.get(kind, '.jsonl')}"
    path.write_bytes(blob)
    try:
        _load(kind, path)
    except LOADER_ERROR[kind] as exc:
        assert str(exc).startswith(str(path)), str(exc)
    except AgenticMachinesError as exc:  # the use of a loaded file: a replay that differs
        assert kind in ("trace", "trace_v1", "harness", "cassette"), (kind, exc)
    if VERBS[kind]:
        argv = data.draw(st.sampled_from(VERBS[kind]), label="argv")
        command([a.format(f=path, **_names(folder)) for a in argv])


# -- special files ------------------------------------------------------------------------

OTHER_VERBS = [["exercise", "1.1", "{py}"], ["check", "{py}:machine"], ["eval", "{lisp}"]]
"""Command lines that read a Python answer, a Python target or a program file."""

OUTPUT_VERBS = [
    ["run", "f2-mul", "--script", "{s}", "--save", "{out}.jsonl"],
    ["test", "f2-mul", "-p", "halts_within:0", "--save", "{out}.jsonl"],
    ["export", "f2-mul", "-o", "{out}.json"],
    ["diagram", "f2-mul", "-o", "{out}.png"],
    ["diagram", "f2-mul", "-o", "{out}.mmd"],
]
"""Command lines that write a file: a FIFO there with no reader must not block either."""

SPECIAL_WORDS = ("not a regular file", "cannot read it")


def _special(folder: Path, name: str) -> Path:
    """A path of the kind ``name`` that is not a regular file."""
    if name == "dev_zero":
        return Path("/dev/zero")
    if name == "dev_null":
        return Path("/dev/null")
    if name == "directory":
        path = folder / "a-directory"
        path.mkdir(exist_ok=True)
        return path
    if name == "symlink_loop":
        path = folder / "loop"
        if not path.is_symlink():
            path.symlink_to(path)
        return path
    path = folder / "sock"
    if not path.exists():
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))  # the file stays after the socket closes
        server.close()
    return path


def _cases(target: Path, folder: Path) -> tuple[list[tuple[str, Path]], list[list[str]]]:
    """(kind, path) for every loader and the argv of every verb that reads a file, all
    naming ``target`` through a symbolic link with the suffix that loader or verb needs."""
    links = {}
    for suffix in (".jsonl", ".json", ".toml", ".txt", ".py", ".lisp"):
        link = folder / f"to-{target.name}{suffix}"
        if not link.is_symlink():
            link.symlink_to(target)
        links[suffix] = link
    names = dict(_names(folder), py=links[".py"], lisp=links[".lisp"])
    loaders = [(kind, links[SUFFIX.get(kind, ".jsonl")]) for kind in KINDS]
    verbs = [
        [a.format(f=path, **names) for a in argv] for kind, path in loaders for argv in VERBS[kind]
    ]
    verbs += [[a.format(**names) for a in argv] for argv in OTHER_VERBS]
    return loaders, list(map(list, dict.fromkeys(map(tuple, verbs))))


def _outputs(fifo: Path, folder: Path) -> list[list[str]]:
    """The argv of every verb that writes a file, writing to ``fifo`` through a link with
    the suffix the verb needs."""
    for suffix in (".jsonl", ".json", ".png", ".mmd"):
        link = folder / f"to-{fifo.name}{suffix}"
        if not link.is_symlink():
            link.symlink_to(fifo)
    out = folder / f"to-{fifo.name}"
    return [[a.format(out=out, **_names(folder)) for a in argv] for argv in OUTPUT_VERBS]


@pytest.mark.parametrize("name", ["dev_zero", "dev_null", "directory", "socket", "symlink_loop"])
def test_special_files_give_one_error_at_once(name, folder, originals):
    target = _special(folder, name)
    loaders, verbs = _cases(target, folder)
    for kind, path in loaders:
        with pytest.raises(LOADER_ERROR[kind]) as info:
            _load(kind, path)
        assert any(w in str(info.value) for w in SPECIAL_WORDS), (kind, str(info.value))
    for argv in verbs:
        status, err = command(argv)
        assert status == 2 and any(w in err for w in SPECIAL_WORDS), (argv, err)


FIFO_RUNNER = """
import contextlib, io, json, os, sys
from agentic_machines import _files
from agentic_machines.cli.commands import main
from agentic_machines.runtime.run import Trace
from agentic_machines.errors import AgenticMachinesError

verbs = json.loads(sys.argv[1])
results = []
for argv in verbs:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(argv)
    results.append([argv, status, err.getvalue()])
# A path that becomes a FIFO after the stat: open must not block, and fstat refuses it.
_files.check_regular = lambda *args, **kwargs: 0
try:
    Trace.load(sys.argv[2])
    results.append(["race", 0, "loaded"])
except AgenticMachinesError as exc:
    results.append(["race", 2, str(exc)])
print(json.dumps(results))
"""


def test_a_fifo_with_no_writer_gives_one_error_and_never_blocks(folder, originals):
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    loaders, verbs = _cases(fifo, folder)
    outputs = _outputs(fifo, folder)
    # The loaders run as the verbs do, in the subprocess: a regression blocks in open().
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            FIFO_RUNNER,
            json.dumps([[str(a) for a in v] for v in verbs + outputs]),
            str(fifo),
        ],
        capture_output=True,
        text=True,
        timeout=300,  # generous: the run takes about two seconds; a block never ends
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    assert len(results) == len(verbs) + len(outputs) + 1
    for argv, status, err in results[: len(verbs)] + results[-1:]:
        assert status == 2 and "is a FIFO (named pipe), not a regular file" in err, (argv, err)
    for argv, status, err in results[len(verbs) : -1]:
        assert status == 2 and "a FIFO with no reader" in err, (argv, err)
        assert len(err.splitlines()) == 1, (argv, err)
    for kind, path in loaders:  # in-process too, now that the subprocess showed no block
        with pytest.raises(LOADER_ERROR[kind], match="is a FIFO"):
            _load(kind, path)
