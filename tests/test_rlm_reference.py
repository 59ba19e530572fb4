"""RLM against the code it cites: one full episode's prompts, character for character.

tests/golden/rlm/reference_episode.json holds every model call of a scripted episode as
the paper-era reference code (alexzhang13/rlm at 0f0cf9c) made them; its "how" field says
how the file was made. Our machine runs the same script; each of its prompts must equal
the reference's, up to the two differences docs/sources.md lists as ours (the turn
messages stay in the history, and each ends with a "Turn k/N." line).
"""

import json
from pathlib import Path

from agentic_machines import HALT
from agentic_machines.architectures import rlm

GOLDEN = json.loads(
    (Path(__file__).parent / "golden" / "rlm" / "reference_episode.json").read_text("utf-8")
)


def _ours() -> tuple[list[str], object]:
    m = rlm.machine(rlm.TOY_CONTEXT, GOLDEN["query"], isolation="inline")
    # root turns from the script in order; sub-calls answered by their prompt, as in the
    # reference run (its batches ran concurrently)
    roots, subs = list(GOLDEN["root"]), GOLDEN["sub"]
    state, prompts = rlm.initial, []
    while True:
        prompt = m.prompt(state)
        prompts.append(prompt)
        if rlm.is_single_user_message(prompt):
            completion = subs[prompt[len("<|user|>\n") : -1]]
        else:
            completion = roots.pop(0)
        nxt = m.harness(state, completion)
        if nxt is HALT:
            return prompts, m.result(state, completion)
        state = nxt


def _expected_root_prompts() -> list[str]:
    # The reference's root message lists, turned into ours by the two documented rules.
    calls = [c["messages"] for c in GOLDEN["calls"] if c["kind"] == "root"]
    ours: list[tuple[str, str]] = [(m["role"], m["content"]) for m in calls[0][:2]]
    out, seen = [], 2
    for turn, messages in enumerate(calls):
        ours.extend((m["role"], m["content"]) for m in messages[seen:-1])  # reply, block outputs
        seen = len(messages) - 1
        last = messages[-1]
        ours.append((last["role"], f"{last['content']}\n\nTurn {turn + 1}/8."))
        out.append(rlm.render_messages(ours))
    return out


def test_the_golden_episode_is_the_reference_run():
    assert GOLDEN["context"] == "rlm.TOY_CONTEXT" and "0f0cf9c" in GOLDEN["how"]
    first = GOLDEN["calls"][0]["messages"]
    assert first[0] == {"role": "system", "content": rlm.SYSTEM_PROMPT}
    assert first[1]["role"] == "assistant"  # the metadata message, as the reference sends it
    assert first[1]["content"] == rlm.metadata_message(rlm.TOY_CONTEXT)


def test_every_prompt_of_the_episode_matches_the_reference():
    prompts, result = _ours()
    roots = [p for p in prompts if not rlm.is_single_user_message(p)]
    assert roots == _expected_root_prompts()
    subs = [p[len("<|user|>\n") : -1] for p in prompts if rlm.is_single_user_message(p)]
    ref_subs = [c["prompt"] for c in GOLDEN["calls"] if c["kind"] != "root"]
    assert subs == ref_subs  # the batch was answered in order there too (sorted by the client)
    kinds = ["sub" if rlm.is_single_user_message(p) else "root" for p in prompts]
    ref_kinds = ["root" if c["kind"] == "root" else "sub" for c in GOLDEN["calls"]]
    assert kinds == ref_kinds
    # the reference returns FINAL_VAR's (kind, name) pair; ours the variable's value
    assert GOLDEN["response"] == ["FINAL_VAR", "river"] and result.answer == "Seine"


def test_block_outputs_match_the_reference_points_4_to_8():
    prompts, _ = _ours()
    last = prompts[-1]
    # point 6: an exception is "\n{Type}: {message}" after what the block printed
    assert "REPL output:\n\n\nNameError: name 'undefined_name' is not defined\n\nREPL" in last
    # points 7 and 8: a bad prompt is an error string, never raised; one bad item fails the batch
    assert "Error: Invalid prompt type: <class 'int'>\nError: Missing 'prompt'" in last
    assert '["Error: Invalid prompt type: <class \'int\'>", "Error: Invalid prompt' in last
    # point 5: the variables the reference lists, in its order
    assert "REPL variables: ['context', 'hits', 'bad', 'empty', 'parts', 'river', 'both']" in last


def test_show_vars_lists_the_models_variables():
    m = rlm.machine(isolation="inline")
    reply = "```repl\nx = 3\nprint(SHOW_VARS())\nSHOW_VARS = 1\n```"
    s = m.harness(rlm.initial, reply)
    p = m.prompt(s)
    assert "Available variables: {'context': 'str', 'x': 'int'}" in p
    # rebinding it is undone after the block, as for llm_query; it is not a REPL variable
    s = m.harness(s, "```repl\nprint(SHOW_VARS())\n```")
    assert m.prompt(s).count("Available variables: {'context': 'str', 'x': 'int'}") == 2
    assert "REPL variables: ['context', 'x']\n" in m.prompt(s)
