"""The one place text becomes vectors: sentence-transformers models, a causal LM's mean-pooled states
(the MAUVE featuriser, also Private Evolution's fallback), and TF-IDF + SVD offline.

News clustering: the encoder is always named explicitly (``--encoder``): ``st:<model folder or id>`` (default
``st:google/embeddinggemma-300m`` with its clustering prompt) or ``tfidf`` (deterministic, no model,
for tests and machines without one). Vectors are computed in float32 (EmbeddingGemma overflows in
float16), L2-normalised and stored as float16; ``encode`` works in chunks that a work folder keeps,
so an interrupted run embeds only what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from continuousbench.errors import UserError

DEFAULT_ENCODER = "st:google/embeddinggemma-300m"
CLUSTERING_PROMPT = "task: clustering | query: "  # EmbeddingGemma's prompt for clustering
CHUNK = 50_000  # texts per saved chunk of embeddings
Embedder = Callable[[Sequence[str]], np.ndarray]


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
        raise UserError(f"too few articles ({len(texts)}) or words to embed with tfidf; add articles")
    return _normalise(
        TruncatedSVD(n_components=k, random_state=seed % 2**32, algorithm="arpack").fit_transform(tfidf)
    )


class SentenceEncoder:
    """A sentence-transformers model in float32; ``prompt`` is prefixed to every text; rows are unit
    vectors unless ``normalize=False`` (Private Evolution votes on the model's own geometry)."""

    def __init__(
        self,
        model: str,
        prompt: str = CLUSTERING_PROMPT,
        batch_size: int = 64,
        max_length: int = 512,
        normalize: bool = True,
    ):
        import torch
        from sentence_transformers import SentenceTransformer

        from continuousbench import processes

        device = processes.device()
        self.model = SentenceTransformer(model, device=device, model_kwargs={"torch_dtype": torch.float32})
        self.model.max_seq_length = max_length
        self.prompt, self.batch_size, self.normalize = prompt, batch_size, normalize

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.model.encode(
            list(texts),
            prompt=self.prompt or None,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=self.normalize,
            show_progress_bar=False,
        )
        return _normalise(vectors) if self.normalize else np.asarray(vectors, dtype=np.float32)


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
        raise UserError(f"--encoder {encoder!r} is not an encoder: use st:<model folder or id>, or tfidf")
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


@lru_cache(maxsize=2)  # candidate and reference are embedded by the same model: load it once
def _load_encoder(model_path: str):
    import torch
    from transformers import AutoModel

    from continuousbench.loader import load_tokenizer

    if not Path(model_path).is_dir():
        raise FileNotFoundError(f"embedding model folder {model_path} does not exist: pass --model <folder>")
    tokenizer = load_tokenizer(model_path, option="embedding model")
    if tokenizer.pad_token is None:  # causal LMs ship without one; padded positions are masked anyway
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    model = AutoModel.from_pretrained(model_path, dtype=torch.float32)  # a causal LM loads as its base model
    model.eval()
    return tokenizer, model


def embed_texts(
    texts: Sequence[str], model_path: str | Path, batch_size: int = 32, max_length: int = 256
) -> np.ndarray:
    """One float32 row per text: the attention-masked mean of the model's last hidden states."""
    import torch

    if not texts:
        raise UserError("no texts to embed: pass a non-empty corpus")
    tokenizer, model = _load_encoder(str(model_path))
    order = sorted(
        range(len(texts)), key=lambda i: len(texts[i])
    )  # similar lengths share a batch: less padding
    rows = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            enc = tokenizer(
                [texts[i] for i in idx],
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            ).to(model.device)
            hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            rows[idx] = pooled.float().cpu().numpy()
    return rows


def make_embedder(model_path: str, batch_size: int = 32, max_length: int = 256) -> Embedder:
    """Texts -> float32 rows: a sentence-transformers folder (has ``modules.json``) through its own
    pipeline, any other encoder or causal LM folder through the MAUVE featuriser (mean-pooled states)."""
    path = Path(model_path)
    if not path.is_dir():
        raise FileNotFoundError(
            f"--embedding_model {model_path} does not exist: pass a local sentence-transformers, encoder "
            "or causal LM folder"
        )
    if (path / "modules.json").is_file():
        return SentenceEncoder(str(path), "", batch_size, max_length, normalize=False)
    return lambda texts: embed_texts(list(texts), path, batch_size=batch_size, max_length=max_length)
