"""The library never imports the UI: every nca_core module imports without Streamlit.

Each check runs in a fresh interpreter, because this test process may already have
imported Streamlit (the app tests do) and ``sys.modules`` is shared.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nca_core

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
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
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
    for name in ("nca_core.runs", "nca_core.figures", "nca_core.cli", "nca_core.comparison",
                 "nca_core.distributed", "nca_core.live_charts", "nca_core.__main__",
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
        "import importlib, json, sys\n"
        "class NoPlotly:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'plotly':\n"
        "            raise ImportError('plotly is not installed')\n"
        "sys.meta_path.insert(0, NoPlotly())\n"
        "for name in ('nca_core.cli', 'nca_core.runs', 'nca_core.comparison', 'nca_core.demo'):\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'plotly')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_the_package_settings_and_datasets_load_neither_torch_nor_scikit_learn():
    """Reading settings, a link or a dataset list must not wait seconds for torch; the
    public names load their modules on first use."""
    code = (
        "import json, sys, nca_core, nca_core.settings, nca_core.datasets\n"
        "before = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'sklearn', 'scipy'})\n"
        "from nca_core import NCA\n"
        "print(json.dumps([before, NCA.__module__, 'torch' in sys.modules]))\n"
    )
    assert _fresh_python(code) == [[], "nca_core.estimator", True]
    assert set(nca_core.__all__) <= set(dir(nca_core))
