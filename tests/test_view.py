"""The interactive graph view in a real browser: Playwright driving Debian's Chromium.

One browser for the module; the page is the docs' support agent (docs/examples) at depth
3 with the counterexample ``test -p never_raises --save`` found. It loads without a console
error, a click on a state shows its prompt with the part added to its parent's marked,
search finds a state, the counterexample's path is highlighted, a subtree collapses. The
10,000-state page is marked slow; it prints its load time (measured, never asserted).

``AGENTIC_MACHINES_VIEW_SHOTS=DIR`` keeps the screenshots in DIR (docs/images/ has them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from agentic_machines.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
AGENT = str(ROOT / "docs" / "examples" / "support_agent.py") + ":support"
ALPHABET = ["order 42", "order 7", "refund 42", "escalate", "answer It is on its way.", "dance"]
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="needs the docs extra (playwright)"
    )
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium on this machine: apt-get install chromium")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=ARGS)
        yield b
        b.close()


def _open(browser, page_path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 850})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_path.as_uri())
    page.wait_for_function("window.amView && window.amView.ready")
    return page, errors


def _shot(page, tmp_path: Path, name: str) -> None:
    keep = os.environ.get("AGENTIC_MACHINES_VIEW_SHOTS")
    page.screenshot(path=str(Path(keep) / name if keep else tmp_path / name))


@pytest.fixture(scope="module")
def support_page(tmp_path_factory):
    """The support agent's page, made before the browser starts (the agent's runs start
    and stop worker processes of their own)."""
    tmp = tmp_path_factory.mktemp("view")
    alphabet = [a for c in ALPHABET for a in ("-c", c)]
    cx, html = tmp / "cx.jsonl", tmp / "support.html"
    test = ["test", AGENT, "-p", "never_raises", "--depth", "3", *alphabet, "--save", str(cx)]
    assert main(test) == 1  # order 7 raises KeyError
    view = ["view", AGENT, "--depth", "3", *alphabet, "-o", str(html), "--counterexample", str(cx)]
    assert main(view) == 0
    return html


def test_the_counterexample_heading_counts_the_trace_steps(support_page):
    assert "(cx.jsonl: 1 of 1 step in this graph)" in support_page.read_text(encoding="utf-8")


def test_the_support_agent_view_in_chromium(support_page, browser, tmp_path):
    html = support_page
    text = html.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text and "<script src" not in text

    page, errors = _open(browser, html)
    _shot(page, tmp_path, "view-whole.png")  # opens on the counterexample, highlighted
    assert page.evaluate("amView.pathIds()") == ["s0", "RAISED"]
    assert "counterexample" in page.locator("#counterexample").inner_text()
    assert "raised KeyError: '7'" in page.locator("#details").inner_text()

    page.evaluate("amView.focus('s1')")  # then a real click where s1 is drawn
    x, y = page.evaluate("amView.screenPos('s1')")
    page.mouse.click(x, y)
    assert page.evaluate("amView.selected()") == "s1"
    assert page.locator("#prompt mark").inner_text().startswith("Action: order 42\nObservation")
    assert page.locator("#prompt").inner_text().startswith("You are a support agent.")
    details = page.locator("#details").inner_text()
    assert "raised KeyError" in details and "path from the start" in details
    _shot(page, tmp_path, "view-click.png")

    page.fill("#search", "refund of order 42 started")
    found = page.locator("#results").inner_text()
    # every state whose run took a refund: s2 (the refund itself) and those below one
    assert found.startswith("11 states: s2 s4 s5 s6 "), found
    page.fill("#search", "⟨order 42⟩")  # s1's label only: a count of one is singular
    assert page.locator("#results").inner_text() == "1 state: s1"

    # Grouped by prompt, each line shows the prompt as view_data cut it (where it differs
    # from its parent's and siblings'), the cut marked; each group is one state.
    data = json.loads(text.split("window.AM_DATA = ", 1)[1].split(";</script>", 1)[0])
    page.select_option("#groupby", "prompt")
    lines = page.locator("#groups li").all_inner_texts()
    shown = sorted(n["short"] for n in data["nodes"] if n["kind"] == "state")
    assert sorted(line.removeprefix("1 state: ") for line in lines) == shown, lines
    assert (
        "…Thursday⏎Action: refund 42⏎Observation: refund of order 42 started⏎Next action:" in shown
    )

    page.click("#collapse")  # s1's subtree
    assert page.evaluate("amView.hidden()") > 0
    assert errors == []


@pytest.mark.slow
def test_ten_thousand_states_load(browser, tmp_path):
    from agentic_machines import FunctionMachine
    from agentic_machines.drawing.interactive import write_html
    from agentic_machines.runtime.explore import explore

    digits = [str(d) for d in range(10)]
    m = FunctionMachine(
        lambda s: f"Steps so far: {' '.join(s)}\nNext digit?",
        lambda s, c: s + c if len(s) < 4 else s,
        completions=digits,
        initial="",
        name="digits",
    )
    graph = explore(m, max_states=11_111)
    started = time.perf_counter()
    html = write_html(graph, tmp_path / "big.html", title="10,000 states")
    written = time.perf_counter() - started
    started = time.perf_counter()
    page, errors = _open(browser, html)
    loaded = time.perf_counter() - started
    assert page.evaluate("amView.nodes") >= 10_000 and errors == []
    page.fill("#search", "Steps so far: 9 9 9")
    assert page.locator("#results").inner_text().startswith("11 states: ")
    print(
        f"\n10,000-state view: {page.evaluate('amView.nodes')} nodes, {html.stat().st_size:,} bytes, "
        f"written in {written:.1f} s, loaded in {loaded:.2f} s "
        f"(the page's own script: {page.evaluate('amView.loadMs'):.0f} ms)"
    )
    _shot(page, tmp_path, "view-10000.png")


def test_the_group_list_shows_each_prompt_where_it_differs_with_the_cut_marked():
    # Sibling prompts that share a long preamble: the data the group list shows keeps the
    # end where they differ (one rule, _text.clip_prompt among parent and siblings), marks
    # the cut with an ellipsis and fits the width; a long attribute is cut the same way.
    from agentic_machines import FunctionMachine
    from agentic_machines.drawing.interactive import GROUP_TEXT, view_data
    from agentic_machines.runtime.explore import explore

    preamble = "You are a careful assistant; answer in one word. " * 4
    m = FunctionMachine(
        lambda s: preamble + "\nPicked: " + " then ".join(s) + "\nNext?",
        lambda s, c: s + (c,),
        completions=["apple", "banana", "cherry"],
        initial=(),
        name="picks",
    )
    graph = explore(m, max_depth=2)
    for n in graph:
        graph.nodes[n]["topic"] = preamble + " ".join(n)
    nodes = dict(zip(graph, view_data(graph)["nodes"]))  # the page keeps the graph's order
    apple, banana = nodes[("apple",)], nodes[("banana",)]
    assert apple["short"].startswith("…") and apple["short"].endswith("Picked: apple⏎Next?")
    assert banana["short"].endswith("Picked: banana⏎Next?")
    assert nodes[("apple", "cherry")]["short"].endswith("Picked: apple then cherry⏎Next?")
    assert all(len(n["short"]) <= GROUP_TEXT for n in nodes.values())
    assert nodes[()]["short"].startswith("You are a careful") and nodes[()]["short"][-1] == "…"
    assert nodes[("apple", "banana")]["keys_short"]["topic"].endswith("apple banana")
    assert nodes[("apple", "banana")]["keys"]["topic"] == preamble + "apple banana"  # kept whole


def test_the_page_counts_nodes_and_edges_in_the_singular_for_one():
    from agentic_machines.drawing.interactive import graph_html
    from agentic_machines.fixtures import fixture
    from agentic_machines.runtime.explore import explore

    assert "2 nodes, 1 edge</div>" in graph_html(explore(fixture("halt1")))


def test_an_explored_graph_has_a_view_method_like_a_machine():
    # graph.view() (as machine.view()): the same page as view_data, with the marks passed on
    from agentic_machines.drawing.interactive import GraphView
    from agentic_machines.fixtures import fixture
    from agentic_machines.runtime.explore import explore

    m = fixture("f2-mul")
    g = explore(m, roots=m.states)
    v = g.view(title="f2-mul, both states", spe_states=[1])
    assert isinstance(v, GraphView) and v._repr_html_().startswith("<iframe")
    assert "f2-mul, both states" in v.html
    data = json.loads(v.html.split("window.AM_DATA = ", 1)[1].split(";</script>", 1)[0])
    assert [n["id"] for n in data["nodes"]] == ["s0", "s1"]
    assert g.view().html != v.html  # the marks and title reach the page


def test_serve_serves_the_written_page_on_localhost_until_ctrl_c(tmp_path):
    # --serve prints the URL, answers on 127.0.0.1 with the very page it wrote, and a
    # Ctrl-C (SIGINT) ends the command with exit 0 and the server closed.
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_machines", "view", "f2-mul", "-o", "v.html", "--serve"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a child keeps an ignored SIGINT (a test worker may ignore it), and Python then
        # installs no KeyboardInterrupt handler: the command starts as from a terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout.readline().startswith("wrote v.html: 2 states")
        served = proc.stdout.readline()
        url = re.fullmatch(
            r"serving (http://127\.0\.0\.1:(\d+)/v\.html) \(Ctrl-C stops\)\n", served
        )
        assert url, served
        with urllib.request.urlopen(url.group(1), timeout=60) as answer:
            assert answer.status == 200
            assert answer.read() == (tmp_path / "v.html").read_bytes()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        with pytest.raises(OSError):  # the port is closed with the command
            urllib.request.urlopen(url.group(1), timeout=10)
    finally:
        proc.kill()
        proc.wait()
