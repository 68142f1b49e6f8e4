"""Keep a CPU DP step's freed memory for the next step instead of handing it back to the kernel.

PyTorch has no caching allocator for host memory: every tensor comes from glibc's ``malloc``, which
returns freed memory to the kernel (``munmap`` of blocks above its mmap threshold, a ``trim`` of the
heap's top), so the next step touches fresh pages and pays a page fault for each 4 KiB. A DP-SGD step
frees and re-allocates every record's LoRA gradient (42 MB for the benchmark's model), which also moves
where the activations land: ``benchmarks/dp_step.py``'s model took ~25,000 minor faults a step, 4% of the
step's CPU time, against none for the non-private step (docs/performance.md). Fixed thresholds keep
the memory in the heap, where the next step reuses it. :func:`~continuousbench.dp.dpsgd.make_private`
sets them for a model on CPU. (The evaluator's non-private training showed no such cost: measured, not
changed.)
"""

from __future__ import annotations

import ctypes
import os
import platform

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # glibc's <malloc.h>
MMAP_THRESHOLD = 32 * 2**20  # glibc's largest: blocks above it (a large model's logits) are still mapped
TRIM_THRESHOLD = 2**30  # free memory the heap's top may hold before glibc returns it
TOP_PAD = 256 * 2**20  # address space (not memory) the heap reserves each time it grows
USERS_OWN = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")


def keep_freed_memory() -> bool:
    """Set glibc's thresholds for this process; False (nothing changed) off glibc or where the user set
    one of :data:`USERS_OWN` (theirs win)."""
    if platform.libc_ver()[0] != "glibc" or any(name in os.environ for name in USERS_OWN):
        return False
    libc = ctypes.CDLL(None)
    settings = ((M_MMAP_THRESHOLD, MMAP_THRESHOLD), (M_TRIM_THRESHOLD, TRIM_THRESHOLD), (M_TOP_PAD, TOP_PAD))
    return all(libc.mallopt(option, value) for option, value in settings)
