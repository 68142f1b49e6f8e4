"""Classification tasks: the committed fixture, any labelled source, the one-line errors."""

from __future__ import annotations

import json

import pytest

from continuousbench.classification.tasks import FIXTURE, load_task


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_fixture_has_three_splits_and_three_classes():
    task = load_task("fixture")
    assert task.names == ("negative", "neutral", "positive")
    assert {k: len(getattr(task, k)) for k in ("train", "validation", "test")} == {
        "train": 150,
        "validation": 30,
        "test": 60,
    }
    assert set(task.test["label"]) == {0, 1, 2} and not task.notes
    assert sum(p.stat().st_size for p in FIXTURE.glob("*.jsonl")) < 50_000  # small in bytes


def test_a_single_file_is_cut_and_limits_take_seeded_samples(tmp_path):
    rows = [{"review": f"text {i}", "stars": ["bad", "good"][i % 2]} for i in range(50)]
    source = _jsonl(tmp_path / "mine.jsonl", rows)
    task = load_task(str(source), text_column="review", label_column="stars", limits=(20, None, None))
    again = load_task(str(source), text_column="review", label_column="stars", limits=(20, None, None))
    assert task.names == ("bad", "good") and len(task.train) == 20 and len(task.test) == 5
    assert task.train["text"] == again.train["text"]  # seeded
    assert not set(task.test["text"]) & set(task.train["text"])
    assert any("cut 80/10/10" in n for n in task.notes)


def test_a_label_map_names_the_values(tmp_path):
    rows = [{"text": f"t{i}", "label": i % 2} for i in range(20)]
    source = _jsonl(tmp_path / "ints.jsonl", rows)
    assert load_task(str(source), label_map="0=negative,1=positive").names == ("negative", "positive")
    assert load_task(str(source), label_map="negative,positive").names == ("negative", "positive")
    with pytest.raises(ValueError, match="label 1 is not one of 0"):
        load_task(str(source), label_map="0=negative")


@pytest.mark.parametrize(
    ("rows", "options", "message"),
    [
        ([{"text": "a", "y": 0}] * 10, {}, "has no column 'label'"),
        ([{"body": "a", "label": 0}] * 10, {}, "has no column 'text'"),
        ([{"text": f"a{i}", "label": "same"} for i in range(20)], {}, "holds a single class"),
        ([{"text": "a,b", "label": 1}] * 4, {"label_map": "x,,y"}, "has an empty item"),
    ],
)
def test_bad_input_is_one_line(tmp_path, rows, options, message):
    source = _jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(ValueError, match=message) as err:
        load_task(str(source), **options)
    assert "\n" not in str(err.value)


def test_an_empty_split_is_one_line(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    _jsonl(folder / "train.jsonl", [{"text": f"a{i}", "label": i % 2} for i in range(10)])
    _jsonl(folder / "test.jsonl", [{"text": "b", "label": 0}, {"text": "c", "label": 1}])
    (folder / "validation.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_task(str(folder))
    assert "validation" in str(err.value) and "\n" not in str(err.value)


def test_a_preset_without_a_hub_copy_asks_for_the_folder():
    with pytest.raises(ValueError, match="--preset openreview"):
        load_task("openreview")
