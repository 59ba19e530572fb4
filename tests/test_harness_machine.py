"""HarnessMachine costs, counted rather than timed: a linear run starts the
harness program once and resumes it; only branching replays it from the start."""

from agentic_machines import HALT, HarnessMachine


def test_linear_runs_resume_and_branching_replays():
    starts = []

    def program():
        starts.append(1)
        n = 0
        while True:
            c = yield f"step {n}"
            if c == "stop":
                return n
            n += 1

    m = HarnessMachine(program)
    assert len(starts) == 1  # built once to check the first prompt
    s = m.initial
    for _ in range(500):
        s = m.harness(s, "go")
        assert m.prompt(s) == f"step {len(s)}"
    assert len(starts) == 2  # the initial state's generator was started once for the whole run
    mid = m.initial.then("go").then("go")
    assert m.harness(mid, "other") == mid.then("other") and len(starts) == 3  # a branch replays
    assert m.harness(s, "stop") is HALT and m.result(s, "stop") == 500 and len(starts) == 3
