"""Positive controls: LoRA adapters of the embedded model with a planted bias of known size.

Each control says what was planted (which group, in which direction, in which languages), which of
the probe's own prompts trained it and which held-out prompts measure it. ``scripts/build_controls.py``
trains the adapters (:mod:`biasatlas.controls.contact.build`), ``biasatlas validate`` and the integration
tests run the probe on them (:mod:`biasatlas.controls.common.measure`) and check that the planted group is
found, in the planted direction, and that the untouched groups are not.
"""
