"""Confinement on this host: whom the worker runs as, the tools found on PATH, what
``strongest`` does when it is weaker than ``namespace``, and ``agentic-machines doctor``.

The attacks themselves are in tests/attack_suite.py (run at every level, as root and not).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import uuid
import warnings
from pathlib import Path

import pytest
from _helpers import tool_works

from agentic_machines.cli.commands import main
from agentic_machines.errors import InvalidArgument, IsolationFallback
from agentic_machines.execution import confine, sandbox
from agentic_machines.execution.codeexec import drive
from agentic_machines.execution.sandbox import Limits, ProcessRunner, Scaffold, namespace_tool

LEVELS = [("process", None)] + [
    ("namespace", tool) for tool in ("bwrap", "unshare") if tool_works(tool)
]


def _worker_uids(ex: ProcessRunner) -> set[tuple[int, int]]:
    """(real, effective) uids of the worker processes of ``ex``, read from the host's /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            status = (entry / "status").read_text()
        except OSError:
            continue
        # the worker's interpreter, not the unshare wrapper that waits for it (its argv
        # holds the worker's command line)
        program = os.path.basename(cmdline.split(b"\0")[0])
        if b"agentic_machines.execution.worker" in cmdline and program != b"unshare":
            uid = next(line for line in status.splitlines() if line.startswith("Uid:"))
            real, effective = uid.split()[1:3]
            if _descends(int(entry.name), ex._proc.pid):
                found.add((int(real), int(effective)))
    return found


def _descends(pid: int, ancestor: int) -> bool:
    for _ in range(64):
        if pid == ancestor:
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
    return False


@pytest.mark.parametrize(("level", "tool"), LEVELS)
def test_the_worker_never_runs_as_the_hosts_uid_0(level, tool):
    ex = ProcessRunner(level, Limits(timeout_s=30), tool=tool)
    seen: list[set] = []
    ex.namespace("main", Scaffold(effects=("act",)), {"act": lambda: seen.append(_worker_uids(ex))})
    try:
        result = drive(ex.run_block("main", "act()"), str)
    finally:
        ex.close()
    assert result.status == "ok" and seen and seen[0], result.stderr
    if os.geteuid() == 0:
        assert all(real != 0 and effective != 0 for real, effective in seen[0]), seen
        assert all(uid in confine.WORKER_UIDS for uid, _ in seen[0]), seen
    else:
        assert seen[0] == {(os.getuid(), os.geteuid())}


@pytest.mark.skipif(not tool_works("bwrap"), reason="bubblewrap does not work here")
def test_bwrap_is_found_wherever_path_has_it(tmp_path, monkeypatch):
    # the worker starts with an empty environment: the tool is named by its full path
    (tmp_path / "bwrap").symlink_to(shutil.which("bwrap"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(confine, "_TOOLS", {})
    assert confine.tool_path("bwrap") == str(tmp_path / "bwrap")
    assert namespace_tool() == "bwrap"


def test_strongest_weaker_than_namespace_warns_or_raises_as_the_setting_says(monkeypatch):
    monkeypatch.setattr(sandbox, "namespace_tool", lambda: None)
    monkeypatch.delenv("AGENTIC_MACHINES_STRONGEST", raising=False)
    with pytest.warns(IsolationFallback, match="only 'process' here"):
        assert sandbox.resolve_isolation("strongest") == "process"
    monkeypatch.setenv("AGENTIC_MACHINES_STRONGEST", "require")
    with pytest.raises(InvalidArgument, match="AGENTIC_MACHINES_STRONGEST=require"):
        sandbox.resolve_isolation("strongest")
    monkeypatch.setenv("AGENTIC_MACHINES_STRONGEST", "sometimes")
    with pytest.raises(InvalidArgument, match="'warn' or 'require'"):
        sandbox.resolve_isolation("strongest")


def test_strongest_is_silent_when_it_is_the_namespace_level(monkeypatch):
    monkeypatch.setattr(sandbox, "namespace_tool", lambda: "bwrap")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sandbox.resolve_isolation("strongest") == "namespace"


def test_doctor_prints_one_table_and_says_what_is_missing(monkeypatch, capsys, tmp_path):
    code = main(["doctor"])
    out = capsys.readouterr().out
    for row in (
        "running as",
        "bwrap found and working",
        "unshare found and working",
        "seccomp filter",
        "control group",
        "level namespace",
        "strongest here:",
    ):
        assert row in out
    assert code == (0 if namespace_tool() else 1)
    # a machine where neither tool is on PATH: told what is missing, exit 1
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(confine, "_TOOLS", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IsolationFallback)
        code = main(["doctor"])
    out = capsys.readouterr().out
    assert code == 1
    assert "strongest here: process" in out
    assert "bubblewrap (bwrap is not installed (not found on PATH)): apt-get install" in out


_READS_ENVIRONMENT = (
    "```repl\nimport operator\n"
    "w = [c for c in operator.methodcaller('__subclasses__')(object) "
    "if c.__name__ == '_wrap_close'][0]\n"
    "os_ = operator.attrgetter('__init__.__globals__')(w)\n"
    "print('ENV', sorted(os_['environ']), 'UID', os_['getuid']())\n```"
)


@pytest.mark.parametrize("verb", ["explore", "test", "diagram", "check", "view"])
def test_every_verb_runs_completions_code_isolated_unless_asked_inline(
    verb, capsys, monkeypatch, tmp_path
):
    monkeypatch.setenv("AM_CANARY_API_KEY", "sk-canary-cli")
    args = {
        "explore": ["explore", "rlm", "-c", _READS_ENVIRONMENT, "--depth", "1", "--json"],
        "test": ["test", "rlm", "-p", "never_raises", "-c", _READS_ENVIRONMENT, "--depth", "1"],
        "diagram": ["diagram", "rlm", "-c", _READS_ENVIRONMENT, "--depth", "1", "--format", "json"],
        "check": ["check", "rlm"],
        "view": [
            "view",
            "rlm",
            "-c",
            _READS_ENVIRONMENT,
            "--depth",
            "1",
            "-o",
            str(tmp_path / "v.html"),
        ],
    }[verb]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IsolationFallback)
        main(args)
    out, err = capsys.readouterr()
    level = "namespace" if namespace_tool() else "process"
    assert f"isolation: {level}" in err
    if verb in ("explore", "diagram"):  # the block's output is in the next prompt
        assert "ENV" in out and "AM_CANARY_API_KEY" not in out
    main([*args, "--isolation", "inline"])
    out, err = capsys.readouterr()
    assert "isolation: inline (the completions' code runs in this process, unsandboxed)" in err


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_bwrap_starts_a_worker_with_and_without_its_launchers_bounded_tmpfs():
    # with: the launcher mounts the tmpfs with an inode bound (worker._stage); without:
    # bwrap's own --tmpfs (no inode bound), what a host that cannot stage falls back to
    if confine.probe("bwrap") is not None:
        pytest.skip("bubblewrap does not start a worker here")
    assert confine._probe_once("bwrap", stage=True) is None
    assert confine._probe_once("bwrap", stage=False) is None


def test_a_host_where_the_launcher_cannot_stage_uses_bwraps_tmpfs_and_says_so(monkeypatch):
    said = "a user namespace for the launcher failed"
    monkeypatch.setattr(confine, "_probe_once", lambda tool, stage: said if stage else None)
    monkeypatch.setattr(confine, "_UNSTAGED", [])
    with pytest.warns(IsolationFallback, match="bounded only by a control group"):
        assert confine.probe("bwrap") is None
    assert confine._UNSTAGED == [said]
    argv = confine.confined_argv("bwrap", "/tmp/am-scratch-x", ["python"], uid=None)
    assert "--stage" not in argv and argv.count("--tmpfs") >= 3
    monkeypatch.setattr(confine, "_UNSTAGED", [])
    argv = confine.confined_argv("bwrap", "/tmp/am-scratch-x", ["python"], uid=None)
    assert "--stage" in argv and "/tmp/am-scratch-x/work" in argv


_FILES = (
    "import operator, json\n"
    "w = [c for c in operator.methodcaller('__subclasses__')(object) "
    "if c.__name__ == '_wrap_close'][0]\n"
    "os_ = operator.attrgetter('__init__.__globals__')(w)\n"
    "def count(make):\n"
    "    n = 0\n"
    "    try:\n"
    "        while n < 20000:\n"
    "            make(n)\n"
    "            n += 1\n"
    "    except Exception as exc:\n"
    "        return [n, getattr(exc, 'errno', None)]\n"
    "    return [n, None]\n"
    "flags = os_['O_WRONLY'] | os_['O_CREAT']\n"
    "held = []\n"
    "opened = count(lambda n: held.append(os_['open']('open-%d' % n, flags)))\n"
    "for f in held:\n"
    "    os_['close'](f)\n"
    "def empty(where):\n"
    "    name = '%s/am-empty-TOKEN-%d'\n"
    "    return count(lambda n: os_['close'](os_['open'](name % (where, n), flags)))\n"
    "fd = os_['open']('big', flags)\n"
    "big = count(lambda n: os_['write'](fd, b'x' * (3 * 1024 * 1024)))\n"
    "made = [empty(w) for w in ('.', '/tmp', '/dev/shm')]\n"
    "print(json.dumps([opened, made, big, os_['stat']('big').st_size]))\n"
)


def _inodes_bounded(level: str) -> bool:
    # docs/threat_model.md: the namespace level's tmpfs mounts bound inodes; the process
    # level only on a root host that may make a mount namespace (its worker owns no file
    # there); as an ordinary user the worker may create files wherever the user can
    if level == "namespace":
        return True
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode == 0


@pytest.mark.parametrize(("level", "tool"), LEVELS)
def test_a_block_is_bounded_in_open_files_file_size_and_where_the_os_allows_inodes(level, tool):
    # Issue 37, item 4: RLIMIT_NOFILE and RLIMIT_FSIZE at every level; the number of files
    # (inodes) by private tmpfs mounts of memory_mb / 4 and one inode per 4 kB each.
    token = uuid.uuid4().hex[:8]
    limits = Limits(timeout_s=60, memory_mb=64, open_files=32, file_size_mb=1)
    ex = ProcessRunner(level, limits, tool=tool)
    try:
        ex.namespace("m", Scaffold())
        block = _FILES.replace("TOKEN", token)
        result = drive(ex.run_block("m", block, line_budget=10**7), lambda prompt: "")
    finally:
        ex.close()
        leaked = [*Path("/tmp").glob(f"am-empty-{token}-*")]
        leaked += Path("/dev/shm").glob(f"am-empty-{token}-*")
        for path in leaked:
            path.unlink()
    assert result.status == "ok", result.stderr
    opened, made, big, size = json.loads(result.stdout)
    assert opened[1] == errno.EMFILE and opened[0] < 32
    assert big == [1, errno.EFBIG] and size == 1024 * 1024  # one short write, then refused
    if _inodes_bounded(level):  # 16 MB per mount: 4,096 inodes
        assert all(n <= 4096 and code == errno.ENOSPC for n, code in made), made
        assert not leaked
    else:
        assert made[0] == [20000, None], made
