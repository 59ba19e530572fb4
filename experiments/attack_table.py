"""The attack-corpus table of docs/threat_model.md: what each isolation level lets through.

Run: ``python experiments/attack_table.py`` (a few minutes); ``--suite`` prints the table of
the attack suite (tests/attack_suite.py) instead, one column per level and namespace tool,
as docs/threat_model.md shows it; ``--write`` puts the table made by this run into
docs/threat_model.md, between its markers, instead of printing it (tests/test_attack_suite.py
and tests/test_attack_corpus.py fail when the page and the suites disagree). ``--unfiltered``
prints what the suite's single-block kernel, seccomp, userns and lingering attacks get
with no filter and no namespace (which layer holds each; docs/threat_model.md). Every block of
``tests/attack_corpus.py`` runs as the second block of a REPL-Plan episode:

- ``inline``: in a child Python process of its own (so the hangs, exits and module patches
  it causes hit that child, not this script), with a 2 GB address-space limit so that the
  memory bombs do not take the machine's memory; the child is stopped after 5 s;
- ``process`` and ``namespace``: through ``tests/test_attack_corpus.run_corpus``.

Each cell says how the block ended and what it did outside: ``file`` (a file appeared
outside the scratch directory), ``net`` (a connection reached the socket listening on
127.0.0.1), ``patched`` (the host's json, decimal or math changed), ``hung host``, ``host
exited``, ``env`` (the host's environment variables reached the prompt). The table is
printed as Markdown.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from attack_corpus import CORPUS  # noqa: E402
from test_attack_corpus import accepted, corpus_cases, listening_socket, run_corpus  # noqa: E402

from agentic_machines.execution.sandbox import namespace_tool  # noqa: E402

INLINE_SECONDS = 5.0

CHILD = r"""
import decimal, json, math, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))
sys.path.insert(0, sys.argv[1])
from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures.environments import CountEnv
blocks = {"main": ["act('1')", sys.argv[2], "act('2')\nanswer('done')"]}
res = rp.solve("t", rp.scripted_model(blocks), CountEnv(3), isolation="inline", line_budget=None)
history = res.repls["main"].history
block = history[2] if len(history) > 2 else None
patched = []
if json.dumps({"a": [1]}) != '{"a": [1]}' or json.loads('{"b": 1}') != {"b": 1}:
    patched.append("json")
if decimal.getcontext().prec != 28:
    patched.append("decimal")
if math.pi != 3.141592653589793 or math.sqrt(4.0) != 2.0:
    patched.append("math")
status = "no block" if block is None else block.status
error = "" if block is None else block.stderr.strip().splitlines()[-1:]
leaked = any("sk-canary" in b.stdout for b in history if hasattr(b, "stdout"))
# repr, not json: a block may have forged json.dumps; a file, not stdout: a process the block
# left running may hold stdout open
with open("result.txt", "w") as f:
    f.write(repr({"status": status, "error": error, "patched": patched, "env": leaked}))
"""


def inline_case(code: str, workdir: Path) -> str:
    canary = workdir / "canary"
    canary.mkdir(parents=True)
    token = uuid.uuid4().hex
    server = listening_socket()
    block = code.format(canary=canary, port=server.getsockname()[1], token=token)
    notes = []
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(ROOT), block],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=workdir,
        env={**os.environ, "AM_CANARY_API_KEY": "sk-canary-inline"},
        start_new_session=True,  # its own process group: what it forks is stopped with it
    )
    result_file = workdir / "result.txt"
    try:
        child.wait(timeout=INLINE_SECONDS)
    except subprocess.TimeoutExpired:
        notes.append(f"hung host (> {INLINE_SECONDS:g} s)")
    else:
        if not result_file.exists():
            notes.append(f"host exited ({child.returncode})")
        else:
            result = ast.literal_eval(result_file.read_text())
            error = result["error"][0].split(":")[0] if result["error"] else ""
            notes.append(result["status"] + (f" ({error})" if error else ""))
            if result["patched"]:
                notes.append("patched " + "/".join(result["patched"]))
            if result["env"]:
                notes.append("env")
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()
    if accepted(server):
        notes.append("net")
    outside = [Path(f"/tmp/am-corpus-{token}"), Path(f"/dev/shm/am-corpus-{token}")]
    if any(canary.iterdir()) or any(p.exists() for p in outside):
        notes.append("file")
        for p in outside:
            p.unlink(missing_ok=True)
    return ", ".join(notes)


def isolated_cells(level: str, workdir: Path) -> dict[str, str]:
    out = run_corpus(level, workdir, corpus_cases(archs=("repl_plan",)))
    cells = {}
    for (_, name, _), (outcome, _, problems, leaked, connections) in out["results"].items():
        notes = [outcome]
        if any("environment" in p for p in problems):
            notes.append("env")
        if leaked:
            notes.append("file")
        if connections:
            notes.append("net")
        cells[name] = ", ".join(notes)
    return cells


def suite_table() -> str:
    """The attack suite's table (docs/threat_model.md): every available level's column, as
    root and as an ordinary user (a root run drops to an unprivileged uid for those)."""
    from attack_suite import table
    from test_attack_suite import COLUMNS, available, column_results

    results = {c: column_results(c) for c in COLUMNS if available(c)}
    return table({c: r for c, r in results.items() if r is not None})


UNFILTERED_KINDS = ("kernel", "seccomp", "userns", "lingering")


def unfiltered_table() -> str:
    """What the single-block attacks of the classes :data:`UNFILTERED_KINDS` get from the
    kernel with no seccomp filter and no namespace: each block run by a plain Python (the
    restricted builtins' escape works there too), as an unprivileged uid when this runs as
    root (``setpriv``), each in a new directory; what they leave is removed. Which layer holds each
    attack in the suite's table: a call that succeeds here is held there by the filter."""
    import uuid

    from attack_suite import ATTACKS, render
    from test_attack_suite import _ipc_left, thread_name

    drop = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    lines = ["| attack | class | without the filter |", "|---|---|---|"]
    for attack in ATTACKS:
        if attack.kind not in UNFILTERED_KINDS or len(attack.blocks) != 1:
            continue
        token = uuid.uuid4().hex[:12]
        key = int(token[:7], 16) + 1
        code = render(
            attack.blocks[0],
            token=token,
            ipc_key=key,
            thread=thread_name(token),
            memory=128,
            max_output=4000,
            host=os.getpid(),
            victim=0,
            sock={},
        )
        argv = [*(drop if os.geteuid() == 0 else []), sys.executable, "-c", code]
        with tempfile.TemporaryDirectory() as folder:  # mount-tmpfs makes a directory
            os.chmod(folder, 0o777)
            done = subprocess.run(argv, capture_output=True, text=True, cwd=folder, timeout=60)
        said = (done.stdout.strip() or done.stderr.strip() or "(nothing)").splitlines()[-1]
        left = _ipc_left(token, key)
        shown = said[:100] + (f"; left {', '.join(left)} (removed)" if left else "")
        lines.append(f"| {attack.name} | {attack.kind} | {shown.replace('|', '/')} |")
    return "\n".join(lines)


DOC = ROOT / "docs" / "threat_model.md"
MARKERS = {"suite": "attack-suite table", "corpus": "attack-corpus table"}


def write_table(which: str, table: str, doc: Path = DOC) -> None:
    r"""Replace the table ``which`` (``suite`` or ``corpus``) of ``doc`` between its markers
    (``<!-- attack-suite table -->`` ... ``<!-- end attack-suite table -->``) by ``table``.

    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "t.md"
    >>> _ = page.write_text("a\n<!-- attack-suite table -->\nold\n<!-- end attack-suite table -->\nb\n")
    >>> write_table("suite", "| new |", page)
    >>> page.read_text()
    'a\n<!-- attack-suite table -->\n| new |\n<!-- end attack-suite table -->\nb\n'
    """
    start, end = f"<!-- {MARKERS[which]} -->", f"<!-- end {MARKERS[which]} -->"
    text = doc.read_text(encoding="utf-8")
    if text.count(start) != 1 or text.count(end) != 1:
        raise SystemExit(f"{doc} must hold {start} and {end} once each around the table")
    head, rest = text.split(start)
    tail = rest.split(end)[1]
    doc.write_text(f"{head}{start}\n{table}\n{end}{tail}", encoding="utf-8")


def corpus_table() -> str:
    """The attack corpus's table: a row per block, its outcome inline and at each level."""
    workdir = Path(tempfile.mkdtemp(prefix="am-attack-table-"))
    levels = ["process"] + (["namespace"] if namespace_tool() else [])
    isolated = {level: isolated_cells(level, workdir / level) for level in levels}
    lines = [
        "| block | kind | inline | " + " | ".join(levels) + " |",
        "|---|---|---|" + "---|" * len(levels),
    ]
    for name, kind, code in CORPUS:
        inline = inline_case(code, workdir / "inline" / name)
        cells = " | ".join(isolated[level][name] for level in levels)
        lines.append(f"| {name} | {kind} | {inline} | {cells} |")
        print(lines[-1], file=sys.stderr, flush=True)  # progress: a row every few seconds
    print(f"(workdir: {workdir}; namespace tool: {namespace_tool()})", file=sys.stderr)
    return "\n".join(lines)


def main() -> None:
    args = sys.argv[1:]
    if args == ["--unfiltered"]:
        print(unfiltered_table())
        return
    if set(args) - {"--suite", "--write"}:
        raise SystemExit(
            "usage: python experiments/attack_table.py [--suite] [--write] | --unfiltered"
        )
    which = "suite" if "--suite" in args else "corpus"
    table = suite_table() if which == "suite" else corpus_table()
    if "--write" in args:
        write_table(which, table)
        print(f"wrote the {MARKERS[which]} of {DOC.relative_to(ROOT)}")
    else:
        print(table)


if __name__ == "__main__":
    main()
