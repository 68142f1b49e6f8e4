"""Text encoders (sentence-transformers, the MAUVE featuriser, TF-IDF) and the Fréchet distance of two sets
of embeddings; below ``news/``'s clustering, ``dp/``'s Private Evolution and ``diagnostics/``' MAUVE."""
