"""The Space's ranking table: escaped cells, sortable headers, the links of each row."""

from continuousbench import leaderboard as lb
from continuousbench.leaderboard import page


def test_the_html_table_escapes_every_record_string_and_sorts_numbers_by_value(subs, edited):
    attack = '<img src=x onerror=alert(1)>"${alert(2)}'
    rows = lb.rank(
        [
            edited(subs[0], base_model=attack, hub_commit="https://huggingface.co/a/b/commit/" + "c" * 40),
            *subs[1:],
        ],
        "geminon-tiny-2026q1",
    )[1]
    text = page.table_html(rows, "exact_match", "")
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;&quot;${alert(2)}" in text
    # 11 columns, what was made (method, run folder, recipe, why a run is not canonical), and the real
    # run's ranked-choice accuracy (MCQ %, its interval)
    assert text.count("<tr>") == 5 and text.count('<button type="button" class="cb-sort">') == 17
    assert '<a href="https://huggingface.co/a/b/blob/' + "c" * 40 + '/README.md"' in text
    first = text.split("<tbody>")[1].split("</tr>")[0]
    assert '<td class="num" data-value="100.0">100</td>' in first  # EM %: sorted by value, not text
    assert '<td class="num" data-value="Infinity">∞ (non-private)</td>' in first  # ε: by the budget
    header = '<th scope="col" data-type="number" aria-sort="none"><button type="button" class="cb-sort">EM %'
    assert header in text
