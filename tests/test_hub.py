"""One "is this a Hub repo id" rule (continuousbench/hub.py) for cards, submit, the leaderboard and the
publishing commands. The four rules it replaced disagreed on the cases below."""

from __future__ import annotations

import pytest

from continuousbench.errors import UserError
from continuousbench.hub import check_repo_id, hub_repo_id


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("org/name", "org/name"),
        ("hf://datasets/org/name", "org/name"),  # the leaderboard's links refused it, submit took it
        ("org/na--me", None),  # submit's pattern took it; the Hub refuses "--"
        ("org/name.", None),  # likewise a trailing dot
        ("./org/name", None),
        ("~/org/name", None),
        ("/abs/folder", None),
        ("a/b/c", None),
        ("plain-name", None),
        ("", None),
        (None, None),
    ],
)
def test_hub_repo_id(text, repo):
    assert hub_repo_id(text) == repo


def test_a_local_folder_is_not_a_repo_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "org" / "name").mkdir(parents=True)
    assert hub_repo_id("org/name") is None
    assert check_repo_id("org/name", "--repo") == "org/name"  # a push target is a repo id whatever is here


def test_check_repo_id_is_one_line():
    with pytest.raises(UserError, match=r"--repo 'org/na--me' is not a Hub repo id owner/name \("):
        check_repo_id("org/na--me", "--repo")
    with pytest.raises(UserError, match="exactly one '/'"):
        check_repo_id("name", "--repo")
