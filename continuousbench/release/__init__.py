"""Releases: id, folder layout, dataset cards, manifest + checksums, write, load + verify, push.

Importing this package does not import ``datasets``; the functions that need it import it when called.
"""

from continuousbench.release.ids import ReleaseId
from continuousbench.release.layout import CONFIGS, default_root, list_releases, release_dir
from continuousbench.release.load import load_release, resolve_release, verify_release
from continuousbench.release.push import push_release
from continuousbench.release.write import write_release, write_umbrella_card

__all__ = [
    "CONFIGS",
    "ReleaseId",
    "default_root",
    "list_releases",
    "load_release",
    "push_release",
    "release_dir",
    "resolve_release",
    "verify_release",
    "write_release",
    "write_umbrella_card",
]
