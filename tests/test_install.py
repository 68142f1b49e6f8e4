"""The install pins work on a stock package index, and the CPU build's index is one Makefile variable."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def test_constraints_pin_public_versions_only():
    """A local label (``2.13.0+cpu``) exists only on the index that built it: a stock index then cannot
    satisfy the constraint, while a plain pin accepts the CPU index's ``+cpu`` build too (PEP 440)."""
    pins = [
        Requirement(line.split("#")[0])
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    local = [str(r) for r in pins for s in r.specifier if Version(s.version).local]
    assert not local, local
    torch = next(r for r in pins if r.name == "torch")
    assert str(torch.specifier) == "==2.13.0" and torch.specifier.contains("2.13.0+cpu")


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
@pytest.mark.parametrize("index", ["", "https://wheels.example/whl/cpu"])
def test_the_torch_index_is_a_make_variable(index):
    dry = subprocess.run(
        ["make", "-n", "-B", ".venv/.installed", f"TORCH_INDEX_URL={index}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in dry.splitlines() if x.rstrip().endswith(" torch"))
    assert "-c constraints.txt" in line
    assert (f"--index-url {index}" in line) if index else ("--index-url" not in line)


# Import names whose distribution is spelled otherwise.
DISTRIBUTIONS = {"yaml": "pyyaml", "sklearn": "scikit-learn", "faiss": "faiss-cpu", "mauve": "mauve-text"}


def test_every_library_the_package_imports_is_declared():
    """A library imported by continuousbench itself is a dependency in pyproject.toml (core or an extra),
    not only something another dependency happens to install today."""
    import ast
    import sys
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]
    declared = {Requirement(r).name.lower().replace("_", "-") for r in requirements}
    imported = set()
    for path in (ROOT / "continuousbench").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"continuousbench"}
    missing = sorted(m for m in third_party if DISTRIBUTIONS.get(m, m).replace("_", "-") not in declared)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


@pytest.mark.xdist_group("grouping-check")
def test_make_test_keeps_an_xdist_group_on_one_worker(request):
    """``make test`` (``--dist loadgroup``) runs a file marked ``xdist_group`` on one worker, which builds its
    module fixtures once. xdist does it by renaming the test ``<id>@<group>`` on each worker; where it
    cannot (pytest-xdist 3.8 under pytest 9.2, which renamed the attribute it rewrites), the file's tests
    are spread as if unmarked and both workers build its fixtures, minutes of CI time, silently."""
    if not getattr(request.config.option, "loadgroup", False):  # set on xdist's workers
        pytest.skip("not run under --dist loadgroup")
    assert request.node.nodeid.endswith("@grouping-check"), (
        f"pytest {pytest.__version__} with this pytest-xdist does not group: install constraints.txt's pins"
    )
