"""Article embeddings for clustering: a sentence-transformers model, or TF-IDF + SVD offline.

The encoder is always named explicitly (``--encoder``): ``st:<model folder or id>`` (default
``st:google/embeddinggemma-300m`` with its clustering prompt) or ``tfidf`` (deterministic, no model,
for tests and machines without one). Vectors are computed in float32 (EmbeddingGemma overflows in
float16), L2-normalised and stored as float16; ``encode`` works in chunks that a work folder keeps,
so an interrupted run embeds only what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

DEFAULT_ENCODER = "st:google/embeddinggemma-300m"
CLUSTERING_PROMPT = "task: clustering | query: "  # EmbeddingGemma's prompt for clustering
CHUNK = 50_000  # texts per saved chunk of embeddings


def embedding_text(title: str | None, text: str | None, chars: int = 500) -> str:
    """Title and the start of the article (~first paragraph); the title once even when the text opens
    with it, as trafilatura's texts often do."""
    title, text = (title or "").strip(), (text or "").strip()
    body = text[len(title) :].lstrip() if title and text.startswith(title) else text
    return f"{title}\n{body[:chars]}" if title else body[:chars]


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def tfidf_svd(texts: Sequence[str], dim: int = 256, seed: int = 0) -> np.ndarray:
    """TF-IDF (words and bigrams, English stop words) reduced by truncated SVD: deterministic."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    tfidf = TfidfVectorizer(
        sublinear_tf=True, stop_words="english", ngram_range=(1, 2), max_features=1 << 18, dtype=np.float32
    ).fit_transform(texts)
    k = min(dim, tfidf.shape[1] - 1, len(texts) - 1)
    if k < 2:
        raise ValueError(f"too few articles ({len(texts)}) or words to embed with tfidf; add articles")
    return _normalise(
        TruncatedSVD(n_components=k, random_state=seed % 2**32, algorithm="arpack").fit_transform(tfidf)
    )


class SentenceEncoder:
    """A sentence-transformers model in float32; ``prompt`` is prefixed to every text."""

    def __init__(
        self, model: str, prompt: str = CLUSTERING_PROMPT, batch_size: int = 64, max_length: int = 512
    ):
        import torch
        from sentence_transformers import SentenceTransformer

        device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = SentenceTransformer(model, device=device, model_kwargs={"torch_dtype": torch.float32})
        self.model.max_seq_length = max_length
        self.prompt, self.batch_size = prompt, batch_size

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.model.encode(
            list(texts), prompt=self.prompt or None, batch_size=self.batch_size, convert_to_numpy=True,
            normalize_embeddings=True, show_progress_bar=False,
        )  # fmt: skip
        return _normalise(vectors)


def _save(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as f:  # a file object: np.save would append .npy to a path
        np.save(f, array)


def encode(
    texts: Sequence[str], encoder: str, work: Path, *, prompt: str = CLUSTERING_PROMPT, seed: int = 0
) -> np.ndarray:
    """float16 unit vectors of ``texts``; chunks already in ``work`` are reused (same texts, same order)."""
    if encoder == "tfidf":
        return tfidf_svd(texts, seed=seed).astype(np.float16)
    if not encoder.startswith("st:") or len(encoder) < 4:
        raise ValueError(f"--encoder {encoder!r} is not an encoder: use st:<model folder or id>, or tfidf")
    from continuousbench.files import atomic_write

    work.mkdir(parents=True, exist_ok=True)
    model = None
    chunks = []
    for start in range(0, len(texts), CHUNK):
        path = work / f"chunk-{start // CHUNK:05d}.npy"
        if not path.exists():
            model = model or SentenceEncoder(encoder[3:], prompt)
            vectors = model(texts[start : start + CHUNK]).astype(np.float16)
            atomic_write(path, lambda tmp, v=vectors: _save(tmp, v))
        chunks.append(np.load(path))
    return np.concatenate(chunks) if chunks else np.zeros((0, 1), np.float16)
