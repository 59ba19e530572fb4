"""Reading a file a user named: regular files only, never past a size cap.

Every loader of the package (trace and cassette files, machine files, scripts, programs,
exercise answers, Python targets) reads through here, so a path that names something other
than a regular file gives one clear error at once instead of hanging or filling memory:

- a FIFO with no writer would block ``open`` forever, a character device such as
  ``/dev/zero`` never ends, a directory or a socket cannot be read: each is refused from
  ``os.stat`` before anything is opened, and the file is opened with ``O_NONBLOCK`` and
  checked again with ``fstat``, so a path swapped for a FIFO in between cannot block either;
- a file larger than the loader's cap is refused from its size, and the bytes are read in
  bounded chunks that stop one byte past the cap (a file in ``/proc`` reports size 0), so
  memory stays bounded whatever the file says about itself.

Errors are built by the caller's ``error(problem)``, where ``problem`` is a phrase such as
``"is a FIFO (named pipe), not a regular file; give the path of a trace file"`` that the
caller puts after the path, so each loader keeps its own error class.

>>> import tempfile
>>> read_regular(tempfile.mkdtemp(), limit=10, what="script", error=InvalidArgument)
Traceback (most recent call last):
  ...
agentic_machines.errors.InvalidArgument: is a directory, not a regular file; give the path of a script file
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Generator, Iterator
from typing import IO, Any

from .errors import InvalidArgument
from .verdict import short_repr

__all__ = [
    "read_regular",
    "read_lines",
    "check_regular",
    "open_output",
    "open_output_fd",
    "describe_size",
    "SMALLER",
    "brief",
    "excerpt",
    "CHUNK",
]

CHUNK = 1 << 20
"""Bytes read at a time (1 MiB): what a loader holds beyond the text it has parsed."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

Error = Callable[[str], Exception]


def describe_size(limit: int) -> str:
    """``limit`` in words, as error messages state a cap.

    >>> describe_size(64 * 1024 * 1024), describe_size(1000)
    ('64 MiB', '1000 bytes')
    """
    return f"{limit >> 20} MiB" if limit >= 1 << 20 and limit % (1 << 20) == 0 else f"{limit} bytes"


def _not_regular(mode: int, what: str) -> str | None:
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return f"is {kind}, not a regular file; give the path of a {what} file"


SMALLER = "give a smaller one (split it, or cut what it holds)"
"""What a message about a file over its cap advises by default."""


def _too_large(limit: int, what: str, advice: str) -> str:
    return f"is larger than {describe_size(limit)}, the limit for a {what} file; {advice}"


def check_regular(
    path: str | os.PathLike, *, limit: int, what: str, error: Error, advice: str = SMALLER
) -> int:
    """Check that ``path`` is a regular file of at most ``limit`` bytes; return its size.

    For files that another reader opens (a Python file the import system runs):
    ``os.stat`` follows symbolic links, so a link to a FIFO or a loop of links is refused.

    >>> check_regular("/dev/null", limit=10, what="Python", error=InvalidArgument)
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: is a character device, not a regular file; give the path of a Python file
    """
    try:
        info = os.stat(path)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise error(_cannot(exc)) from None
    problem = _not_regular(info.st_mode, what)
    if problem is not None:
        raise error(problem)
    if info.st_size > limit:
        raise error(_too_large(limit, what, advice))
    return info.st_size


def _cannot(exc: BaseException) -> str:
    reason = getattr(exc, "strerror", None) or str(exc)
    return f"cannot read it: {reason}; check the path"


def _chunks(
    path: str | os.PathLike, limit: int, what: str, error: Error, advice: str
) -> Iterator[bytes]:
    check_regular(path, limit=limit, what=what, error=error, advice=advice)
    try:
        # O_NONBLOCK: if the path became a FIFO since the stat, open returns at once
        # (and fstat below refuses it); it changes nothing for a regular file.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError) as exc:
        raise error(_cannot(exc)) from None
    with os.fdopen(fd, "rb", buffering=0) as fh:
        try:
            info = os.fstat(fd)
            problem = _not_regular(info.st_mode, what)
            if problem is not None:
                raise error(problem)
            total = 0
            while chunk := fh.read(CHUNK):
                total += len(chunk)
                if total > limit:  # the file grew, or (/proc) its size said 0
                    raise error(_too_large(limit, what, advice))
                yield chunk
        except OSError as exc:
            raise error(_cannot(exc)) from None


def read_regular(
    path: str | os.PathLike, *, limit: int, what: str, error: Error, advice: str = SMALLER
) -> bytes:
    """The bytes of the regular file ``path``, refused past ``limit`` bytes.

    ``what`` names the kind of file in messages (``"script"``: "give the path of a script
    file"); ``error(problem)`` builds the exception raised for a path that is missing or
    unreadable, is not a regular file, or holds more than ``limit`` bytes (that message
    ends with ``advice``, which says what to do).

    >>> read_regular("/dev/zero", limit=10, what="script", error=InvalidArgument)
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: is a character device, not a regular file; give the path of a script file
    """
    return b"".join(_chunks(path, limit, what, error, advice))


def read_lines(
    path: str | os.PathLike, *, limit: int, what: str, error: Error, advice: str = SMALLER
) -> Generator[tuple[bytes, bool], None, None]:
    r"""The lines of the regular file ``path`` as ``(bytes, terminated)``, read in chunks.

    Each line comes without its ``\n``; ``terminated`` is False only for a last line with
    no newline after it (an empty one is not yielded). Only one chunk and one line are held
    at a time, so a caller that parses as it goes holds little more than what it keeps.
    Refusals as for :func:`read_regular`.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "f"); _ = open(p, "wb").write(b"a\nb")
    >>> list(read_lines(p, limit=10, what="trace", error=InvalidArgument))
    [(b'a', True), (b'b', False)]
    """
    pending: list[bytes] = []  # pieces of a line that spans chunks, joined once at its end
    for chunk in _chunks(path, limit, what, error, advice):
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            line = chunk[start:end]
            if pending:
                pending.append(line)
                line, pending = b"".join(pending), []
            yield line, True
            start = end + 1
        if start < len(chunk):
            pending.append(chunk[start:])
    if pending:
        yield b"".join(pending), False


def open_output(path: str | os.PathLike, mode: str = "w") -> IO[Any]:
    """Open ``path`` to write (``mode`` ``"w"``, ``"a"``, ``"wb"`` or ``"ab"``; text is UTF-8),
    never blocking: a FIFO with no reader is refused at once instead of waiting for one
    (:func:`open_output_fd`, wrapped in a file object).

    >>> open_output("/dev/null").close()
    >>> import os, tempfile
    >>> fifo = os.path.join(tempfile.mkdtemp(), "fifo"); os.mkfifo(fifo)
    >>> open_output(fifo)
    Traceback (most recent call last):
      ...
    OSError: [Errno 6] a FIFO with no reader: start its reader first, or give a regular file: '...fifo'
    """
    if mode not in ("w", "a", "wb", "ab"):
        raise InvalidArgument(f"mode must be 'w', 'a', 'wb' or 'ab', got {mode!r}")
    fd = open_output_fd(path, append=mode.startswith("a"))
    return os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8")


def open_output_fd(path: str | os.PathLike, *, append: bool = False) -> int:
    """A descriptor open to write ``path`` (truncated, or appended to with ``append=True``),
    for a writer that makes its own ``os.write`` calls and needs no file object (the trace
    writer: a file object's ``fstat``, ``isatty`` and flush on close cost as much as a
    hundred lines' writes). Never blocking, as :func:`open_output`.

    The file is opened with ``O_NONBLOCK``, which makes ``open`` of a FIFO without a reader
    fail with ``ENXIO`` (a FIFO with a reader, ``/dev/null`` or a regular file open as
    usual), then switched back to blocking writes. Errors are ``OSError`` naming the path.

    >>> fd = open_output_fd("/dev/null"); os.write(fd, b"x"), os.close(fd)
    (1, None)
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    flags |= os.O_APPEND if append else os.O_TRUNC
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(
                errno.ENXIO,
                "a FIFO with no reader: start its reader first, or give a regular file",
                os.fspath(path),
            ) from None
        raise
    try:
        os.set_blocking(fd, True)
    except BaseException:  # never leak the descriptor
        os.close(fd)
        raise
    return fd


def brief(value: Any, width: int = 60) -> str:
    r"""A short, escaped excerpt of a value read from a file, for error messages:
    :func:`~agentic_machines.verdict.short_repr` at ``width`` characters.

    >>> brief("x" * 100, 10), brief("a\x1b[31m\x00")
    ("'xxxxxxxx…", "'a\\x1b[31m\\x00'")
    """
    return short_repr(value, width)


def excerpt(text: str, width: int = 120) -> str:
    r"""``text`` for an error message: cut to ``width`` characters, with every character a
    terminal would act on (control characters, escapes, bidirectional marks) written as
    its Python escape, so a file's content never reaches the screen as it is.

    >>> print(excerpt("ok\x1b[2J" + "z" * 200, 12))
    ok\x1b[2Jzz…
    """
    escaped = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:width])
    fits = len(escaped) <= width and len(text) <= width
    return escaped if fits else escaped[: width - 1] + "…"
