"""What evaluators and generators both train with: configs, DP options, model loading, data, the SFT trainer.

Below ``dp/`` and ``harness/`` so that neither imports the other (``tests/test_imports.py`` checks).
"""
