"""ndcglab behind the interfaces other evaluation code already calls.

* :mod:`ndcglab.compat.pytrec_eval` — pytrec_eval's ``RelevanceEvaluator`` (BEIR, MTEB,
  Pyserini and sentence-transformers call it): ``import ndcglab.compat.pytrec_eval as
  pytrec_eval`` is the whole change;
* :mod:`ndcglab.compat.ir_measures` — importing it registers the ir_measures provider
  ``ndcglab`` (PyTerrier's ``pt.Experiment`` evaluates through ir_measures).

Both compute every value with :func:`ndcglab.measures.evaluate_trec` under the ``trec_eval``
preset, so the numbers are trec_eval's; what each accepts beyond the original (float labels, a
tie rule, ndcglab's measure names) is stated in its module and in ``docs/compat.md``. Nothing
here is imported by ``import ndcglab``.
"""

from __future__ import annotations

__all__: list[str] = []
