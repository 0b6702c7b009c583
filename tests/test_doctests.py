"""Every docstring example in urnkit, the README's and the docs' examples, run and print what
they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import urnkit

# Alembic migration scripts run only inside Alembic's context; they have no examples to run.
MODULES = [
    info.name
    for info in pkgutil.walk_packages(urnkit.__path__, prefix="urnkit.")
    if not info.name.startswith("urnkit.resolver.migrations")
]
ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


@pytest.mark.parametrize("name", ["urnkit", *MODULES])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_readme_examples() -> None:
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 10
    assert result.failed == 0


@pytest.mark.parametrize("page", DOCS, ids=[page.name for page in DOCS])
def test_docs_examples(page: Path) -> None:
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
