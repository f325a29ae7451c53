"""``ndcglab list measures|losses|presets|experiments [--format json]``.

Lists what exists, read from the registries (nothing is hard-coded here): every measure with its
one-line description and options (each option's default under the standard preset), every loss
with its summary and parameters (default and what is allowed), every measure preset with its
conventions, usual measure set, tool options and the tool version it was verified against
(the conformance suite), every experiment of ndcglab reproduce with the claim it tests.
With --format json: one object {"kind": ..., "items": [{"name", "description", "parameters",
...}]}.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import NdcglabError
from ._common import emit
from ._help import plain

__all__ = ["KINDS", "add_parser", "list_items", "run"]

#: what ``ndcglab list`` can list
KINDS = ("measures", "losses", "presets", "experiments")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "list",
        help="list the measures, losses, presets or experiments, with their parameters",
        description=plain(__doc__.split("\n\n")[1]) if __doc__ else None,
    )
    p.add_argument("kind", choices=KINDS, help="what to list")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="output format: a readable table (text) or one JSON object (json)",
    )
    p.set_defaults(func=run)
    return p


def _measures() -> list[dict[str, Any]]:
    from ..measures.presets import get_preset
    from ..measures.registry import REGISTRY

    standard = get_preset("standard")
    out = []
    for info in REGISTRY.values():
        params = {}
        for key in info.params:
            fixed = info.fixed.get(key) if info.fixed else None
            if fixed is None:
                try:
                    fixed = standard.default(info.name, key)
                except NdcglabError:  # an option without a preset default (e.g. a grade level)
                    fixed = None
            params[key] = fixed
        out.append(
            {
                "name": info.name,
                "description": info.doc,
                "parameters": params,
                "cutoff": info.cutoff,
                "aliases": list(info.aliases),
                "family": info.family,
                "formula": info.formula,
            }
        )
    return out


def _losses() -> list[dict[str, Any]]:
    from ..losses import available_losses, loss_class

    out = []
    for name in available_losses():
        cls = loss_class(name)
        out.append(
            {
                "name": name,
                "description": cls.summary,
                "parameters": {
                    p.name: {"default": p.default, "allowed": p.allowed, "doc": p.doc}
                    for p in cls.parameters
                },
                "cutoff": cls.cutoff_rule,
                "kind": cls.kind,
                "ndcg_consistent": cls.ndcg_consistent,
            }
        )
    return out


def _presets() -> list[dict[str, Any]]:
    from ..measures.presets import PRESETS, TOOL_OPTIONS

    return [
        {
            "name": p.name,
            "description": p.title,
            "parameters": {k: v for k, v in p.as_dict().items() if k not in ("preset", "verified")},
            "measures": list(p.measures),
            "verified": p.verified or None,
            "options": {k: v[0] for k, v in TOOL_OPTIONS.get(p.name, {}).items()},
        }
        for p in PRESETS.values()
    ]


def _experiments() -> list[dict[str, Any]]:
    import importlib

    from ..reproduce import EXPERIMENTS

    out = []
    for name, module in EXPERIMENTS.items():
        mod = importlib.import_module(f"ndcglab.reproduce.{module}")
        out.append(
            {
                "name": name,
                "description": str(getattr(mod, "TITLE", "")),
                "parameters": {
                    **(
                        {"data": "--data LETOR_DIR (default: embedded synthetic data)"}
                        if getattr(mod, "USES_DATA", True)
                        else {}
                    ),
                    "quick": "--quick (fewer epochs and repetitions)",
                },
                "claim": " ".join(str(getattr(mod, "CLAIM", "")).split()),
            }
        )
    return out


def list_items(kind: str) -> list[dict[str, Any]]:
    """The items ``ndcglab list KIND`` prints, each with ``name``, ``description`` (one line)
    and ``parameters`` (a dict), plus kind-specific fields."""
    return {
        "measures": _measures,
        "losses": _losses,
        "presets": _presets,
        "experiments": _experiments,
    }[kind]()


def _param_text(kind: str, params: dict[str, Any]) -> str:
    if kind == "losses":
        return ", ".join(f"{k}={v['default'] or '-'}" for k, v in params.items()) or "-"
    if kind == "experiments":
        return ", ".join(f"--{k}" for k in params)
    return ", ".join(f"{k}={'-' if v is None else v}" for k, v in params.items()) or "-"


def run(args: argparse.Namespace) -> int:
    items = list_items(args.kind)
    payload = {"kind": args.kind, "items": items}

    def text() -> str:
        head = {
            "measures": "options (default under preset standard)",
            "losses": "parameters (default)",
            "presets": "conventions",
            "experiments": "options",
        }[args.kind]
        note = {
            "measures": "write a measure as name(key=value,...)@cutoff, e.g. "
            "'ndcg(gain=linear,discount=power:0.5)@10'",
            "losses": "write a loss as name(key=value,...)@cutoff, e.g. "
            "'consistent_listnet(norm=z10)'",
            "presets": "use with --preset NAME",
            "experiments": "run with ndcglab reproduce NAME --out DIR (or all)",
        }[args.kind]
        width = max(len(it["name"]) for it in items) + 6
        lines = [f"{len(items)} {args.kind}; {note}", ""]
        for it in items:
            name = it["name"]
            if it.get("cutoff") not in (None, "none", "never"):
                name += "[@k]"
            lines.append(f"{name:<{width}}{it['description']}")
            lines.append(f"{'':<{width}}{head}: {_param_text(args.kind, it['parameters'])}")
            if args.kind == "presets":
                opts = "; ".join(f"{k} ({v})" for k, v in it["options"].items())
                if opts:
                    lines.append(f"{'':<{width}}tool options: {opts}")
                checked = it["verified"] or "not checked against the tool itself"
                lines.append(f"{'':<{width}}verified against: {checked}")
        return "\n".join(lines)

    emit(args, payload, text)
    return 0
