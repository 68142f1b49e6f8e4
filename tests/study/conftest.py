"""The study tests share the NEWS tests' one-machine Slurm stand-in (tests/news/fake_slurm.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "news"))
