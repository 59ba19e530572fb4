"""Failing completion sequences kept between test runs, as Hypothesis keeps its examples.

:class:`ExampleDatabase` is a folder (the pytest plugin's ``.agentic/`` in the rootdir)
with one JSON file per test: the test's id and the failing runs found for it (the
property and the completions, in order). The plugin replays a test's runs before it
searches, drops a run that no longer fails, and runs tests with a saved run first. The
folder holds a ``.gitignore`` of ``*``: the runs are this checkout's, not the project's.
A file that cannot be read (hand-edited, cut short) is ignored, never an error.

>>> import tempfile, pathlib
>>> db = ExampleDatabase(pathlib.Path(tempfile.mkdtemp()) / ".agentic")
>>> db.has("t.py::test_a")
False
>>> db.save("t.py::test_a", "never_raises()", ["go", "boom"])
>>> db.has("t.py::test_a"), db.load("t.py::test_a")
(True, [('never_raises()', ('go', 'boom'))])
>>> db.delete("t.py::test_a", ("go", "boom"))
>>> db.has("t.py::test_a")
False
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

__all__ = ["ExampleDatabase"]


class ExampleDatabase:
    """The failing runs saved per test id under ``folder`` (made when one is saved)."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)

    def path(self, test_id: str) -> Path:
        """The file of ``test_id``'s runs (named by a digest: test ids hold any character)."""
        digest = hashlib.sha1(test_id.encode("utf-8")).hexdigest()[:16]
        return self.folder / "examples" / f"{digest}.json"

    def trace_path(self, test_id: str, completions: tuple[str, ...] | list[str]) -> Path:
        """Where the trace file of one saved run goes (for ``run --replay``)."""
        text = json.dumps([test_id, list(completions)])
        return self.folder / "traces" / f"{hashlib.sha1(text.encode()).hexdigest()[:16]}.trace"

    def has(self, test_id: str) -> bool:
        """Whether ``test_id`` has a saved failing run."""
        return bool(self.load(test_id))

    def load(self, test_id: str) -> list[tuple[str, tuple[str, ...]]]:
        """``test_id``'s saved runs: (property name, completions), oldest first."""
        try:
            data = json.loads(self.path(test_id).read_text(encoding="utf-8"))
            runs = [(str(r["property"]), tuple(map(str, r["completions"]))) for r in data["runs"]]
        except (OSError, ValueError, KeyError, TypeError):
            return []
        return runs if data.get("test") == test_id else []

    def save(self, test_id: str, prop: str, completions: tuple[str, ...] | list[str]) -> None:
        """Add a failing run of ``test_id`` (kept once)."""
        runs = [r for r in self.load(test_id) if r[1] != tuple(completions)]
        runs.append((prop, tuple(completions)))
        self._write(test_id, runs)

    def delete(self, test_id: str, completions: tuple[str, ...] | list[str]) -> None:
        """Forget a run of ``test_id`` (it no longer fails)."""
        runs = [r for r in self.load(test_id) if r[1] != tuple(completions)]
        if runs:
            self._write(test_id, runs)
        else:
            self.path(test_id).unlink(missing_ok=True)

    def _write(self, test_id: str, runs: list[tuple[str, tuple[str, ...]]]) -> None:
        path = self.path(test_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = self.folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")
        data = {"test": test_id, "runs": [{"property": p, "completions": list(c)} for p, c in runs]}
        part = path.with_suffix(".part")  # written whole, then renamed: never half a file
        part.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(part, path)
