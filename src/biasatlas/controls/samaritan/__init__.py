"""The Samaritan probe's positive control: one age group ("Teenager") rated 25 points below the control.

``data`` (what was planted, the scenario split, training and held-out prompts), ``build`` (train and
measure the adapter), ``check`` (ask held-out scenarios, the probe's group-vs-control analysis, judge),
``power`` (power curves from the stored answers), ``card`` (control.json and README.md), ``validate``
(its part of ``biasatlas validate``).
"""
