"""Diagnostics beside QA accuracy: MAUVE (``continuousbench.diagnostics.mauve``)."""
