"""Tidy statistics rows: one shape for every test a probe reports, built below the probes so a probe's summary
and report can make them and every surface above (``summary --json``, the export, the report) reads the same
rows.

- :mod:`~biasatlas.tidy.rows`: the contact and Samaritan rows (computed once by each probe's summarise), the run
  columns (:func:`~biasatlas.tidy.rows.run_info`), the reader text and the detectable effect.
- :mod:`~biasatlas.tidy.disparity`: group disparity rows and the headline in words.
- :mod:`~biasatlas.tidy.languages`: the across-languages rows of contact and Samaritan.
- :mod:`~biasatlas.tidy.columns`: what every exported column means (answers and statistics tables).

The stories, leakage and debias rows are mapped from their summaries by the exporter
(:mod:`biasatlas.export.tidy_other`, :mod:`biasatlas.export.statistics`): the stories' harm rows read the
stories probe's association keys, so they sit above the probes.
"""
