"""The names registry: which releases are earlier, and what they used."""

from continuousbench.release.ids import ReleaseId
from continuousbench.release.registry import earlier_under


def test_earlier_means_strictly_earlier_quarters_of_the_track_at_any_size(tmp_path):
    present = ["geminon-tiny-2026q1", "geminon-small-2026q1", "geminon-tiny-2026q2", "geminon-small-2026q3"]
    for rid in [*present, "news-small-2026q1", "geminon-tiny-2026q1-heldout-entity"]:
        (tmp_path / rid).mkdir()
        (tmp_path / rid / "release.json").write_text("{}")
    found = [str(r) for r in earlier_under(ReleaseId.parse("geminon-small-2026q2"), tmp_path)]
    assert found == ["geminon-small-2026q1", "geminon-tiny-2026q1", "geminon-tiny-2026q1-heldout-entity"]
