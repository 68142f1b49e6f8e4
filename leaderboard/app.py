"""The ContinuousBench leaderboard, a Hugging Face Space: ranks the records of a results dataset.

``CONTINUOUSBENCH_RESULTS`` names the results dataset: a Hub dataset repo ``org/name`` (default
``continuousbench/results``) or a local folder. Everything but the page lives in
:mod:`continuousbench.leaderboard`. Run locally: ``CONTINUOUSBENCH_RESULTS=./results python app.py``.
"""

from __future__ import annotations

import os

import gradio as gr

from continuousbench import leaderboard as lb

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
FILTERS = ("kind", "epsilon", "base_model", "tuning")


def build(source: str) -> gr.Blocks:
    subs, problems = lb.load_submissions(source)
    releases = lb.releases(subs)

    def ranking(release, kind, epsilon, base_model, tuning):
        if release is None:
            return None, None, "No valid submission yet."
        metric, rows = lb.rank(
            subs, release, kind=kind, epsilon=epsilon, base_model=base_model, tuning=tuning
        )
        plural = "" if len(rows) == 1 else "s"
        note = f"**{release}**: {len(rows)} submission{plural} ranked by `{metric}` on `{lb.PART}`."
        return lb.table(rows, metric), lb.support_figure(rows, metric), note

    def pick_release(release):
        options = lb.choices(subs, release) if release else {k: [lb.ALL] for k in FILTERS}
        resets = [gr.Dropdown(choices=options[k], value=lb.ALL) for k in FILTERS]
        return *resets, *ranking(release, *[lb.ALL] * len(FILTERS))

    with gr.Blocks(title="ContinuousBench leaderboard") as demo:
        gr.Markdown(INTRO)
        with gr.Row():
            release = gr.Dropdown(releases, value=releases[0] if releases else None, label="release",
                                  elem_id="release")  # fmt: skip
            kind = gr.Dropdown([lb.ALL], value=lb.ALL, label="kind (DP data or DP model)", elem_id="kind")
            epsilon = gr.Dropdown([lb.ALL], value=lb.ALL, label="ε (privacy budget)", elem_id="epsilon")
            base_model = gr.Dropdown([lb.ALL], value=lb.ALL, label="base model", elem_id="base-model")
            tuning = gr.Dropdown([lb.ALL], value=lb.ALL, label="tuning", elem_id="tuning")
        summary = gr.Markdown(elem_id="summary")
        table = gr.Dataframe(interactive=False, wrap=True, elem_id="ranking", label="ranking")
        plot = gr.Plot(label="accuracy by support count", elem_id="support-plot")
        if problems:
            gr.Markdown("Left out (invalid records):\n\n" + "\n".join(f"- `{p}`" for p in problems))
        filters = [release, kind, epsilon, base_model, tuning]
        release.input(pick_release, [release], [*filters[1:], table, plot, summary])
        for control in filters[1:]:
            control.input(ranking, filters, [table, plot, summary])
        demo.load(pick_release, [release], [*filters[1:], table, plot, summary])
    return demo


demo = build(SOURCE)

if __name__ == "__main__":  # GRADIO_SERVER_NAME / GRADIO_SERVER_PORT choose the address
    demo.launch(theme=THEME)
