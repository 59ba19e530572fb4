"""The type-check ratchet: mypy's error count per module may only go down.

    python .ci/mypy_ratchet.py            # check against .ci/mypy-baseline.json (CI runs this)
    python .ci/mypy_ratchet.py --update   # write the current counts as the new baseline

A module whose count rose fails the run and is named with its new errors; a module whose
count fell is reported, so that the baseline can be lowered in the same commit. Modules
listed in ``MUST_BE_CLEAN`` must have no error at all, and a new module starts at zero.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline.json"
# Module paths (or folders) that must type-check with no error: the formal core first.
MUST_BE_CLEAN: list[str] = [
    "agentic_machines/machine.py",
    "agentic_machines/verdict.py",
    "agentic_machines/generation.py",
    "agentic_machines/embedding.py",
    "agentic_machines/obstruction.py",
    "agentic_machines/_text.py",
    "agentic_machines/architectures/_invariants.py",
    "agentic_machines/architectures/adaplanner.py",
    "agentic_machines/architectures/adapt.py",
    "agentic_machines/architectures/codeact.py",
    "agentic_machines/architectures/environments.py",
    "agentic_machines/architectures/tot.py",
    "agentic_machines/architectures/spe.py",
    "agentic_machines/architectures/reflexion.py",
    # Model-written code runs here: a type error in the sandbox is a hole in it.
    "agentic_machines/execution/",
    "agentic_machines/runtime/",
    "agentic_machines/checking/",
    # The CEK evaluator is the SPE theorem's machine: its states and rules are typed exactly.
    "agentic_machines/cek/",
]
_LINE = re.compile(r"^(?P<path>[^:\s]+\.py):\d+: error: ")


def mypy_errors() -> dict[str, list[str]]:
    """Run mypy on the package; its error lines grouped by file."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "agentic_machines"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1):  # 2: mypy itself failed (bad config, crash)
        raise SystemExit(f"mypy did not run:\n{done.stdout}\n{done.stderr}")
    errors: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        match = _LINE.match(line)
        if match:
            errors.setdefault(match["path"], []).append(line)
    return errors


def main(argv: list[str]) -> int:
    errors = mypy_errors()
    counts = Counter({path: len(lines) for path, lines in errors.items()})
    total = sum(counts.values())
    if argv == ["--update"]:
        BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n")
        print(f"mypy baseline written: {total} errors in {len(counts)} files")
        return 0
    baseline = Counter(json.loads(BASELINE.read_text(encoding="utf-8")))
    worse = sorted(p for p in counts if counts[p] > baseline[p])
    dirty = sorted(p for p in counts if any(p.startswith(c) for c in MUST_BE_CLEAN))
    better = sorted(p for p in baseline if counts[p] < baseline[p])
    for path in worse:
        print(f"{path}: {baseline[path]} -> {counts[path]} mypy errors")
        print("\n".join(f"  {line}" for line in errors[path]))
    for path in dirty:
        print(f"{path} must type-check cleanly; it has {counts[path]} errors")
    if better:
        print(
            "fewer errors than the baseline in "
            + ", ".join(f"{p} ({baseline[p]} -> {counts[p]})" for p in better)
            + ": lower it with python .ci/mypy_ratchet.py --update"
        )
    print(f"mypy: {total} errors (baseline {sum(baseline.values())})")
    return 1 if worse or dirty else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
