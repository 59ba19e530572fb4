"""Write every gallery picture (PNG and Mermaid) into docs/gallery/.

Run from anywhere:

    python experiments/gallery.py              # writes docs/gallery/
    python experiments/gallery.py OUT_DIR      # writes somewhere else

The same as `agentic-machines gallery DIR`. The pictures are drawn by the toolkit from
the machines themselves (agentic_machines.drawing.gallery); docs/gallery.md embeds them.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from agentic_machines.drawing.gallery import write_gallery

OUT = Path(__file__).resolve().parent.parent / "docs" / "gallery"


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    began = time.perf_counter()
    paths = write_gallery(out, verbose=True)
    print(f"wrote {len(paths)} files to {out} in {time.perf_counter() - began:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
