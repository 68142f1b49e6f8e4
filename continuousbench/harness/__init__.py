"""The evaluation harness (paper §2.2, App. I): continued pretraining on a candidate corpus, then few-shot QA.

Modules: ``data`` (load a corpus), ``modeling`` (base model + LoRA), ``train`` (TRL continued pretraining),
``config`` (recipe dataclasses), ``prompts`` / ``qa_eval`` (scoring the release's QA), ``run`` (the
``continuousbench evaluate`` / ``recipes/evaluate.py`` entry), ``outputs`` / ``card`` / ``report``.
"""
