"""The classic DP text-classification tasks and why they saturate (paper Fig. 1, Fig. 8, App. F).

tasks (presets and any labelled ``datasets`` source), prompts (three templates, reading a reply as a
label), prompted (the grid on the base model), finetune (the downstream classifier), regimes (the four
regimes, with the label-conditioned generators of :mod:`continuousbench.dp.labels`), runs (their results
records), report, tables and figure (saturation.json, the App. F tables, Fig. 8), plan (GPU-hours) and
saturation (the command). It sits beside the harness: it reuses its decoding, and dp's generators.
"""
