"""JSON-lines files written one flushed line at a time (cassettes and traces).

Both model cassettes (:mod:`agentic_machines.runtime.models`) and run traces
(:mod:`agentic_machines.runtime.run`) are written while the work happens, so a process killed
half-way leaves every completed line on disk. Reading tolerates exactly that: a last
line cut off in the middle of a write is dropped; a bad line anywhere else is an error.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
>>> with JsonLinesWriter(path) as out:
...     out.write({"a": 1})
>>> read_json_lines(path)
[{'a': 1}]
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..errors import InvalidArgument

__all__ = ["JsonLinesWriter", "read_json_lines", "dump_line"]

# One encoder for every line: json.dumps with options builds a new encoder per call.
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


def dump_line(obj: Any) -> str:
    r"""One JSON line, newline included. ``json`` escapes newlines inside strings.

    >>> dump_line({"p": "a\nb"})
    '{"p": "a\\nb"}\n'
    """
    return _ENCODE(obj) + "\n"


class JsonLinesWriter:
    """Write JSON objects to ``path``, one per line, flushing after each line.

    ``mode="w"`` starts a new file; ``mode="a"`` appends.
    """

    def __init__(self, path: str | os.PathLike, mode: str = "w") -> None:
        if mode not in ("w", "a"):
            raise InvalidArgument(f"mode must be 'w' or 'a', got {mode!r}")
        self.path = os.fspath(path)
        self._fh = open(self.path, mode, encoding="utf-8")

    def write(self, obj: Any) -> None:
        """Write one line and flush it to the operating system at once."""
        self._fh.write(dump_line(obj))
        self._fh.flush()

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._fh.close()

    def __enter__(self) -> JsonLinesWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_json_lines(path: str | os.PathLike) -> list[Any]:
    """Every JSON value of the file, in order, skipping blank lines.

    A final line that is unterminated and does not parse is the trace of a write
    interrupted by a kill; it is dropped. Any other unparsable line raises
    :class:`InvalidArgument` naming the line.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise InvalidArgument(
            f"cannot read {path!r}: {exc.strerror or exc}; check the path"
        ) from None
    lines = text.split("\n")
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):  # unterminated last line: an interrupted write
                break
            raise InvalidArgument(
                f"{path}:{number} is not valid JSON ({exc.msg}); the file is not a JSON-lines "
                "file written by agentic_machines, or it was edited by hand"
            ) from None
    return out
