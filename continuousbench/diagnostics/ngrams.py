"""Word n-gram overlap between corpora, hashed over whole-corpus arrays (the fresh gate's corpus check)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

NGRAM = 13  # words: long enough that template phrasing, not shared facts, is what unrelated corpora share
_WORD = re.compile(r"\w+")


class NgramHasher:
    """Word ``n``-grams of many texts as 64-bit hashes, the same for the same words in every corpus.

    Words get ids from one shared vocabulary; an n-gram's hash is a polynomial in those ids (numpy's
    uint64 arithmetic wraps, which is the modulus), built in ``n`` vectorised steps over all documents
    at once, so memory stays a few arrays of the corpus's length (no n-gram is materialised).
    """

    BASE = np.uint64(1_000_003)

    def __init__(self, n: int = NGRAM):
        self.n = n
        self.vocab: dict[str, int] = {}

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(hashes, document index of each hash), n-grams crossing documents left out."""
        from array import array

        ids, lengths = array("q"), array("q")
        for text in texts:
            words = [self.vocab.setdefault(w, len(self.vocab) + 1) for w in _WORD.findall(text.lower())]
            ids.extend(words)
            lengths.append(len(words))
        doc_of = np.repeat(np.arange(len(lengths)), np.frombuffer(lengths, np.int64))
        count = len(ids) - self.n + 1
        if count < 1:
            return np.zeros(0, np.uint64), np.zeros(0, np.int64)
        words = np.frombuffer(ids, np.int64).astype(np.uint64)
        hashes = np.zeros(count, np.uint64)
        with np.errstate(over="ignore"):
            for j in range(self.n):
                hashes = hashes * self.BASE + words[j : j + count]
        within = doc_of[:count] == doc_of[self.n - 1 :]
        return hashes[within], doc_of[:count][within]


def corpus_overlap(
    texts: Sequence[str], earlier: Sequence[Sequence[str]], n: int = NGRAM
) -> tuple[float, int, np.ndarray]:
    """(share of the distinct ``n``-grams of ``texts`` found in any ``earlier`` corpus, how many distinct
    n-grams ``texts`` has, each document's share of its own distinct n-grams found earlier)."""
    hasher = NgramHasher(n)
    before = [hasher(other)[0] for other in earlier]
    old = np.unique(np.concatenate(before)) if before else np.zeros(0, np.uint64)
    hashes, doc_of = hasher(texts)
    order = np.lexsort((hashes, doc_of))  # each n-gram once per document
    hashes, doc_of = hashes[order], doc_of[order]
    first = np.ones(len(hashes), bool)
    first[1:] = (hashes[1:] != hashes[:-1]) | (doc_of[1:] != doc_of[:-1])
    hashes, doc_of = hashes[first], doc_of[first]
    hit = np.isin(hashes, old)
    distinct, where = np.unique(hashes, return_index=True)
    overlap = float(hit[where].mean()) if len(distinct) else 0.0
    per_doc = np.bincount(doc_of, weights=hit, minlength=len(texts)) / np.maximum(
        np.bincount(doc_of, minlength=len(texts)), 1
    )
    return overlap, int(len(distinct)), per_doc
