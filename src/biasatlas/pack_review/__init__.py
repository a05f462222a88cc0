"""The language packs' checker and native-speaker review (`biasatlas languages check`, `biasatlas languages
review`): they check the packs against the probes' templates and placeholders and render the probes' prompts, so
they sit above the probes; the packs themselves (:mod:`biasatlas.languages`) are data below them.

- :mod:`~biasatlas.pack_review.check`: the packs' checker.
- :mod:`~biasatlas.pack_review.review_sample`: a pack's rendered prompts and the seeded, stratified sample of them.
- :mod:`~biasatlas.pack_review.review`: the review sheet and the record a filled sheet leaves.
"""
