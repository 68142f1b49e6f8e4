"""The study in miniature, offline: ``continuousbench demo`` (:mod:`.demo`), the tiny base model's
pretraining on a disjoint Geminon world (:mod:`.pretrain`) and the tiny model factory (:mod:`.tinymodel`).

The demo's study file (``study.yaml``), recipes (``configs/*.yaml``) and base model (``base/``) are package
data, so a wheel install runs the demo too.
"""
