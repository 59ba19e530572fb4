"""Run every benchmark and write docs/scaling.md: ``benchmarks/run_all.py --write``.

Kept so the old command still works; ``benchmarks/run_all.py`` is the one runner (it
prints the table of goals; ``--write`` also writes the page). Options are passed on,
e.g. ``python experiments/scaling.py --only core,cek``; ``--no-write`` only prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from run_all import main  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    raise SystemExit(
        main([a for a in args if a != "--no-write"] + ([] if "--no-write" in args else ["--write"]))
    )
