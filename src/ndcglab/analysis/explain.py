"""Why two conventions give different means: a fair split of the difference over the options.

Two tools report "NDCG@10" for the same ranking and disagree. Each states a whole *convention*:
a preset (``lightgbm``, ``trec_eval``, ...) or a measure string
(``ndcg(gain=linear,ties=average)@10``). :func:`explain` resolves both, lists every option on
which they differ — the options of the measure after :meth:`Measure.resolve
<ndcglab.measures.Measure.resolve>` (gain, discount, ties, empty, short, rel, rounding, denom,
and any option the registry gains later), the cut-off, and the evaluation-level fields of the
presets (score precision, duplicated document ids, ...) — and splits the difference of the means
``total = mean(b) - mean(a)`` over them by **Shapley values**:

* ``v(S)`` is the mean under the *hybrid* convention that takes the options in ``S`` from ``b``
  and every other option from ``a``; all ``2^d`` hybrids of the ``d`` differing options are
  evaluated (``d <= max_options``, 10 by default: at most 1024 evaluations);
* option ``i`` gets ``phi_i = sum over S not holding i of |S|! (d-|S|-1)! / d! * (v(S+i) - v(S))``,
  its average effect over every order in which the options could be switched from ``a`` to ``b``.

The parts add up to ``v(all) - v(none) = total`` (up to float rounding, far below 1e-12), an
option alone in differing gets the whole difference, and an option that changes nothing gets 0.
The same split per query tells which queries move and why, e.g. "12 queries have no relevant
document: lightgbm scores them 1, trec_eval 0" — the part of the ``empty`` rule is exactly
(number of empty queries x difference of the rules) / Q when nothing else changes which queries
are empty.

Where a side is a preset, the measure compared is ``measure`` (default: the other side's
measure, else ``ndcg@10``); where a side is a measure string, its unset options come from
``preset`` (default: the other side's preset, else ``standard``, or ``trec_eval`` for TREC
qrels and runs). ``PRESET:MEASURE`` (e.g.
``trec_eval:ndcg@10``) names both. The two sides must compare the same measure (same name; the
cut-off may differ and is then one of the options).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from typing import Any

import numpy as np

from ..data.dataset import RankingDataset
from ..errors import ConventionError, SpecError
from ..measures import (
    Measure,
    Preset,
    evaluate_arrays,
    evaluate_trec,
    get_preset,
    parse_measure,
)
from ..measures.presets import PRESETS

__all__ = ["Convention", "Explanation", "OptionPart", "QueryMove", "explain", "parse_convention"]

#: fields of :class:`~ndcglab.measures.Preset` that name or describe it rather than change a
#: number (the measure options a preset sets are read from the resolved measure instead)
_DESCRIPTIVE_FIELDS = frozenset(
    {"name", "title", "defaults", "short_gain", "short_p", "measures", "notes", "verified"}
)
#: fields of :class:`~ndcglab.measures.Preset` that change no number of an explanation:
#: ``missing`` (trec_eval -c's rule for a query the run misses) acts only with ``-c``, and
#: explain evaluates the queries of both the run and the qrels
_NOT_EXPLAINED = frozenset({"missing"})
_DEFAULT_MEASURE = "ndcg@10"
_TOL = 1e-15


# ============================================================================== conventions
@dataclass(frozen=True)
class Convention:
    """One side of a comparison: a label (as given), a preset and the measure resolved under it.

    ``options`` maps every option to its value: the options of the resolved measure (where an
    option applies only to the other side's cut-off, this side's preset default), ``cutoff``, and
    the evaluation-level fields of the preset.
    ``measure_keys`` are the keys that belong to the measure, the rest to the preset.
    """

    label: str
    preset: Preset
    measure: Measure
    options: dict[str, Any]
    measure_keys: frozenset[str]

    @property
    def text_options(self) -> dict[str, str]:
        """``options`` as printable text."""
        return {k: _text(v) for k, v in self.options.items()}


def _text(v: Any) -> str:
    """An option's value as printed: ``none`` for None, ``yes``/``no`` for a flag (as the
    preset grammar writes them), else ``str``."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _preset_fields(p: Preset) -> dict[str, Any]:
    return {
        f.name: getattr(p, f.name)
        for f in dataclasses.fields(p)
        if f.name not in _DESCRIPTIVE_FIELDS and f.name not in _NOT_EXPLAINED
    }


def _is_preset(text: str) -> bool:
    """True when ``text`` starts with a preset's name (its options, if any, are checked when the
    preset is read, so a bad option is reported as such)."""
    name = re.match(r"\s*([A-Za-z0-9_\-]+)\s*(\(|$)", text)
    if name is None:
        return False
    try:
        get_preset(name.group(1))
    except SpecError:
        return False
    return True


def _split_colon(text: str) -> tuple[str, str] | None:
    """``PRESET:MEASURE`` at the first ``:`` outside parentheses, else None."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == ":" and depth == 0:
            return text[:i], text[i + 1 :]
    return None


def _split(spec: Any) -> tuple[Preset | None, Measure | None]:
    """``(preset, measure)`` named by one side; either may be missing."""
    if isinstance(spec, Preset):
        return spec, None
    if isinstance(spec, Measure):
        return None, spec
    if not isinstance(spec, str) or not spec.strip():
        raise SpecError(
            f"cannot read convention {spec!r}. Fix: a preset name ({', '.join(PRESETS)}), a "
            "measure string such as 'ndcg(gain=linear)@10', or PRESET:MEASURE"
        )
    text = spec.strip()
    parts = _split_colon(text)
    if parts is not None and _is_preset(parts[0]):
        return get_preset(parts[0]), parse_measure(parts[1])
    if _is_preset(text):
        return get_preset(text), None
    try:
        return None, parse_measure(text)
    except SpecError as exc:
        why = "no preset or measure has this name" if "unknown measure" in str(exc) else str(exc)
        raise SpecError(
            f"cannot read convention {text!r}: {why} (presets: {', '.join(PRESETS)}; measures: "
            "see docs/measures.md). Fix: e.g. lightgbm, trec_eval, 'ndcg(ties=average)@10' or "
            "trec_eval:ndcg@10"
        ) from None


def _side_options(preset: Preset, measure: Measure) -> tuple[dict[str, Any], frozenset[str]]:
    resolved = measure.resolve(preset)
    fixed = resolved.info.fixed
    opts: dict[str, Any] = {k: v for k, v in resolved.options.items() if k not in fixed}
    opts["cutoff"] = None if measure.cutoff is None else str(measure.cutoff)
    keys = frozenset(opts)
    for key, value in _preset_fields(preset).items():
        if key in keys:  # pragma: no cover - a preset field named like a measure option
            raise ConventionError(f"preset field {key!r} has the name of a measure option")
        opts[key] = value
    return opts, keys


def parse_convention(
    spec: Any, *, measure: Any = None, preset: Any = None, label: str | None = None
) -> Convention:
    """One side on its own: ``spec`` (preset, measure string, ``PRESET:MEASURE``, or a
    :class:`~ndcglab.measures.Preset` / :class:`~ndcglab.measures.Measure`); ``measure`` is the
    measure of a bare preset (default ``ndcg@10``), ``preset`` the preset of a bare measure
    (default ``standard``)."""
    p, m = _split(spec)
    if m is None:
        m = parse_measure(measure if measure is not None else _DEFAULT_MEASURE)
    if p is None:
        p = get_preset(preset)
    opts, keys = _side_options(p, m)
    return Convention(label or _label(spec), p, m.resolve(p), opts, keys)


def _label(spec: Any) -> str:
    if isinstance(spec, Preset):
        return spec.name
    return str(spec).strip()


def _pair(
    a: Any,
    b: Any,
    measure: Any,
    preset: Any,
    labels: tuple[str | None, str | None],
    default_preset: str = "standard",
) -> tuple[Convention, Convention]:
    pa, ma = _split(a)
    pb, mb = _split(b)
    if measure is not None:
        default_m = parse_measure(measure)
    else:  # the other side's measure without its options, else ndcg@10
        named = ma or mb
        default_m = (
            Measure.create(named.name, named.cutoff)
            if named is not None
            else parse_measure(_DEFAULT_MEASURE)
        )
    base = get_preset(preset) if preset is not None else (pa or pb or get_preset(default_preset))
    ca = parse_convention(pa or base, measure=ma or default_m, label=labels[0] or _label(a))
    cb = parse_convention(pb or base, measure=mb or default_m, label=labels[1] or _label(b))
    if ca.measure.name != cb.measure.name:
        raise ConventionError(
            f"explain compares one measure under two conventions, got {ca.measure.name} "
            f"({ca.label}) and {cb.measure.name} ({cb.label}). Fix: give the same measure on "
            "both sides, e.g. measure='ndcg@10' with two presets"
        ).naming("measure")
    # an option that applies to one side's cut-off only takes the other side's preset default
    ca, cb = _complete(ca, cb), _complete(cb, ca)
    if ca.label == cb.label:
        ca = dataclasses.replace(ca, label=f"{ca.label} (a)")
        cb = dataclasses.replace(cb, label=f"{cb.label} (b)")
    return ca, cb


def _complete(c: Convention, other: Convention) -> Convention:
    missing = [k for k in other.options if k not in c.options]
    if not missing:
        return c
    opts = dict(c.options)
    for k in missing:
        opts[k] = c.preset.default(c.measure.name, k)
    return dataclasses.replace(c, options=opts, measure_keys=c.measure_keys | set(missing))


def _hybrid(a: Convention, b: Convention, take_b: set[str]) -> tuple[Preset, Measure]:
    """The preset and measure with the options in ``take_b`` from ``b``, the rest from ``a``."""
    opts = {k: (b.options[k] if k in take_b else a.options[k]) for k in a.options}
    pfields = {k: v for k, v in opts.items() if k not in a.measure_keys}
    preset = dataclasses.replace(a.preset, **pfields)
    cutoff = opts["cutoff"]
    required = {k: opts[k] for k in a.measure.info.required}  # e.g. iprec's level
    shape = Measure.create(a.measure.name, cutoff, **required)
    applicable = shape.resolve(preset).options
    mopts = {
        k: opts[k] for k in applicable if k in opts and k != "cutoff" and k not in shape.info.fixed
    }
    return preset, Measure.create(a.measure.name, cutoff, **mopts)


# ============================================================================== results
@dataclass(frozen=True)
class OptionPart:
    """One differing option: its values under ``a`` and ``b``, its Shapley ``contribution`` to
    ``total``, the change when it ``alone`` is switched from ``a`` to ``b``, the number of
    ``queries`` whose value it moves in some hybrid, a sentence saying ``why``, and up to three
    ``examples``: the ids of the queries with the largest part of this option."""

    key: str
    a_value: str
    b_value: str
    contribution: float
    alone: float
    queries: int
    why: str
    examples: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        out = dataclasses.asdict(self)
        out["examples"] = list(self.examples)
        return out


@dataclass(frozen=True)
class QueryMove:
    """A query whose value changes: its values under ``a`` and ``b`` (NaN where skipped), the
    ``change`` b - a, the Shapley ``parts`` of the options that move it, and the ``reason`` (the
    option with the largest part, in words)."""

    query_id: str
    a_value: float
    b_value: float
    change: float
    parts: dict[str, float]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (NaN as None)."""
        return {
            "query_id": self.query_id,
            "a": _num(self.a_value),
            "b": _num(self.b_value),
            "change": _num(self.change),
            "parts": {k: _num(v) for k, v in self.parts.items()},
            "reason": self.reason,
        }


def _num(v: float) -> float | None:
    return None if v is None or not math.isfinite(v) else float(v)


@dataclass(frozen=True)
class Explanation:
    """The result of :func:`explain`.

    * ``a``, ``b``: the two :class:`Convention`; ``mean_a``, ``mean_b`` their means;
      ``total = mean_b - mean_a``;
    * ``options``: one :class:`OptionPart` per differing option, largest part first; their
      contributions add up to ``total``; ``contributions`` is the same as a dict;
    * ``same``: the options both conventions agree on;
    * ``queries``: the queries that move the most (:class:`QueryMove`), largest change first;
    * ``reasons``: one sentence per option that moves any query;
    * ``n_queries``, ``n_evaluations`` (``2^d``);
    * ``residual``: ``total`` minus what the options explain — 0 unless a convention differs in
      something that is not an option (then reported, never hidden).
    """

    a: Convention
    b: Convention
    mean_a: float
    mean_b: float
    options: tuple[OptionPart, ...]
    same: dict[str, str]
    queries: tuple[QueryMove, ...]
    reasons: tuple[str, ...]
    n_queries: int
    n_evaluations: int
    residual: float = 0.0
    query_ids: tuple[str, ...] = field(default_factory=tuple, repr=False)

    @property
    def total(self) -> float:
        """``mean_b - mean_a``."""
        return self.mean_b - self.mean_a

    @property
    def contributions(self) -> dict[str, float]:
        """Option -> its Shapley part of ``total``."""
        return {o.key: o.contribution for o in self.options}

    @property
    def measure(self) -> str:
        """The measure compared (``a``'s, as resolved)."""
        return str(self.a.measure)

    @property
    def measure_shape(self) -> str:
        """The measure's name with its cut-off when both sides share it (``ndcg@10``)."""
        ma, mb = self.a.measure, self.b.measure
        if ma.cutoff == mb.cutoff:
            return str(Measure.create(ma.name, ma.cutoff))
        return ma.name

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: measure, both conventions, means, total, contributions, options,
        same, reasons, queries."""
        return {
            "measure": self.measure_shape,
            "a": {
                "label": self.a.label,
                "preset": self.a.preset.name,
                "measure": str(self.a.measure),
                "mean": _num(self.mean_a),
                "options": self.a.text_options,
            },
            "b": {
                "label": self.b.label,
                "preset": self.b.preset.name,
                "measure": str(self.b.measure),
                "mean": _num(self.mean_b),
                "options": self.b.text_options,
            },
            "total": _num(self.total),
            "contributions": {k: _num(v) for k, v in self.contributions.items()},
            "residual": _num(self.residual),
            "options": [o.to_dict() for o in self.options],
            "same": dict(self.same),
            "reasons": list(self.reasons),
            "queries": [q.to_dict() for q in self.queries],
            "n_queries": self.n_queries,
            "n_evaluations": self.n_evaluations,
        }

    def text(self, digits: int = 4) -> str:
        """A readable report: the means, one row per option, the reasons, the top queries."""
        from .._tables import TextTable

        def table(header: list[str], rows: list[list[str]], align: str) -> str:
            text = TextTable(header, rows, align).to_text()
            return "\n".join(line.rstrip() for line in text.splitlines())

        fmt = f"+.{digits}f"
        la, lb = self.a.label, self.b.label
        out = [
            f"{self.measure_shape}: {la} {self.mean_a:.{digits}f} -> {lb} "
            f"{self.mean_b:.{digits}f} (difference {self.total:{fmt}} over {self.n_queries} "
            "queries)",
            f"  a = {la}: preset {self.a.preset.name}, {self.a.measure}",
            f"  b = {lb}: preset {self.b.preset.name}, {self.b.measure}",
            "",
        ]
        if not self.options:
            out.append("the two conventions agree on every option: nothing to explain")
        else:
            d = len(self.options)
            out.append(
                f"Shapley split over the {d} option{'s' if d != 1 else ''} that differ"
                f"{'' if d != 1 else 's'} "
                f"({self.n_evaluations} evaluations):"
            )
            rows: list[list[str]] = [
                [o.key, o.a_value, o.b_value, f"{o.contribution:{fmt}}", f"{o.alone:{fmt}}",
                 str(o.queries)]
                for o in self.options
            ]  # fmt: skip
            if self.residual != 0.0:
                rows.append(["(not an option)", "", "", f"{self.residual:{fmt}}", "", ""])
            rows.append(["total", "", "", f"{self.total:{fmt}}", "", ""])
            out.append(
                table(["option", la, lb, "contribution", "alone", "queries"], rows, "lllrrr")
            )
        if self.same:
            out.append("")
            out.append("same in both: " + ", ".join(f"{k}={v}" for k, v in self.same.items()))
        if self.reasons:
            out.append("")
            out.append("why:")
            out.extend(f"  {r}" for r in self.reasons)
        idle = [o.key for o in self.options if o.queries == 0]
        if idle:
            out.append(f"  no query changes with {', '.join(idle)} here")
        if self.queries:
            out.append("")
            out.append(f"queries that move the most (top {len(self.queries)}):")
            qrows = [
                [q.query_id, _fmt(q.a_value, digits), _fmt(q.b_value, digits),
                 _fmt(q.change, digits, signed=True), q.reason]
                for q in self.queries
            ]  # fmt: skip
            out.append(table(["query", la, lb, "change", "reason"], qrows, "lrrrl"))
        return "\n".join(out)

    def __str__(self) -> str:
        return self.text()

    def plot(
        self, path: str | PathLike[str] | None = None, *, ax: Any = None, dpi: int = 120
    ) -> Any:
        """A waterfall: the mean under ``a``, each option's part, the mean under ``b``.

        Draws on ``ax`` (a new figure when None); with ``path`` the figure is saved (PNG, PDF,
        SVG by suffix) and closed. Returns the axes."""
        from .._compat import pyplot

        plt = pyplot()
        parts = [(o.key, o.contribution) for o in self.options]
        if self.residual != 0.0:
            parts.append(("(not an option)", self.residual))
        names = [self.a.label, *[k for k, _ in parts], self.b.label]
        if ax is None:
            width = max(4.5, 1.0 + 0.9 * len(names))
            _, ax = plt.subplots(figsize=(width, 3.8))
        levels = [self.mean_a]
        for _, v in parts:
            levels.append(levels[-1] + v)
        lo_all = min([*levels, self.mean_b])
        hi_all = max([*levels, self.mean_b])
        span = max(hi_all - lo_all, 1e-6)
        floor = max(0.0, lo_all - 0.6 * span) if lo_all >= 0 else lo_all - 0.6 * span
        x = np.arange(len(names))
        ax.bar(x[0], self.mean_a - floor, bottom=floor, color="#7f7f7f")
        ax.bar(x[-1], self.mean_b - floor, bottom=floor, color="#7f7f7f")
        for i, (_, v) in enumerate(parts, start=1):
            start = levels[i - 1]
            ax.bar(x[i], v, bottom=start, color="#2ca02c" if v >= 0 else "#d62728")
            ax.plot([x[i - 1] - 0.4, x[i] + 0.4], [start, start], color="black", lw=0.6)
            ax.annotate(
                f"{v:+.4f}",
                (x[i], max(start, start + v)),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                fontsize="x-small",
            )
        last = len(names) - 1
        ax.plot([x[last - 1] - 0.4, x[last] + 0.4], [levels[-1], levels[-1]], color="black", lw=0.6)
        for i, v in ((0, self.mean_a), (last, self.mean_b)):
            ax.annotate(
                f"{v:.4f}", (x[i], v), xytext=(0, 2), textcoords="offset points", ha="center",
                fontsize="x-small",
            )  # fmt: skip
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize="small")
        ax.set_ylim(floor, hi_all + 0.25 * span)
        ax.set_ylabel(f"mean {self.measure_shape}", fontsize="small")
        ax.set_title(
            f"{self.a.label} -> {self.b.label}: {self.total:+.4f} ({self.n_queries} queries)",
            fontsize="small",
        )
        if path is not None:
            fig = ax.figure
            fig.tight_layout()
            from .._atomic import save_figure

            save_figure(fig, path, dpi=dpi)
            plt.close(fig)
        return ax


def _fmt(v: float, digits: int, *, signed: bool = False) -> str:
    if not math.isfinite(v):
        return "skipped"
    return f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"


# ============================================================================== reasons
_EMPTY_WORDS = {"zero": "0", "one": "1", "skip": "leaves them out", "error": "refuses them"}


def _why(key: str, va: str, vb: str, la: str, lb: str, n: int) -> str:
    """A sentence for ``n`` queries moved by option ``key`` (``va`` under ``la``, ``vb``
    under ``lb``)."""
    qs = f"{n} quer{'y' if n == 1 else 'ies'}"
    have = "has" if n == 1 else "have"
    them = "it" if n == 1 else "them"
    if key == "empty":
        wa = _EMPTY_WORDS.get(va, va).replace("them", them)
        wb = _EMPTY_WORDS.get(vb, vb).replace("them", them)
        sa = f"scores {them} {wa}" if va in ("zero", "one") else wa
        return f"{qs} {have} no relevant document: {la} {sa}, {lb} {wb}"
    texts = {
        "gain": f"{qs} with graded labels weigh the grades differently: gain {va} ({la}) vs {vb}"
        f" ({lb})",
        "discount": f"{qs} change with the position discount: {va} ({la}) vs {vb} ({lb})",
        "ties": f"{qs} {have} tied scores that are ordered differently: ties={va} ({la}) vs "
        f"ties={vb} ({lb})",
        "short": f"{qs} {have} fewer documents than the cut-off: short={va} ({la}) vs {vb} ({lb})",
        "cutoff": f"{qs} change with the cut-off: {va} ({la}) vs {vb} ({lb})",
        "rel": f"{qs} {have} labels that count as relevant under one rule only: rel={va} ({la}) "
        f"vs rel={vb} ({lb})",
        "rounding": f"{qs} change with the rounding of the fractional cut-off: {va} ({la}) vs "
        f"{vb} ({lb})",
        "denom": f"{qs} change with AP's denominator: denom={va} ({la}) vs {vb} ({lb})",
        "recall_cut": f"{qs} {have} a recall level whose number of relevant documents x R is "
        f"cut differently: recall_cut={va} ({la}) vs {vb} ({lb}) (trunc: floor(x R + 0.9), "
        "trec_eval 9; round: lround(x R), trec_eval 10)",
        "score_precision": f"{qs} {have} scores that differ only beyond single precision: "
        f"compared as {va} ({la}) vs {vb} ({lb})",
        "duplicates": f"{qs} {have} repeated document ids: duplicates={va} ({la}) vs {vb} ({lb})",
        "negative": f"{qs} {have} negative labels: negative={va} ({la}) vs {vb} ({lb})",
        "labels": f"{qs} {have} labels the tools read differently: labels={va} ({la}) vs {vb} "
        f"({lb})",
        "ignore_label": f"{qs} {have} documents one tool drops by their label: ignore_label={va} "
        f"({la}) vs {vb} ({lb})",
        "empty_when": f"{qs} {have} an ideal DCG at or below 0 (negative labels): empty_when={va}"
        f" ({la}) vs {vb} ({lb})",
        "judged_only": f"{qs} {have} unjudged documents in the ranking: judged_only={va} ({la}) "
        f"vs {vb} ({lb})",
        "depth": f"{qs} {have} {'a ranking' if n == 1 else 'rankings'} longer than the depth: "
        f"depth={va} ({la}) vs {vb} ({lb})",
    }
    change = "changes" if n == 1 else "change"
    return texts.get(key, f"{qs} {change} with {key}: {va} ({la}) vs {vb} ({lb})")


def _query_reason(key: str, va: str, vb: str, la: str, lb: str) -> str:
    if key == "empty":
        return f"no relevant document (empty={va} vs {vb})"
    short = {
        "gain": "graded labels",
        "ties": "tied scores",
        "short": "list shorter than k",
        "score_precision": "scores equal in single precision",
        "duplicates": "repeated document ids",
        "rel": "relevance threshold",
        "negative": "negative labels",
        "labels": "labels read differently",
        "ignore_label": "documents dropped by label",
        "empty_when": "ideal DCG <= 0",
        "judged_only": "unjudged documents",
        "depth": "ranking beyond the depth",
        "recall_cut": "recall level cut to relevant documents",
    }
    what = short.get(key, key)
    return f"{what} ({key}={va} vs {vb})"


# ============================================================================== the split
def _shapley(values: dict[int, np.ndarray], d: int) -> np.ndarray:
    """Shapley values ``(d, ...)`` of the game ``values[mask]`` (mask bit i = option i from b)."""
    full = (1 << d) - 1
    weight = [math.factorial(s) * math.factorial(d - s - 1) / math.factorial(d) for s in range(d)]
    shape = np.shape(values[0])
    out = np.zeros((d, *shape))
    for i in range(d):
        bit = 1 << i
        terms = []
        for mask in range(full + 1):
            if mask & bit:
                continue
            w = weight[bin(mask).count("1")]
            terms.append(w * (values[mask | bit] - values[mask]))
        if shape == ():
            out[i] = math.fsum(float(t) for t in terms)
        else:
            out[i] = np.sum(np.stack(terms), axis=0)
    return out


class _Evaluator:
    """Evaluates one (preset, measure) on the input, per query aligned to one list of ids."""

    def __init__(self, data: Any, scores: Any, doc_ids: Any, query_ids: Any) -> None:
        self.trec = False
        self.qrels: Any = None
        self.run: Any = None
        if isinstance(data, RankingDataset):
            self.labels: Any = data.labels
            self.scores: Any = data.check_scores(scores, source=None)
            self.boundaries: Any = data.boundaries
            self.doc_ids: Any = data.doc_ids
            self.query_ids: Any = data.query_ids
        elif isinstance(data, Mapping):
            if not isinstance(scores, Mapping):
                raise SpecError(
                    "with qrels (a dict {qid: {docno: rel}}) the scores must be a run "
                    "{qid: {docno: score}}. Fix: pass the run as scores"
                )
            self.trec = True
            self.qrels, self.run = data, scores
        elif isinstance(data, Sequence) and len(data) == 2:
            self.labels, self.boundaries = data
            self.scores, self.doc_ids, self.query_ids = scores, doc_ids, query_ids
        else:
            raise SpecError(
                f"cannot explain on {type(data).__name__}. Fix: pass a RankingDataset, "
                "(labels, boundaries) arrays, or TREC qrels with a run as scores"
            )
        self.ids: dict[str, int] = {}

    def __call__(self, preset: Preset, measure: Measure) -> tuple[np.ndarray, np.ndarray, float]:
        """``(positions of the result's queries in ids, per-query values, the mean)``; the mean
        is the library's (arithmetic over the queries not skipped; gm_map's geometric)."""
        if self.trec:
            res = evaluate_trec(self.qrels, self.run, [measure], preset=preset)
        else:
            res = evaluate_arrays(
                self.labels,
                self.scores,
                self.boundaries,
                [measure],
                preset=preset,
                doc_ids=self.doc_ids,
                query_ids=self.query_ids,
            )
        qids = [str(q) for q in res.query_ids]
        for q in qids:
            self.ids.setdefault(q, len(self.ids))
        vals = res.per_query[str(measure)]
        idx = np.asarray([self.ids[q] for q in qids], dtype=np.int64)
        return idx, vals, res.mean[str(measure)]

    def aligned(self, parts: tuple[np.ndarray, np.ndarray, float]) -> np.ndarray:
        idx, vals, _ = parts
        out = np.full(len(self.ids), np.nan)
        out[idx] = vals
        return out


def explain(
    data: Any,
    scores: Any,
    a: Any,
    b: Any,
    *,
    measure: Any = None,
    preset: Any = None,
    top: int = 10,
    max_options: int = 10,
    doc_ids: Any = None,
    query_ids: Any = None,
    labels: tuple[str | None, str | None] = (None, None),
) -> Explanation:
    """Split ``mean(b) - mean(a)`` over the options on which conventions ``a`` and ``b`` differ.

    ``data``: a :class:`~ndcglab.data.RankingDataset` (with ``scores``, one per document), a pair
    ``(labels, boundaries)`` of flat arrays (``doc_ids``/``query_ids`` optional), or TREC qrels
    ``{qid: {docno: rel}}`` with a run ``{qid: {docno: score}}`` as ``scores``. ``a``, ``b``: a
    preset name, a measure string, ``PRESET:MEASURE``, a
    :class:`~ndcglab.measures.Preset` or a :class:`~ndcglab.measures.Measure` (see the module
    docstring for how a side's missing half is filled; ``measure`` and ``preset`` set it).
    ``top``: how many queries to list. ``max_options``: the most differing options accepted
    (``2^d`` evaluations). ``labels``: names for the two sides in the report (default: as given).

    Raises :class:`~ndcglab.errors.SpecError` for an unknown preset or measure and
    :class:`~ndcglab.errors.ConventionError` when the sides compare different measures or
    differ in more than ``max_options`` options.
    """
    trec = isinstance(data, Mapping)
    ca, cb = _pair(a, b, measure, preset, labels, "trec_eval" if trec else "standard")
    keys = [k for k in ca.options if _text(ca.options[k]) != _text(cb.options[k])]
    same = {k: _text(v) for k, v in ca.options.items() if k not in keys}
    d = len(keys)
    if d > max_options:
        raise ConventionError(
            f"{ca.label} and {cb.label} differ in {d} options ({', '.join(keys)}); the split "
            f"evaluates 2^{d} conventions. Fix: raise max_options (now {max_options}) or "
            "compare closer conventions"
        )
    ev = _Evaluator(data, scores, doc_ids, query_ids)
    raw_a = ev(ca.preset, ca.measure)
    raw_b = ev(cb.preset, cb.measure)
    hyb: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}
    for mask in range(1 << d):
        take = {keys[i] for i in range(d) if mask >> i & 1}
        try:
            hyb[mask] = ev(*_hybrid(ca, cb, take))
        except ConventionError as exc:  # a mix the tools never make (e.g. a label rule refuses)
            mixed = ", ".join(f"{k}={_text(cb.options[k])}" for k in keys if k in take)
            raise ConventionError(
                f"explain cannot split {ca.label} -> {cb.label}: the mixed convention that takes "
                f"{mixed} from {cb.label} and the rest from {ca.label} is refused on these data "
                f"({exc}). Fix: compare conventions that read these labels alike, or evaluate "
                "both and compare the means"
            ) from None
    per_q = {mask: ev.aligned(v) for mask, v in hyb.items()}
    va, vb = ev.aligned(raw_a), ev.aligned(raw_b)
    mean_a, mean_b = raw_a[2], raw_b[2]
    means = {mask: v[2] for mask, v in hyb.items()}
    full = (1 << d) - 1
    residual = (mean_b - mean_a) - (means[full] - means[0])
    if abs(residual) <= _TOL * max(1.0, abs(mean_a), abs(mean_b)) or (
        math.isnan(residual) and math.isnan(mean_a - mean_b)
    ):
        residual = 0.0
        # the direct evaluations stand at both ends (the same computation as the hybrids' end
        # points), so the parts add up to the total
        means[0], means[full] = mean_a, mean_b
    phi = _shapley({k: np.float64(v) for k, v in means.items()}, d) if d else np.zeros(0)
    # per query: NaN (skipped / absent) counts as 0 for the split; "moved" sees NaN changes
    filled = {k: np.nan_to_num(v, nan=0.0) for k, v in per_q.items()}
    phi_q = _shapley(filled, d) if d else np.zeros((0, len(ev.ids)))
    moved = np.zeros((d, len(ev.ids)), dtype=bool)
    for i in range(d):
        bit = 1 << i
        for mask in range(full + 1):
            if not mask & bit:
                x, y = per_q[mask], per_q[mask | bit]
                moved[i] |= ~((x == y) | (np.isnan(x) & np.isnan(y)))
    ta, tb = ca.text_options, cb.text_options
    qids = list(ev.ids)
    parts = []
    alone = [means[1 << i] - means[0] for i in range(d)]
    for i, k in enumerate(keys):
        n = int(moved[i].sum())
        size = np.where(moved[i], np.abs(phi_q[i]), -1.0)
        top3 = [j for j in np.argsort(-size, kind="stable")[:3] if moved[i, j]]
        parts.append(
            OptionPart(
                key=k,
                a_value=ta[k],
                b_value=tb[k],
                contribution=float(phi[i]),
                alone=float(alone[i]),
                queries=n,
                why=_why(k, ta[k], tb[k], ca.label, cb.label, n) if n else "",
                examples=tuple(qids[j] for j in top3),
            )
        )
    parts.sort(key=lambda o: (-abs(o.contribution), o.key))
    reasons = tuple(
        f"{o.why} ({o.contribution:+.4f}; e.g. quer{'y' if len(o.examples) == 1 else 'ies'} "
        f"{', '.join(o.examples)})"
        for o in parts
        if o.queries
    )
    change = vb - va
    one_nan = np.isnan(va) != np.isnan(vb)
    score = np.where(one_nan, np.inf, np.nan_to_num(np.abs(change), nan=0.0))
    moved_any = np.asarray(moved.any(axis=0)) if d else np.zeros(len(qids), dtype=bool)
    order = [j for j in np.argsort(-score, kind="stable") if moved_any[j] or score[j] > 0]
    moves = []
    for j in order[: max(0, int(top))]:
        p = {keys[i]: float(phi_q[i, j]) for i in range(d) if moved[i, j]}
        main = max(p, key=lambda k: abs(p[k])) if p else None
        if main is None:
            reason = "not attributed to an option"
        else:
            reason = _query_reason(main, ta[main], tb[main], ca.label, cb.label)
        moves.append(QueryMove(qids[j], float(va[j]), float(vb[j]), float(change[j]), p, reason))
    return Explanation(
        a=ca,
        b=cb,
        mean_a=mean_a,
        mean_b=mean_b,
        options=tuple(parts),
        same=same,
        queries=tuple(moves),
        reasons=reasons,
        n_queries=len(qids),
        n_evaluations=1 << d,
        residual=float(residual),
        query_ids=tuple(qids),
    )
