"""JSON-lines files written one flushed line at a time (cassettes and traces).

Both model cassettes (:mod:`agentic_machines.runtime.local_models`) and run traces
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

import contextlib
import json
import os
from collections.abc import Callable
from typing import Any

from .._files import SMALLER, brief, open_output_fd, read_lines
from ..errors import InvalidArgument

__all__ = [
    "JsonLinesWriter",
    "read_json_lines",
    "read_json_records",
    "dump_line",
    "brief",
    "MAX_JSON_LINES_BYTES",
]

MAX_JSON_LINES_BYTES = 64 * 1024 * 1024
"""The largest trace or cassette file read by default (64 MiB). Parsed, a file of many
short steps takes up to about 11 times its size in memory (710 MB for 64 MiB of one-character
prompts; long prompts take about 1.5 times), so the cap bounds that too; the loaders'
``max_bytes=`` raises it for a file known to be good."""

# One encoder for every line: json.dumps with options builds a new encoder per call.
encode_json = json.JSONEncoder(ensure_ascii=False).encode
encode_json_ascii = json.JSONEncoder(ensure_ascii=True).encode


def dump_line(obj: Any) -> str:
    r"""One JSON line, newline included. ``json`` escapes newlines inside strings.

    >>> dump_line({"p": "a\nb"})
    '{"p": "a\\nb"}\n'
    """
    return encode_json(obj) + "\n"


class JsonLinesWriter:
    """Write JSON objects to ``path``, one per line, each line on disk when ``write`` returns.

    ``mode="w"`` starts a new file; ``mode="a"`` appends. A line is encoded once and
    handed to the operating system with one ``os.write`` (no buffer to flush), so a
    process killed after ``write`` returned keeps the line.
    """

    def __init__(self, path: str | os.PathLike, mode: str = "w") -> None:
        if mode not in ("w", "a"):
            raise InvalidArgument(f"mode must be 'w' or 'a', got {mode!r}")
        self.path = os.fspath(path)
        # A FIFO with no reader: an error, not a block. Every line goes through os.write,
        # so a bare descriptor is all the writer holds (a file object would add an fstat,
        # an isatty and a flush per file: the cost of a hundred lines' writes).
        self._fd = open_output_fd(self.path, append=mode == "a")

    def write(self, obj: Any) -> None:
        r"""Write one line with one ``os.write``.

        A string with a lone surrogate (``"\ud800"``, which a model's JSON answer can
        hold) has no UTF-8 form: that line is written with ASCII escapes instead, which
        read back to the same string. An I/O error names the file.
        """
        text = encode_json(obj) + "\n"
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # nothing was written: the text is encoded first
            data = (encode_json_ascii(obj) + "\n").encode("ascii")
        self.write_bytes(data)

    def write_bytes(self, data: bytes) -> None:
        """Write ``data`` (whole lines, already encoded) with one ``os.write`` (more only
        if the system writes part of it)."""
        try:
            written = os.write(self._fd, data)
            while written < len(data):  # a short write (a full pipe, a signal): finish it
                written += os.write(self._fd, data[written:])
        except OSError as exc:
            if exc.filename is None:  # e.g. ENOSPC: say which file
                exc.filename = self.path
            raise

    def fileno(self) -> int:
        """The file descriptor, for a writer that makes its own ``os.write`` of a line and
        hands :meth:`write_bytes` only what is left (a short or failed write)."""
        return self._fd

    def close(self) -> None:
        """Close the file (idempotent)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        # A writer dropped unclosed (its owner raised before close) frees its descriptor,
        # as a file object would; one that failed to open has none.
        if getattr(self, "_fd", -1) >= 0:
            self.close()

    def __enter__(self) -> JsonLinesWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed (JSON has no NaN or Infinity)")


_DECODE = json.JSONDecoder(parse_constant=_reject_constant).decode


_BINARY = "binary data (a NUL byte); this is not a JSON-lines text file"


def read_json_records(
    path: str | os.PathLike,
    error: Callable[[str, int | None, str], Exception],
    *,
    limit: int,
    what: str,
    advice: str = SMALLER,
) -> list[tuple[int, Any]]:
    """Every JSON value of the file with its 1-based line number, skipping blank lines.

    Strict: a path that is not a regular file (a FIFO, a device, a directory), a file
    larger than ``limit`` bytes (``what`` names the kind of file in that message, which
    ends with ``advice``), bytes
    that are not UTF-8, binary data (NUL bytes), ``NaN``/``Infinity``, nesting too deep to
    parse, or a line that is not JSON raise ``error(path, line, problem)`` (line ``None``
    for the whole file). A final line that is unterminated and does not parse is the trace
    of a write interrupted by a kill; it is dropped. The file is read and parsed a chunk
    at a time, so memory holds the parsed values and one chunk, not the text as well.

    >>> import os, tempfile
    >>> from agentic_machines.errors import TraceError
    >>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
    >>> _ = open(path, "w").write('{"a": 1}\\n{"a": NaN}\\n')
    >>> read_json_records(path, TraceError, limit=100, what="trace")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    agentic_machines.errors.TraceError: ...x.jsonl:2: not valid JSON: NaN is not allowed (JSON has no NaN or Infinity)...
    """
    name = os.fspath(path)

    def whole(problem: str) -> Exception:
        return error(name, None, problem)

    out: list[tuple[int, Any]] = []
    # closing: an error raised part-way closes the file at once, not when the error is freed.
    lines = read_lines(name, limit=limit, what=what, error=whole, advice=advice)
    with contextlib.closing(lines):
        for number, (raw, terminated) in enumerate(lines, start=1):
            if b"\x00" in raw:  # never in JSON text: binary data, refused at its first line
                raise error(name, number, _BINARY)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if not terminated:  # a write cut inside a multi-byte character
                    break
                raise error(
                    name, number, f"not UTF-8 text (byte {exc.start} of the line)"
                ) from None
            if not line.strip():
                continue
            try:
                out.append((number, _DECODE(line)))
            except RecursionError:
                raise error(name, number, "JSON nested too deeply to read") from None
            except ValueError as exc:  # JSONDecodeError and the NaN rejection
                if not terminated:  # unterminated last line: an interrupted write
                    break
                problem = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                raise error(
                    name,
                    number,
                    f"not valid JSON: {problem}; the file is not a JSON-lines file written by "
                    "agentic_machines, or it was edited by hand",
                ) from None
    return out


def read_json_lines(path: str | os.PathLike, *, limit: int = MAX_JSON_LINES_BYTES) -> list[Any]:
    """Every JSON value of the file, in order (:func:`read_json_records` without line numbers;
    a bad file raises :class:`~agentic_machines.errors.InvalidArgument` naming ``path:line``)."""
    return [
        value for _, value in read_json_records(path, _file_error, limit=limit, what="JSON-lines")
    ]


def _file_error(path: str, line: int | None, problem: str) -> InvalidArgument:
    return InvalidArgument(f"{path}:{line}: {problem}" if line else f"{path}: {problem}")
