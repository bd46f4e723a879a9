"""Build benchmarks/RESULTS.md from the benchmarks' results files.

``results/template.md`` holds the page's words, one section per question a user asks; each
line ``<!-- table: BENCHMARK/KEY -->`` in it becomes that table of
``results/BENCHMARK.json``: the command that prints it, the machine, device, versions,
date and commit it ran on, the rows and the lines printed under them. The words say what a
table means; the figures are only in the tables.

    python benchmarks/render.py           # write RESULTS.md (make results)
    python benchmarks/render.py --check   # exit 1 if RESULTS.md is not what the files give
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _results, beside this file

from _results import UNSTATED, markdown, read  # found through the path above

BENCHMARKS = Path(__file__).resolve().parent
TEMPLATE = BENCHMARKS / "results" / "template.md"
OUTPUT = BENCHMARKS / "RESULTS.md"
PLACEHOLDER = re.compile(r"^<!-- table: (?P<benchmark>[\w-]+)/(?P<key>[\w.+-]+) -->$")


COMMIT = re.compile(r"^[0-9a-f]{7,40}$")  # one commit, as _results writes it from a clean checkout


def draft(env: dict) -> list[str]:
    """Why a table's figures are not a result reproduced at a clean commit (empty: they are).

    A table is a result only where one command ran at one clean commit on a stated date;
    a table carried over from elsewhere, measured with uncommitted changes, at several
    commits or none stated, or undated is shown, marked, until its command is run again."""
    reasons = [f"figures {env['source']}"] if env.get("source") else []
    commit = str(env.get("commit", UNSTATED))
    if "uncommitted" in commit:
        reasons.append("measured with uncommitted changes")
    elif commit == UNSTATED:
        reasons.append("commit unstated")
    elif not COMMIT.match(commit):
        reasons.append("not measured at one commit")
    if env.get("date", UNSTATED) == UNSTATED:
        reasons.append("undated")
    return reasons


def mark(env: dict) -> str:
    """The words RESULTS.md puts before a draft table's provenance ("" for a result)."""
    reasons = draft(env)
    if not reasons:
        return ""
    return f"**Not reproduced at a clean commit** ({'; '.join(reasons)}); the command above measures it again. "


def provenance(env: dict) -> str:
    """Where and when, in one line: machine, device, versions, date and commit."""
    packages = ", ".join(f"{name} {version}" for name, version in env.get("versions", {}).items())
    if "torch threads" in env:
        packages += f" ({env['torch threads']} torch threads)"
    date = env.get("date", UNSTATED)
    parts = [
        f"Machine: {env.get('machine', UNSTATED)}",
        f"device: {env.get('device', UNSTATED)}",
        packages or f"versions {UNSTATED}",
        f"date {date}" if date != UNSTATED else "date unstated",
        f"commit {env.get('commit', UNSTATED)}",
    ]
    return mark(env) + "; ".join(parts) + "."


def _table(benchmark: str, key: str, results_dir: Path | None = None) -> dict:
    tables = read(benchmark, results_dir)["tables"]
    if key not in tables:
        raise KeyError(f"results/{benchmark}.json has no table {key!r} (it has {', '.join(tables) or 'none'})")
    return tables[key]


def _where(env: dict) -> dict:
    """An environment less its command: what two tables share when one ran beside the other."""
    return {name: value for name, value in env.items() if name != "command"}


def table_block(benchmark: str, key: str, results_dir: Path | None = None, after: dict | None = None) -> str:
    """One table as RESULTS.md shows it: command, provenance, rows, notes. ``after``: the
    environment of the table shown just before, named by reference when this one's is the same."""
    table = _table(benchmark, key, results_dir)
    env = table["environment"]
    same = after is not None and _where(after) == _where(env)
    if same and after.get("command") == env.get("command"):
        lines = [mark(env) + "The same command, machine, date and commit as the table above:", ""]
    else:
        where = mark(env) + "Machine, device, versions, date and commit as above." if same else provenance(env)
        lines = ["```bash", env.get("command", UNSTATED), "```", "", where, ""]
    if table.get("title"):
        lines += [table["title"], ""]
    lines.append(markdown(table["columns"], table["rows"], table.get("formats")))
    if table.get("notes"):
        lines += ["", *(f"- {note}" for note in table["notes"])]
    return "\n".join(lines)


def placeholders(template: str) -> list[tuple[str, str]]:
    """The (benchmark, key) of every table the template shows, in order."""
    return [(m["benchmark"], m["key"]) for line in template.splitlines() if (m := PLACEHOLDER.match(line.strip()))]


def render(template: str | None = None, results_dir: Path | None = None) -> str:
    template = TEMPLATE.read_text() if template is None else template
    out, previous = [], None
    for line in template.splitlines():
        match = PLACEHOLDER.match(line.strip())
        if match is None:
            out.append(line)
            if line.strip():
                previous = None  # words between two tables: the next one says where it ran in full
            continue
        out.append(table_block(match["benchmark"], match["key"], results_dir, previous))
        previous = _table(match["benchmark"], match["key"], results_dir)["environment"]
    return "\n".join(out).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with RESULTS.md instead of writing it")
    args = parser.parse_args(argv)
    page = render()
    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != page:
            print("benchmarks/RESULTS.md differs from what results/*.json give: run `make results`")
            return 1
        print("benchmarks/RESULTS.md is up to date")
        return 0
    OUTPUT.write_text(page)
    print(f"wrote {OUTPUT.relative_to(BENCHMARKS.parent)} ({len(page.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
