"""Machine targets: what every command that takes a machine accepts.

A *target* is one of

- a built-in name (a fixture such as ``f2-mul`` or an architecture such as ``react``);
- ``PATH.json`` or ``PATH.toml``, a machine file (:mod:`agentic_machines.machinefile`);
- ``PATH.lisp``, a CEK program: the agentic evaluator started at its first ``llm`` call;
- ``package.module:attribute`` or ``path/to/file.py:attribute`` naming an
  :class:`~agentic_machines.machine.AgenticMachine`, or an agent function ``fn(model)``
  that :func:`~agentic_machines.runtime.agent.agent_machine` turns into a machine;
- ``package.module:factory()`` or ``path/to/file.py:factory()``: a factory, called with
  no argument, that returns an ``AgenticMachine`` (a function, or an ``AgenticMachine``
  subclass). The ``()`` says "call it"; quote the target in a shell
  (``'lamp.py:build()'``). The attribute may be dotted (``module:Class.factory()``).

Which form a target is comes from how it is written, never from the object's
signature: without ``()`` a callable is an agent function, with ``()`` a factory.
A class without ``()``, or a machine with it, is refused with the form to write.

:func:`resolve_target` turns a target into a :class:`~agentic_machines.architectures.catalog.Entry`
(the machine, where to start, how to explore and what to highlight), so ``check``,
``diagram``, ``run``, ``explore``, ``export`` and later commands treat all of them
alike. A target that cannot be used raises
:class:`~agentic_machines.errors.InvalidMachineFile` (or ``UnknownMachine``) whose
message names the file and the key or line and says what to fix; the command line
prints it as one line and exits 2.

>>> entry = resolve_target("f2-mul")
>>> entry.kind, entry.name
('fixture', 'f2-mul')
>>> entry = resolve_target("agentic_machines.fixtures:f2_add()")
>>> entry.kind, entry.name, entry.machine().harness(1, "1")
('python', 'f2-add', 0)
>>> resolve_target("agentic_machines.fixtures:f2_ad")
Traceback (most recent call last):
  ...
agentic_machines.errors.InvalidMachineFile: agentic_machines.fixtures:f2_ad: module 'agentic_machines.fixtures' has no attribute 'f2_ad' (did you mean f2_add?); name one of its machines, agent functions or factories (written FACTORY())
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from .._files import check_regular
from ..architectures.catalog import Entry, names, resolve
from ..errors import InvalidMachine, InvalidMachineFile, UnknownMachine
from ..machine import AgenticMachine, is_sentinel, show_outcome
from ..runtime.agent import AgentMachine, agent_machine
from ._args import (
    MAX_INPUT_BYTES,
    TARGET_HELP,
    AgentOptions,
    process_state,
    restore_process_state,
)

__all__ = ["resolve_target", "TARGET_HELP", "load_object"]

FACTORY = "()"
"""The suffix that makes a Python target a factory call: ``module:build()``."""


def _program_entry(path: str) -> Entry:
    """The agentic evaluator X_SPE started at the first ``llm`` call of the program file."""
    from ..cek.evaluator import AgenticEvaluator, first_boundary  # loaded when asked
    from ..errors import AgenticMachinesError  # loaded when asked
    from ._args import read_input  # loaded when asked

    text = read_input(path, "program")
    try:
        start = first_boundary(text)
    except AgenticMachinesError as exc:
        raise InvalidMachineFile(f"{path}: {exc}", path=path) from None
    if is_sentinel(start):
        raise InvalidMachineFile(
            f"{path}: the program ends with {show_outcome(start)} before any llm call, so no "
            f"model is asked; give a program with (llm ...), or run it with eval {path}",
            path=path,
        )
    name = Path(path).stem or "program"
    return Entry(name, "program", lambda: AgenticEvaluator(initial=start), source=path)


def resolve_target(target: str, agent: AgentOptions | None = None) -> Entry:
    """The :class:`Entry` of ``target`` (see the module docstring for the forms).

    ``agent`` (a verb's ``--isolation``, ``--line-budget`` and ``--step-timeout``) builds
    an agent function's machine, and is set on an agent machine a target names or a
    factory returns; without it, :func:`agent_machine`'s defaults hold.

    >>> resolve_target("halt1").machine().initial
    0
    >>> resolve_target("no-such")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.UnknownMachine: unknown machine 'no-such'; ...
    """
    text = str(target)
    builtin = names()
    if text in builtin:
        return resolve(text)
    from ..machinefile import is_machine_file, load_machine  # loaded when the verb runs

    if is_machine_file(text):
        machine = load_machine(text)
        return Entry(machine.name, "file", lambda: machine, source=text)
    if text.endswith(".lisp"):
        return _program_entry(text)
    if ":" in text:
        call = text.endswith(FACTORY)
        obj, _ = load_object(text[: -len(FACTORY)] if call else text)
        host = process_state()
        machine = _call_factory(text, obj) if call else _machine_of(text, obj, agent)
        if agent is not None and isinstance(machine, AgentMachine):
            # a factory's inline machine started its agent here, which may have left the
            # streams or folder its own: they are the verb's again (apply runs it Watched)
            restore_process_state(host)
            machine = agent.apply(machine)
        return Entry(machine.name, "python", lambda: machine, source=text)
    if text.endswith(".py"):
        raise InvalidMachineFile(
            f"{text}: name the object too, as {text}:ATTRIBUTE (the machine or agent "
            f"function in that file) or '{text}:FACTORY()'",
            path=text,
        )
    close = difflib.get_close_matches(text, builtin, n=2, cutoff=0.6)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    raise UnknownMachine(
        f"unknown machine {text!r}{hint}; known machines: {', '.join(builtin)}; "
        "or give a file (PATH.json, PATH.toml) or module:attribute / file.py:attribute"
    )


def load_object(target: str) -> tuple[Any, str]:
    """Import the object a ``module:attribute`` or ``file.py:attribute`` target names.

    Returns the object and a description of where it came from (for messages).

    >>> obj, where = load_object("agentic_machines.fixtures:FIXTURES")
    >>> sorted(obj)[:2], where
    (['diverge1', 'f2-add'], 'agentic_machines.fixtures:FIXTURES')
    """
    module_part, _, attribute = target.rpartition(":")
    if not module_part or not attribute:
        raise InvalidMachineFile(
            f"{target}: a Python target is MODULE:ATTRIBUTE or FILE.py:ATTRIBUTE, with both parts",
            path=target,
        )
    if module_part.endswith(".py") or os.sep in module_part or "/" in module_part:
        module = _import_file(target, Path(module_part))
        label = module_part
    else:
        module = _import_module(target, module_part)
        label = f"module {module_part!r}"
    obj: Any = module
    walked = []
    for part in attribute.split("."):
        if not hasattr(obj, part):
            options = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, options, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            owner = label if not walked else f"{'.'.join(walked)!r}"
            raise InvalidMachineFile(
                f"{target}: {owner} has no attribute {part!r}{hint}; name one of its machines, "
                "agent functions or factories (written FACTORY())",
                path=module_part,
                key=attribute,
            )
        obj = getattr(obj, part)
        walked.append(part)
    return obj, target


def _import_module(target: str, name: str) -> Any:
    # The console script does not put the working folder on sys.path (python -m does);
    # `module:attribute` means a module importable from here, as for pytest or uvicorn.
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise InvalidMachineFile(
                f"{target}: cannot import module {name!r} ({exc}); check the spelling, run from "
                "the folder that holds it, or give a file path as FILE.py:ATTRIBUTE",
                path=name,
            ) from None
        raise _raised_while(target, name, "importing", exc) from None
    # SystemExit too: a sys.exit() in user code must not end the command with its status.
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - user code failed: say where
        raise _raised_while(target, name, "importing", exc) from None


def _import_file(target: str, path: Path) -> Any:

    if not path.exists() and not path.is_symlink():
        raise InvalidMachineFile(
            f"{target}: there is no file {str(path)!r}; check the path (relative to {os.getcwd()})",
            path=str(path),
        )

    def error(problem: str) -> InvalidMachineFile:
        return InvalidMachineFile(f"{target}: {path}: {problem}", path=str(path))

    # The import system opens the file itself: check it is a regular file first, so a
    # FIFO cannot block the import and a device cannot feed it forever.
    check_regular(path, limit=MAX_INPUT_BYTES, what="Python", error=error)
    resolved = path.resolve()
    # A name of its own per file: two files called agent.py must not shadow each other.
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
    name = f"_agentic_target_{resolved.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as `python file.py` does: the file may import its siblings
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise InvalidMachineFile(f"{target}: cannot load {path} as Python", path=str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise InvalidMachineFile(
            f"{target}: {path}, line {exc.lineno}: invalid Python ({exc.msg}); fix the syntax there",
            path=str(path),
            line=exc.lineno,
        ) from None
    # SystemExit too: a sys.exit() in user code must not end the command with its status.
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - user code failed: say where
        del sys.modules[name]
        raise _raised_while(target, str(path), "running", exc) from None
    return module


def _raised_while(target: str, where: str, doing: str, exc: BaseException) -> InvalidMachineFile:
    extra = _missing_extra(exc)
    if extra is not None:  # a framework an adapter drives is not installed: say which extra
        return InvalidMachineFile(f"{target}: {where} {extra}", path=where)
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "importlib" not in f.filename]
    place = f" at {own[-1].filename}, line {own[-1].lineno}" if own else ""
    return InvalidMachineFile(
        f"{target}: {doing} {where} raised {type(exc).__name__}: {exc}{place}; fix the code there",
        path=own[-1].filename if own else where,
        line=own[-1].lineno if own else None,
    )


def _machine_of(target: str, obj: Any, agent: AgentOptions | None) -> AgenticMachine:
    """The machine that ``obj`` is, or (an agent function) becomes: a target without ``()``."""
    if isinstance(obj, AgenticMachine):
        return obj
    if isinstance(obj, type):
        raise InvalidMachineFile(
            f"{target}: names the class {obj.__name__}; a class is a factory, so write "
            f"'{target}()' to call it (with no argument) and use the machine it returns",
            path=target,
        )
    if not callable(obj):
        raise _not_a_machine(target, obj)

    try:  # a callable named without () is an agent function fn(model), run to its first call
        return agent_machine(obj) if agent is None else agent.build(obj)
    except InvalidMachine as exc:
        name = getattr(obj, "__name__", "it")
        raise InvalidMachineFile(
            f"{target}: {exc}; if {name} is a factory that returns a machine, write "
            f"'{target}()' to call it",
            path=target,
        ) from None


def _call_factory(target: str, factory: Any) -> AgenticMachine:
    """The machine ``factory()`` returns: a target written with ``()``."""
    if isinstance(factory, AgenticMachine) or not callable(factory):
        what = "a machine" if isinstance(factory, AgenticMachine) else f"a {type(factory).__name__}"
        raise InvalidMachineFile(
            f"{target}: names {what}, which cannot be called; drop the () "
            f"('{target[: -len(FACTORY)]}') to use a machine, or name a factory that returns one",
            path=target,
        )
    try:
        built = factory()
    # SystemExit too: a sys.exit() in user code must not end the command with its status.
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - user code failed: say where
        raise _raised_while(
            target, getattr(factory, "__name__", "the factory"), "calling", exc
        ) from None
    if not isinstance(built, AgenticMachine):
        raise InvalidMachineFile(
            f"{target}: calling {getattr(factory, '__name__', 'it')}() returned a "
            f"{type(built).__name__}, not an AgenticMachine; return a machine (TableMachine, "
            "FunctionMachine, agent_machine(...), ...), or drop the () if it is an agent function",
            path=target,
        )
    return built


def _missing_extra(exc: BaseException) -> str | None:
    """The line naming the extra to install, when ``exc`` is a framework's missing import."""
    from ..adapters import missing_extra  # the adapters' table of frameworks and extras

    while isinstance(exc, ImportError):
        line = missing_extra(exc.name) if isinstance(exc, ModuleNotFoundError) else None
        if line is not None:
            return line
        if exc.__cause__ is None:
            return None
        exc = exc.__cause__
    return None


def _not_a_machine(target: str, obj: Any) -> InvalidMachineFile:
    return InvalidMachineFile(
        f"{target}: names a {type(obj).__name__}, not a machine; name an AgenticMachine or an "
        "agent function fn(model), or write 'MODULE:FACTORY()' to call a factory",
        path=target,
    )
