"""Machine files (JSON, TOML, the schema) and machine targets on the command line.

Every machine built from a file or a Python target must give the same verdicts and
diagrams as the same machine built in Python.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from agentic_machines import HALT, TableMachine
from agentic_machines.cli.commands import main
from agentic_machines.cli.targets import resolve_target
from agentic_machines.errors import InvalidMachineFile, UnknownMachine
from agentic_machines.fixtures import FIXTURES, fixture
from agentic_machines.machinefile import (
    SCHEMA_PATH,
    dump_machine,
    load_machine,
    machine_document,
    machine_from_document,
    same_machine,
)

TOGGLE_JSON = {
    "name": "toggle",
    "initial": "off",
    "completions": ["press", "stop"],
    "states": [
        {"id": "off", "prompt": "The lamp is off.", "on": {"press": "on", "stop": "HALT"}},
        {"id": "on", "prompt": "The lamp is on.", "on": {"press": "off", "stop": "DIVERGE"}},
    ],
}

TOGGLE_TOML = """
name = "toggle"
initial = "off"
completions = ["press", "stop"]

[[states]]
id = "off"
prompt = "The lamp is off."
on = { press = "on", stop = "HALT" }

[[states]]
id = "on"
prompt = "The lamp is on."
on = { press = "off", stop = "DIVERGE" }
"""

TOGGLE_PY = """
from agentic_machines import DIVERGE, HALT, TableMachine

def build():
    return TableMachine(
        {"off": "The lamp is off.", "on": "The lamp is on."},
        {("off", "press"): "on", ("off", "stop"): HALT,
         ("on", "press"): "off", ("on", "stop"): DIVERGE},
        completions=["press", "stop"], initial="off", name="toggle")

machine = build()

def agent(model):
    lamp = "off"
    while True:
        c = model(f"The lamp is {lamp}.")
        if c == "stop":
            return lamp
        lamp = "on" if lamp == "off" else "off"
"""


def toggle() -> TableMachine:
    from agentic_machines import DIVERGE

    return TableMachine(
        {"off": "The lamp is off.", "on": "The lamp is on."},
        {
            ("off", "press"): "on",
            ("off", "stop"): HALT,
            ("on", "press"): "off",
            ("on", "stop"): DIVERGE,
        },
        completions=["press", "stop"],
        initial="off",
        name="toggle",
    )


@pytest.fixture
def files(tmp_path, monkeypatch):
    (tmp_path / "toggle.json").write_text(json.dumps(TOGGLE_JSON))
    (tmp_path / "toggle.toml").write_text(TOGGLE_TOML)
    (tmp_path / "toggle_target.py").write_text(TOGGLE_PY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("toggle_target", None)


def out_of(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def error_of(capsys, argv):
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentic-machines: error: "), captured.err
    assert "Traceback" not in captured.err
    return lines[0]


# -- files -------------------------------------------------------------------------------
def test_json_and_toml_files_give_the_machine_built_in_python(files):
    assert same_machine(load_machine(files / "toggle.json"), toggle())
    assert same_machine(load_machine(files / "toggle.toml"), toggle())
    assert not same_machine(load_machine(files / "toggle.json"), fixture("f2-add"))


@pytest.mark.parametrize("name", sorted(FIXTURES))
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_every_fixture_round_trips(tmp_path, name, suffix):
    path = dump_machine(fixture(name), tmp_path / f"m{suffix}")
    back = load_machine(path)
    assert same_machine(back, fixture(name))
    assert back.initial == fixture(name).initial and back.completions == ("0", "1")


def test_int_and_string_ids_stay_apart_and_odd_strings_survive_toml(tmp_path):
    m = TableMachine(
        {0: 'say "zero"\n', "0": "tab\there"},
        {(0, "a b"): "0", ("0", "a b"): 0, (0, 'q"'): HALT, ("0", 'q"'): 0},
        initial=0,
        name="ids",
    )
    for suffix in (".json", ".toml"):
        assert same_machine(load_machine(dump_machine(m, tmp_path / f"ids{suffix}")), m)


def test_the_schema_accepts_what_the_loader_accepts():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(TOGGLE_JSON)
    for name in FIXTURES:
        validator.validate(machine_document(fixture(name)))
    for doc, _ in INVALID:
        if doc.get("_schema_sees", True):
            assert not validator.is_valid(doc), doc


def _with(**changes):
    doc = json.loads(json.dumps(TOGGLE_JSON))
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def _state(index, **changes):
    doc = json.loads(json.dumps(TOGGLE_JSON))
    for key, value in changes.items():
        if value is None:
            doc["states"][index].pop(key)
        else:
            doc["states"][index][key] = value
    return doc


def _schema_blind(doc):
    doc["_schema_sees"] = False  # a rule only the loader checks (see the schema's description)
    return doc


# Each invalid document, with the key its error must name. Together they break every rule
# of the format.
INVALID = [
    (_with(name=None), "key name"),
    (_with(name=""), "key name"),
    (_with(name=3), "key name"),
    (_with(states=None), "key states"),
    (_with(states=[]), "key states"),
    (_with(states={"off": {}}), "key states"),
    # an empty alphabet is a machine (dump_machine writes one); its transitions are refused
    (_with(completions=[]), 'key states[0].on."press"'),
    (_with(completions=["press", 1]), "key completions[1]"),
    (_with(completions=["press", "press", "stop"]), "key completions[1]"),
    (_with(format="other"), "key format"),
    (_with(version=2), "key version"),
    (_with(intial="off"), "key intial: unknown key (did you mean 'initial'?)"),
    (_schema_blind(_with(initial="dim")), "key initial"),
    (_with(states=["off"]), "key states[0]"),
    (_state(0, id=None), "key states[0].id"),
    (_state(0, id=1.5), "key states[0].id"),
    (_state(0, id=True), "key states[0].id"),
    (_state(0, id="HALT"), "key states[0].id"),
    (_schema_blind(_state(1, id="off")), "key states[1].id: repeats"),
    (_state(0, prompt=None), "key states[0].prompt"),
    (_state(0, prompt=7), "key states[0].prompt"),
    (_state(0, on=None), "key states[0].on"),
    (_state(0, on=["on"]), "key states[0].on"),
    (_state(0, colour="red"), "key states[0].colour"),
    (
        _schema_blind(_state(0, on={"press": "on"})),
        "key states[0].on: has no transition for 'stop'",
    ),
    (_schema_blind(_state(0, on={"press": "dim", "stop": "HALT"})), 'key states[0].on."press"'),
    (_state(0, on={"press": 1.5, "stop": "HALT"}), 'key states[0].on."press"'),
    (
        _schema_blind(_state(0, on={"press": "on", "stop": "HALT", "kick": "on"})),
        'key states[0].on."kick"',
    ),
]


@pytest.mark.parametrize(("doc", "key"), INVALID, ids=[k for _, k in INVALID])
def test_every_invalid_document_is_rejected_naming_its_key(doc, key, tmp_path, capsys):
    doc = {k: v for k, v in doc.items() if k != "_schema_sees"}
    with pytest.raises(InvalidMachineFile) as info:
        machine_from_document(doc, source="m.json")
    assert str(info.value).startswith("m.json: ") and key in str(info.value)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    line = error_of(capsys, ["check", str(path)])
    assert str(path) in line and key in line


def test_syntax_errors_name_the_line(files, capsys):
    (files / "bad.json").write_text('{"name": "x",\n "states": [}\n')
    assert "bad.json: line 2, column" in error_of(capsys, ["check", "bad.json"])
    (files / "bad.toml").write_text('name = "x"\n[[states]\n')
    assert "bad.toml: not valid TOML" in error_of(capsys, ["check", "bad.toml"])
    assert "line 2" in error_of(capsys, ["check", "bad.toml"])
    (files / "list.json").write_text("[1, 2]")
    assert "list.json: 1 problem: key (top level)" in error_of(capsys, ["check", "list.json"])
    assert "nothere.json: cannot read it" in error_of(capsys, ["check", "nothere.json"])


def test_unreadable_files_are_one_error_line_not_a_traceback(files, capsys):
    # Found by review: each of these escaped as a traceback (exit 1).
    (files / "latin.json").write_bytes(b'\xff{"name": "x"}')
    assert "latin.json: byte 0 is not UTF-8" in error_of(capsys, ["check", "latin.json"])
    (files / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert "deep.json: not valid JSON: lists or tables nested too deeply" in error_of(
        capsys, ["check", "deep.json"]
    )
    (files / "deep.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000)
    assert "deep.toml: not valid TOML" in error_of(capsys, ["check", "deep.toml"])
    (files / "big.json").write_text('{"name": "x", "states": [{"id": ' + "9" * 5000 + "}]}")
    assert "big.json: not valid JSON" in error_of(capsys, ["check", "big.json"])
    (files / "quits.py").write_text("import sys\nsys.exit(3)\n")
    assert "running quits.py raised SystemExit: 3" in error_of(capsys, ["check", "quits.py:x"])


# -- the command line ----------------------------------------------------------------------
def test_export_then_check_gives_the_same_verdicts(files, capsys):
    assert "wrote m.json: f2-mul, 2 states" in out_of(capsys, ["export", "f2-mul", "-o", "m.json"])
    assert out_of(capsys, ["check", "m.json"]) == out_of(capsys, ["check", "f2-mul"])
    out_of(capsys, ["export", "f2-const", "-o", "m.toml"])
    assert out_of(capsys, ["check", "m.toml"]) == out_of(capsys, ["check", "f2-const"])
    assert "not finite" in error_of(capsys, ["export", "react", "-o", "r.json"])
    assert ".json or .toml" in error_of(capsys, ["export", "f2-mul", "-o", "m.yaml"])


TARGETS = ["toggle.json", "toggle.toml", "toggle_target:machine", "toggle_target:build()"]


@pytest.mark.parametrize(
    "target", TARGETS + ["toggle_target.py:machine", "./toggle_target.py:build()"]
)
def test_every_target_form_gives_the_same_verdicts_and_diagrams(files, capsys, target):
    from agentic_machines.architectures.catalog import Entry

    reference = Entry("toggle", "python", toggle)
    expected = reference.explore(reference.machine())
    entry = resolve_target(target)
    graph = entry.explore(entry.machine())
    assert same_machine(entry.machine(), toggle())
    assert sorted(graph.edges(data="label"), key=repr) == sorted(
        expected.edges(data="label"), key=repr
    )
    assert entry.highlights(entry.machine(), graph) == reference.highlights(toggle(), expected)
    check = out_of(capsys, ["check", target])
    assert check == out_of(capsys, ["check", "toggle.json"])
    # The exact F1 verdicts of a finite machine (the old check here could not fail).
    assert "SPE states: none" in check and check.count("Method: fact F1") == 2
    mermaid = out_of(capsys, ["diagram", target, "--format", "mermaid"])
    assert mermaid == out_of(capsys, ["diagram", "toggle.json", "--format", "mermaid"])
    assert "wrote" in out_of(capsys, ["diagram", target, "-o", str(files / "t.png")])


def test_run_and_explore_take_targets(files, capsys):
    (files / "script.txt").write_text("press\npress\nstop\n")
    for target in TARGETS:
        text = out_of(capsys, ["run", target, "--script", "script.txt"])
        assert "3 steps, ended with HALT (1)" in text
        listing = out_of(capsys, ["explore", target])
        assert listing.startswith("toggle: 2 states, 4 transitions")
    assert json.loads(out_of(capsys, ["explore", "toggle.json", "--json"]))["nodes"]


def test_an_agent_function_target(files, capsys):
    entry = resolve_target("toggle_target:agent")
    m = entry.machine()
    assert entry.kind == "python" and m.name == "agent" and m.completions is None
    text = out_of(capsys, ["explore", "toggle_target.py:agent", "-c", "press", "-c", "stop"])
    assert "(truncated: max_depth=2" in text and "'stop' -> HALT (1)" in text
    (files / "script.txt").write_text("press\nstop\n")
    run = out_of(capsys, ["run", "toggle_target:agent", "--script", "script.txt"])
    assert "2 steps, ended with HALT (1)" in run and "agent returned 'on'" in run
    check = out_of(capsys, ["check", "toggle_target:agent", "-c", "press", "-c", "stop"])
    # -c gives the agent function its alphabet, so check decides as it does for a factory
    # with those completions (issue 36): F2 refutes the start state
    assert "2 completions (the alphabet given by -c/--completions)" in check
    assert "no successor can be the image of TraceState() (F2)" in check
    assert "no finite completion alphabet" in error_of(
        capsys, ["diagram", "toggle_target:agent", "--format", "mermaid"]
    )


def test_bad_targets_say_what_to_fix(files, capsys):
    (files / "broken.py").write_text("x = 1\nraise RuntimeError('boom')\n")
    (files / "syntax.py").write_text("def f(:\n")
    (files / "other.py").write_text(
        "from agentic_machines.fixtures import fixture\nvalue = 3\nclass Box:\n    pass\n"
        "def build():\n    return fixture('f2-mul')\ndef not_a_factory():\n    return 3\n"
    )
    cases = {
        "toggle_target:machin": "has no attribute 'machin' (did you mean machine?)",
        "no_such_module:machine": "cannot import module 'no_such_module'",
        "broken.py:x": "raised RuntimeError: boom at",
        "syntax.py:f": "syntax.py, line 1: invalid Python",
        "other.py:value": "names a int, not a machine",
        # the form is read from the target, never guessed from a signature
        "other.py:Box": "names the class Box; a class is a factory, so write 'other.py:Box()'",
        "other.py:Box()": "returned a Box, not an AgenticMachine",
        "toggle_target:machine()": "names a machine, which cannot be called; drop the ()",
        "other.py:value()": "names a int, which cannot be called",
        "other.py:not_a_factory()": "returned a int, not an AgenticMachine",
        "missing.py:m": "there is no file 'missing.py'",
        "toggle_target.py": "name the object too, as toggle_target.py:ATTRIBUTE",
        "f2-mull": "did you mean f2-mul?",
    }
    for target, message in cases.items():
        assert message in error_of(capsys, ["check", target]), target
    assert "broken.py, line 2" in error_of(capsys, ["check", "broken.py:x"])
    # the same function is a factory with () and an agent function without: as written
    assert resolve_target("other.py:build()").machine().name == "f2-mul"
    assert "if build is a factory that returns a machine, write 'other.py:build()'" in (
        error_of(capsys, ["check", "other.py:build"])
    )
    with pytest.raises(UnknownMachine):
        resolve_target("nothing-like-it")


def test_check_on_an_infinite_python_machine_samples_and_says_what_to_pass(files, capsys):
    (files / "grow.py").write_text(
        textwrap.dedent(
            """
            from agentic_machines import FunctionMachine
            grow = FunctionMachine(lambda s: "say " + s, lambda s, c: s + c,
                                   completions=["a", "b"], initial="", name="grow")
            """
        )
    )
    text = out_of(capsys, ["check", "grow.py:grow", "--depth", "2"])
    assert "explored 7 states to depth 2" in text
    assert "Refuted" in text and "fact F2" in text and "For more:" not in text


def test_the_architectures_that_take_exec_options_are_declared_not_guessed():
    # catalog.RUNS_MODEL_CODE says which architectures' machine() takes options=; the
    # package never reads it from a signature. This test (only) compares the two.
    import inspect

    from agentic_machines.architectures.catalog import RUNS_MODEL_CODE, architecture_names, resolve

    takes = set()
    for name in architecture_names():
        module = resolve(name).module
        if "options" in inspect.signature(module.machine).parameters:
            takes.add(module.__name__.rsplit(".", 1)[-1])
    assert takes == set(RUNS_MODEL_CODE)


def test_no_module_of_the_package_guesses_from_a_signature():
    # No API guesses (house rule): what a function receives is documented, never read
    # from the callee's signature or argument count.
    from pathlib import Path

    import agentic_machines

    root = Path(agentic_machines.__file__).parent
    guesses = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for needle in ("co_argcount", "getfullargspec", "inspect.signature("):
            if needle in text:
                guesses.append(f"{path.relative_to(root)}: {needle}")
    assert guesses == [], guesses
