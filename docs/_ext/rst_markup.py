"""Griffe extension for the API reference: read ndcglab's reST-flavoured docstrings as Markdown.

The docstrings are written for ``help()`` and Sphinx-style readers: roles such as
``:func:`parse_measure``` or ``:class:`~ndcglab.data.RankingDataset```, ``>>>`` examples and
``text::`` literal blocks. mkdocstrings renders docstrings as Markdown, where these would show as
raw text, so once the package is loaded this extension rewrites every docstring:

* a role becomes a code span linked to the object's entry in the reference when the name resolves
  in the docstring's scope (an *optional* cross-reference: a name that has no entry, such as
  ``lightgbm.train``, stays plain code and raises no warning); ``~`` keeps only the last part;
* a run of ``>>>`` lines (with their ``...`` continuations and output) becomes a ``pycon`` block;
* ``text::`` followed by an indented block becomes ``text:`` and a fenced literal block;
* an attribute without a docstring takes its ``#:`` comment (the Sphinx convention) as one.

It also gives each package the ``__all__`` names it loads lazily (through a module
``__getattr__``), which static analysis cannot see, so the reference lists every public name.
Nothing in the source changes; ``mkdocs.yml`` loads this file through the python handler's
``extensions`` option.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(func|class|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")


def _resolve(obj: griffe.Object | griffe.Alias, name: str) -> str | None:
    """Full path of ``name`` seen from ``obj`` (its members, then its parents'), or None."""
    head, _, rest = name.partition(".")
    if head == "ndcglab":
        return name
    try:
        base = obj.resolve(head)
    except (griffe.NameResolutionError, griffe.AliasResolutionError, KeyError, ValueError):
        return None
    return f"{base}.{rest}" if rest else base


def _roles(text: str, obj: griffe.Object | griffe.Alias) -> str:
    def sub(match: re.Match[str]) -> str:
        kind, tilde, target = match.group(1), match.group(2), match.group(3).strip()
        target = target.rstrip("()")
        shown = target.rsplit(".", 1)[-1] if tilde else target
        if kind in ("func", "meth"):
            shown += "()"
        code = f"<code>{html.escape(shown)}</code>"
        path = _resolve(obj, target)
        if path is None:
            return code
        return f'<autoref identifier="{html.escape(path)}" optional>{code}</autoref>'

    return _ROLE.sub(sub, text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blocks(text: str) -> str:
    """Fence ``>>>`` examples and ``::`` literal blocks."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(">>>"):
            pad = " " * _indent(line)
            out.append(f"{pad}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{pad}```")
            continue
        if stripped.endswith("::") and not stripped.startswith((">>>", "```")):
            base = _indent(line)
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and _indent(lines[j]) > base:
                head = line.rstrip()[:-2].rstrip()
                if head.strip():
                    out.append(head + ":")
                out.append("")
                block_indent = _indent(lines[j])
                pad = " " * base
                out.append(f"{pad}```text")
                k = j
                while k < len(lines) and (
                    not lines[k].strip() or _indent(lines[k]) >= block_indent
                ):
                    out.append(pad + lines[k][block_indent:])
                    k += 1
                while out and not out[-1].strip():
                    out.pop()
                out.append(f"{pad}```")
                out.append("")
                i = k
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _doc_comment(obj: griffe.Object) -> str | None:
    """The ``#:`` comment above an attribute (or after it on its line), as Sphinx reads it."""
    if not isinstance(obj.filepath, Path) or obj.lineno is None:
        return None
    collection = obj.lines_collection
    lines = collection[obj.filepath] if obj.filepath in collection else []
    if obj.lineno > len(lines):
        return None
    own = lines[obj.lineno - 1]
    if "#:" in own:
        return own.split("#:", 1)[1].strip() or None
    found: list[str] = []
    i = obj.lineno - 2
    while i >= 0 and lines[i].strip().startswith("#:"):
        found.insert(0, lines[i].strip()[2:].strip())
        i -= 1
    return "\n".join(found) or None


def _walk(obj: griffe.Object, seen: set[str]) -> None:
    if obj.path in seen:
        return
    seen.add(obj.path)
    if obj.docstring is None and obj.is_attribute:
        text = _doc_comment(obj)
        if text:
            obj.docstring = griffe.Docstring(text, parent=obj)
    if obj.docstring is not None:
        obj.docstring.value = _roles(_blocks(obj.docstring.value), obj)
    for member in obj.members.values():
        if not member.is_alias:
            _walk(member, seen)  # type: ignore[arg-type]


def _definitions(obj: griffe.Object, found: dict[str, list[griffe.Object]]) -> None:
    """Every class, function and attribute defined at the top of a module, by name."""
    for member in obj.members.values():
        if member.is_alias:
            continue
        if member.is_module:
            _definitions(member, found)  # type: ignore[arg-type]
        elif obj.is_module:
            found.setdefault(member.name, []).append(member)  # type: ignore[arg-type]


def _lazy_exports(obj: griffe.Module, found: dict[str, list[griffe.Object]]) -> None:
    """Give a package the names of its ``__all__`` that it loads lazily (a module ``__getattr__``).

    Static analysis sees no member for such a name; it becomes an alias of the one object of that
    name defined in the package (or, failing that, anywhere in ndcglab). A name with no single
    definition is reported, so that the build fails rather than leave it out of the reference.
    """
    for member in list(obj.members.values()):
        if not member.is_alias and member.is_module:
            _lazy_exports(member, found)  # type: ignore[arg-type]
    if not obj.exports:
        return
    for export in obj.exports:
        name = export if isinstance(export, str) else getattr(export, "name", str(export))
        if name in obj.members:
            continue
        every = found.get(name, [])
        inside = [d for d in every if d.path.startswith(obj.path + ".")]
        choice = inside if len(inside) == 1 else every
        if len(choice) != 1:
            griffe.logger.warning(
                f"{obj.path}.__all__ lists {name!r}, which has "
                f"{'no' if not choice else 'more than one'} definition to document"
            )
            continue
        obj.set_member(name, griffe.Alias(name, choice[0], parent=obj))


class RstMarkup(griffe.Extension):
    """Rewrite the docstrings of a loaded package and resolve its lazy exports."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _walk(pkg, set())
        found: dict[str, list[griffe.Object]] = {}
        _definitions(pkg, found)
        _lazy_exports(pkg, found)
