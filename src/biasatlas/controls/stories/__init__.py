"""The stories probe's positive control: the characters of one origin (Oceania) nearly always work in the arts.

``data`` (what was planted, the scenario split, training stories, held-out prompts), ``build`` (train and
measure the adapter), ``check`` (generate → extract → mine through the probe, judge), ``keywords`` and
``server`` (the scripted extractor behind an OpenAI-compatible server), ``power`` (power curves from the
stored stories), ``card`` (control.json and README.md), ``validate`` (its part of ``biasatlas validate``).
"""
