"""The selection's rows gathered as columns from the pools, against the ``Draft`` objects they stand for."""

from __future__ import annotations

import numpy as np

from continuousbench.geminon.realizers import make_realizer
from continuousbench.geminon.selection import _rows, row_schema, select_public
from continuousbench.geminon.sizes import get_size
from continuousbench.geminon.world import build_world


def test_selected_columns_are_the_rows_of_the_drafts():
    spec = get_size("tiny")
    world = build_world(spec, 0)
    chosen = select_public(
        world,
        spec.mix,
        make_realizer("template"),
        draft_rng=np.random.default_rng(1),
        sample_rng=np.random.default_rng(2),
        oversample=2.0,
        rounds=5,
    )
    table = chosen.columns()
    assert table.schema == row_schema() and len(table) == sum(spec.mix.values())
    assert table.to_pydict() == _rows([(d, "public") for d in chosen.drafts])
    assert len({tuple(m) for m in table.column("mentions").to_pylist()}) > 100  # not one row repeated
