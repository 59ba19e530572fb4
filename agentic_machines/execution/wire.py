"""The data-only message format between the host and an isolated worker.

Messages are single lines of JSON. Python values that cross the boundary (the arguments
of ``act`` or ``llm_query``, a child REPL's arguments, an ``answer`` value) are encoded
as JSON with a few tagged forms for what JSON lacks: ``{"$tuple": [...]}``,
``{"$set": [...]}``, ``{"$frozenset": [...]}``, ``{"$dict": [[key, value], ...]}`` (a
dict whose keys are not all plain strings), ``{"$float": "nan"}`` and
``{"$bytes": "<base64>"}``. Anything else (an instance of a class the model defined, a
function, a generator) stays in the worker: it crosses as a *reference*
``{"$ref": n, "repr": "...", "type": "..."}``, which the host sees as a :class:`Remote`
and can send back, so a child's ``answer`` of any object reaches its caller unchanged.

Nothing is ever unpickled: decoding builds only ``None``, ``bool``, ``int``, ``float``,
``str``, ``bytes``, the containers above, :class:`Remote` on the host, and objects the
worker itself holds in its :class:`RefTable` on the worker side.

>>> decode(json.loads(json.dumps(encode((1, {2: "a"}, {"k": [1.5, None]})))))
(1, {2: 'a'}, {'k': [1.5, None]})
>>> r = decode({"$ref": 3, "repr": "<Point>", "type": "Point"})
>>> r, encode(r)
(<Point>, {'$ref': 3})
"""

from __future__ import annotations

import base64
import json
import math
import re
from typing import Any

__all__ = ["encode", "decode", "Remote", "RefTable", "dumps", "loads", "MAX_DEPTH"]

MAX_DEPTH = 100
"""Containers nested deeper than this cross as references (worker) or reprs (host)."""

_REPR_LIMIT = 2_000  # characters of a reference's repr sent to the host
_INT_BITS = 10_000  # larger ints cross as references (str(int) is limited to 4300 digits)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class Remote:
    """A value that lives in the worker, seen by the host: its reference, repr and type name.

    ``repr`` of a Remote is the worker's repr of the value (memory addresses left out),
    so prompts that show it read as they would in-process. It is immutable, so copying
    it (as the harness does with call arguments) returns it.

    >>> Remote(1, "Point(x=1)", "Point")
    Point(x=1)
    """

    __slots__ = ("ref", "text", "type_name")

    def __init__(self, ref: int, text: str, type_name: str) -> None:
        self.ref, self.text, self.type_name = ref, text, type_name

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Remote) and other.ref == self.ref

    def __hash__(self) -> int:
        return hash(("Remote", self.ref))

    def __copy__(self) -> Remote:
        return self

    def __deepcopy__(self, memo: dict) -> Remote:
        return self


class RefTable:
    """The worker's table of values sent to the host by reference.

    >>> t = RefTable()
    >>> obj = object()
    >>> n = t.add(obj)
    >>> t.get(n) is obj, t.add(obj) == n
    (True, True)
    """

    def __init__(self) -> None:
        self._values: dict[int, Any] = {}
        self._ids: dict[int, int] = {}  # id(value) -> ref, while the table keeps the value alive

    def add(self, value: Any) -> int:
        """The reference of ``value`` (a new one the first time it is sent)."""
        ref = self._ids.get(id(value))
        if ref is None:
            ref = len(self._values) + 1
            self._values[ref] = value
            self._ids[id(value)] = ref
        return ref

    def get(self, ref: int) -> Any:
        """The value behind ``ref``; a reference the worker never sent is a ``KeyError``."""
        return self._values[ref]


def _safe_text(fn: Any, value: Any) -> str:
    try:
        text = fn(value)
        if type(text) is not str:
            raise TypeError
    except BaseException:  # noqa: BLE001 - a model-defined __repr__ may raise anything
        text = f"<{type.__dict__['__name__'].__get__(type(value), type)}>"
    text = _ADDRESS.sub("", text)
    return text if len(text) <= _REPR_LIMIT else text[:_REPR_LIMIT] + "..."


def encode(value: Any, refs: RefTable | None = None, _depth: int = 0, _path: Any = None) -> Any:
    """A JSON-ready form of ``value``.

    With ``refs`` (the worker side) a value that is not plain data becomes a reference;
    without (the host side) a :class:`Remote` becomes its reference again and any other
    non-data value becomes ``{"$repr": ...}`` (it reaches model code as its repr text).

    >>> encode([1, (2, 3), {4}])
    [1, {'$tuple': [2, 3]}, {'$set': [4]}]
    """
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if issubclass(kind, str):
        return str.__str__(value)  # the text of a str subclass, without running its methods
    if kind is int:
        return value if value.bit_length() <= _INT_BITS else _opaque(value, refs)
    if kind is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if kind is bytes:
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if kind is Remote:
        return {"$ref": value.ref}
    if kind in (list, tuple, set, frozenset, dict):
        path = set() if _path is None else _path
        if _depth >= MAX_DEPTH or id(value) in path:
            return _opaque(value, refs)
        path.add(id(value))
        try:
            if kind is dict:
                items = list(dict.items(value))
                if all(type(k) is str and not k.startswith("$") for k, _ in items):
                    return {k: encode(v, refs, _depth + 1, path) for k, v in items}
                return {
                    "$dict": [
                        [encode(k, refs, _depth + 1, path), encode(v, refs, _depth + 1, path)]
                        for k, v in items
                    ]
                }
            members = [encode(v, refs, _depth + 1, path) for v in kind.__iter__(value)]
        finally:
            path.discard(id(value))
        if kind is list:
            return members
        return {f"${kind.__name__}": members}
    return _opaque(value, refs)


def _opaque(value: Any, refs: RefTable | None) -> Any:
    if refs is None:
        return {"$repr": _safe_text(repr, value)}
    type_name = type.__dict__["__name__"].__get__(type(value), type)
    return {"$ref": refs.add(value), "repr": _safe_text(repr, value), "type": type_name}


def decode(data: Any, refs: RefTable | None = None, _depth: int = 0) -> Any:
    """The Python value of an encoded form (``refs``: the worker's table, to resolve references).

    >>> decode({"$frozenset": [1]}), decode({"$float": "inf"}), decode({"$bytes": "aGk="})
    (frozenset({1}), inf, b'hi')
    """
    if _depth > MAX_DEPTH + 2:
        raise ValueError("an encoded value is nested too deeply")
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list:
        return [decode(v, refs, _depth + 1) for v in data]
    if kind is not dict:
        raise ValueError(f"not an encoded value: {kind.__name__}")
    if len(data) >= 1 and next(iter(data)).startswith("$"):
        tag = next(iter(data))
        body = data[tag]
        if tag == "$tuple":
            return tuple(decode(v, refs, _depth + 1) for v in _list(body))
        if tag == "$set":
            return {decode(v, refs, _depth + 1) for v in _list(body)}
        if tag == "$frozenset":
            return frozenset(decode(v, refs, _depth + 1) for v in _list(body))
        if tag == "$dict":
            return {
                decode(k, refs, _depth + 1): decode(v, refs, _depth + 1)
                for k, v in (_pair(p) for p in _list(body))
            }
        if tag == "$float" and body in ("nan", "inf", "-inf"):
            return float(body)
        if tag == "$bytes" and type(body) is str:
            return base64.b64decode(body.encode("ascii"), validate=True)
        if tag == "$repr" and type(body) is str:
            return body
        if tag == "$ref" and type(body) is int:
            if refs is not None:
                return refs.get(body)
            text, type_name = data.get("repr", ""), data.get("type", "")
            if type(text) is not str or type(type_name) is not str:
                raise ValueError("a reference's repr and type must be strings")
            return Remote(body, text, type_name)
        raise ValueError(f"unknown encoded form {tag!r}")
    return {k: decode(v, refs, _depth + 1) for k, v in data.items()}


def _list(body: Any) -> list:
    if type(body) is not list:
        raise ValueError("an encoded container must hold a list")
    return body


def _pair(p: Any) -> tuple[Any, Any]:
    if type(p) is not list or len(p) != 2:
        raise ValueError("an encoded dict item must be a [key, value] pair")
    return p[0], p[1]


def dumps(message: dict) -> bytes:
    """One message as a line of ASCII JSON.

    >>> dumps({"op": "close"})
    b'{"op":"close"}\\n'
    """
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def _no_constant(name: str) -> Any:
    # json.loads accepts NaN, Infinity and -Infinity, which JSON does not have; a float
    # that is not finite crosses as {"$float": ...}, so a bare one is a forged message.
    raise ValueError(f"the non-finite number {name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)  # 1e999 parses to inf
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is not finite")
    return value


def loads(line: bytes) -> dict:
    """One message from a line; anything but a JSON object is a ``ValueError``.

    Non-finite numbers (``Infinity``, ``NaN``) and integers too long to convert are refused:
    both sides treat the other's messages as untrusted input.

    >>> loads(b'{"type": "ok"}')
    {'type': 'ok'}
    >>> loads(b'{"attempts": Infinity}')
    Traceback (most recent call last):
    ...
    ValueError: not a JSON message (the non-finite number Infinity is not JSON)
    """
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)
    except (UnicodeDecodeError, RecursionError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a JSON message ({type(exc).__name__})") from None
    except ValueError as exc:  # a non-finite constant, or an integer past the digit limit
        raise ValueError(f"not a JSON message ({exc})") from None
    if type(message) is not dict:
        raise ValueError("a message must be a JSON object")
    return message
