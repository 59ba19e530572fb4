"""The F2 refutations of ReAct, RLM and THREAD, checked directly.

``analysis()`` derives "no successor of x has the prompt of s" from a proved invariant.
This test checks the conclusion itself, without the invariant: the obstruction state s
is reached from x by the scripted path the verdict records, and on every completion of
the verdict's sample, h(x, c) is 1, ↑ or a state whose prompt differs from p(s) (and
from p(x): the same refutation at x itself).
"""

import pytest

from agentic_machines import is_sentinel
from agentic_machines.architectures import react, rlm, thread
from agentic_machines.architectures._invariants import reach
from agentic_machines.checking.sampling import completion_sample, harness_strings


def _sample(mod, m):
    if mod is react:
        return react.react_completion_sample(m=m)
    n = {rlm: 200, thread: 300}[mod]
    return completion_sample(
        mod.valid_completions() + list(mod.SCRIPT) + harness_strings(m), seed=0, n=n
    )


@pytest.mark.parametrize(
    "mod", [react, rlm, thread], ids=lambda mod: mod.__name__.rsplit(".", 1)[-1]
)
def test_obstruction_state_is_reachable_and_no_successor_of_x_has_its_prompt(mod):
    m = mod.machine(isolation="inline") if mod is rlm else mod.machine()  # scripted: trusted
    v = mod.analysis(m)
    assert v.holds is False and v.method == "fact:F2"
    s = v.obstruction.state
    assert reach(m, m.initial, v.details["path"]) == s and len(v.details["path"]) >= 1
    p_s, p_x = m.prompt(s), m.prompt(m.initial)
    cs = _sample(mod, m)
    assert len(cs) == v.checked
    successors = 0
    for c in cs:
        y = m.harness(m.initial, c)
        if not is_sentinel(y):
            successors += 1
            assert m.prompt(y) not in (p_s, p_x), c
    assert successors > len(cs) // 2  # most completions lead to states: the check has teeth
