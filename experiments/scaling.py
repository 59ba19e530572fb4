"""Run every benchmark in benchmarks/ and collect their reports into docs/scaling.md.

Each ``benchmarks/bench_<area>.py`` measures one area against a baseline run in the
same process and prints ratios; this script runs them one after another (each in its
own interpreter, so one area's caches do not flatter another's) and writes what they
printed into ``docs/scaling.md``. Timings vary by machine; the ratios are what to compare.

Run: ``python experiments/scaling.py [--only core,cek] [--no-write]``.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
OUT = ROOT / "docs" / "scaling.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", default="", help="comma-separated areas, e.g. core,cek (default: all)"
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print only; do not write docs/scaling.md"
    )
    args = parser.parse_args(argv)
    wanted = {a.strip() for a in args.only.split(",") if a.strip()}
    scripts = sorted(
        p for p in BENCH.glob("bench_*.py") if not wanted or p.stem[len("bench_") :] in wanted
    )
    if not scripts:
        print(
            f"no benchmark matches {sorted(wanted)}; available: "
            f"{[p.stem[6:] for p in sorted(BENCH.glob('bench_*.py'))]}",
            file=sys.stderr,
        )
        return 2
    sections = []
    for script in scripts:
        area = script.stem[len("bench_") :]
        print(f"== {area} ({script.relative_to(ROOT)})", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT
        )
        seconds = time.perf_counter() - t0
        text = proc.stdout.rstrip()
        if proc.returncode != 0:
            text += f"\n(exit status {proc.returncode})\n{proc.stderr.strip()[-2000:]}"
        print(text, flush=True)
        sections.append(
            f"## {area}\n\n`python {script.relative_to(ROOT)}` ({seconds:.1f} s in all)\n\n```text\n{text}\n```\n"
        )
    if not args.no_write:
        head = (
            "# Scaling benchmarks\n\nWritten by `python experiments/scaling.py` on "
            f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
            f"{time.strftime('%Y-%m-%d')}. Absolute times depend on the machine; each benchmark "
            "also reports ratios against a baseline measured in the same process.\n\n"
        )
        OUT.write_text(head + "\n".join(sections), encoding="utf-8")
        print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
