"""What this machine gives each isolation level: the table ``agentic-machines doctor`` prints.

Every row is found by trying, not by reading a version number: a namespace tool counts
when it starts a worker here with the worker's own start-up (as the runners use it),
the seccomp filter when the kernel reports seccomp and the filter exists for this
machine, the control group when one is made and removed. :func:`examine` gathers the
rows; :func:`render` prints them as one table, with what ``strongest`` is here and what
is missing for the namespace level (the strongest there is), and how to get it.

>>> report = examine()
>>> report.strongest in ("namespace", "process", None)
True
>>> "strongest" in render(report)
True
"""

from __future__ import annotations

import os
import platform
import sys
import warnings
from dataclasses import dataclass

from ..errors import IsolationFallback
from . import seccomp
from .cgroup import WorkerGroup, own_groups
from .confine import namespace_tool, probe, tool_path

__all__ = ["Row", "Report", "examine", "render"]


@dataclass(frozen=True)
class Row:
    """One line of the table: what was checked, what was found, which level needs it."""

    check: str
    found: str
    ok: bool
    needed_by: str


@dataclass(frozen=True)
class Report:
    """The rows, the level ``strongest`` gives here (None: no isolated level), and what is
    missing for the namespace level, each with how to get it."""

    rows: tuple[Row, ...]
    strongest: str | None
    tool: str | None
    missing: tuple[str, ...]


def examine() -> Report:
    """Try each thing a level needs on this machine (a few worker start-ups: seconds)."""
    rows = []
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    rows.append(
        Row(
            "running as",
            "root: workers run as unprivileged uids of their own" if root else f"uid {os.getuid()}",
            True,
            "-",
        )
    )
    linux = sys.platform == "linux"
    reasons: dict[str, str | None] = {}
    for tool, role in (("bwrap", "preferred"), ("unshare", "fallback")):
        where = tool_path(tool)
        reason = reasons[tool] = probe(tool)
        found = f"{where or 'not on PATH'}: " + ("starts a worker" if reason is None else reason)
        rows.append(
            Row(
                f"{tool} found and working",
                found,
                reasons[tool] is None,
                f"namespace ({role} tool)",
            )
        )
    userns = _user_namespaces(root)
    rows.append(userns)
    status = _status_field("Seccomp")
    prog = seccomp.program()
    filter_ok = linux and status is not None and prog is not None
    found = (
        f"kernel seccomp {'yes' if status is not None else 'no'}; "
        f"a filter for {platform.machine()}: {'yes' if prog is not None else 'no'}"
    )
    rows.append(Row("seccomp filter", found, filter_ok, "namespace; process (a second wall)"))
    group = _control_group()
    rows.append(group)
    with warnings.catch_warnings():  # the fallback's reason is a row of the table already
        warnings.simplefilter("ignore", IsolationFallback)
        chosen = namespace_tool() if linux else None
    strongest = "namespace" if chosen else ("process" if os.name == "posix" else None)
    rows.append(
        Row(
            "level process",
            "works" if os.name == "posix" else "needs POSIX",
            os.name == "posix",
            "-",
        )
    )
    rows.append(
        Row(
            "level namespace",
            f"works ({chosen})" if chosen else "does not work here",
            chosen is not None,
            "-",
        )
    )
    missing = []
    if reasons["bwrap"] is not None:
        missing.append(
            f"bubblewrap ({reasons['bwrap']}): apt-get install bubblewrap, dnf install "
            "bubblewrap or your system's package; any directory on PATH will do"
        )
    if not userns.ok and linux:
        missing.append(
            "user namespaces for this user: sysctl user.max_user_namespaces=15000 (and "
            "kernel.unprivileged_userns_clone=1 or kernel.apparmor_restrict_unprivileged_userns=0 "
            "where the system has them)"
        )
    if not filter_ok:
        missing.append("a kernel with seccomp (CONFIG_SECCOMP_FILTER) on x86-64 or AArch64")
    if not group.ok:
        missing.append(
            "a control group for memory_mb over all a worker holds: cgroup v2 with the memory "
            "and pids controllers delegated to this process's group, or cgroup v1 ones it may write"
        )
    return Report(tuple(rows), strongest, chosen, tuple(missing))


def render(report: Report) -> str:
    """The report as one table of plain text, then ``strongest`` and what is missing."""
    header = ("check", "here", "needed by")
    body = [(r.check, ("ok    " if r.ok else "NO    ") + r.found, r.needed_by) for r in report.rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(2)]
    lines = [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c}".rstrip() for a, b, c in [header, *body]]
    shown = f"namespace ({report.tool})" if report.strongest == "namespace" else report.strongest
    lines.append("")
    lines.append(f"strongest here: {shown or 'none (no isolated level on this system)'}")
    policy = os.environ.get("AGENTIC_MACHINES_STRONGEST", "warn")
    lines.append(
        f"when strongest is weaker than namespace: {policy} "
        "(AGENTIC_MACHINES_STRONGEST=warn or require)"
    )
    if report.missing:
        lines.append("missing for the strongest sandbox:")
        lines += [f"  - {m}" for m in report.missing]
    else:
        lines.append("missing for the strongest sandbox: nothing")
    return "\n".join(lines)


def _status_field(name: str) -> str | None:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _user_namespaces(root: bool) -> Row:
    values = []
    for path in (
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    ):
        try:
            with open(path, encoding="ascii") as f:
                values.append(f"{path.rsplit('/', 1)[1]} {f.read().strip()}")
        except OSError:
            continue
    allowed = not any(v in ("max_user_namespaces 0", "unprivileged_userns_clone 0") for v in values)
    allowed = allowed and "apparmor_restrict_unprivileged_userns 1" not in values
    found = ("allowed" if allowed else "refused") + (f" ({', '.join(values)})" if values else "")
    need = "namespace (bwrap always; unshare unless root)" if root else "namespace"
    return Row("user namespaces", found, allowed, need)


def _control_group() -> Row:
    own = own_groups()
    kind = "v1" if "memory" in own and "pids" in own else ("v2" if "" in own else "none")
    group = WorkerGroup.create(1 << 26, 8) if kind != "none" else None
    if group is not None:
        group.remove()
    found = f"cgroup {kind} memory and pids: " + (
        "a worker's group is made" if group else "no group can be made"
    )
    return Row("control group", found, group is not None, "memory_mb over all a worker holds")
