"""Why the leakage probe has no group-disparity headline (the other probes name the group treated worse).

The leakage model (paper 004, Eq. 1) has one observation per (trait, group) cell of a model and target language
and a random intercept per trait; its coefficients say how much each language's human ratings, of all groups
together, carry into the model's scores. One group alone has one cell per trait: as many observations as
random intercepts, so the same model cannot be fitted per group, and a group-vs-rest contrast of the fitted
coefficients does not exist. The note below says so wherever the leakage results are shown.
"""

from __future__ import annotations

GROUP_NOTE = (
    "No group-disparity headline for leakage: the leakage model has one observation per (trait, group) cell "
    "and a random intercept per trait, so one group alone gives one observation per trait, too few to fit it; "
    "its coefficients describe how a language's human ratings of all groups together carry into the model. "
    "The trait × group matrices show each group's scores, untested."
)
