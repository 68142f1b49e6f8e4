"""Fréchet distance between two sets of text embeddings (FID, as Private Evolution reports it).

Each set is summarised by a Gaussian (mean, covariance); the distance is
``|mu_a - mu_b|^2 + tr(S_a) + tr(S_b) - 2 tr((S_a S_b)^{1/2})``.

Written by hand (a dozen lines of numpy) rather than taken from ``pytorch-fid`` / ``torchmetrics``, whose
FID is tied to Inception image features and would be a new dependency. The trace of the matrix square
root is computed as ``sum(sqrt(eig(S_a^{1/2} S_b S_a^{1/2})))``: that matrix is symmetric positive
semi-definite with the same eigenvalues as ``S_a S_b``, so ``eigh`` stays real and stable even when the
covariances are singular (fewer texts than dimensions), where ``scipy.linalg.sqrtm(S_a @ S_b)`` returns
complex noise.
"""

from __future__ import annotations

import numpy as np


def _psd_sqrt(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Fréchet distance between the Gaussians fitted to the rows of ``a`` and of ``b`` (float64 maths)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(
            f"FID needs two matrices with the same number of columns, got {a.shape} and {b.shape}"
        )
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"FID needs at least 2 embeddings per side, got {len(a)} and {len(b)}")
    cov_a = np.cov(a, rowvar=False)
    cov_b = np.cov(b, rowvar=False)
    root_a = _psd_sqrt(cov_a)
    cross = np.linalg.eigvalsh(root_a @ cov_b @ root_a)
    trace_sqrt = float(np.sqrt(np.clip(cross, 0.0, None)).sum())
    mean_term = float(np.sum((a.mean(0) - b.mean(0)) ** 2))
    return max(0.0, mean_term + float(np.trace(cov_a) + np.trace(cov_b)) - 2.0 * trace_sqrt)
