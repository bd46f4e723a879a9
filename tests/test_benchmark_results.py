"""benchmarks/_results.py and benchmarks/render.py: a benchmark's tables kept as data, and
RESULTS.md built from them, so the page cannot say what no script printed."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
# Helpers and tools beside the benchmarks, which measure nothing themselves.
NOT_BENCHMARKS = {"_results.py", "_server.py", "render.py", "run_all.py"}


@pytest.fixture(scope="module")
def tools():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("_results"), importlib.import_module("render")
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture
def checkout(tools, tmp_path, monkeypatch):
    """A git repository of one commit (a library file and an earlier table), taken by
    ``_results`` as the checkout whose cleanliness decides whether a table may be kept."""
    results, _ = tools
    repo = tmp_path / "repo"
    (repo / "nca_core").mkdir(parents=True)
    (repo / "nca_core" / "model.py").write_text("STEP = 1\n")
    (repo / "benchmarks" / "results").mkdir(parents=True)
    (repo / "benchmarks" / "results" / "demo.json").write_text('{"benchmark": "demo", "tables": {}}\n')
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "start"]):
        subprocess.run([*git, *command], cwd=repo, check=True, capture_output=True)
    monkeypatch.setattr(results, "REPO", repo)
    return repo


def _kept(results, results_dir):
    table = {"title": "", "columns": ["x"], "formats": {}, "rows": [{"x": 1}], "notes": [], "environment": {}}
    return results.write_table("demo", "cpu", table, results_dir)


@pytest.mark.parametrize("change", ["modified", "untracked", "staged"])
def test_a_table_from_a_changed_checkout_is_refused_and_nothing_is_written(tools, checkout, change):
    results, _ = tools
    results_dir = checkout / "benchmarks" / "results"
    before = (results_dir / "demo.json").read_text()
    changed = {"modified": "nca_core/model.py", "untracked": "notes.txt", "staged": "nca_core/new.py"}[change]
    (checkout / changed).write_text("STEP = 2\n")
    if change == "staged":
        subprocess.run(["git", "add", changed], cwd=checkout, check=True)
    with pytest.raises(results.UncommittedChanges, match=f"refusing to write .*demo.json.*{changed}") as refused:
        _kept(results, results_dir)
    assert "\n" not in str(refused.value)  # one line
    assert (results_dir / "demo.json").read_text() == before
    assert sorted(path.name for path in results_dir.iterdir()) == ["demo.json"]  # no half-written file
    with pytest.raises(results.UncommittedChanges, match=changed):  # refused before anything is measured
        results.Table("demo", "cpu", ["x"], results_dir=results_dir)


def test_a_table_from_a_clean_checkout_is_written(tools, checkout):
    results, _ = tools
    results_dir = checkout / "benchmarks" / "results"
    (results_dir / "earlier.json").write_text("{}\n")  # the tables a run writes change nothing
    table = results.Table("demo", "cpu", ["x"], results_dir=results_dir)
    table.add(1)
    table.save()
    stored = json.loads((results_dir / "demo.json").read_text())
    assert stored["tables"]["cpu"]["rows"] == [{"x": 1}]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True)
    assert stored["tables"]["cpu"]["environment"]["commit"] == head.stdout.strip()


def test_a_table_is_refused_where_git_cannot_tell_the_commit(tools, tmp_path, monkeypatch):
    results, _ = tools
    monkeypatch.setattr(results, "REPO", tmp_path)  # no repository here
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    with pytest.raises(results.UncommittedChanges, match="cannot keep a table"):
        _kept(results, tmp_path)
    assert not (tmp_path / "demo.json").exists()


def test_a_table_prints_its_rows_and_replaces_only_its_own_key(tools, checkout, tmp_path, capsys):
    results, _ = tools
    first = results.Table("demo", "cpu", ["N", "s / epoch"], formats={"N": "{:,}", "s / epoch": "{:.2f}"},
                          results_dir=tmp_path)  # fmt: skip
    first.add(60000, 9.517)
    first.note("at N = 60,000: 5.5x faster")
    first.save()
    other = results.Table("demo", "cuda", ["N"], device="cpu", results_dir=tmp_path)
    other.add(1_000_000)
    other.save()
    again = results.Table("demo", "cpu", ["N", "s / epoch"], results_dir=tmp_path)
    again.add(250000, 9.2)
    again.save()

    printed = capsys.readouterr().out
    assert "| 60,000 | 9.52 |" in printed and "at N = 60,000: 5.5x faster" in printed
    stored = json.loads((tmp_path / "demo.json").read_text())
    assert set(stored["tables"]) == {"cpu", "cuda"}
    assert stored["tables"]["cpu"]["rows"] == [{"N": 250000, "s / epoch": 9.2}]  # numbers stay numbers
    assert stored["tables"]["cuda"]["rows"] == [{"N": 1_000_000}]
    env = stored["tables"]["cpu"]["environment"]
    assert {"machine", "device", "versions", "date", "commit", "command"} <= set(env)
    assert env["device"] == "CPU" and "python" in env["versions"]


def test_a_quick_table_prints_and_writes_nothing(tools, tmp_path, capsys):
    results, _ = tools
    table = results.Table("demo", "cpu", ["a"], keep=False, results_dir=tmp_path)
    table.add(1)
    assert table.save() is None
    assert not (tmp_path / "demo.json").exists()
    assert "| 1 |" in capsys.readouterr().out


def test_a_row_names_only_the_tables_columns(tools, checkout, tmp_path):
    results, _ = tools
    table = results.Table("demo", "cpu", ["a", "b"], results_dir=tmp_path)
    with pytest.raises(ValueError, match="no such column: c"):
        table.add(1, c=2)
    with pytest.raises(ValueError, match="3 values for 2 columns"):
        table.add(1, 2, 3)


def test_the_page_shows_each_table_under_its_command_machine_and_date(tools, checkout, tmp_path):
    results, render = tools
    env = {"machine": "Some CPU, 2 cores", "device": "CPU", "versions": {"python": "3.11.7"}, "date": "unstated",
           "commit": "abc1234", "command": "python benchmarks/demo.py"}  # fmt: skip
    for key in ("first", "second"):
        results.write_table("demo", key, {"title": "", "columns": ["x"], "formats": {"x": "{:.1f}"},
                                          "rows": [{"x": 1.25}], "notes": ["means little"], "environment": env},
                            tmp_path)  # fmt: skip
    page = render.render("# Page\n\nWords.\n\n<!-- table: demo/first -->\n\n<!-- table: demo/second -->\n", tmp_path)
    first, second = page.split("The same command")
    assert "```bash\npython benchmarks/demo.py\n```" in first
    assert "Machine: Some CPU, 2 cores; device: CPU; python 3.11.7; date unstated; commit abc1234." in first
    assert "| 1.2 |" in first and "- means little" in first
    assert "| 1.2 |" in second  # the second table, run beside the first, names it by reference
    with pytest.raises(KeyError, match="no table 'third'"):
        render.render("<!-- table: demo/third -->\n", tmp_path)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"commit": "7ab1c0a with uncommitted changes"}, "measured with uncommitted changes"),
        ({"source": "carried over from the hand-written page"}, "figures carried over from the hand-written page"),
        ({"commit": "unstated"}, "commit unstated"),
        ({"commit": "391f4ab (before) and 03e11d5 (after)"}, "not measured at one commit"),
        ({"date": "unstated"}, "undated"),
        ({}, None),
    ],
)
def test_a_table_not_measured_at_one_clean_commit_is_marked(tools, checkout, tmp_path, changes, reason):
    """Every table carried over, measured on a changed checkout, at several commits or none,
    or undated says so on the page, the second of two tables sharing a command too."""
    results, render = tools
    env = {"machine": "Some CPU, 2 cores", "device": "CPU", "versions": {"python": "3.11.7"}, "date": "2026-11-27",
           "commit": "abc1234", "command": "python benchmarks/demo.py", **changes}  # fmt: skip
    for key in ("first", "second"):
        results.write_table("demo", key, {"title": "", "columns": ["x"], "formats": {}, "rows": [{"x": 1}],
                                          "notes": [], "environment": env}, tmp_path)  # fmt: skip
    page = render.render("<!-- table: demo/first -->\n\n<!-- table: demo/second -->\n", tmp_path)
    first, second = page.split("| 1 |")[:2]
    for block in (first, second):
        if reason is None:
            assert "Not reproduced" not in block
        else:
            assert f"**Not reproduced at a clean commit** ({reason});" in block


def test_results_md_is_what_the_results_files_give(tools):
    """`make results` has been run since the last change to a results file or the template."""
    _, render = tools
    page = render.render()
    assert (BENCHMARKS / "RESULTS.md").read_text() == page
    assert len(page.splitlines()) < 650


def test_every_table_the_page_shows_names_its_device_and_date(tools):
    _, render = tools
    for benchmark, key in render.placeholders(render.TEMPLATE.read_text()):
        env = json.loads((BENCHMARKS / "results" / f"{benchmark}.json").read_text())["tables"][key]["environment"]
        assert env["device"] and env["date"] and env["command"], (benchmark, key)


def test_every_benchmark_keeps_its_tables():
    """Each benchmark script builds a ``Table`` (and so writes results/<name>.json when it
    runs in full) and has a quick mode."""
    for script in sorted(BENCHMARKS.glob("*.py")):
        if script.name in NOT_BENCHMARKS:
            continue
        calls = {node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                 for node in ast.walk(ast.parse(script.read_text())) if isinstance(node, ast.Call)}  # fmt: skip
        assert "Table" in calls, f"{script.name} prints tables that RESULTS.md cannot be built from"
        assert '"--quick"' in script.read_text(), f"{script.name} has no quick mode"


def _stored(benchmark: str, key: str) -> dict:
    return json.loads((BENCHMARKS / "results" / f"{benchmark}.json").read_text())["tables"][key]


@pytest.fixture
def deep_nca(tools, checkout, monkeypatch):
    """benchmarks/deep_nca.py with its training replaced by a record of what it was asked
    (seconds 10 + seed, error 1% + seed / 10), its tables kept in the checkout."""
    results, _ = tools
    module = importlib.import_module("deep_nca")
    monkeypatch.setattr(results, "RESULTS_DIR", checkout / "benchmarks" / "results")
    monkeypatch.setattr(module.datasets, "load", lambda name, download: SimpleNamespace(image_shape=(16, 16)))

    def trained(data, d, params, epochs, budget, every=None, seed=0, shift=0):
        return {"error": 0.01 + seed / 1000, "epochs": epochs, "seconds": 10.2 + seed, "dof": 1.0}

    monkeypatch.setattr(module, "run", trained)
    return module


@pytest.mark.parametrize("suite", ["methods", "longer"])
def test_a_deep_nca_suite_prints_and_keeps_the_table_results_md_shows(deep_nca, checkout, suite, capsys):
    """`deep_nca.py --suite NAME`, the command above the table, gives its columns and its
    rows (dataset, d, method, seed, epochs) in the page's order, as one table."""
    deep_nca.main(["--suite", suite])
    kept = json.loads((checkout / "benchmarks" / "results" / "deep_nca.json").read_text())["tables"][suite]
    shown = _stored("deep_nca", suite)
    assert kept["columns"] == shown["columns"]
    which = ["dataset", "d", "method", "seed", "epochs"]
    assert [[row[c] for c in which] for row in kept["rows"]] == [[row[c] for c in which] for row in shown["rows"]]
    printed = capsys.readouterr().out
    assert printed.count("| dataset | d | method |") == 1  # one table, not one per run
    assert render_row(kept["columns"], kept["rows"][0]) in printed


def render_row(columns, row) -> str:
    return "| " + " | ".join(str(row[c]) for c in columns) + " |"


def test_the_deep_nca_changes_suite_prints_one_row_per_change_over_three_seeds(deep_nca, checkout, capsys):
    deep_nca.main(["--suite", "usps-30-changes"])
    kept = json.loads((checkout / "benchmarks" / "results" / "deep_nca.json").read_text())["tables"]["usps-30-changes"]
    shown = _stored("deep_nca", "usps-30-changes")
    assert kept["columns"] == shown["columns"] and kept["notes"] == shown["notes"]
    assert [row["change from the defaults"] for row in kept["rows"]] == [
        row["change from the defaults"] for row in shown["rows"]
    ]
    first = kept["rows"][0]  # seeds 0, 1, 2: errors 1.0%, 1.1%, 1.2%, 10 to 12 s
    assert [first["seed 0"], first["seed 1"], first["seed 2"], first["mean"]] == ["1.00%", "1.10%", "1.20%", "1.10%"]
    assert first["train time per run (s)"] == "10-12"
    assert "| constant step | 1.00% | 1.10% | 1.20% | 1.10% | 10-12 |" in capsys.readouterr().out


def untrained_network(resolved: dict, fitted: list):
    """A stand-in for network_defaults.py's ``NCA`` that trains nothing: its plan resolves
    "auto" to ``resolved`` under the settings it was given, and each fit appends (the
    largest input, the objective asked for, the seed) to ``fitted``."""

    class Untrained:
        def __init__(self, d, encoder, image_shape, random_state, **settings):
            self.seed, self.settings = random_state, settings

        def fit(self, X, y):
            fitted.append((float(np.max(X)) if len(X) else None, self.settings.get("objective", "auto"), self.seed))
            return self

        def plan(self, shape):
            return SimpleNamespace(settings={**resolved, **self.settings})

    return Untrained


def test_the_network_defaults_suite_prints_and_keeps_the_table_results_md_shows(tools, checkout, monkeypatch, capsys):
    """`network_defaults.py --suite cpu` gives the page's columns and rows (data, d,
    candidate, seeds) in its order, as one table; fits replaced by a record of the seed."""
    results, _ = tools
    module = importlib.import_module("network_defaults")
    monkeypatch.setattr(results, "RESULTS_DIR", checkout / "benchmarks" / "results")
    data = SimpleNamespace(X_train=[], y_train=[0] * 7291, n_features=256, n_classes=10, image_shape=(16, 16))
    monkeypatch.setattr(module.datasets, "load", lambda name, download: data)
    resolved = {"objective": "g", "max_iter": 40, "batch_size": 256, "learning_rate": 0.003}
    monkeypatch.setattr(module, "NCA", untrained_network(resolved, fitted=[]))
    monkeypatch.setattr(module, "five_nn_error", lambda model, data: 0.01 + model.seed / 1000)
    module.main(["--suite", "cpu"])
    kept = json.loads((checkout / "benchmarks" / "results" / "network_defaults.json").read_text())["tables"]["cpu"]
    shown = _stored("network_defaults", "cpu")
    assert kept["columns"] == shown["columns"]

    def which(row):
        return [row["data"], row["d"], row["settings"], row["5-NN test error per seed"].count("%")]

    assert [which(row) for row in kept["rows"]] == [which(row) for row in shown["rows"]]
    assert kept["rows"][0]["resolved (objective, epochs, batch, step)"] == "g, 40, 256, 0.003"
    assert "| USPS | 30 | defaults | g, 40, 256, 0.003 | 1.00%, 1.10%, 1.20% | 1.10% |" in capsys.readouterr().out


@dataclasses.dataclass
class Digits:
    """As much of a dataset as network_defaults.py reads (it scales one with ``replace``)."""

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: tuple = (0, 1, 0, 1)
    n_features: int = 2
    n_classes: int = 2
    image_shape: None = None


def test_the_digits_scaled_suite_prints_and_keeps_the_table_of_input_scales(tools, checkout, monkeypatch, capsys):
    """`network_defaults.py --suite digits-scaled` gives the stored table's columns and rows
    (one per input scale, an error per seed for each candidate) as one table, with the
    largest feature standard deviation of the inputs as each scale leaves them."""
    results, _ = tools
    module = importlib.import_module("network_defaults")
    monkeypatch.setattr(results, "RESULTS_DIR", checkout / "benchmarks" / "results")
    pixels = np.array([[0.0, 16.0], [16.0, 16.0], [0.0, 0.0], [16.0, 0.0]], dtype=np.float32)  # std 8 each
    data = Digits(pixels, pixels)
    monkeypatch.setattr(module.datasets, "load", lambda name, download: data)
    fitted = []
    resolved = {"objective": "mcml", "max_iter": 40, "batch_size": 128, "learning_rate": 0.001}
    monkeypatch.setattr(module, "NCA", untrained_network(resolved, fitted))
    monkeypatch.setattr(module, "five_nn_error", lambda model, data: 0.01 + model.seed / 1000)
    module.main(["--suite", "digits-scaled"])
    kept = json.loads((checkout / "benchmarks" / "results" / "network_defaults.json").read_text())["tables"]
    shown = _stored("network_defaults", "digits-scaled")
    assert kept["digits-scaled"]["columns"] == shown["columns"]
    assert [row["inputs"] for row in kept["digits-scaled"]["rows"]] == [row["inputs"] for row in shown["rows"]]
    assert [row["largest feature std"] for row in kept["digits-scaled"]["rows"]] == ["8.0", "16.0", "32.0"]
    assert [top for top, _, _ in fitted] == [16.0] * 6 + [32.0] * 6 + [64.0] * 6  # each scale, two candidates, three seeds
    assert [objective for _, objective, _ in fitted][:6] == ["auto"] * 3 + ["g"] * 3
    assert kept["digits-scaled"]["notes"] == shown["notes"]
    assert "| x 2 | 16.0 | 1.00%, 1.10%, 1.20% | 1.00%, 1.10%, 1.20% |" in capsys.readouterr().out


def test_exact_epoch_engines_prints_one_row_per_engine_as_results_md_shows(tools, checkout, monkeypatch, capsys):
    """`exact_epoch.py --engines A B` gives the page's two-engine table: its columns, a row
    per commit in order, and the note; the timings here are given, not measured."""
    results, _ = tools
    module = importlib.import_module("exact_epoch")
    monkeypatch.setattr(results, "RESULTS_DIR", checkout / "benchmarks" / "results")
    given = {
        "391f4ab": {"timings": {"epoch": [68.03], "pair floor": [9.72], "encoder": [3.1], "fresh floor": [20.0]},
                    "recomputed": 267494},
        "03e11d5": {"timings": {"epoch": [31.02], "pair floor": [9.75], "encoder": [3.11], "fresh floor": [20.0]},
                    "recomputed": 1038},
    }  # fmt: skip
    args = SimpleNamespace(n=1_000_000, d=32, repeats=1, device="cpu", tf32=False, engines=["391f4ab", "03e11d5"])
    module.engines_table(args, timings_of=lambda rev, args: given[rev])
    kept = json.loads((checkout / "benchmarks" / "results" / "exact_epoch.json").read_text())["tables"]
    table, shown = kept["engines-cpu-1000000"], _stored("exact_epoch", "engines-cuda-1000000")
    assert table["columns"] == shown["columns"] and table["notes"] == shown["notes"]
    assert [row["engine"] for row in table["rows"]] == ["391f4ab", "03e11d5"]
    assert table["rows"][1] == {"engine": "03e11d5", "epoch (s)": "31.02", "pair floor (s)": "9.75",
                                "encoder (s)": "3.11", "epoch / floor": "3.18x", "anchors recomputed": "1,038"}  # fmt: skip
    assert "| 391f4ab | 68.03 | 9.72 | 3.10 | 7.00x | 267,494 |" in capsys.readouterr().out


def test_exact_epoch_exports_the_library_of_each_commit(tools, checkout):
    module = importlib.import_module("exact_epoch")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    (checkout / "nca_core" / "model.py").write_text("STEP = 2\n")
    subprocess.run([*git, "commit", "-q", "-am", "next"], cwd=checkout, check=True)
    for rev, step in (("HEAD~1", "1"), ("HEAD", "2")):
        tree = module.export_engine(rev, checkout.parent / rev.replace("~", "-"))
        assert (tree / "nca_core" / "model.py").read_text() == f"STEP = {step}\n"
        assert not (tree / "benchmarks").exists()


def test_exact_epoch_times_an_engine_in_a_process_of_its_own(tools, data_dir, monkeypatch):
    """The process that times a commit's engine imports that commit's nca_core, not this
    checkout's (engine_timings checks the path the process reports)."""
    module = importlib.import_module("exact_epoch")
    monkeypatch.setenv("NCA_DATA_DIR", str(data_dir))
    args = SimpleNamespace(n=2048, d=4, repeats=1, device="cpu", tf32=False, count_recomputed=False)
    found = module.engine_timings("HEAD", args)
    assert set(found["timings"]) == {"epoch", "pair floor", "encoder", "fresh floor"}
    assert all(len(seconds) == 1 and seconds[0] > 0 for seconds in found["timings"].values())
    assert found["recomputed"] is None


def test_a_copy_without_git_keeps_tables_by_its_manifest_until_a_listed_file_changes(
    tools, checkout, tmp_path, monkeypatch
):
    """A clean checkout's manifest, then a copy of its files alone (no .git), as a GPU
    machine is given them: tables are kept under the manifest's commit; once a listed file
    changes in the copy, they are refused with that file named."""
    results, _ = tools
    manifest = results.write_manifest(checkout)
    copy = tmp_path / "copy"
    shutil.copytree(checkout, copy, ignore=shutil.ignore_patterns(".git"))
    monkeypatch.setattr(results, "REPO", copy)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # no repository above the copy
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True)
    assert manifest.read_text().splitlines()[1:] == [
        f"{results._object_id(checkout / name)} {name}" for name in ("benchmarks/results/demo.json", "nca_core/model.py")
    ]
    kept = results.Table("demo", "cuda", ["x"], device="cpu", results_dir=copy / "benchmarks" / "results")
    kept.add(1)
    kept.save()
    stored = json.loads((copy / "benchmarks" / "results" / "demo.json").read_text())
    assert stored["tables"]["cuda"]["environment"]["commit"] == head.stdout.strip()
    (copy / "nca_core" / "model.py").write_text("STEP = 2\n")
    with pytest.raises(results.UncommittedChanges, match=r"nca_core/model\.py"):
        results.Table("demo", "cuda", ["x"], device="cpu", results_dir=copy / "benchmarks" / "results")


@pytest.mark.parametrize(
    ("line", "epoch", "state"),
    [("Epoch 2.5 / 40 · training · 4.4 s elapsed", 2.5, "training"), ("Epoch 15 / 15 · finished", 15.0, "finished")],
)
def test_the_load_tests_read_a_status_line_within_an_epoch_and_at_its_end(tools, line, epoch, state):
    """A run shows frames within an epoch ("Epoch 2.5"); read as no epoch at all, the load
    test's seconds per epoch came out empty ("n/a") for every wave."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        progress = importlib.import_module("load_test").PROGRESS
    finally:
        sys.path.remove(str(BENCHMARKS))
    match = progress.match(line)
    assert match is not None and float(match[1]) == epoch and match[3].strip() == state
