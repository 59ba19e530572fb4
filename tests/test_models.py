"""Unit tests for the offline models of agentic_machines.models."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest

from agentic_machines.errors import (
    InvalidArgument,
    ModelError,
    ReplayMismatch,
    ScriptExhausted,
    UnmatchedPrompt,
)
from agentic_machines.models import (
    DistributionModel,
    FunctionModel,
    MappingModel,
    Model,
    ModelBase,
    OpenAICompatibleModel,
    RandomModel,
    RecordingModel,
    ReplayModel,
    ScriptedModel,
    describe_difference,
    shorten,
)

# -- the protocol and the call log -------------------------------------------------------


def test_every_model_satisfies_the_protocol_and_keeps_calls(tmp_path):
    models = [
        ScriptedModel(["a"]),
        MappingModel({"p": "a"}),
        FunctionModel(lambda p: "a"),
        RandomModel(["a"], seed=0),
        DistributionModel({"a": 1}),
        RecordingModel(FunctionModel(lambda p: "a"), tmp_path / "c.jsonl"),
        OpenAICompatibleModel("http://127.0.0.1:9/v1", "m"),
    ]
    for m in models:
        assert isinstance(m, Model)
        assert m.calls == []
    for m in models[:-1]:
        assert m.complete("p") == "a"
        assert m.calls == [("p", "a")]


def test_non_string_prompt_and_non_string_answer_are_rejected():
    with pytest.raises(InvalidArgument, match="P = str"):
        ScriptedModel(["a"]).complete(3)  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="C = str"):
        FunctionModel(lambda p: 42).complete("p")  # type: ignore[arg-type,return-value]


# -- ScriptedModel ----------------------------------------------------------------------


def test_scripted_model_answers_in_order_and_never_wraps():
    m = ScriptedModel(["a", "b"])
    assert [m.complete("x"), m.complete("y")] == ["a", "b"]
    assert m.remaining == 0
    with pytest.raises(ScriptExhausted) as info:
        m.complete("a third, very long prompt " + "z" * 200)
    err = info.value
    assert err.index == 2
    assert err.prompt.startswith("a third")
    assert "call index 2" in str(err) and "a third" in str(err)
    assert len(str(err)) < 400, "the prompt is shortened in the message"
    # Still exhausted on the next call: no wrap-around, no empty answer.
    with pytest.raises(ScriptExhausted):
        m.complete("again")
    assert m.calls == [("x", "a"), ("y", "b")]


def test_scripted_model_rejects_bad_scripts():
    with pytest.raises(InvalidArgument, match="wrap it in a list"):
        ScriptedModel("abc")
    with pytest.raises(InvalidArgument, match="index 1"):
        ScriptedModel(["a", 2])  # type: ignore[list-item]


def test_empty_script_raises_on_first_call():
    with pytest.raises(ScriptExhausted, match="only 0 completion"):
        ScriptedModel([]).complete("p")


# -- MappingModel -----------------------------------------------------------------------


def test_mapping_model_exact_beats_substring_then_first_match_wins():
    m = MappingModel(
        [
            ("a", "sub-a"),
            ("abc", "exact-abc"),
            (re.compile(r"^x\d"), "regex"),
            (lambda p: "?" in p, "pred"),
        ]
    )
    assert m.complete("abc") == "exact-abc"  # exact prompt wins over the earlier substring rule
    assert m.complete("xabcx") == "sub-a"  # otherwise the first matching rule in order
    assert m.complete("x1 b") == "regex"
    assert m.complete("why?") == "pred"


def test_mapping_model_unmatched_prompt_shows_the_prompt():
    m = MappingModel({"hello": "hi"})
    with pytest.raises(UnmatchedPrompt) as info:
        m.complete("goodbye now")
    assert info.value.prompt == "goodbye now"
    assert "'goodbye now'" in str(info.value) and "'hello'" in str(info.value)


def test_mapping_model_validates_rules():
    with pytest.raises(InvalidArgument, match="rule 0"):
        MappingModel({3: "a"})
    with pytest.raises(InvalidArgument, match="not a string"):
        MappingModel({"a": 3})


# -- distributions ----------------------------------------------------------------------


def test_random_model_is_deterministic_per_seed_and_independent_of_global_random():
    import random

    a = RandomModel(["x", "y", "z"], seed=3)
    random.seed(99)
    first = [a.complete("p") for _ in range(30)]
    random.seed(1)
    b = RandomModel(["x", "y", "z"], seed=3)
    assert [b.complete("p") for _ in range(30)] == first
    assert set(first) == {"x", "y", "z"}
    c = RandomModel(["x", "y", "z"], seed=4)
    assert [c.complete("p") for _ in range(30)] != first


def test_random_model_distribution_is_uniform_and_exact():
    assert RandomModel(["a", "b", "a"]).distribution("p") == {
        "a": Fraction(2, 3),
        "b": Fraction(1, 3),
    }
    with pytest.raises(InvalidArgument):
        RandomModel([])


def test_distribution_model_by_prompt_and_validation():
    m = DistributionModel(lambda p: {p.upper(): 1, "other": 0})
    assert m.distribution("q") == {"Q": 1}
    assert m.complete("q") == "Q"
    assert DistributionModel({"a": 0.5, "b": 1.5}).distribution("p") == {"a": 0.25, "b": 0.75}
    with pytest.raises(InvalidArgument, match="non-negative"):
        DistributionModel({"a": -1})
    with pytest.raises(InvalidArgument, match="no positive weight"):
        DistributionModel({"a": 0})


def test_distribution_model_sampling_follows_the_weights():
    m = DistributionModel({"a": 9, "b": 1}, seed=0)
    draws = [m.complete("p") for _ in range(2000)]
    assert 1600 < draws.count("a") < 1990  # 1800 expected; a loose, deterministic (seeded) check


# -- cassettes --------------------------------------------------------------------------


def test_recording_writes_each_call_at_once_and_replay_answers(tmp_path):
    path = tmp_path / "cassette.jsonl"
    rec = RecordingModel(FunctionModel(lambda p: p + "!"), path)
    assert path.read_text() == ""  # a fresh cassette exists before the first call
    rec.complete("one\ntwo")
    lines = path.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == {
        "index": 0,
        "prompt": "one\ntwo",
        "completion": "one\ntwo!",
    }
    rec.complete("three")
    replay = ReplayModel(path)
    assert replay.remaining == 2
    assert replay.complete("one\ntwo") == "one\ntwo!"
    assert replay.complete("three") == "three!"
    with pytest.raises(ScriptExhausted, match="holds 2 call"):
        replay.complete("four")


def test_recording_does_not_record_a_failed_call(tmp_path):
    path = tmp_path / "c.jsonl"
    rec = RecordingModel(ScriptedModel(["a"]), path)
    rec.complete("p")
    with pytest.raises(ScriptExhausted):
        rec.complete("q")
    assert len(ReplayModel(path).records) == 1


def test_replay_mismatch_names_index_offset_and_both_snippets(tmp_path):
    path = tmp_path / "c.jsonl"
    rec = RecordingModel(ScriptedModel(["a", "b"]), path)
    rec.complete("first")
    rec.complete("The quick brown fox jumps over the lazy dog")
    replay = ReplayModel(path)
    replay.complete("first")
    with pytest.raises(ReplayMismatch) as info:
        replay.complete("The quick brown cat jumps over the lazy dog")
    err = info.value
    assert err.index == 1
    assert err.expected.endswith("lazy dog") and "cat" in err.got
    msg = str(err)
    assert "call 1" in msg and "character 16" in msg
    assert "brown fox" in msg and "brown cat" in msg


def test_replay_tolerates_a_cut_off_last_line_only(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"prompt": "p", "completion": "c"}\n{"prompt": "q", "compl')
    assert ReplayModel(path).records == [("p", "c")]
    path.write_text('{"prompt": "p", "compl\n{"prompt": "q", "completion": "c"}\n')
    with pytest.raises(InvalidArgument, match=":1: not valid JSON"):
        ReplayModel(path)
    path.write_text('{"foo": 1}\n')
    with pytest.raises(InvalidArgument, match="not a cassette line"):
        ReplayModel(path)
    with pytest.raises(InvalidArgument, match="cannot read"):
        ReplayModel(tmp_path / "missing.jsonl")


# -- helpers ----------------------------------------------------------------------------


def test_describe_difference_covers_prefixes():
    assert "character 3" in describe_difference(
        "abc", "abcd"
    ) and "(it ends there)" in describe_difference("abc", "abcd")
    assert "character 0" in describe_difference("x", "y")


@pytest.mark.parametrize("width", [1, 2, 5, 10])
def test_shorten_keeps_width(width):
    text = "0123456789abcdef"
    assert len(shorten(text, width)) == width
    assert shorten("ab", width) == "ab" if width >= 2 else True


def test_model_base_needs_complete():
    with pytest.raises(NotImplementedError):
        ModelBase().complete("p")
