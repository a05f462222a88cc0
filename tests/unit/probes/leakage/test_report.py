"""The leakage section's side-by-side coefficients and the models their clicks open."""

from __future__ import annotations

import pandas as pd

from biasatlas.probes.leakage.report import answers_models, wide_coefficients


def test_variants_name_their_model_as_the_answers_table_does() -> None:
    variants = ["m1 [theme/choice]", "m1 [theme/generate]", "m2 [theme/choice]", "m3 [ilps]"]
    assert answers_models(variants) == {"m1 [theme/choice]": "m1 (choice)", "m1 [theme/generate]": "m1 (generate)",
                                        "m2 [theme/choice]": "m2", "m3 [ilps]": "m3"}


def test_coefficients_side_by_side() -> None:
    rows = [{"variant": v, "target": "ru", "term": "human_en", "estimate": e, "ci_low": e - 0.01,
             "ci_high": e + 0.01, "n_obs": 192, "p_adj": p, "usable": True}
            for v, e, p in (("m2 [theme/choice]", 0.02, 0.001), ("m1 [theme/choice]", -0.01, 0.5))]
    wide = wide_coefficients(pd.DataFrame(rows))
    assert [c for c in wide.columns if c[0] == "m1 [theme/choice]"] == [
        ("m1 [theme/choice]", h) for h in ("Estimate [95% CI]", "n", "adjusted p", "Usable")]
    assert wide.iloc[0].tolist() == ["ru", "human_en", "-0.010 [-0.020, +0.000]", 192, "0.5", "yes",
                                     "+0.020 [+0.010, +0.030]", 192, "0.001 *", "yes"]
