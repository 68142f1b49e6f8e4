"""Stands in for a library that initialises CUDA when imported (tests/study/test_forked.py preloads it in
the fork server): on CPU torch, it only makes ``torch.cuda.is_initialized()`` say so."""

import torch

torch.cuda.is_initialized = lambda: True
