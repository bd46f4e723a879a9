"""The public API's docstrings: every exported name shows an example, every example runs as
written and prints what its docstring says, and the estimator documents every attribute a
fit sets."""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import nca_core

FLAGS = doctest.NORMALIZE_WHITESPACE


def examples(name: str) -> list[doctest.DocTest]:
    """The doctests in the docstrings of ``nca_core.<name>`` and of its public members."""
    obj = getattr(nca_core, name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(obj, f"nca_core.{name}", globs={})
    return [t for t in tests if t.examples and not t.name.split(".")[-1].startswith("_")]


@pytest.mark.parametrize("name", nca_core.__all__)
def test_every_exported_name_has_an_examples_section(name):
    assert "\nExamples\n--------\n" in inspect.cleandoc(getattr(nca_core, name).__doc__), name
    assert examples(name), name


@pytest.mark.parametrize("name", nca_core.__all__)
def test_the_examples_run_and_print_what_they_say(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that wrote a file by mistake would write it here
    runner = doctest.DocTestRunner(optionflags=FLAGS, verbose=False)
    for test in examples(name):
        runner.run(test, out=pytest.fail)  # the report names the docstring and the example
    assert runner.summarize(verbose=False).attempted > 0


REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference"


def page_examples() -> list[doctest.DocTest]:
    """The ``>>>`` examples in the fenced Python blocks of the API reference's pages."""
    parser = doctest.DocTestParser()
    return [
        parser.get_doctest(block, {}, f"{page.name}[{i}]", str(page), 0)
        for page in sorted(REFERENCE.glob("*.md"))
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S))
        if ">>>" in block
    ]


@pytest.mark.parametrize("test", page_examples(), ids=lambda test: test.name)
def test_the_reference_pages_examples_run_and_print_what_they_say(test, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doctest.DocTestRunner(optionflags=FLAGS, verbose=False).run(test, out=pytest.fail)


def documented_attributes(doc: str) -> set[str]:
    """The names in the "Attributes" section of a numpydoc docstring."""
    section = inspect.cleandoc(doc).split("\nAttributes\n----------\n", 1)[1].split("\n\n", 1)[0]
    return {name for line in section.splitlines() for name in re.findall(r"^(\w+) :", line)}


@pytest.mark.parametrize("params", [{}, {"encoder": "mlp", "hidden_sizes": (8,), "max_iter": 2}], ids=["map", "mlp"])
def test_the_estimator_documents_every_attribute_a_fit_sets(params):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), np.repeat([0, 1, 2], 10)
    model = nca_core.NCA(n_components=2, random_state=0, **params)
    for _ in model.fit_iter(X, y, eval_every=1):
        pass
    fitted = {name for name in vars(model) if name.endswith("_") and not name.startswith("_")}
    assert fitted - documented_attributes(nca_core.NCA.__doc__) == set()
