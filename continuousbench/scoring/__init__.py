"""Scoring: answer normalisation and matchers, the LLM judge and its calibration gate, the metric."""
