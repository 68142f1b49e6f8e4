"""ContinuousBench: does DP synthetic text carry the knowledge of a private corpus?"""

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml reads it from here


def load_release(release_id: str, part: str = "corpus", **kwargs):
    """Load one part of a release (local root first, then the Hub), verifying checksums.

    Thin lazy wrapper so that ``import continuousbench`` stays cheap.
    """
    from continuousbench.release.load import load_release as _load

    return _load(release_id, part, **kwargs)


__all__ = ["__version__", "load_release"]
