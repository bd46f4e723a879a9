"""The library's layers: imports point down, and the library never imports the UI.

The import checks run in a fresh interpreter, because this test process may already have
imported Streamlit (the app tests do) and ``sys.modules`` is shared.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nca_core
from tests.without import run_without

# Imports every module of a package, then reports what it imported and which UI modules
# are loaded. ``__main__`` runs the CLI when imported, so it is imported with ``--help``
# (argparse prints the usage and exits 0 after the module's imports have run).
_IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
names = [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
imported = []
for name in names:
    if name.rsplit(".", 1)[-1] == "__main__":
        sys.argv = [name, "--help"]
        try:
            importlib.import_module(name)
        except SystemExit as exc:
            assert exc.code in (0, None), exc.code
    else:
        importlib.import_module(name)
    imported.append(name)
print(json.dumps({
    "file": package.__file__,
    "walked": names,
    "imported": imported,
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("streamlit", "plotly")),
}))
"""


def _fresh_python(code: str, *args: str, pythonpath: Path | None = None, cwd: Path | None = None) -> dict:
    env = dict(os.environ)
    if pythonpath is not None:  # first, before any folder that holds the packages installed
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), os.environ.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _top_level(loaded: list[str]) -> set[str]:
    return {name.split(".")[0] for name in loaded}


def test_no_nca_core_module_imports_streamlit():
    report = _fresh_python(_IMPORT_EVERY_MODULE, "nca_core")
    assert report["imported"] == report["walked"]
    # The walk reaches the modules most tempted to touch the UI, and the subpackage's modules.
    for name in ("nca_core.runs.run", "nca_core.plots.figures", "nca_core.cli", "nca_core.runs.comparison",
                 "nca_core.training.distributed", "nca_core.plots.live_charts", "nca_core.__main__",
                 "nca_core.datasets", "nca_core.datasets._csv", "nca_core.datasets._download"):  # fmt: skip
        assert name in report["imported"]
    assert "streamlit" not in _top_level(report["loaded"]), report["loaded"]
    # Sanity check that the report sees third-party imports at all: figures draws with plotly.
    assert "plotly" in _top_level(report["loaded"])


def test_importing_nca_core_alone_loads_neither_plotly_nor_streamlit():
    code = (
        "import json, sys, nca_core; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'plotly'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout) == []


def test_the_check_catches_a_module_that_imports_streamlit(tmp_path):
    """A copy of nca_core with one added ``import streamlit`` fails the same check."""
    copy = tmp_path / "nca_core"
    shutil.copytree(Path(nca_core.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    leaky = copy / "datasets" / "_synthetic.py"
    leaky.write_text(leaky.read_text() + "\nimport streamlit  # the mistake this test must catch\n")
    report = _fresh_python(_IMPORT_EVERY_MODULE, "nca_core", pythonpath=tmp_path, cwd=tmp_path)
    assert Path(report["file"]).parent == copy  # the copy, not the installed package, was imported
    assert "streamlit" in _top_level(report["loaded"])


def test_the_command_line_runs_without_plotly():
    """plotly comes with the app extra only; the CLI and what it imports must not need it."""
    code = (
        "import importlib, json\n"
        "for name in ('nca_core.cli', 'nca_core.runs.run', 'nca_core.runs.comparison', 'nca_core.runs.demo'):\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'plotly')))\n"
    )
    assert run_without("plotly", code) == []


def test_the_package_settings_datasets_and_search_costs_load_neither_torch_nor_scikit_learn():
    """Reading settings, a link or a dataset list, or laying out a table of search costs,
    must not wait seconds for torch; the public names load their modules on first use."""
    code = (
        "import json, sys, nca_core, nca_core.config.settings, nca_core.datasets, nca_core.search.costs\n"
        "before = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'sklearn', 'scipy'})\n"
        "from nca_core import NCA\n"
        "print(json.dumps([before, NCA.__module__, 'torch' in sys.modules]))\n"
    )
    assert _fresh_python(code) == [[], "nca_core.estimator.nca", True]


def test_every_public_name_is_defined_where_the_package_says():
    code = (
        "import importlib, json, nca_core\n"
        "missing = [f'{name} in {home}' for name, home in nca_core._HOMES.items()\n"
        "           if not hasattr(importlib.import_module(f'nca_core.{home}'), name)]\n"
        "print(json.dumps([missing, sorted(nca_core.__all__) == sorted(nca_core._HOMES)]))\n"
    )
    assert _fresh_python(code) == [[], True]


# nca_core's packages from the bottom up. A module may import from its own package and from
# packages below it; packages on one rank (objective and search) do not import each other.
LAYERS = (
    ("util",),
    ("config",),
    ("datasets",),
    ("objective", "search"),
    ("training",),
    ("estimator",),
    ("runs",),
    ("plots",),
    ("__init__",),  # the public names, imported on first use from the layers above
    ("cli",),
    ("__main__",),
)
RANK = {package: rank for rank, packages in enumerate(LAYERS) for package in packages}
PACKAGE_ROOT = Path(nca_core.__file__).parent


def _package_of(module: str, root: Path) -> str:
    """The layer of a dotted name inside nca_core: "nca_core.training.loop" -> "training";
    a public name of the package itself ("nca_core.NCA") -> "__init__"."""
    parts = module.split(".")
    if len(parts) > 1 and ((root / parts[1]).is_dir() or (root / f"{parts[1]}.py").exists()):
        return parts[1]
    return "__init__"


def _imports(path: Path, root: Path) -> list[str]:
    """The nca_core modules (dotted) that the file at ``path`` imports, relative ones resolved."""
    own = ["nca_core", *path.relative_to(root).with_suffix("").parts]
    package = own[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None:  # from . import x: each name is a module
                found += [f"{target}.{alias.name}" for alias in node.names]
            else:
                found.append(target)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [name for name in found if name == "nca_core" or name.startswith("nca_core.")]


def _violations(root: Path) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.py")):
        source = path.relative_to(root).parts
        mine = source[0].removesuffix(".py")
        for target in _imports(path, root):
            theirs = _package_of(target, root)
            if theirs == mine or (theirs == "__init__" and mine in ("cli", "__main__")):
                continue
            if theirs not in RANK or mine not in RANK:
                problems.append(f"{'/'.join(source)} imports {target}: a package outside LAYERS")
            elif RANK[theirs] >= RANK[mine]:
                problems.append(f"{'/'.join(source)} ({mine}) imports {target} ({theirs}), which is not below it")
    return problems


def test_every_package_is_in_a_layer():
    packages = {p.name for p in PACKAGE_ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE_ROOT.glob("*.py")}
    assert packages | modules == set(RANK)


def test_imports_point_down_the_layers():
    assert _violations(PACKAGE_ROOT) == []


def test_the_layer_check_catches_an_upward_import(tmp_path):
    """A copy where the objective imports the training loop fails, and so does one where
    the two packages of one rank import each other."""
    copy = tmp_path / "nca_core"
    shutil.copytree(PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    kernels = copy / "objective" / "kernels.py"
    kernels.write_text(kernels.read_text() + "\nfrom ..training.loop import Snapshot\n")
    knn = copy / "search" / "knn.py"
    knn.write_text(knn.read_text() + "\nfrom ..objective import weights\n")
    assert _violations(copy) == [
        "objective/kernels.py (objective) imports nca_core.training.loop (training), which is not below it",
        "search/knn.py (search) imports nca_core.objective (objective), which is not below it",
    ]
