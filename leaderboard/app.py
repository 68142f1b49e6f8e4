"""The ContinuousBench leaderboard, a Hugging Face Space: ranks the records of a results dataset.

``CONTINUOUSBENCH_RESULTS`` names the results dataset: a Hub dataset repo ``org/name`` (default
``continuousbench/results``) or a local folder; records are ranked when their release is known (built
under ``$CONTINUOUSBENCH_HOME`` or a tag of ``$CONTINUOUSBENCH_HUB_REPO``). Everything but the page lives
in :mod:`continuousbench.leaderboard`. Run locally: ``CONTINUOUSBENCH_RESULTS=./results python app.py``
serves http://127.0.0.1:7860/ (``GRADIO_SERVER_PORT`` changes the port); ``python app.py --html
out.html`` writes the same ranking as one static page instead (no server; ``--json`` as data).
"""

from __future__ import annotations

import os
import sys

import gradio as gr

from continuousbench import leaderboard as lb
from continuousbench.leaderboard import page, timeline
from continuousbench.release.layout import default_root

SOURCE = os.environ.get("CONTINUOUSBENCH_RESULTS", "continuousbench/results")
# System fonts: the default theme would fetch web fonts from a third party on every page view.
THEME = gr.themes.Default(font=["system-ui", "sans-serif"], font_mono=["ui-monospace", "monospace"])
INTRO = """# ContinuousBench leaderboard

Few-shot QA accuracy of the same base model continued-pretrained on each submitted corpus (exact match
for Geminon, LLM match for NEWS), with Wilson 95% intervals over the test questions. *vs. the row above*
says whether a submission can be told apart from the one ranked above it: an exact McNemar test on the
questions both answered (p < 0.05) when both records carry per-question outcomes, else whether the two
intervals overlap. *kind* says what was made private: a corpus (DP data) or, for the direct DP fine-tuning
diagnostic, the evaluator itself (a DP model: an upper bound, not a DP synthesis method). Submit with
`continuousbench submit RUN --to <this dataset>`."""
FILTERS = ("track", "kind", "epsilon", "generator", "base_model", "tuning")
RELOAD_S = 600  # results are reloaded on this timer and by the refresh button


def build(source: str) -> gr.Blocks:
    data = {}

    def load() -> str:
        data["subs"], problems = lb.load_submissions(source, lb.ReleaseIndex())
        data["timeline"] = timeline.load_timeline(source)
        return lb.left_out_html(problems)

    left_out_now = load()

    def release_choices(track):
        subs = [s for s in data["subs"] if track in (lb.ALL, s.record["release"]["track"])]
        return lb.releases(subs)

    def ranking(release, track, kind, epsilon, generator, base_model, tuning):
        if not release:
            return "", None, "No valid submission yet."
        filters = {
            "kind": kind,
            "epsilon": epsilon,
            "base_model": base_model,
            "tuning": tuning,
            "generator": generator,
        }
        metric, rows = lb.rank(data["subs"], release, recipes=lb.CANONICAL, **filters)
        _, apart = lb.rank(data["subs"], release, recipes=lb.OTHER, **filters)
        note = (
            f"**{release}**: {len(rows)} canonical-recipe run(s) ranked by `{metric}` on `{lb.PART}`; "
            f"{len(apart)} made with other recipes ranked apart below (not comparable with the main table)."
        )
        note += timeline.annotate(rows, release, data["timeline"])
        tables = page.table_html(rows, metric, source) if rows else "<p>No canonical-recipe run yet.</p>"
        if apart:
            tables += f"<h3>Other recipes ({len(apart)})</h3>" + page.table_html(apart, metric, source)
        return tables, lb.support_figure(rows, metric), note

    def pick_release(release, track):
        options = lb.choices(data["subs"], release) if release else {k: [lb.ALL] for k in FILTERS}
        resets = [gr.Dropdown(choices=options[k], value=lb.ALL) for k in FILTERS if k != "track"]
        return *resets, *ranking(release, track, *[lb.ALL] * (len(FILTERS) - 1))

    def pick_track(track):
        names = release_choices(track)
        first = names[0] if names else None
        return gr.Dropdown(choices=names, value=first), *pick_release(first, track)

    def refresh(release, track):
        html = load()
        names = release_choices(track)
        keep = release if release in names else (names[0] if names else None)
        return html, gr.Dropdown(choices=names, value=keep), *pick_release(keep, track)

    with gr.Blocks(title="ContinuousBench leaderboard") as demo:
        gr.Markdown(INTRO)
        with gr.Row():
            track = gr.Dropdown(
                [lb.ALL, *lb.tracks(data["subs"])], value=lb.ALL, label="track", elem_id="track"
            )
            names = release_choices(lb.ALL)
            release = gr.Dropdown(
                names, value=names[0] if names else None, label="release", elem_id="release"
            )
            kind = gr.Dropdown([lb.ALL], value=lb.ALL, label="kind", elem_id="kind")
            epsilon = gr.Dropdown([lb.ALL], value=lb.ALL, label="ε requested", elem_id="epsilon")
        with gr.Row():
            generator = gr.Dropdown([lb.ALL], value=lb.ALL, label="generator", elem_id="generator")
            base_model = gr.Dropdown([lb.ALL], value=lb.ALL, label="evaluator", elem_id="base-model")
            tuning = gr.Dropdown([lb.ALL], value=lb.ALL, label="tuning", elem_id="tuning")
            reload = gr.Button("Refresh results", elem_id="refresh")
        summary = gr.Markdown(elem_id="summary")
        # Our own table: a click on a header's text sorts it (Gradio's Dataframe sorts from a menu only).
        table = gr.HTML(elem_id="ranking", label="ranking", js_on_load=page.SORT_JS)
        plot = gr.Plot(label="accuracy by support count", elem_id="support-plot")
        left_out = gr.HTML(left_out_now, elem_id="left-out")
        filters = [kind, epsilon, generator, base_model, tuning]
        shown = [table, plot, summary]
        track.input(pick_track, [track], [release, *filters, *shown])
        release.input(pick_release, [release, track], [*filters, *shown])
        for control in filters:
            control.input(ranking, [release, track, *filters], shown)
        reload.click(refresh, [release, track], [left_out, release, *filters, *shown])
        gr.Timer(RELOAD_S).tick(refresh, [release, track], [left_out, release, *filters, *shown])
        demo.load(pick_release, [release, track], [*filters, *shown])
    return demo


if __name__ == "__main__" and len(sys.argv) > 1:  # --html out.html [--json out.json]: no server
    from continuousbench.leaderboard import export

    export.cli(["--results", SOURCE, *sys.argv[1:]])
    sys.exit(0)

demo = build(SOURCE)

if __name__ == "__main__":  # GRADIO_SERVER_NAME / GRADIO_SERVER_PORT choose the address (default :7860)
    folder = os.path.expanduser(SOURCE)
    served = [folder] if os.path.isdir(folder) else []
    # the results' records and the releases' manifests are linked from the page
    demo.launch(theme=THEME, css=page.CSS, allowed_paths=[*served, str(default_root())])
