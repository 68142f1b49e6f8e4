"""The one JSON-from-model parser: prose, fences, citations, broken items."""

from __future__ import annotations

import pytest

from continuousbench.llm.parse import json_objects


@pytest.mark.parametrize(
    ("text", "objects", "drops"),
    [
        ('As report [1] and [2] say:\n```json\n[{"fact": "a"}]\n```', [{"fact": "a"}], {}),  # not the "[1]"
        ('[{"fact": "a"}, 3]', [{"fact": "a"}], {"dropped_not_an_object": 1}),
        ('[{"fact": "a"}, {"fact": ', [{"fact": "a"}], {}),  # cut: the whole objects before the cut
        ("[]", [], {}),
        ("Reports [1] and [3] agree.", [], {"dropped_not_an_object": 1}),
        ("no JSON at all", [], {"dropped_malformed_output": 1}),
        ("", [], {"dropped_empty_response": 1}),
        ('{"fact": "a"} and {"fact": "b"}', [{"fact": "a"}, {"fact": "b"}], {}),
        ('[{"fact": "a", "in": [1,],},\n {"fact": "b"},\n]', [{"fact": "a", "in": [1]}, {"fact": "b"}], {}),
        ('[{"fact": "a, ]", "q": "\\", }"}]', [{"fact": "a, ]", "q": '", }'}], {}),  # commas in strings stay
    ],
)
def test_json_objects(text, objects, drops):
    found, stats = json_objects(text)
    assert found == objects and dict(stats) == drops
