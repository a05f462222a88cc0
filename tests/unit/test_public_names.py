"""`import biasatlas` shows its public API and nothing else."""

from __future__ import annotations

import biasatlas


def test_dir_lists_the_public_api_only() -> None:
    names = dir(biasatlas)
    assert names == sorted(biasatlas.__all__)
    assert not {"Any", "TYPE_CHECKING", "annotations", "_LAZY"} & set(names)
    for name in names:
        assert getattr(biasatlas, name) is not None  # every listed name resolves (the lazy ones on first use)
