"""Association mining between a prompted attribute A and an extracted attribute B (StereoTales).

Two steps, per slice of stories (a generator model, optionally one language):

1. Attribute level: for each A and every other B, the contingency table (unknown/other and
   sparse rows removed) gets Fisher's exact test on the r×c table (the Freeman-Halton extension,
   scipy's seeded Monte Carlo), Benjamini-Hochberg across the B of each A, and the bias-corrected
   Cramér's V (Bergsma 2013); only tables with a medium or large effect are kept.
2. Value level: within a kept table, each cell gets a one-sided Fisher test (the cell against the
   rest of its row and column), Benjamini-Yekutieli across the table's cells, and lift ≥ 2.

Running 500,000 Monte Carlo resamples on every table (the published procedure) costs seconds per
table. ``strategy="sequential"`` reaches the same BH decisions far faster: tables whose
asymptotic χ² p-value is far from any decision boundary (and whose expected counts allow the
approximation, Cochran's rule) are decided by it; the others get Monte Carlo in growing stages
with exact (Clopper-Pearson) bounds on p, and a family stops as soon as BH run on the upper
bounds and on the lower bounds agree; a table still undecided after the stages gets exactly the
reference call (``resamples`` draws, seed ``seed``), so it cannot disagree with the reference.
"""

from __future__ import annotations

from biasatlas.stats.associations.config import (
    EFFECT_THRESHOLDS,
    OTHER,
    UNKNOWN,
    AssociationConfig,
    Strategy,
)
from biasatlas.stats.associations.family import TableP, family_pvalues, fisher_rxc_mc
from biasatlas.stats.associations.mining import (
    ASSOCIATION_KEY,
    AssociationResult,
    encode_profiles,
    jaccard_matrix,
    mine_associations,
    pool_associations,
)
from biasatlas.stats.associations.slices import SliceResult, analyse_slice
from biasatlas.stats.associations.tables import (
    LabelledTable,
    cell_tests,
    cochran_ok,
    contingency,
    cramers_v_corrected,
    effect_category,
)

__all__ = [
    "ASSOCIATION_KEY",
    "EFFECT_THRESHOLDS",
    "OTHER",
    "UNKNOWN",
    "AssociationConfig",
    "AssociationResult",
    "LabelledTable",
    "SliceResult",
    "Strategy",
    "TableP",
    "analyse_slice",
    "cell_tests",
    "cochran_ok",
    "contingency",
    "cramers_v_corrected",
    "effect_category",
    "encode_profiles",
    "family_pvalues",
    "fisher_rxc_mc",
    "jaccard_matrix",
    "mine_associations",
    "pool_associations",
]
