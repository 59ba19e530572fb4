"""The gallery: every picture is legible (no label overlaps another or leaves the figure),
the committed Mermaid files are what the code draws, and docs/gallery.md shows them all.

The whole gallery is drawn once for this module and shared by its tests.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentic_machines.drawing.gallery import PICTURES, Picture, draw_gallery, write_gallery
from agentic_machines.drawing.geometry import (
    hidden_arrowheads,
    labels_far_from_edges,
    labels_on_other_edges,
)
from agentic_machines.drawing.labels import label_clashes
from agentic_machines.errors import InvalidArgument

ROOT = Path(__file__).resolve().parent.parent
GALLERY = ROOT / "docs" / "gallery"


@pytest.fixture(scope="module")
def pictures() -> list[Picture]:
    drawn = draw_gallery()
    yield drawn
    for p in drawn:
        p.figure.clear()


def test_the_gallery_draws_every_group(pictures) -> None:
    stems = [p.stem for p in pictures]
    assert len(stems) == len(set(stems))
    assert {"f2-mul", "embedding", "fan-spe", "fan-react", "react", "repl-plan-tree"} <= set(stems)


def test_no_label_overlaps_another_or_leaves_the_figure(pictures) -> None:
    problems = {p.stem: label_clashes(p.figure) for p in pictures}
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}


def test_no_arrowhead_is_hidden_under_a_node_or_ring(pictures) -> None:
    # measured on the drawn patches: every head's corners lie outside every node outline
    problems = {p.stem: hidden_arrowheads(p.figure) for p in pictures}
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}


def test_no_edge_label_sits_on_another_edge(pictures) -> None:
    # measured on the drawn paths: no other edge runs through an edge label (a label on
    # a crossing does not say which edge it names: react, spe and spell had such labels)
    problems = {p.stem: labels_on_other_edges(p.figure) for p in pictures}
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}


def test_every_edge_label_lies_near_its_own_edge(pictures) -> None:
    # within a label's height of its own edge's drawn line (spell's "2 completions (c3)"
    # was 6.8 heights away: clear of everything, and unclear which edge it named)
    problems = {p.stem: labels_far_from_edges(p.figure) for p in pictures}
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}


def test_every_picture_fits_a_16_9_slide_1920_pixels_wide(pictures) -> None:
    # the PNG as the gallery saves it (120 dpi, cropped to what is drawn), not scaled
    import io
    import struct

    sizes = {}
    for p in pictures:
        buf = io.BytesIO()
        p.figure.savefig(buf, format="png", bbox_inches="tight", dpi=120)
        width, height = struct.unpack(">II", buf.getvalue()[16:24])  # the IHDR chunk
        sizes[p.stem] = (width, height)
    assert {k: v for k, v in sizes.items() if v[0] > 1920 or v[1] > 1080} == {}
    assert sizes["thread-depth3"][0] > 1000  # the deep graph uses the slide, not a corner


def test_long_completions_move_to_the_legend_table_whole(pictures) -> None:
    fan = next(p for p in pictures if p.stem == "fan-spe")
    texts = "\n".join(t.get_text() for t in fan.figure.texts)
    flat = re.sub(r"\n +", " ", texts)  # the table wraps long lines
    # a whole loader program of the fan, not its first dozen characters
    assert '"(string-append "Dear " (llm "name?"))"' in flat
    assert "same prompt as s1" in flat  # two successors with prompt "a": a hint why
    react = next(p for p in pictures if p.stem == "fan-react")
    table = "\n".join(t.get_text() for t in react.figure.texts)
    assert "prompt = s0's + " in table  # each successor's prompt as its difference


def test_the_embedding_shows_the_map_and_a_commuting_square(pictures) -> None:
    fig = next(p for p in pictures if p.stem == "embedding").figure
    arrows = [a for a in fig.artists if type(a).__name__ == "ConnectionPatch"]
    assert len(arrows) == 2  # q -> a, and 1 -> 1
    assert max(a.get_linewidth() for a in arrows) >= 1.5 and arrows[0].get_alpha() == 1.0
    square = "\n".join(t.get_text() for t in fig.axes[2].texts)
    assert "✓ the square commutes" in square and "p′(q) = p(a) = 'continue?'" in square


def test_the_repl_tree_has_its_own_legend(pictures) -> None:
    fig = next(p for p in pictures if p.stem == "repl-plan-tree").figure
    entries = [t.get_text() for t in fig.legends[0].get_texts()]
    assert entries and not any(e in ("state", "successor") for e in entries)
    assert any("REPL" in e for e in entries)


def test_the_committed_mermaid_files_are_what_the_code_draws(pictures) -> None:
    for p in pictures:
        for name, text in p.mermaid.items():
            assert text.startswith("flowchart")
            committed = (GALLERY / name).read_text(encoding="utf-8")
            assert committed == text + "\n", (
                f"docs/gallery/{name} is stale; run python experiments/gallery.py"
            )
        assert (GALLERY / f"{p.stem}.png").exists(), "run python experiments/gallery.py"


def test_a_reduced_gallery_writes_png_and_mermaid(tmp_path: Path) -> None:
    paths = write_gallery(tmp_path, only=["repl_plan"])
    assert [p.name for p in paths] == ["repl-plan-tree.png", "repl-plan-tree.mmd"]
    assert paths[0].read_bytes()[:4] == b"\x89PNG"


def test_unknown_picture_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="choose from"):
        write_gallery(tmp_path, only=["nope"])


def test_gallery_page_embeds_every_picture(pictures) -> None:
    page = (ROOT / "docs" / "gallery.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\((gallery/[^)]+)\)", page)
    for rel in images:
        assert (ROOT / "docs" / rel).exists(), (
            f"{rel} is missing; run python experiments/gallery.py"
        )
    for p in pictures:
        assert f"gallery/{p.stem}.png" in images, f"docs/gallery.md does not show {p.stem}.png"
    for group in PICTURES:
        assert group in page, f"docs/gallery.md does not mention the {group!r} pictures"


def test_the_cli_gallery_command_writes_the_pictures(tmp_path: Path, monkeypatch, capsys) -> None:
    from agentic_machines.cli.commands import main
    from agentic_machines.drawing import gallery

    monkeypatch.setattr(gallery, "PICTURES", {"repl_plan": gallery.PICTURES["repl_plan"]})
    assert main(["gallery", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "repl-plan-tree.png").exists()
    assert "wrote 2 files" in capsys.readouterr().out
