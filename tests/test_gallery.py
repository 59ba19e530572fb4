"""The gallery command writes its pictures, and docs/gallery.md embeds pictures that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentic_machines.drawing.gallery import PICTURES, write_gallery
from agentic_machines.errors import InvalidArgument

ROOT = Path(__file__).resolve().parent.parent


def test_a_reduced_gallery_writes_png_and_mermaid(tmp_path: Path) -> None:
    paths = write_gallery(tmp_path, only=["fixtures", "embedding"])
    names = {p.name for p in paths}
    assert {"f2-add.png", "f2-add.mmd", "f2-mul.png", "f2-const.png", "embedding.png"} <= names
    for p in paths:
        assert p.exists() and p.stat().st_size > 0
        if p.suffix == ".png":
            assert p.read_bytes()[:4] == b"\x89PNG"
        else:
            text = p.read_text(encoding="utf-8")
            assert text.startswith("flowchart")
            # the committed gallery is what the code draws now (else: python experiments/gallery.py)
            assert (ROOT / "docs" / "gallery" / p.name).read_text(encoding="utf-8") == text, (
                f"docs/gallery/{p.name} is stale; run python experiments/gallery.py"
            )


def test_unknown_picture_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="choose from"):
        write_gallery(tmp_path, only=["nope"])


def test_gallery_page_embeds_existing_pictures() -> None:
    page = (ROOT / "docs" / "gallery.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\((gallery/[^)]+)\)", page)
    assert images, "docs/gallery.md should embed the pictures"
    for rel in images:
        assert (ROOT / "docs" / rel).exists(), (
            f"{rel} is missing; run python experiments/gallery.py"
        )
    for group in PICTURES:
        assert group in page, f"docs/gallery.md does not mention the {group!r} pictures"


def test_the_cli_gallery_command_writes_the_pictures(tmp_path: Path, monkeypatch, capsys) -> None:
    from agentic_machines.cli.commands import main
    from agentic_machines.drawing import gallery

    monkeypatch.setattr(
        gallery, "PICTURES", {"fixtures": gallery.PICTURES["fixtures"]}
    )  # keep the test quick
    assert main(["gallery", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "f2-mul.png").exists()
    assert "wrote 6 files" in capsys.readouterr().out
