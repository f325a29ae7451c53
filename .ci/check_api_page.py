"""Check that the API reference documents the whole public API, and nothing is left out silently.

The public API is what each public package or module of ``src/ndcglab`` lists in ``__all__``
(the command line, ``ndcglab.cli``, is documented in the README and the topic pages instead).
This script checks that ``docs/api.md`` has a ``::: ndcglab.X`` block for each of them and, given
the built site, that every name of every ``__all__`` has its entry (an HTML anchor) in the page.

    python .ci/check_api_page.py [SITE_DIR]      # SITE_DIR defaults to site/
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "src" / "ndcglab"
NOT_IN_REFERENCE = {"ndcglab.cli"}


def public_modules() -> dict[str, list[str]]:
    """``{dotted name: __all__}`` for the package, its public subpackages and public modules."""
    found: dict[str, list[str]] = {}
    paths = [PKG / "__init__.py"]
    paths += sorted(p / "__init__.py" for p in PKG.iterdir() if (p / "__init__.py").is_file())
    paths += sorted(p for p in PKG.glob("*.py") if p.name != "__init__.py")
    for path in paths:
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        name = ".".join(parts)
        if any(part.startswith("_") for part in parts) or name in NOT_IN_REFERENCE:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                found[name] = list(ast.literal_eval(value))
    return found


def main(site: Path) -> int:
    modules = public_modules()
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = set(re.findall(r"^::: (\S+)", page, flags=re.M))
    problems = [f"docs/api.md has no '::: {m}' block" for m in modules if m not in blocks]
    html_file = site / "api" / "index.html"
    if html_file.is_file():
        ids = set(re.findall(r'id="(ndcglab[\w.]*)"', html_file.read_text(encoding="utf-8")))
        for module, names in modules.items():
            for name in names:
                if name.startswith("__"):
                    continue
                # documented where it is exported, or (top level, shadowed by a submodule) at the
                # path of the module that defines it
                scope = "ndcglab" if module == "ndcglab" else module
                if f"{module}.{name}" in ids or any(
                    i.startswith(scope + ".") and i.endswith("." + name) for i in ids
                ):
                    continue
                problems.append(f"{module}.{name} (in __all__) has no entry in {html_file}")
    else:
        problems.append(f"{html_file} not found: build the site first (mkdocs build --strict)")
    for problem in problems:
        print(f"api-reference: {problem}", file=sys.stderr)
    count = sum(len(v) for v in modules.values())
    if not problems:
        print(f"api-reference: {len(modules)} public modules, {count} public names, all documented")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "site"))
