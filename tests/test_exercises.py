"""Every exercise of the tutorial has a checker, and each checker tells a right answer
from two wrong ones, naming a counterexample for the wrong ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentic_machines import HALT, TableMachine
from agentic_machines.architectures import repl_plan as rp
from agentic_machines.embedding import compose, find_embeddings, identity
from agentic_machines.errors import InvalidArgument
from agentic_machines.exercises import EXERCISES, check, check_file, exercise
from agentic_machines.fixtures import menu_and_loop

ROOT = Path(__file__).resolve().parent.parent
MENU, LOOP = menu_and_loop()


def toggle(flip_to_self=False):
    return TableMachine(
        {"on": "switch?", "off": "switch?"},
        {
            ("on", "flip"): "on" if flip_to_self else "off",
            ("off", "flip"): "on",
            ("on", "stop"): HALT,
            ("off", "stop"): HALT,
        },
        name="toggle",
    )


def guess(secret):
    i = 1
    while True:
        c = yield f"Guess #{i}"
        if c == secret:
            return i
        i += 1


def guess_from_zero(secret):
    i = 0
    while True:
        c = yield f"Guess #{i}"
        if c == secret:
            return i
        i += 1


def guess_forever(secret):
    i = 1
    while True:
        yield f"Guess #{i}"
        i += 1


def two(swap=True, prompt="continue?"):
    return TableMachine(
        {"p": prompt, "r": "continue?"},
        {
            ("p", "yes"): "r" if swap else "p",
            ("r", "yes"): "p" if swap else "r",
            ("p", "no"): HALT,
            ("r", "no"): HALT,
        },
        name="two",
    )


def mul3(flip=True):
    return TableMachine(
        {0: "⋆", 1: "⋆"},
        {
            **{(a, str(b)): a * b for a in (0, 1) for b in (0, 1)},
            **{(a, "flip"): (1 - a if flip else a) for a in (0, 1)},
        },
        name="f2-mul-flip",
    )


HALT_C = TableMachine({0: "continue?"}, {(0, "yes"): HALT, (0, "no"): HALT}, name="halt_c")
SIX = "for i in range(1, 7):\n    if i % 2:\n        act(str(i))\n    else:\n        count_even(i)"
FIVE = SIX.replace("range(1, 7)", "range(1, 6)")


def count_model(block=SIX, n=3):
    return rp.scripted_model({"main": [block], "count_even": [rp.C1] * n}, rp.COUNT_DESCRIPTIONS)


def react_invariant(before, after):
    from agentic_machines.architectures import react

    return react.successor_invariant(before, after)


def extends_only(before, after):  # forgets the step label
    return after.startswith(before) and len(after) > len(before)


# exercise -> (one right answer, two wrong answers, a word the first wrong message has)
CASES = {
    "1.1": (
        {"toggle": toggle()},
        [{"toggle": toggle(flip_to_self=True)}, {"toggle": "on/off"}],
        "toggle.harness('on', 'flip') is 'on'",
    ),
    "1.2": ({"guess": guess}, [{"guess": guess_from_zero}, {"guess": guess_forever}], "Guess #0"),
    "1.3": (
        {"at_most": lambda k: k},
        [{"at_most": lambda k: k - 1}, {"at_most": lambda k: 2**k}],
        "can reach",
    ),
    "2.1": ({"mappings": [{"q": "b"}]}, [{"mappings": [{"q": "a"}]}, {"mappings": []}], "uses 'a'"),
    "2.2": (
        {"two": two(), "embeds": False},
        [{"two": two(), "embeds": True}, {"two": two(swap=False), "embeds": False}],
        "breaks commutation",
    ),
    "2.3": (
        {"composed": compose(next(find_embeddings(LOOP, MENU)), identity(LOOP))},
        [{"composed": identity(LOOP)}, {"composed": {"q": "a"}}],
        "from loop to loop",
    ),
    "3.1": ({"spe": []}, [{"spe": ["s0"]}, {"spe": "none"}], "no completion leads from 's0'"),
    "3.2": (
        {"mul3": mul3(), "spe": {0, 1}},
        [{"mul3": mul3(), "spe": [1]}, {"mul3": mul3(flip=False), "spe": [0, 1]}],
        "leaves out 1 SPE state",
    ),
    "3.3": (
        {"halt_c": HALT_C, "generates": False},
        [{"halt_c": HALT_C, "generates": True}, {"halt_c": MENU, "generates": False}],
        "commutation",
    ),
    "4.1": (
        {"program": '(string-append "I like " (llm "color?"))'},
        [{"program": '(string-append "I like" (llm "color?"))'}, {"program": '(llm "colour?")'}],
        "'I likered'",
    ),
    "4.2": (
        None,
        [
            {
                "load_color": '(llm "color?")',
                "load_seed": '((lambda (y) (eval y)) (llm "Write a program."))',
            },
            {
                "load_color": '((lambda (x) (string-append "I like " x)) (llm "color?"))',
                "load_seed": '"x*"',
            },
        ],
        "load_color",
    ),
    "4.3": (
        {"diverge": "(letrec ((spin (lambda () (spin)))) (spin))", "again": '(llm "again")'},
        [
            {"diverge": '"done"', "again": '(llm "again")'},
            {"diverge": "(letrec ((spin (lambda () (spin)))) (spin))", "again": '(llm "Again")'},
        ],
        "not DIVERGE",
    ),
    "5.1": (
        {"invariant": react_invariant},
        [{"invariant": extends_only}, {"invariant": lambda b, a: True}],
        "the invariant fails",
    ),
    "5.2": (
        {"same_prompt": []},
        [
            {"same_prompt": [" I should search.\nAction 1: Search[Eiffel Tower]"]},
            {"same_prompt": ["hmm"]},
        ],
        "not the initial prompt",
    ),
    "5.3": (
        None,
        [{"completion": '"done"'}, {"completion": '(llm "Question?")'}],
        "the image of no state",
    ),
    "6.1": (
        {"model": count_model(), "model_calls": 5},
        [
            {"model": count_model(), "model_calls": 4},
            {"model": count_model(FIVE), "model_calls": 4},
        ],
        "you predicted 4",
    ),
    "6.2": (
        {"model": rp.scripted_model({"main": ["print(total)", "answer('gave up')"]})},
        [
            {"model": rp.scripted_model({"main": ["answer('gave up')"]})},
            {"model": rp.scripted_model({"main": ["print(total)", "answer('done')"]})},
        ],
        "never saw REPLNameError",
    ),
    "6.3": (
        {"violations": []},
        [{"violations": [2]}, {"violations": [0, 1]}],
        "step 2 keeps the invariant",
    ),
    "7.1": (
        {"completion": " '(!call-now a (ping) b (ping))"},
        [{"completion": " '(!call-now a (ping))"}, {"completion": " '(+ 1 1)"}],
        "not 2",
    ),
    "7.2": (
        {"completion": " '(+ 1 1)"},
        [{"completion": " '(!extend)"}, {"completion": " '(!call-now a (ping))"}],
        "not HALT",
    ),
    "7.3": (
        None,
        [{"completion": " '(+ 1 1)"}, {"completion": " '(!extend)"}],
        "not the state after one scripted turn",
    ),
}


def right_answer(number):
    if number == "4.2":
        from agentic_machines.cek import first_boundary, loader, seed_state

        color = first_boundary('(string-append "I like " (llm "color?"))')
        return {"load_color": loader(color), "load_seed": loader(seed_state())}
    if number == "5.3":
        from agentic_machines import HALT as _h
        from agentic_machines.cek.realize import realize_react_toy

        r = realize_react_toy()
        toy = r.machine
        t = next(t for t in (toy.harness(toy.initial, c) for c in toy.completions) if t is not _h)
        return {"completion": r.loader(t)}
    if number == "7.3":
        from agentic_machines.architectures import spell

        m = spell.machine()
        return {"completion": spell.loader(m.harness(spell.initial, spell.SCRIPT[0]))}
    return CASES[number][0]


def test_every_exercise_of_the_tutorial_has_a_checker_and_cases():
    found = set()
    for page in sorted((ROOT / "docs" / "tutorial").glob("*.md")):
        found |= set(re.findall(r"\*\*Exercise (\d+\.\d+)\.\*\*", page.read_text("utf-8")))
    assert found and found == set(EXERCISES) == set(CASES)


@pytest.mark.parametrize("number", list(CASES))
def test_a_right_answer_passes(number):
    feedback = check(number, right_answer(number))
    assert feedback.ok, str(feedback)


@pytest.mark.parametrize("number", list(CASES))
def test_two_wrong_answers_fail_with_a_counterexample(number):
    _, wrongs, word = CASES[number]
    messages = []
    for answer in wrongs:
        feedback = check(number, answer)
        assert not feedback.ok, f"{number}: {answer} passed"
        assert len(feedback.message) > 20
        messages.append(feedback.message)
    assert word in messages[0], messages[0]


def test_missing_names_and_unknown_exercises():
    assert "does not define it" in check("1.1", {}).message
    with pytest.raises(InvalidArgument, match="the exercises are"):
        exercise("9.9")


def test_the_tutorial_chapters_link_the_checkers():
    for ex in EXERCISES.values():
        page = (ROOT / "docs" / "tutorial" / ex.chapter).read_text("utf-8")
        assert "agentic-machines exercise" in page and "exercises.md" in page, ex.chapter


def test_answer_files_and_the_cli(tmp_path, capsys):
    from agentic_machines.cli.commands import main

    py = tmp_path / "toggle.py"
    py.write_text(
        "from agentic_machines import TableMachine, HALT\n"
        "toggle = TableMachine({'on': 'switch?', 'off': 'switch?'},\n"
        "    {('on', 'flip'): 'off', ('off', 'flip'): 'on', ('on', 'stop'): HALT, ('off', 'stop'): 'off'})\n"
    )
    assert not check_file("1.1", py).ok
    assert main(["exercise", "1.1", str(py)]) == 1
    out = capsys.readouterr().out
    assert "wrong: toggle.harness('off', 'stop') is 'off': the exercise's machine does not" in out
    assert "HALT" not in out  # a counterexample, never the right answer
    js = tmp_path / "spe.json"
    js.write_text(json.dumps({"spe": []}))
    assert main(["exercise", "3.1", str(js)]) == 0
    assert "right:" in capsys.readouterr().out
    assert main(["exercise"]) == 0 and "6.3" in capsys.readouterr().out
    assert main(["exercise", "1.1", str(tmp_path / "nope.txt")]) == 2
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('oops')\n")
    assert main(["exercise", "1.1", str(bad)]) == 2
    assert "raised RuntimeError: oops" in capsys.readouterr().err


def test_wrong_answers_never_print_the_solution():
    # the counterexample says what is wrong, never the answer the reader is to find
    from agentic_machines.exercises.checks import check

    for number, wrong, solution in [
        ("1.3", {"at_most": lambda k: k - 1}, "can reach 1"),
        ("1.3", {"at_most": lambda k: 2**k}, "at most 1"),
        ("3.2", {"mul3": mul3(), "spe": [1]}, "loads"),
        ("3.2", {"mul3": mul3(), "spe": []}, "you left out"),
        ("6.1", {"model": count_model(), "model_calls": 4}, "made 5"),
        ("3.1", {"spe": ["s0"]}, "fails for every state"),
    ]:
        said = str(check(number, wrong))
        assert said.startswith("wrong") and solution not in said, (number, said)
    assert "5" not in str(check("6.1", {"model": count_model(), "model_calls": 4}))


def test_the_tutorials_solutions_are_folded_until_opened():
    # a chapter shows its solutions only in a <details> block after its exercises
    from pathlib import Path

    for page in sorted((Path(__file__).parent.parent / "docs" / "tutorial").glob("0*.md")):
        text = page.read_text(encoding="utf-8")
        if "**Exercise" not in text:
            continue
        assert "### Solutions" not in text, page.name
        start = text.index("<details markdown>\n<summary>Solutions")
        assert text.index("</details>", start) > text.index("```", start), page.name
        assert text.index("**Exercise") < start, page.name


def test_wrong_answers_to_2_1_never_print_the_solution():
    from agentic_machines.exercises.checks import check

    for wrong in ([{"q": "a"}], []):
        said = str(check("2.1", {"mappings": wrong}))
        assert said.startswith("wrong") and "{'q': 'b'}" not in said, said
