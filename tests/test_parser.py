"""The one parser: YAML values of list options with choices are checked item by item."""

from dataclasses import dataclass, field

import pytest

from continuousbench.errors import UserError
from continuousbench.parser import CommandParser


@dataclass
class Grid:
    templates: list[str] = field(
        default_factory=lambda: ["direct"], metadata={"choices": ["direct", "reasoning", "structured"]}
    )


def test_a_yaml_list_with_choices_is_checked_per_item(tmp_path):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("templates: [direct, structured]\n")
    bad.write_text("templates: [direct, poem]\n")
    (grid,) = CommandParser(Grid).parse(["--config", str(good)])
    assert grid.templates == ["direct", "structured"]
    with pytest.raises(UserError, match=r"templates = 'poem' is not one of direct, reasoning, structured"):
        CommandParser(Grid).parse(["--config", str(bad)])
