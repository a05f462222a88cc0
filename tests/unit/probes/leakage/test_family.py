"""The multiple-testing family of the leakage fits: the cross-language human coefficients only."""

from __future__ import annotations

import pytest

from biasatlas.probes.leakage.data import LANGUAGES
from biasatlas.probes.leakage.model import Coefficient, LeakageFit, correct, flows


def _fit(target: str, p_by_source: dict[str, float], variant: str = "m") -> LeakageFit:
    fit = LeakageFit(variant=variant, target=target, formula="model_score ~ human_en + human_ru + human_zh + human_hi",
                     n_obs=600, n_traits=32, n_groups=19, zero_fill=False)
    fit.coefficients.append(Coefficient("Intercept", None, 0.1, 0.01, 10.0, 1e-20, 0.08, 0.12))
    for source in LANGUAGES:
        p = p_by_source[source]
        fit.coefficients.append(Coefficient(f"human_{source}", source, 0.02, 0.01, 2.0, p, 0.0, 0.04))
    return fit


def _four_targets(variant: str = "m") -> list[LeakageFit]:
    """Twelve cross-language tests: one at p = 0.01, eleven far from significance; own-language p ~ 0."""
    fits = []
    for target in LANGUAGES:
        ps = {source: (1e-12 if source == target else 0.8) for source in LANGUAGES}
        if target == "hi":
            ps["en"] = 0.01
        fits.append(_fit(target, ps, variant))
    return fits


@pytest.mark.parametrize(("method", "expected"), [("bh", 0.12), ("bonferroni", 0.12), ("holm", 0.12)])
def test_one_small_p_among_twelve_cross_language_terms_adjusts_without_the_own_language_terms(
    method: str, expected: float
) -> None:
    fits = _four_targets()
    correct(fits, alpha=0.05, method=method)
    hi = next(f for f in fits if f.target == "hi")
    en_to_hi = next(c for c in hi.coefficients if c.source == "en")
    # 12 tests: BH gives 0.01 · 12 / 1 = 0.12 (0.032 if the four own-language terms joined the family).
    assert en_to_hi.p_adj == pytest.approx(expected)
    assert en_to_hi.significant is False
    for fit in fits:
        for coef in fit.coefficients:
            if coef.source is None or coef.source == fit.target:
                assert coef.p_adj is None and coef.significant is None, (fit.target, coef.term)
            else:
                assert coef.p_adj is not None
    assert flows(fits).empty


def test_the_family_holds_exactly_the_cross_language_terms_of_usable_fits() -> None:
    fits = _four_targets()
    fits[0].error = "too little data"  # a fit that was not made adds nothing to the family
    correct(fits, method="bonferroni")
    hi = next(f for f in fits if f.target == "hi")
    en_to_hi = next(c for c in hi.coefficients if c.source == "en")
    assert en_to_hi.p_adj == pytest.approx(0.09)  # 9 tests left
    assert all(c.p_adj is None for c in fits[0].coefficients)
