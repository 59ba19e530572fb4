"""The documented public API equals ``__all__``, module by module.

``docs/design.md`` lists the public API under "## Public API": one ``### `module```
heading per public module, and under it bullets that start with the names in backticks,
then a colon and the reason. This test reads that list, so adding a public name means
adding it to ``__all__`` *and* saying why in the docs; a new public module needs only a
new heading (it is picked up automatically).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "design.md"

# Modules whose __all__ must be documented, whatever the page says (the page may add more).
REQUIRED = {
    "agentic_machines",
    "agentic_machines.models",
    "agentic_machines.cek",
    "agentic_machines.architectures",
}

BULLET_NAMES = re.compile(r"^((?:`[A-Za-z_]\w*`,?\s*)+):")


def documented_api(text: str) -> dict[str, list[str]]:
    """Module -> documented names, read from the "Public API" section of a design page.

    >>> documented_api("## Public API\\n### `m`\\n- `a`, `b`: why.\\n- `c`,\\n  `d`: why.\\n## Next")
    {'m': ['a', 'b', 'c', 'd']}
    """
    section = re.search(r"^## Public API\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "docs/design.md has no '## Public API' section"
    api: dict[str, list[str]] = {}
    module = None
    bullet: list[str] = []

    def flush() -> None:
        if module is not None and bullet:
            m = BULLET_NAMES.match(" ".join(bullet))
            if m:
                api[module] += re.findall(r"`(\w+)`", m.group(1))
        bullet.clear()

    for line in section.group(1).splitlines():
        heading = re.match(r"^### `([\w.]+)`\s*$", line)
        if heading:
            flush()
            module = heading.group(1)
            api[module] = []
        elif line.startswith("- "):
            flush()
            bullet.append(line[2:])
        elif line.startswith("  ") and bullet:
            bullet.append(line.strip())
        else:
            flush()
    flush()
    return api


API = documented_api(DESIGN.read_text(encoding="utf-8"))


def test_every_required_module_is_documented() -> None:
    assert REQUIRED <= set(API), f"add a '### `module`' heading for {sorted(REQUIRED - set(API))}"


@pytest.mark.parametrize("module_name", sorted(API))
def test_documented_api_equals_all(module_name: str) -> None:
    module = importlib.import_module(module_name)
    documented = API[module_name]
    assert len(documented) == len(set(documented)), f"a name is listed twice for {module_name}"
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{module_name}.__all__ lists a name twice"
    missing_in_docs = sorted(set(exported) - set(documented))
    missing_in_all = sorted(set(documented) - set(exported))
    assert not missing_in_docs and not missing_in_all, (
        f"{module_name}: in __all__ but not in docs/design.md: {missing_in_docs}; "
        f"in docs/design.md but not in __all__: {missing_in_all}"
    )


@pytest.mark.parametrize("module_name", sorted(API))
def test_every_public_name_is_importable(module_name: str) -> None:
    module = importlib.import_module(module_name)
    for name in module.__all__:
        assert getattr(module, name, None) is not None, f"{module_name}.{name}"
        exec(f"from {module_name} import {name}", {})
