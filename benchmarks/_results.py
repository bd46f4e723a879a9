"""Benchmark tables as data: what a run printed, kept where RESULTS.md is built from.

Each kept benchmark prints its Markdown tables as it measures and keeps the same rows in
``benchmarks/results/<benchmark>.json``, one table per key (a dataset, a device, a size),
each with the machine, device, package versions, date, commit and command that produced
it. A new run of a table replaces that key's rows and leaves the file's other tables as
they were. ``render.py`` fills ``results/template.md`` with these tables to make
RESULTS.md, so the page says exactly what the scripts measured.

    table = Table("scaling", "cpu", ["N", "s / epoch"], formats={"N": "{:,}", "s / epoch": "{:.2f}"})
    table.add(60000, 9.52)          # printed as a Markdown row, and kept
    table.note("what it means")     # printed under the table, and kept
    table.save()                    # benchmarks/results/scaling.json

A table built with ``keep=False`` (a quick mode) prints the same and writes nothing.

A table is kept only from a clean checkout: with uncommitted changes or untracked files
anywhere in the repository (``benchmarks/results`` aside, where the tables themselves go),
building a kept table or writing one stops the run with one line naming what changed, so
every kept figure belongs to the commit it names. There is no switch to keep one anyway:
commit (or move aside) the changes and run again. Tests point ``REPO`` at a repository of
their own.

A copy of a checkout without its git folder (a GPU machine given the files alone) can keep
tables too when it holds a manifest of its commit, ``SOURCE_MANIFEST``, written from a clean
checkout by ``python benchmarks/_results.py --manifest`` (gpu_carry.sh does): the commit and
each tracked file's git object id. Every listed file must still hold what its id says;
a file changed since is named, and the table refused.
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
# Where tables are kept: benchmarks/results, or $BENCHMARK_RESULTS_DIR (a trial run's folder).
RESULTS_DIR = Path(os.environ.get("BENCHMARK_RESULTS_DIR") or BENCHMARKS / "results")
REPO = BENCHMARKS.parent
# The distributions a table's figures depend on, where installed (their versions only:
# nothing is imported to read them).
PACKAGES = ("torch", "numpy", "scikit-learn", "scipy", "faiss-cpu", "streamlit")
UNSTATED = "unstated"


def _memory_gib() -> int | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    except (ValueError, OSError, AttributeError):
        return None


def versions() -> dict[str, str]:
    """Python's version and each installed package of ``PACKAGES``'s."""
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def device_name(device: str = "cpu") -> str:
    """"CPU", or the GPU's own name for a CUDA device (``torch.cuda.get_device_name``)."""
    if not str(device).startswith("cuda"):
        return "CPU"
    import torch

    return torch.cuda.get_device_name(torch.device(device))


class UncommittedChanges(SystemExit):
    """A kept table refused: the checkout differs from its commit. Uncaught, it ends the run
    with its one-line message (exit status 1) rather than a traceback."""


def changes(repo: Path | None = None) -> list[str]:
    """What ``git status`` lists in the checkout: changed, staged, deleted and untracked
    paths, less ``benchmarks/results`` (the tables a run writes are no change to the code).
    In a copy without git, the listed files of its ``SOURCE_MANIFEST`` that changed. Raises
    ``UncommittedChanges`` where neither can tell (no git and no manifest)."""
    repo = REPO if repo is None else repo
    try:
        status = subprocess.run(["git", "status", "--porcelain", "--", ".", ":(exclude)benchmarks/results"],
                                cwd=repo, capture_output=True, text=True, check=True).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as error:
        if (repo / SOURCE_MANIFEST).is_file():
            return _changed_since_manifest(repo)
        raise UncommittedChanges(f"cannot keep a table: git cannot tell whether {repo} is a clean checkout "
                                 f"and it holds no {SOURCE_MANIFEST} ({error})") from error  # fmt: skip
    return [line[3:] for line in status.splitlines() if line.strip()]


# A copy's manifest: "commit <id>", then "<git object id> <path>" for each tracked file.
SOURCE_MANIFEST = ".whl/source-manifest"


def _object_id(path: Path) -> str:
    """The id git gives the file's content (a link: its target's name)."""
    data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _changed_since_manifest(repo: Path) -> list[str]:
    changed = []
    for line in (repo / SOURCE_MANIFEST).read_text().splitlines()[1:]:
        object_id, name = line.split(" ", 1)
        path = repo / name
        if name.startswith("benchmarks/results/"):
            continue
        if not (path.exists() or path.is_symlink()) or _object_id(path) != object_id:
            changed.append(name)
    return changed


def write_manifest(repo: Path | None = None) -> Path:
    """Write ``SOURCE_MANIFEST`` for a copy of this clean checkout that will lack git."""
    repo = REPO if repo is None else repo
    require_clean(SOURCE_MANIFEST, repo)

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout

    # each entry "<mode> <id> <stage>\t<path>", ended by a NUL (no quoting of odd names)
    listed = [entry.split("\t", 1) for entry in git("ls-files", "-s", "-z").split("\0") if entry]
    lines = [f"commit {git('rev-parse', '--short', 'HEAD').strip()}"]
    lines += [f"{head.split()[1]} {name}" for head, name in listed]
    path = repo / SOURCE_MANIFEST
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def require_clean(what: str, repo: Path | None = None) -> None:
    """Stop with one line naming the changed files if the checkout is not clean."""
    found = changes(repo)
    if found:
        shown = ", ".join(found[:10]) + (f" and {len(found) - 10} more" if len(found) > 10 else "")
        raise UncommittedChanges(f"refusing to write {what}: the checkout has uncommitted changes ({shown}); "
                                 "a kept table is measured at a clean commit, so commit them and run again")  # fmt: skip


def _commit() -> str:
    """The checkout's short commit (a kept table's checkout is clean: ``require_clean``), or
    the one its copy's ``SOURCE_MANIFEST`` names."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        if (REPO / SOURCE_MANIFEST).is_file():
            return (REPO / SOURCE_MANIFEST).read_text().split("\n", 1)[0].removeprefix("commit ")
        return UNSTATED


def command() -> str:
    """How this process was started, as a command run from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        shown = str(script.relative_to(REPO))
    except ValueError:
        shown = sys.argv[0]
    return shlex.join(["python", shown, *sys.argv[1:]])


def environment(device: str = "cpu") -> dict:
    """Where and when a table is measured: machine, device, versions, date, commit, command."""
    from nca_core.util.device import processor_name  # the library's, as the app shows it

    cores, memory = os.cpu_count(), _memory_gib()
    machine = f"{processor_name()}, {cores} cores" + (f", {memory} GiB" if memory else "")
    found = {"machine": machine, "device": device_name(device), "versions": versions()}
    if "torch" in sys.modules:  # the benchmark's own threads, where it trains with torch
        found["torch threads"] = sys.modules["torch"].get_num_threads()
    found["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    found["commit"] = _commit()
    found["command"] = command()
    return found


def machine(device: str = "cpu") -> str:
    """One line naming the machine, device and versions, printed above a table."""
    found = environment(device)
    return describe(found)


def describe(env: Mapping) -> str:
    """An environment in words: machine, device, versions and threads."""
    packages = ", ".join(f"{name} {version}" for name, version in env.get("versions", {}).items())
    threads = f" ({env['torch threads']} torch threads)" if "torch threads" in env else ""
    parts = [env.get("machine", UNSTATED), f"device: {env.get('device', UNSTATED)}"]
    if packages:
        parts.append(packages + threads)
    return "; ".join(parts)


def cell(value, fmt: str | None = None) -> str:
    """One value as a Markdown cell: a number through its column's format, None as "-"."""
    if value is None:
        return "-"
    if fmt is not None and isinstance(value, int | float) and not isinstance(value, bool):
        return fmt.format(value)
    return str(value)


def markdown(columns: Sequence[str], rows: Sequence[Mapping], formats: Mapping[str, str] | None = None) -> str:
    """A Markdown table of ``rows`` (dicts by column name)."""
    formats = formats or {}
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(c), formats.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


class Table:
    """A table printed row by row as it is measured, and kept under ``key`` in
    ``results/<benchmark>.json`` by ``save``.

    Parameters
    ----------
    benchmark : str, the script's name without ``.py`` (the results file's name)
    key : str, which of the benchmark's tables this is (say "cpu", "cuda", "mnist")
    columns : sequence of str, the table's header
    formats : mapping, optional, a column's format for numbers (``"{:.2f}"``)
    title : str, optional, a line printed above the table
    device : str, where the figures were measured ("cpu", "cuda", "cuda:1")
    keep : bool, False for a quick mode: print only, ``save`` writes nothing
    """

    def __init__(self, benchmark: str, key: str, columns: Sequence[str], *, formats: Mapping[str, str] | None = None,
                 title: str = "", device: str = "cpu", keep: bool = True, results_dir: Path | None = None):  # fmt: skip
        self.benchmark, self.key, self.columns = benchmark, key, list(columns)
        self.formats = dict(formats or {})
        self.title, self.device, self.keep = title, device, keep
        self.results_dir = RESULTS_DIR if results_dir is None else Path(results_dir)
        self.rows: list[dict] = []
        self.notes: list[str] = []
        self._printed_header = False
        if keep:  # before measuring, not after an hour's run: the table could not be kept
            require_clean(str(results_path(benchmark, self.results_dir)))

    def _header(self) -> None:
        if not self._printed_header:
            if self.title:
                print(f"{self.title}\n")
            print(markdown(self.columns, [], self.formats), flush=True)
            self._printed_header = True

    def add(self, *values, **named) -> dict:
        """One row, by position in column order or by column name; printed at once."""
        if len(values) > len(self.columns):
            raise ValueError(f"{len(values)} values for {len(self.columns)} columns")
        row = dict(zip(self.columns, values))
        unknown = set(named) - set(self.columns)
        if unknown:
            raise ValueError(f"no such column: {', '.join(sorted(unknown))}")
        row.update(named)
        self.rows.append(row)
        self._header()
        print(markdown(self.columns, [row], self.formats).splitlines()[-1], flush=True)
        return row

    def note(self, text: str) -> None:
        """A line under the table: a ratio, a target, what the rows add up to."""
        if not self.notes:
            self._header()
            print()
        self.notes.append(text)
        print(text, flush=True)

    def as_dict(self) -> dict:
        return {
            "title": self.title, "columns": self.columns, "formats": self.formats, "rows": self.rows,
            "notes": self.notes, "environment": environment(self.device),
        }  # fmt: skip

    def save(self) -> Path | None:
        """Replace this key's table in the benchmark's results file (None: a quick mode)."""
        if not self.keep:
            return None
        return write_table(self.benchmark, self.key, self.as_dict(), self.results_dir)


def results_path(benchmark: str, results_dir: Path | None = None) -> Path:
    return (RESULTS_DIR if results_dir is None else Path(results_dir)) / f"{benchmark}.json"


def read(benchmark: str, results_dir: Path | None = None) -> dict:
    """A benchmark's results file: {"benchmark", "script", "tables": {key: table}}."""
    path = results_path(benchmark, results_dir)
    if not path.exists():
        return {"benchmark": benchmark, "script": f"benchmarks/{benchmark}.py", "tables": {}}
    return json.loads(path.read_text())


def write_table(benchmark: str, key: str, table: Mapping, results_dir: Path | None = None) -> Path:
    """Put ``table`` under ``key`` in the benchmark's file (the file's other keys stay).

    Refuses (``UncommittedChanges``, nothing written) unless the checkout is clean; the file
    is replaced whole, never left half-written."""
    path = results_path(benchmark, results_dir)
    require_clean(str(path))
    found = read(benchmark, results_dir)
    found["tables"][key] = dict(table)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    os.replace(partial, path)
    return path


def key(base: str, *parts) -> str:
    """A table's key from its base name and the options that set it apart (None and empty
    parts left out): ``key("methods", ["mnist"], [30])`` is "methods-mnist-30"."""
    words = [base]
    for part in parts:
        values = part if isinstance(part, list | tuple) else [part]
        words += [re.sub(r"[^\w.+-]+", "_", str(value)).strip("_") for value in values if value not in (None, "")]
    return "-".join(word for word in words if word)


def print_quick(benchmark: str, rows: Sequence[Mapping]) -> None:
    """A quick mode's rows (``quick()``'s, as ``run_all`` collects them), printed as a table
    and kept nowhere."""
    table = Table(benchmark, "quick", ["measure", "ratio", "figures", "target", "met"], keep=False)
    for row in rows:
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.2f}x"
        table.add(row["measure"], ratio, row["value"], row["target"], {True: "met", False: "missed", None: ""}[row["met"]])
    if not rows:
        print("nothing to measure: the data this quick mode needs is missing")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Benchmark tables as data (see the module's docstring).")
    parser.add_argument("--manifest", action="store_true",
                        help=f"write {SOURCE_MANIFEST} for a copy of this clean checkout that will lack git")  # fmt: skip
    if parser.parse_args().manifest:
        print(write_manifest())
    else:
        parser.print_help()
