import pytest

from continuousbench.release.ids import ReleaseId


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("geminon-small-2026q1", ReleaseId("geminon", "small", 2026, 1)),
        ("geminon-tiny-2025q4", ReleaseId("geminon", "tiny", 2025, 4)),
        ("news-medium-2027q2", ReleaseId("news", "medium", 2027, 2)),
    ],
)
def test_parse_round_trips(text, expected):
    rid = ReleaseId.parse(text)
    assert rid == expected
    assert str(rid) == text
    assert ReleaseId.parse(rid) is rid


@pytest.mark.parametrize(
    "text",
    [
        "",
        "geminon-small",
        "geminon-small-2026",
        "geminon-small-2026q0",
        "geminon-small-2026q5",
        "geminon-huge-2026q1",
        "pokemon-small-2026q1",
        "Geminon-small-2026q1",
        "geminon-small-26q1",
        "geminon-small-2026Q1",
        "geminon-small-2026q1-extra",
    ],
)
def test_bad_ids_raise_one_line_with_expected_form(text):
    with pytest.raises(ValueError, match="expected") as err:
        ReleaseId.parse(text)
    message = str(err.value)
    assert "\n" not in message
    assert "geminon-small-2026q1" in message


def test_direct_construction_is_validated():
    with pytest.raises(ValueError, match="quarter 1-4"):
        ReleaseId("geminon", "small", 2026, 7)


def test_period():
    assert ReleaseId.parse("geminon-small-2026q3").period == "2026q3"
