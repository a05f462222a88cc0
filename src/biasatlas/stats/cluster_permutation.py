"""A chi-square test of independence of a label (scenario) and a categorical outcome whose unit is a cluster.

Clusters (a prompt's stories: copies of one story under deterministic decoding, or samples sharing the prompt)
each carry one label and a count of outcomes per category. The statistic is Pearson's chi-square of the
label × category table of the counts; its p comes from a seeded Monte Carlo of the permutation of the labels
among the clusters of each stratum (a stratum: clusters alike in everything but the label, e.g. one prompted
attribute value), the randomisation the null "the label does not matter given the stratum" implies. Counting
a cluster's members as independent (the plain chi-square) overstates the evidence as many times as a cluster
has members; a stratum that differs in its labels' mix (a limited draw) would confound the label with the stratum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

#: Monte Carlo permutations (p resolution 1 / (PERMUTATIONS + 1))
PERMUTATIONS = 1000
#: Besag & Clifford's sequential stop: a table whose permuted statistics reach the observed one this many times
#: stops drawing, p = STOP / draws (far from significance, a few dozen draws decide it)
STOP = 20
#: label draws held at once (permutations × clusters)
_CHUNK_CELLS = 2_000_000
_TOL = 1e-9


@dataclass(frozen=True)
class PermutationChi2:
    statistic: float
    p: float
    dof: int
    expected: np.ndarray
    permutations: int
    movable: int  # clusters in strata holding at least two different labels (what the permutation moves)


def chi2_statistic(tables: np.ndarray) -> np.ndarray:
    """Pearson's chi-square of each labels × categories table (leading axes: tables); empty rows add nothing."""
    rows, cols = tables.sum(-1, keepdims=True), tables.sum(-2, keepdims=True)
    total = tables.sum((-2, -1), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = rows * cols / total
        terms = np.where(expected > 0, (tables - expected) ** 2 / expected, 0.0)
    return terms.sum((-2, -1))


def permutation_chi2(labels: np.ndarray, counts: np.ndarray, strata: np.ndarray, *, permutations: int = PERMUTATIONS,
                     seed: int = 0) -> PermutationChi2:
    """The chi-square of ``labels`` (one integer a cluster, 0..L-1) against ``counts`` (clusters × categories),
    its p from up to ``permutations`` seeded permutations of the labels within ``strata`` (one integer a cluster),
    stopped at the :data:`STOP`-th permuted statistic at least the observed one (Besag and Clifford's sequential
    p-value, valid as the full one: far from significance it needs a few dozen draws)."""
    labels, strata = np.asarray(labels, int), np.asarray(strata, int)
    counts = np.asarray(counts, float)
    n_labels = int(labels.max()) + 1
    observed_table = np.zeros((n_labels, counts.shape[1]))
    np.add.at(observed_table, labels, counts)
    observed = float(chi2_statistic(observed_table))
    rows, cols = observed_table.sum(1), observed_table.sum(0)
    expected = np.outer(rows, cols) / max(rows.sum(), 1.0)
    dof = max(int((rows > 0).sum()) - 1, 0) * max(int((cols > 0).sum()) - 1, 0)
    pairs = np.unique(np.stack([strata, labels]), axis=1)[0]  # the (stratum, label) pairs, by stratum
    kinds = np.unique(pairs, return_counts=True)
    varied = kinds[0][kinds[1] > 1]  # strata holding two labels or more
    movable = int(np.isin(strata, varied).sum())
    if movable == 0:  # no stratum holds two labels: every permutation is the observed table
        return PermutationChi2(observed, 1.0, dof, expected, 0, 0)
    # permute within strata: sort by stratum, random keys breaking the ties
    base = np.argsort(strata, kind="stable")
    rng = np.random.default_rng(seed)
    clusters = len(labels)
    cap = max(1, _CHUNK_CELLS // clusters)
    exceed = drawn_so_far = 0
    while drawn_so_far < permutations:
        size = min(cap, permutations - drawn_so_far, max(50, drawn_so_far))  # 50, 50, 100, 200, ... draws
        keys = strata[None, :] + rng.random((size, clusters))
        order = np.argsort(keys, axis=1)  # per draw: the clusters by stratum, in a random order within each
        drawn = np.empty((size, clusters), dtype=int)
        drawn[:, base] = labels[order]  # cluster base[j] takes the label of the j-th of that order
        index = (np.arange(size)[:, None] * n_labels + drawn).ravel()
        onehot = sparse.csr_matrix((np.ones(index.size), (index, np.tile(np.arange(clusters), size))),
                                   shape=(size * n_labels, clusters))
        tables = np.asarray(onehot @ counts).reshape(size, n_labels, counts.shape[1])
        hits = np.cumsum(chi2_statistic(tables) >= observed - _TOL * max(1.0, observed))
        if exceed + hits[-1] >= STOP:  # Besag & Clifford (1991): stop at the STOP-th exceedance, p = STOP / draws
            at = int(np.searchsorted(hits, STOP - exceed)) + 1
            return PermutationChi2(observed, STOP / (drawn_so_far + at), dof, expected, drawn_so_far + at, movable)
        exceed += int(hits[-1])
        drawn_so_far += size
    return PermutationChi2(observed, (1 + exceed) / (1 + permutations), dof, expected, permutations, movable)
