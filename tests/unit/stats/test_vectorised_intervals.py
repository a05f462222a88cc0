"""The vectorised intervals give the very floats of their scalar forms (the summary's numbers rest on it)."""

from __future__ import annotations

import math

import numpy as np

from biasatlas.stats.paired import newcombe_paired_ci, newcombe_paired_cis
from biasatlas.stats.proportions import wilson_interval, wilson_intervals


def test_wilson_intervals_equal_the_scalar_one_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    n = np.concatenate([[0, 1, 2, 7, 1000, 123457], rng.integers(0, 400, 300)])
    counts = np.array([int(rng.integers(0, k + 1)) for k in n])
    counts[:4] = [0, 1, 0, 7]  # the edges: none, all
    for alpha in (0.05, 0.01):
        low, high = wilson_intervals(counts, n, alpha)
        for c, k, lo, hi in zip(counts.tolist(), n.tolist(), low.tolist(), high.tolist(), strict=True):
            want = wilson_interval(c, k, alpha)
            if k == 0:
                assert math.isnan(lo) and math.isnan(hi) and all(math.isnan(w) for w in want)
            else:
                assert (lo, hi) == want  # exact: the same arithmetic element by element


def test_wilson_intervals_of_nothing() -> None:
    low, high = wilson_intervals(np.array([], int), np.array([], int))
    assert len(low) == len(high) == 0


def test_newcombe_paired_cis_equal_the_scalar_one_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    tables = rng.integers(0, 30, size=(400, 4))
    tables[:3] = [[0, 0, 0, 0], [5, 0, 0, 5], [0, 9, 0, 0]]  # empty, no discordant pair, all one way
    got = newcombe_paired_cis(*tables.T)
    for row, (low, high) in zip(tables.tolist(), got, strict=True):
        want = newcombe_paired_ci(*row)
        if sum(row) == 0:
            assert math.isnan(low) and math.isnan(high)
        else:
            assert (low, high) == want
    assert newcombe_paired_cis(*np.zeros((0, 4), int).T) == []
