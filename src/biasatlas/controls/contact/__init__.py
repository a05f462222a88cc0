"""The contact probe's positive control: one religion group refused engagement in positive-action prompts.

``data`` (what was planted, the training and held-out prompts), ``build`` (train and measure the adapter),
``check`` (ask the held-out prompts, judge planted vs found), ``groups`` (the group-vs-group test),
``power`` (power curves from the stored answers), ``card`` (control.json and README.md), ``scd`` (Social
Contact Debiasing of the control).
"""
