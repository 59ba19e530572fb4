"""Machine files: finite agentic machines written as JSON or TOML documents.

A machine file holds a finite machine: its ``name``, its ``states`` (each with an
``id``, a ``prompt`` and the transitions ``on`` each completion), an optional
completion alphabet ``completions`` and an optional ``initial`` state. The format is
described by the JSON Schema ``agentic_machines/schemas/machine.schema.json``
(:data:`SCHEMA_PATH`) and in ``docs/machine-files.md``:

.. code-block:: json

    {"format": "agentic-machines/machine", "version": 1, "name": "toggle",
     "initial": "off", "completions": ["press", "stop"],
     "states": [
       {"id": "off", "prompt": "The lamp is off.", "on": {"press": "on", "stop": "HALT"}},
       {"id": "on",  "prompt": "The lamp is on.",  "on": {"press": "off", "stop": "DIVERGE"}}]}

State ids are integers or strings (``0`` and ``"0"`` are two different states). A
transition goes to a state id, or to one of the two reserved strings ``"HALT"`` and
``"DIVERGE"`` (so no state may be called that). Completions are strings; when
``completions`` is absent the alphabet is every completion the ``on`` tables mention,
in order of first appearance. Every state needs a transition for every completion.

:func:`load_machine` reads a file (``.json`` or ``.toml``) and returns a
:class:`~agentic_machines.machine.TableMachine`; :func:`dump_machine` writes any
finite machine back. Every problem of a document is reported at once, each with the
file, the key and what to change, in one :class:`~agentic_machines.errors.InvalidMachineFile`.

>>> from agentic_machines.fixtures import fixture
>>> doc = machine_document(fixture("f2-mul"))
>>> doc["states"][1]
{'id': 1, 'prompt': '⋆', 'on': {'0': 0, '1': 1}}
>>> same_machine(machine_from_document(doc), fixture("f2-mul"))
True
>>> machine_from_document({"name": "x", "states": [{"id": 0, "prompt": "*", "on": {"a": 2}}]})
Traceback (most recent call last):
  ...
agentic_machines.errors.InvalidMachineFile: <document>: 1 problem: key states[0].on."a": goes to 2, which is not a state id; fix: use the id of a state listed under states, or "HALT" or "DIVERGE"
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._files import brief, open_output, read_regular
from ._text import clip
from .errors import InvalidArgument, InvalidMachineFile
from .machine import DIVERGE, HALT, AgenticMachine, TableMachine

__all__ = [
    "FORMAT",
    "VERSION",
    "SCHEMA_PATH",
    "load_machine",
    "dump_machine",
    "machine_document",
    "machine_from_document",
    "same_machine",
    "is_machine_file",
]

FORMAT = "agentic-machines/machine"
"""The value of a machine file's optional ``format`` key."""

VERSION = 1
"""The format version this module reads and writes."""

SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "machine.schema.json"
"""The JSON Schema of machine files (shipped with the package)."""

SUFFIXES = (".json", ".toml")

_SENTINELS = {"HALT": HALT, "DIVERGE": DIVERGE}
_TOP_KEYS = ("$schema", "format", "version", "name", "initial", "completions", "states")
_STATE_KEYS = ("id", "prompt", "on")


def is_machine_file(text: str | os.PathLike) -> bool:
    """True when ``text`` names a machine file by its suffix (``.json`` or ``.toml``).

    >>> is_machine_file("toggle.json"), is_machine_file("m.TOML"), is_machine_file("f2-mul")
    (True, True, False)
    """
    return Path(text).suffix.lower() in SUFFIXES


def load_machine(path: str | os.PathLike) -> TableMachine:
    """Read the machine file ``path`` (``.json`` or ``.toml``) into a ``TableMachine``.

    A syntax error names the line and column; a document that parses but breaks the
    format names every offending key (see the module docstring).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "t.toml").write_text('''
    ... name = "toggle"
    ... initial = "off"
    ... [[states]]
    ... id = "off"
    ... prompt = "off"
    ... on = { press = "on", stop = "HALT" }
    ... [[states]]
    ... id = "on"
    ... prompt = "on"
    ... on = { press = "off", stop = "HALT" }
    ... ''')
    >>> m = load_machine(folder / "t.toml")
    >>> m.name, m.initial, m.completions, m.harness("on", "press")
    ('toggle', 'off', ('press', 'stop'), 'off')
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise InvalidMachineFile(
            f"{path}: a machine file ends in .json or .toml, not {suffix or 'no suffix'!r}; "
            "rename it or convert it",
            path=str(path),
        )
    text = _read_bounded(path)
    kind = "JSON" if suffix == ".json" else "TOML"
    try:
        data = json.loads(text) if suffix == ".json" else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidMachineFile(
            f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg}); "
            "fix the syntax there",
            path=str(path),
            line=exc.lineno,
        ) from None
    except RecursionError:
        # Both parsers recurse per nested list or table: a machine file never nests deeply.
        raise InvalidMachineFile(
            f"{path}: not valid {kind}: lists or tables nested too deeply to read; "
            "a machine file nests a few levels only",
            path=str(path),
        ) from None
    except ValueError as exc:  # TOMLDecodeError, and JSON's limit on the digits of an integer
        raise InvalidMachineFile(
            f"{path}: not valid {kind} ({exc}); fix the syntax there", path=str(path)
        ) from None
    return machine_from_document(data, source=str(path))


MAX_MACHINE_FILE_BYTES = 64 * 1024 * 1024
"""The largest machine file :func:`load_machine` reads (64 MiB); only regular files are read."""


def _read_bounded(path: Path) -> str:
    """The UTF-8 text of the regular file ``path``, refused past :data:`MAX_MACHINE_FILE_BYTES`."""

    def error(problem: str) -> InvalidMachineFile:
        return InvalidMachineFile(f"{path}: {problem}", path=str(path))

    data = read_regular(path, limit=MAX_MACHINE_FILE_BYTES, what="machine", error=error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidMachineFile(
            f"{path}: byte {exc.start} is not UTF-8 ({exc.reason}); save the file as UTF-8",
            path=str(path),
        ) from None


def dump_machine(machine: AgenticMachine, path: str | os.PathLike) -> Path:
    """Write the finite ``machine`` to ``path`` as a JSON (or TOML) machine file.

    ``load_machine(path)`` gives back a machine :func:`same_machine` calls equal.

    >>> import tempfile, pathlib
    >>> from agentic_machines.fixtures import fixture
    >>> out = dump_machine(fixture("halt1"), pathlib.Path(tempfile.mkdtemp()) / "h.json")
    >>> same_machine(load_machine(out), fixture("halt1"))
    True
    """
    path = Path(path)
    doc = machine_document(machine)
    suffix = path.suffix.lower()
    if suffix == ".toml":
        text = _to_toml(doc)
    elif suffix == ".json":
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    else:
        raise InvalidArgument(
            f"cannot write {path}: a machine file ends in .json or .toml; pick one of those"
        )
    with open_output(path) as fh:  # a FIFO with no reader: an error, not a block
        fh.write(text)
    return path


def machine_document(machine: AgenticMachine) -> dict[str, Any]:
    """The machine-file document (a JSON-ready dict) of a finite machine.

    The transition table is read by calling ``machine.harness`` on every state and
    completion, so any finite machine can be written, not only a ``TableMachine``.

    >>> from agentic_machines import FunctionMachine
    >>> m = FunctionMachine(lambda s: f"at {s}", lambda s, c: HALT if c == "x" else "b",
    ...                     states=["a", "b"], completions=["x", "y"], initial="a", name="ab")
    >>> machine_document(m)["states"][0]
    {'id': 'a', 'prompt': 'at a', 'on': {'x': 'HALT', 'y': 'b'}}
    """
    if not isinstance(machine, AgenticMachine):
        raise InvalidArgument(f"expected an AgenticMachine, got {type(machine).__name__}")
    if machine.states is None or machine.completions is None:
        raise InvalidArgument(
            f"machine {machine.name!r} is not finite (its states or its completion alphabet are "
            "not listed), so it has no machine file; explore it to a depth instead"
        )
    states = list(machine.states)
    for s in states:
        if isinstance(s, bool) or not isinstance(s, int | str):
            raise InvalidArgument(
                f"machine {machine.name!r} has the state {s!r}; a machine file holds only integer "
                "or string state ids; rename the states first"
            )
        if s in _SENTINELS:
            raise InvalidArgument(
                f"machine {machine.name!r} has a state called {s!r}, a reserved word of machine "
                "files; rename that state"
            )
    known = set(states)
    rows = []
    for s in states:
        on: dict[str, Any] = {}
        for c in machine.completions:
            target = machine.harness(s, c)
            if target is HALT:
                on[c] = "HALT"
            elif target is DIVERGE:
                on[c] = "DIVERGE"
            elif target in known:
                on[c] = target
            else:
                raise InvalidArgument(
                    f"h({s!r}, {c!r}) = {target!r} in {machine.name!r} is not one of its states; "
                    "list every reachable state in machine.states"
                )
        rows.append({"id": s, "prompt": machine.prompt(s), "on": on})
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "name": machine.name}
    if machine.initial is not None:
        doc["initial"] = machine.initial
    doc["completions"] = list(machine.completions)
    doc["states"] = rows
    return doc


def machine_from_document(data: Any, *, source: str = "<document>") -> TableMachine:
    """Build the ``TableMachine`` of a parsed machine-file document.

    ``source`` names the file in error messages. Every problem is collected first and
    reported in one :class:`~agentic_machines.errors.InvalidMachineFile`, whose
    ``problems`` list holds ``(key, message)`` pairs.

    >>> doc = {"name": "one", "states": [{"id": 0, "prompt": "*", "on": {"go": "HALT"}}]}
    >>> machine_from_document(doc).harness(0, "go")
    1
    """
    problems: list[tuple[str, str]] = []

    def bad(key: str, message: str) -> None:
        problems.append((key, message))

    if not isinstance(data, Mapping):
        raise _error(source, [("(top level)", "must be an object (a table) with name and states")])
    for key in data:
        if key not in _TOP_KEYS:
            bad(_key_name(key), f"unknown key{_did_you_mean(key, _TOP_KEYS)}; rename or remove it")
    if "format" in data and data["format"] != FORMAT:
        bad("format", f"is {brief(data['format'])}; it must be {FORMAT!r} (or be left out)")
    if "version" in data and (type(data["version"]) is not int or data["version"] != VERSION):
        bad("version", f"is {brief(data['version'])}; this reader knows version {VERSION} only")
    name = data.get("name")
    if "name" not in data:
        bad("name", 'is missing; add name = "..." (the machine\'s name in reports)')
    elif not isinstance(name, str) or not name.strip():
        bad("name", f"is {brief(name)}; it must be a non-empty string")
    completions = data.get("completions")
    if completions is not None:
        if not isinstance(completions, list):  # empty is an alphabet too: every run is stuck
            bad("completions", "must be a list of strings (or be left out)")
            completions = None
        else:
            for i, c in enumerate(completions):
                if not isinstance(c, str):
                    bad(f"completions[{i}]", f"is {brief(c)}; completions are strings, quote it")
            seen: set[Any] = set()
            for i, c in enumerate(completions):
                if isinstance(c, str) and c in seen:
                    bad(f"completions[{i}]", f"repeats {brief(c)}; list each completion once")
                seen.add(c) if isinstance(c, str) else None
    states = data.get("states")
    prompts: dict[Any, str] = {}
    table: dict[tuple[Any, str], Any] = {}
    ons: list[tuple[int, Any, Mapping]] = []
    if "states" not in data:
        bad("states", "is missing; add a list of states, each with id, prompt and on")
    elif not isinstance(states, list) or not states:
        bad("states", "must be a non-empty list of states, each with id, prompt and on")
    else:
        for i, row in enumerate(states):
            where = f"states[{i}]"
            if not isinstance(row, Mapping):
                bad(where, "must be an object with id, prompt and on")
                continue
            for key in row:
                if key not in _STATE_KEYS:
                    bad(
                        f"{where}.{_key_name(key)}",
                        f"unknown key{_did_you_mean(key, _STATE_KEYS)}; rename or remove it",
                    )
            for key in _STATE_KEYS:
                if key not in row:
                    bad(f"{where}.{key}", f"is missing; {_STATE_HELP[key]}")
            sid = row.get("id")
            if "id" in row:
                if not _is_id(sid):
                    bad(f"{where}.id", f"is {brief(sid)}; a state id is an integer or a string")
                elif sid in _SENTINELS:
                    bad(
                        f"{where}.id", f"{brief(sid)} is reserved for the outcome; rename the state"
                    )
                elif sid in prompts:
                    bad(f"{where}.id", f"repeats the id {brief(sid)}; give each state its own id")
                else:
                    text = row.get("prompt")
                    if "prompt" in row and not isinstance(text, str):
                        bad(f"{where}.prompt", f"is {brief(text)}; a prompt is a string, quote it")
                    prompts[sid] = text if isinstance(text, str) else ""
            on = row.get("on")
            if "on" in row:
                if not isinstance(on, Mapping):
                    bad(f"{where}.on", "must be an object mapping each completion to a target")
                elif _is_id(sid) and sid not in _SENTINELS:
                    ons.append((i, sid, on))
    # Only string completions go on (the others are reported above): a list as a
    # completion would be unhashable in the checks below.
    alphabet = [c for c in completions if isinstance(c, str)] if completions is not None else []
    if completions is None:
        for _, _, on in ons:
            alphabet.extend(c for c in on if c not in alphabet)
    for i, sid, on in ons:
        for c, target in on.items():
            key = f"states[{i}].on.{_key_name(c, quoted=True)}"
            if c not in alphabet:
                bad(
                    key,
                    f"uses the completion {brief(c)}, which is not in completions; add it there",
                )
                continue
            if isinstance(target, str) and target in _SENTINELS:
                table[(sid, c)] = _SENTINELS[target]
            elif _is_id(target) and target in prompts:
                table[(sid, c)] = target
            else:
                bad(
                    key,
                    f"goes to {brief(target)}, which is not a state id; fix: use the id of a state "
                    'listed under states, or "HALT" or "DIVERGE"',
                )
        missing = [c for c in alphabet if c not in on]
        if missing:
            bad(
                f"states[{i}].on",
                f"has no transition for {', '.join(map(repr, missing))}; add one for every "
                "completion (a target may be HALT or DIVERGE)",
            )
    initial = data.get("initial")
    if initial is not None and not _is_id(initial):
        bad(
            "initial",
            f"is {brief(initial)}; the initial state is the id of a state (an integer or a string)",
        )
    elif initial is not None and prompts and initial not in prompts:
        bad(
            "initial",
            f"is {brief(initial)}, which is not a state id; use one of {brief(list(prompts))}",
        )
    if problems:
        raise _error(source, problems)
    return TableMachine(prompts, table, completions=alphabet, initial=initial, name=name)


_SHOWN_PROBLEMS = 20

_STATE_HELP = {
    "id": "add id = an integer or a string naming the state",
    "prompt": 'add prompt = "..." (what the model sees in this state)',
    "on": "add on = {completion = target, ...} for every completion",
}


def _is_id(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | str)


def _key_name(key: Any, quoted: bool = False) -> str:
    r"""A key of the document as error messages name it: short, and escaped when it is
    not plain printable text (a key may hold anything, a terminal escape included).

    >>> _key_name("name"), _key_name("a\x1b[2J"), _key_name("⋆", quoted=True)
    ('name', '"a\\u001b[2J"', '"⋆"')
    >>> len(_key_name("k" * 99))
    41
    """
    text = json.dumps(key, ensure_ascii=False) if quoted or not isinstance(key, str) else key
    if not text.isprintable():
        text = json.dumps(key)  # ASCII escapes for what a terminal would interpret
    return clip(text, _KEY_WIDTH)


_KEY_WIDTH = 41


def _did_you_mean(key: Any, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(key)[:_KEY_WIDTH], known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" (known keys: {', '.join(known)})"


def _error(source: str, problems: list[tuple[str, str]]) -> InvalidMachineFile:
    count = f"{len(problems)} problem" + ("s" if len(problems) != 1 else "")
    # The message names the first few; ``problems`` on the error keeps every one.
    shown = problems[:_SHOWN_PROBLEMS]
    lines = "; ".join(f"key {key}: {message}" for key, message in shown)
    if len(problems) > len(shown):
        lines += f"; and {len(problems) - len(shown)} more (the error's .problems lists all)"
    return InvalidMachineFile(
        f"{source}: {count}: {lines}", path=source, problems=problems, key=problems[0][0]
    )


def same_machine(a: AgenticMachine, b: AgenticMachine) -> bool:
    """True when two finite machines have the same name, states, prompts, transitions,
    completion alphabet (as a set) and initial state.

    ``TableMachine`` keeps identity equality (machines are used as dictionary keys);
    this is the equality a machine file round trip preserves.

    >>> from agentic_machines.fixtures import fixture
    >>> same_machine(fixture("f2-add"), fixture("f2-add")), same_machine(fixture("f2-add"), fixture("f2-mul"))
    (True, False)
    """
    try:
        da, db = machine_document(a), machine_document(b)
    except InvalidArgument:
        return False
    return (
        da["name"] == db["name"]
        and da.get("initial") == db.get("initial")
        and set(da["completions"]) == set(db["completions"])
        and {_key(r["id"]): (r["prompt"], r["on"]) for r in da["states"]}
        == {_key(r["id"]): (r["prompt"], r["on"]) for r in db["states"]}
    )


def _key(state: Any) -> tuple[str, Any]:
    return (type(state).__name__, state)  # 0 and "0" stay apart


def _to_toml(doc: dict[str, Any]) -> str:
    """A small TOML writer for machine documents (the standard library only reads TOML)."""
    lines = []
    for key in ("format", "version", "name", "initial", "completions"):
        if key in doc:
            lines.append(f"{key} = {_toml_value(doc[key])}")
    for row in doc["states"]:
        lines += ["", "[[states]]", f"id = {_toml_value(row['id'])}"]
        lines.append(f"prompt = {_toml_value(row['prompt'])}")
        pairs = ", ".join(f"{_toml_value(c)} = {_toml_value(t)}" for c, t in row["on"].items())
        lines.append(f"on = {{ {pairs} }}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    # A JSON string is a valid TOML basic string except for a few escapes JSON does not use.
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")
