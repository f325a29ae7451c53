"""The README's Python blocks run as written when pasted, in order, into one script."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str) -> list[str]:
    """Every fenced ```python block of ``text``, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_python_blocks_are_found():
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    assert all(b.strip() for b in blocks)


def test_readme_python_blocks_run_in_order(tmp_path):
    script = "\n\n".join(python_blocks(README.read_text(encoding="utf-8")))
    (tmp_path / "readme.py").write_text(script, encoding="utf-8")
    res = subprocess.run(
        [sys.executable, "readme.py"], cwd=tmp_path, capture_output=True, text=True, timeout=900
    )
    assert res.returncode == 0, res.stderr[-3000:]
