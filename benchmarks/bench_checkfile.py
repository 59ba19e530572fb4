"""``agentic-machines check FILE`` on machine files of about 100 KB and 1 MB.

Run: ``python benchmarks/bench_checkfile.py``. The verb runs in this process (its
``main``, output to memory) on two machine files of the same shape, one ten times the
other's states; the measure is its time per state on the large file over its time per
state on the small one, which stays near 1 when ``check`` is linear in the file's size
(it was quadratic: a 1.1 MB file took 106 s, issue 37). For information, ``check``'s time
on the large file over the simplest honest computation on it, reading the file
(``json.load``), which every check must do first. ``tests/test_check_scaling.py`` holds
the same property by counting calls, without a clock.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, paired  # noqa: E402

from agentic_machines.cli.commands import main as cli  # noqa: E402


def machine_file(n: int, folder: Path) -> Path:
    """A machine file of ``n`` states, three completions each (about 80 bytes a state)."""
    states = [
        {
            "id": i,
            "prompt": f"step {i}: what next?",
            "on": {"go": (i + 1) % n, "jump": (i * 7 + 3) % n, "stop": "HALT" if i % 5 else i},
        }
        for i in range(n)
    ]
    path = folder / f"machine-{n}.json"
    doc = {"format": "agentic-machines/machine", "version": 1, "name": f"m{n}", "states": states}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def check(path: Path) -> int:
    """``agentic-machines check PATH``, its output kept in memory (as a pipe would take it)."""
    with contextlib.redirect_stdout(io.StringIO()):
        return cli(["check", str(path)])


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="am-bench-checkfile-"))
    small_n, large_n = 1_000, 10_000
    small, large = machine_file(small_n, folder), machine_file(large_n, folder)
    check(small)  # imports and first-use caches are not the file's work
    t_large, t_small, ratio, codes = paired(lambda: check(large), lambda: check(small), 3)
    assert codes == (0, 0), codes
    per_state = ratio * small_n / large_n
    t_check, t_read, over_read, _ = paired(
        lambda: check(large), lambda: json.loads(large.read_text(encoding="utf-8")), 3
    )
    kb = {p: p.stat().st_size / 1000 for p in (small, large)}
    print(f"{'file':<8} {'states':>7} {'KB':>7} {'check s':>8} {'µs/state':>9}")
    for name, n, path, t in (
        ("small", small_n, small, t_small),
        ("large", large_n, large, t_large),
    ):
        print(f"{name:<8} {n:>7} {kb[path]:>7.0f} {t:>8.3f} {t / n * 1e6:>9.1f}")
    print(f"reading the large file (json.load): {t_read:.3f} s; check: {t_check:.3f} s")
    print("(alternating, median of 3 per-round ratios)")
    goal("check FILE: time per state, 1 MB file ÷ 100 KB file", per_state, 1.5)
    goal("check FILE (1 MB) ÷ reading it (json.load)", over_read, None, digits=0)


if __name__ == "__main__":
    main()
