"""Click models fitted to a click log: PBM, UBM, cascade, DCM, DBN and the simplified DBN.

Every model gives each document ``d`` (a row of the dataset, so a query-document pair) an
attractiveness ``alpha_d``; they differ in what decides whether a position is examined:

* **PBM** (position-based): ``P(C_r = 1) = theta_r alpha_d``. Fitted by expectation-
  maximisation on the impressions and clicks per (document, position): a click means examined
  and attractive; a skip at ``r`` was *not examined* with posterior ``theta_r (1 - alpha) /
  (1 - theta_r alpha)`` ... (see ``docs/click-models.md`` for the updates).
* **UBM** (user browsing): ``P(C_r = 1 | last click above at r') = gamma_{r, r'} alpha_d``
  (``r' = 0``: no click above); the same EM with ``(r, r')`` in place of ``r``.
* **Cascade**: the user examines down to the first click and stops; ``alpha_d`` = clicks /
  examinations, counting positions up to the first click (all of them when nothing was
  clicked); rows after the first click are ignored.
* **DCM** (dependent click model): as cascade, but the user goes on after a click at ``r`` with
  probability ``lambda_r``; examined = up to the last click (all without a click),
  ``lambda_r = 1 - (sessions whose last click is at r) / (clicks at r)`` (the approximate
  maximum likelihood of Guo, Liu and Wang, "Efficient multiple-click models in web search",
  WSDM 2009).
* **DBN** (dynamic Bayesian network, Chapelle and Zhang, "A dynamic Bayesian network click
  model for web search ranking", WWW 2009): after a click the user is satisfied with
  probability ``sigma_d`` and stops; otherwise goes on with probability ``gamma``. Fitted by
  EM over the sessions (the posterior of where examination stopped after the last click);
  ``gamma`` is learnt unless given (``dbn(gamma=0.9)``).
* **SDBN** (simplified DBN, ``gamma = 1``, examination up to the last click): ``alpha_d`` =
  clicks / examinations up to the last click, ``sigma_d`` = last clicks / clicks.
* **Trust** (TrustPBM of Agarwal, Wang, Li, Bendersky and Najork, "Addressing trust bias for
  unbiased learning-to-rank", WWW 2019): the user examines ``r`` with probability ``theta_r``;
  an examined document is clicked with probability ``eps+_r`` if it is relevant (probability
  ``gamma_d``, stored as its attractiveness) and ``eps-_r`` if not, so ``P(C_r = 1) = theta_r
  (eps+_r gamma_d + eps-_r (1 - gamma_d)) = alpha_r gamma_d + beta_r``. Fitted by EM over the
  latent examination and relevance on the counts per (document, position), started from
  ``eps+ = 0.75``, ``eps- = 0.25`` (which names the relevant side); the clicks fix ``alpha``,
  ``beta`` only up to an affine change of the relevance scale, so :meth:`FittedClickModel.affine`
  reports them on the scale of the click probability at the top (``alpha_1 = 1``, ``beta_1 =
  0``).

PBM and the trust model read only the impressions and clicks per (document, position): they
can be fitted from a :class:`~ndcglab.clicks.ClickStats` (summed per partition of a log larger
than memory) with the same result as from the log; the other models need the sessions.

The EM starts from 0.5 for every parameter and stops after ``iterations`` rounds or when no
parameter moved more than ``tol``. :meth:`FittedClickModel.evaluate` gives the log-likelihood
(the sum over sessions of the log-probability of their clicks, each click conditioned on those
above) and the perplexity per position, ``2 ** -(mean over sessions of log2 P(C_r = c_r))``
with ``P(C_r = 1)`` the model's click probability at ``r`` given the ranking alone (1 is
perfect; 2 is a coin). Probabilities are clipped to ``[1e-10, 1 - 1e-10]`` there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._spec import parse_int, parse_real, parse_spec
from ..errors import SpecError
from .logs import ClickLog, ClickStats

__all__ = [
    "COUNT_MODELS",
    "FIT_MODELS",
    "FittedClickModel",
    "count_model",
    "dense_sessions",
    "fit_click_model",
    "normalised_affine",
    "read_affine_terms",
]

#: click models that can be fitted, and their parameters
FIT_MODELS: dict[str, tuple[str, ...]] = {
    "pbm": ("iterations", "tol"),
    "ubm": ("iterations", "tol"),
    "cascade": (),
    "dcm": (),
    "dbn": ("iterations", "tol", "gamma"),
    "sdbn": (),
    "trust": ("iterations", "tol"),
}
#: click models fitted from the counts per (document, position) alone (a ClickStats will do)
COUNT_MODELS = ("pbm", "trust")
_CLIP = 1e-10
#: the trust EM's starting click probabilities of an examined relevant / non-relevant document
_TRUST_START = (0.75, 0.25)


def normalised_affine(alpha: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha', beta')`` of ``P(C_r = 1) = alpha_r g + beta_r`` on the relevance scale ``g' =
    alpha_1 g + beta_1`` (the click probability at the top): ``alpha'_r = alpha_r / alpha_1``,
    ``beta'_r = beta_r - alpha'_r beta_1``, so ``alpha'_1 = 1`` and ``beta'_1 = 0``. Clicks fix
    ``(alpha, beta)`` only up to such a change of scale; these values are the same for every
    member of the family, so they compare a fit with the truth. NaN everywhere when ``alpha_1``
    is not positive (the clicks at the top do not depend on relevance: no scale to refer to)."""
    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    if not (len(a) and a[0] > 0):
        return np.full(len(a), np.nan), np.full(len(b), np.nan)
    scaled = a / a[0]
    return scaled, b - scaled * b[0]


def dense_sessions(log: ClickLog) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(docs, clicks, shown)``: one row per session, ``docs[i, r-1]`` the document at position
    ``r`` (-1 past the ``shown[i]`` documents shown), ``clicks[i, r-1]`` 0/1. The log must be
    valid (:func:`~ndcglab.clicks.validate_log`)."""
    starts = log.session_starts()
    n = len(starts) - 1
    k = max(log.k, int(log.position.max(initial=1)))
    docs = np.full((n, k), -1, dtype=np.int64)
    clicks = np.zeros((n, k), dtype=np.int8)
    sid = np.repeat(np.arange(n), np.diff(starts))
    docs[sid, log.position - 1] = log.doc
    clicks[sid, log.position - 1] = log.click
    return docs, clicks, np.diff(starts).astype(np.int64)


@dataclass
class FittedClickModel:
    """A click model fitted to a log (see the module docstring).

    ``attractiveness[d]`` per dataset row (NaN for a document never shown); ``satisfaction``
    (DBN, SDBN); ``examination``: PBM ``theta_r`` (length ``k``), UBM ``gamma[r-1, r']``
    (``k x (k+1)``); ``continuation``: DCM ``lambda_r``; ``gamma`` (DBN). ``iterations`` run and
    whether the EM ``converged``; ``log_likelihood`` and ``perplexity`` (per position) on the
    log it was fitted to.
    """

    name: str
    k: int
    attractiveness: np.ndarray
    satisfaction: np.ndarray | None = None
    examination: np.ndarray | None = None
    continuation: np.ndarray | None = None
    gamma: float | None = None
    trust_pos: np.ndarray | None = None
    trust_neg: np.ndarray | None = None
    iterations: int = 0
    converged: bool = True
    log_likelihood: float = float("nan")
    perplexity: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def affine(self) -> tuple[np.ndarray, np.ndarray]:
        """The trust model's ``(alpha_r, beta_r)``, ``P(C_r = 1) = alpha_r gamma_d + beta_r``,
        normalised to ``alpha_1 = 1``, ``beta_1 = 0`` (:func:`normalised_affine`); for PBM
        ``(theta_r / theta_1, 0)``."""
        if self.name == "pbm" and self.examination is not None:
            return self.examination / self.examination[0], np.zeros(len(self.examination))
        if self.name != "trust" or self.trust_pos is None or self.trust_neg is None:
            raise SpecError(
                f"a {self.name} model has no affine click terms. Fix: fit 'trust' (or 'pbm')"
            )
        assert self.examination is not None
        th = self.examination
        return normalised_affine(th * (self.trust_pos - self.trust_neg), th * self.trust_neg)

    def _attr(self, docs: np.ndarray) -> np.ndarray:
        known = np.nanmean(self.attractiveness) if np.isfinite(self.attractiveness).any() else 0.5
        ok = (docs >= 0) & (docs < len(self.attractiveness))
        got = self.attractiveness[np.where(ok, docs, 0)]
        return np.where(ok & np.isfinite(got), got, known)

    def _sat(self, docs: np.ndarray) -> np.ndarray:
        if self.satisfaction is None:
            return np.zeros(docs.shape)
        s = self.satisfaction
        ok = (docs >= 0) & (docs < len(s))
        got = s[np.where(ok, docs, 0)]
        return np.where(ok & np.isfinite(got), got, 0.0)

    def click_probabilities(self, docs: np.ndarray, clicks: np.ndarray | None = None) -> np.ndarray:
        """Per session (rows of ``docs``, -1 = nothing shown) and position: the probability of
        a click — conditioned on the clicks above when ``clicks`` is given, else from the
        ranking alone."""
        docs = np.atleast_2d(docs)
        n, k = docs.shape
        a = self._attr(docs)
        s = self._sat(docs)
        out = np.zeros((n, k))
        if self.name == "trust":
            th, tp, tn = self.examination, self.trust_pos, self.trust_neg
            assert th is not None and tp is not None and tn is not None
            return np.asarray(th[:k][None, :] * (tp[:k][None, :] * a + tn[:k][None, :] * (1 - a)))
        if self.name in ("pbm", "ubm"):
            ex = self.examination
            assert ex is not None
            if self.name == "pbm":
                return np.asarray(ex[:k][None, :] * a)
            if clicks is not None:
                last = np.zeros(n, dtype=np.int64)
                for r in range(k):
                    out[:, r] = ex[r, last] * a[:, r]
                    last = np.where(clicks[:, r] == 1, r + 1, last)
                return out
            p_last = np.zeros((n, k + 1))
            p_last[:, 0] = 1.0
            for r in range(k):
                pc = ex[r, : r + 1][None, :] * a[:, r : r + 1] * p_last[:, : r + 1]
                out[:, r] = pc.sum(axis=1)
                p_last[:, : r + 1] -= pc
                p_last[:, r + 1] = out[:, r]
            return out
        exam = np.ones(n)
        g = 1.0 if self.gamma is None else self.gamma
        lam = self.continuation
        for r in range(k):
            out[:, r] = exam * a[:, r]
            if clicks is None:  # the marginal chain
                if self.name == "cascade":
                    exam = exam * (1 - a[:, r])
                elif self.name == "dcm":
                    assert lam is not None
                    exam = exam * (1 - a[:, r] + a[:, r] * lam[r])
                else:
                    exam = exam * g * (1 - a[:, r] * s[:, r])
                continue
            c = clicks[:, r] == 1
            skip = exam * (1 - a[:, r]) / np.maximum(1 - exam * a[:, r], _CLIP)
            if self.name == "cascade":
                after_click = np.zeros(n)
            elif self.name == "dcm":
                assert lam is not None
                after_click = np.full(n, lam[r])
            else:
                after_click = g * (1 - s[:, r])
                skip = g * skip
            exam = np.where(c, after_click, skip)
        return out

    def evaluate(self, log: ClickLog) -> tuple[float, np.ndarray]:
        """``(log_likelihood, perplexity per position 1..k)`` of the clicks of ``log``."""
        docs, clicks, _ = dense_sessions(log)
        mask = docs >= 0
        cond = np.clip(self.click_probabilities(docs, clicks), _CLIP, 1 - _CLIP)
        ll = float(np.where(mask, np.where(clicks == 1, np.log(cond), np.log1p(-cond)), 0).sum())
        marg = np.clip(self.click_probabilities(docs), _CLIP, 1 - _CLIP)
        lp = np.where(clicks == 1, np.log2(marg), np.log2(1 - marg))
        counts = mask.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            per = np.where(counts > 0, 2.0 ** (-np.where(mask, lp, 0).sum(axis=0) / counts), np.nan)
        return ll, per

    def evaluate_counts(self, stats: ClickStats) -> tuple[float, np.ndarray]:
        """As :meth:`evaluate` for PBM and the trust model (whose clicks do not depend on the
        clicks above) from the counts per (document, position) alone."""
        if self.name not in COUNT_MODELS:
            raise SpecError(f"{self.name} is not evaluated from counts. Fix: give the log")
        pos = stats.position.astype(np.int64) - 1
        a = self._attr(np.asarray(stats.doc, dtype=np.int64))
        th = self.examination
        assert th is not None
        if self.name == "pbm":
            p = th[pos] * a
        else:
            tp, tn = self.trust_pos, self.trust_neg
            assert tp is not None and tn is not None
            p = th[pos] * (tp[pos] * a + tn[pos] * (1 - a))
        p = np.clip(p, _CLIP, 1 - _CLIP)
        clk = stats.clicks.astype(np.float64)
        skips = stats.impressions.astype(np.float64) - clk
        ll = float((clk * np.log(p) + skips * np.log1p(-p)).sum())
        bits = clk * np.log2(p) + skips * np.log2(1 - p)
        k = self.k
        num = np.bincount(pos, weights=bits, minlength=k)[:k]
        counts = np.bincount(pos, weights=stats.impressions, minlength=k)[:k]
        with np.errstate(invalid="ignore", divide="ignore"):
            per = np.where(counts > 0, 2.0 ** (-num / np.maximum(counts, 1)), np.nan)
        return ll, per


def _parse(spec: str) -> tuple[str, int, float, float | None]:
    parsed = parse_spec(spec, what="click model")
    if parsed.name not in FIT_MODELS or parsed.cutoff is not None:
        raise SpecError(
            f"cannot fit click model {spec!r}. Fix: use one of {', '.join(FIT_MODELS)} (e.g. "
            "'pbm(iterations=50)')"
        )
    allowed = FIT_MODELS[parsed.name]
    for key, _ in parsed.params:
        if key not in allowed:
            raise SpecError(
                f"fitting {parsed.name} has no parameter {key!r}. Fix: use "
                f"{', '.join(allowed) or 'none'}"
            )
    iterations = parse_int(parsed.param("iterations", "100") or "100", what="iterations",
                           lo=1, hi=1_000_000)  # fmt: skip
    tol = parse_real(parsed.param("tol", "1e-6") or "1e-6", what="tol", lo=0.0)
    g = parsed.param("gamma")
    gamma = None if g is None else parse_real(g, what="gamma", lo=0.0, hi=1.0)
    return parsed.name, iterations, tol, gamma


def count_model(spec: str) -> str:
    """The name of the click model ``spec`` if it is fitted from counts per (document,
    position) (:data:`COUNT_MODELS`); a bad spec, or a model that reads sessions, is refused."""
    name = _parse(spec)[0]
    if name not in COUNT_MODELS:
        raise SpecError(
            f"{name} reads whole sessions (which clicks came above each document); click counts "
            f"per (document, position) fit {' and '.join(COUNT_MODELS)} only. Fix: give the log "
            "itself (without --dask), or --click-model pbm or trust"
        )
    return name


def fit_click_model(log: ClickLog | ClickStats, spec: str = "pbm") -> FittedClickModel:
    """Fit the click model ``spec`` (``pbm``, ``ubm``, ``cascade``, ``dcm``, ``dbn``, ``sdbn``,
    ``trust``; EM options ``iterations`` (default 100) and ``tol`` (default 1e-6);
    ``dbn(gamma=G)`` fixes the continuation) to ``log``; see the module docstring. The log must
    be valid. ``log`` may be a :class:`~ndcglab.clicks.ClickStats` for the models of
    :data:`COUNT_MODELS` (the same fit as from the log it sums)."""
    name, iterations, tol, gamma = _parse(spec)
    if isinstance(log, ClickStats) or name in COUNT_MODELS:
        count_model(spec)
        stats = log if isinstance(log, ClickStats) else log.stats()
        model = _fit_count_em(stats, name, iterations, tol)
        model.log_likelihood, model.perplexity = model.evaluate_counts(stats)
        return model
    k = max(log.k, 1)
    n_docs = int(log.doc.max(initial=-1)) + 1
    if name == "ubm":
        model = _fit_position_em(log, name, k, n_docs, iterations, tol)
    elif name in ("cascade", "dcm", "sdbn"):
        model = _fit_counting(log, name, k, n_docs)
    else:
        model = _fit_dbn(log, k, n_docs, iterations, tol, gamma)
    model.log_likelihood, model.perplexity = model.evaluate(log)
    return model


def _count_cells(stats: ClickStats) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(doc, position - 1, impressions, clicks)`` per (document, position), sorted by document
    then position (one order whatever the order of ``stats``' rows)."""
    k = max(int(stats.k), 1)
    key = stats.doc.astype(np.int64) * k + stats.position.astype(np.int64) - 1
    uniq, inv = np.unique(key, return_inverse=True)
    imp = np.bincount(inv, weights=stats.impressions, minlength=len(uniq))
    clk = np.bincount(inv, weights=stats.clicks, minlength=len(uniq))
    return uniq // k, uniq % k, imp.astype(np.float64), clk.astype(np.float64)


def _fit_count_em(stats: ClickStats, name: str, iterations: int, tol: float) -> FittedClickModel:
    """PBM or the trust model by EM on the counts per (document, position)."""
    k = max(int(stats.k), 1)
    n_docs = int(stats.doc.max(initial=-1)) + 1
    doc, cel, imp, clk = _count_cells(stats)
    if name == "pbm":
        return _position_em(doc, cel, imp, clk, name, k, n_docs, k, iterations, tol)
    return _trust_em(doc, cel, imp, clk, k, n_docs, iterations, tol)


def trust_em_step(
    doc: np.ndarray, pos: np.ndarray, imp: np.ndarray, clk: np.ndarray, g: np.ndarray,
    th: np.ndarray, tp: np.ndarray, tn: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """One EM round of the trust model on counts per (document ``doc``, position ``pos``
    0-based): the new ``(gamma, theta, eps+, eps-)`` (see ``docs/click-models.md``). Entries
    without impressions keep their value."""
    n_docs, k = len(g), len(th)
    gd, t, p, n = g[doc], th[pos], tp[pos], tn[pos]
    skips = imp - clk
    # a click: examined; relevant with probability p g / (p g + n (1 - g))
    q = p * gd / np.maximum(p * gd + n * (1 - gd), _CLIP)
    # a skip: P(no click) = 1 - t (p g + n (1 - g))
    den = np.maximum(1 - t * (p * gd + n * (1 - gd)), _CLIP)
    rel = gd * (1 - t * p) / den  # P(R = 1 | skip)
    ex_rel = t * gd * (1 - p) / den  # P(E = 1, R = 1 | skip)
    ex_non = t * (1 - gd) * (1 - n) / den  # P(E = 1, R = 0 | skip)
    doc_imp = np.bincount(doc, weights=imp, minlength=n_docs)
    pos_imp = np.bincount(pos, weights=imp, minlength=k)[:k]
    g_num = np.bincount(doc, weights=clk * q + skips * rel, minlength=n_docs)
    t_num = np.bincount(pos, weights=clk + skips * (ex_rel + ex_non), minlength=k)[:k]
    p_num = np.bincount(pos, weights=clk * q, minlength=k)[:k]
    p_den = p_num + np.bincount(pos, weights=skips * ex_rel, minlength=k)[:k]
    n_num = np.bincount(pos, weights=clk * (1 - q), minlength=k)[:k]
    n_den = n_num + np.bincount(pos, weights=skips * ex_non, minlength=k)[:k]
    with np.errstate(invalid="ignore", divide="ignore"):
        g_new = np.where(doc_imp > 0, g_num / np.maximum(doc_imp, _CLIP), g)
        th_new = np.where(pos_imp > 0, t_num / np.maximum(pos_imp, _CLIP), th)
        tp_new = np.where(p_den > 0, p_num / np.maximum(p_den, _CLIP), tp)
        tn_new = np.where(n_den > 0, n_num / np.maximum(n_den, _CLIP), tn)
    return g_new, th_new, tp_new, tn_new


def _trust_em(
    doc: np.ndarray, pos: np.ndarray, imp: np.ndarray, clk: np.ndarray, k: int, n_docs: int,
    iterations: int, tol: float,
) -> FittedClickModel:  # fmt: skip
    g = np.full(n_docs, 0.5)
    th = np.full(k, 0.5)
    tp = np.full(k, _TRUST_START[0])
    tn = np.full(k, _TRUST_START[1])
    converged = False
    it = 0
    for it in range(1, iterations + 1):  # noqa: B007
        new = trust_em_step(doc, pos, imp, clk, g, th, tp, tn)
        change = max(np.abs(a - b).max(initial=0) for a, b in zip(new, (g, th, tp, tn)))
        g, th, tp, tn = new
        if change <= tol:
            converged = True
            break
    doc_imp = np.bincount(doc, weights=imp, minlength=n_docs)
    return FittedClickModel(
        "trust", k, np.where(doc_imp > 0, g, np.nan), examination=th, trust_pos=tp,
        trust_neg=tn, iterations=it, converged=converged,
    )  # fmt: skip


def _fit_position_em(
    log: ClickLog, name: str, k: int, n_docs: int, iterations: int, tol: float
) -> FittedClickModel:
    """UBM by EM on the counts per (document, examination cell = (position, last click))."""
    docs, clicks, _ = dense_sessions(log)
    last = np.zeros(docs.shape, dtype=np.int64)
    run = np.zeros(docs.shape[0], dtype=np.int64)
    for r in range(docs.shape[1]):
        last[:, r] = run
        run = np.where(clicks[:, r] == 1, r + 1, run)
    sid = np.repeat(np.arange(docs.shape[0]), np.diff(log.session_starts()))
    cell = (log.position.astype(np.int64) - 1) * (k + 1) + last[sid, log.position - 1]
    n_cells = k * (k + 1)
    key = log.doc * n_cells + cell
    uniq, inv = np.unique(key, return_inverse=True)
    imp = np.bincount(inv).astype(np.float64)
    clk = np.bincount(inv, weights=log.click).astype(np.float64)
    return _position_em(uniq // n_cells, uniq % n_cells, imp, clk, name, k, n_docs, n_cells,
                        iterations, tol)  # fmt: skip


def _position_em(
    doc: np.ndarray, cel: np.ndarray, imp: np.ndarray, clk: np.ndarray, name: str, k: int,
    n_docs: int, n_cells: int, iterations: int, tol: float,
) -> FittedClickModel:  # fmt: skip
    """The EM of PBM (cells = positions) or UBM (cells = (position, last click above))."""
    a = np.full(n_docs, 0.5)
    th = np.full(n_cells, 0.5)
    doc_imp = np.bincount(doc, weights=imp, minlength=n_docs)
    cell_imp = np.bincount(cel, weights=imp, minlength=n_cells)
    converged = False
    it = 0
    for it in range(1, iterations + 1):  # noqa: B007
        ad, tc = a[doc], th[cel]
        den = np.maximum(1 - tc * ad, _CLIP)
        skips = imp - clk
        a_new = np.bincount(doc, weights=clk + skips * ad * (1 - tc) / den, minlength=n_docs)
        t_new = np.bincount(cel, weights=clk + skips * tc * (1 - ad) / den, minlength=n_cells)
        with np.errstate(invalid="ignore", divide="ignore"):
            a_new = np.where(doc_imp > 0, a_new / np.maximum(doc_imp, 1), 0.5)
            t_new = np.where(cell_imp > 0, t_new / np.maximum(cell_imp, 1), 0.5)
        change = max(np.abs(a_new - a).max(initial=0), np.abs(t_new - th).max(initial=0))
        a, th = a_new, t_new
        if change <= tol:
            converged = True
            break
    a = np.where(doc_imp > 0, a, np.nan)
    exam = th if name == "pbm" else th.reshape(k, k + 1)
    return FittedClickModel(name, k, a, examination=exam, iterations=it, converged=converged)


def _fit_counting(log: ClickLog, name: str, k: int, n_docs: int) -> FittedClickModel:
    """Cascade, DCM and SDBN: closed-form maximum-likelihood counts."""
    starts = log.session_starts()
    sid = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    big = np.iinfo(np.int64).max
    pos = log.position.astype(np.int64)
    clicked_pos = np.where(log.click == 1, pos, 0)
    last = np.maximum.reduceat(clicked_pos, starts[:-1]) if len(log) else np.zeros(0, np.int64)
    first_any = np.where(log.click == 1, pos, big)
    first = np.minimum.reduceat(first_any, starts[:-1]) if len(log) else np.zeros(0, np.int64)
    if name == "cascade":
        stop = np.where(first == big, big, first)[sid]
    else:
        stop = np.where(last == 0, big, last)[sid]
    examined = pos <= stop
    clicks = np.where(examined, log.click, 0).astype(np.float64)
    num = np.bincount(log.doc, weights=clicks, minlength=n_docs)
    den = np.bincount(log.doc, weights=examined.astype(np.float64), minlength=n_docs)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.where(den > 0, num / np.maximum(den, 1), np.nan)
    model = FittedClickModel(name, k, a)
    if name == "dcm":
        clicks_at = np.bincount(pos - 1, weights=log.click, minlength=k)[:k]
        has = last > 0
        last_at = np.bincount(last[has] - 1, minlength=k)[:k]
        with np.errstate(invalid="ignore", divide="ignore"):
            model.continuation = np.where(clicks_at > 0, 1 - last_at / np.maximum(clicks_at, 1),
                                          np.nan)  # fmt: skip
    if name == "sdbn":
        is_last = (log.click == 1) & (pos == last[sid])
        s_num = np.bincount(log.doc, weights=is_last.astype(np.float64), minlength=n_docs)
        with np.errstate(invalid="ignore", divide="ignore"):
            model.satisfaction = np.where(num > 0, s_num / np.maximum(num, 1), np.nan)
        model.gamma = 1.0
    return model


def _fit_dbn(
    log: ClickLog, k: int, n_docs: int, iterations: int, tol: float, gamma: float | None
) -> FittedClickModel:
    """The DBN by EM over sessions (:func:`ndcglab.clicks._click_model_kernels`)."""
    from ._click_model_kernels import dbn_expectations

    docs, clicks, shown = dense_sessions(log)
    clicks_per_doc = np.bincount(log.doc, weights=log.click, minlength=n_docs)
    seen = np.bincount(log.doc, minlength=n_docs) > 0
    a = np.full(n_docs, 0.5)
    s = np.full(n_docs, 0.5)
    g = 0.5 if gamma is None else gamma
    converged = False
    it = 0
    for it in range(1, iterations + 1):  # noqa: B007
        a_den, s_num, g_num, g_den = dbn_expectations(docs, clicks, shown, a, s, g)
        with np.errstate(invalid="ignore", divide="ignore"):
            a_new = np.where(a_den > 0, clicks_per_doc / np.maximum(a_den, _CLIP), 0.5)
            s_new = np.where(clicks_per_doc > 0, s_num / np.maximum(clicks_per_doc, 1), 0.5)
        g_new = g if gamma is not None else (g_num / g_den if g_den > 0 else g)
        change = max(np.abs(a_new - a).max(initial=0), np.abs(s_new - s).max(initial=0),
                     abs(g_new - g))  # fmt: skip
        a, s, g = a_new, s_new, g_new
        if change <= tol:
            converged = True
            break
    has_click = clicks_per_doc > 0
    return FittedClickModel(
        "dbn",
        k,
        np.where(seen, a, np.nan),
        satisfaction=np.where(has_click, s, np.nan),
        gamma=float(g),
        iterations=it,
        converged=converged,
    )


def read_affine_terms(path: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``(alpha, beta)`` per position from the JSON file of ``ndcglab clicks fit --out``: its
    ``propensity`` when it has one (``--propensity METHOD``; ``beta`` the ``trust_swap`` offset,
    else None); else a trust fit's ``alpha`` and ``beta`` (on the top position's scale); else a
    PBM fit's examination relative to position 1 (``beta`` None). What
    :func:`ndcglab.clicks.learn.fit_clicks` takes as ``examination=`` and ``trust_offset=``. A
    file without them is a :class:`~ndcglab.errors.DataFormatError` naming it."""
    import json

    from ..errors import DataFormatError

    try:
        with open(path, encoding="utf-8") as f:
            fit = json.load(f)
    except FileNotFoundError:
        raise DataFormatError(
            "no such file",
            path=path,
            fix="give --examination A1,A2,... or the JSON file of "
            "'ndcglab clicks fit --out FIT.json'",
        ) from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise DataFormatError(
            f"the fitted click model cannot be read as JSON ({exc})", path=path,
            fix="give the file written by 'ndcglab clicks fit --out FIT.json'",
        ) from None  # fmt: skip

    def numbers(key: str) -> np.ndarray:
        try:
            arr = np.asarray(fit[key], dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            arr = np.zeros(0)
        if len(arr) == 0 or not np.isfinite(arr).all():
            raise DataFormatError(
                f"{key!r} is not a list of finite numbers per position (a fit whose clicks could "
                "not tell the terms is NaN)", path=path,
                fix="fit the click model again on a log that shows documents at several "
                "positions ('ndcglab clicks fit LOG --out FIT.json'), or give the numbers",
            )  # fmt: skip
        return arr

    if not isinstance(fit, dict):
        fit = {}
    if "propensity" in fit:  # asked for explicitly (--propensity METHOD): it wins
        offset = numbers("propensity_offset") if "propensity_offset" in fit else None
        return numbers("propensity"), offset
    if "alpha" in fit and "beta" in fit:
        return numbers("alpha"), numbers("beta")
    if fit.get("click_model") == "pbm" and "examination" in fit:
        exam = numbers("examination")
        if not exam[0] > 0:
            raise DataFormatError(
                "the PBM examination at position 1 is 0: no scale to refer to", path=path,
                fix="fit the click model again on a log with clicks at position 1",
            )  # fmt: skip
        return exam / exam[0], None
    raise DataFormatError(
        "the file holds no examination per position (no trust alpha and beta, PBM examination "
        "or propensity)", path=path,
        fix="fit 'ndcglab clicks fit LOG --click-model trust --out FIT.json' (or pbm, or add "
        "--propensity METHOD)",
    )  # fmt: skip
