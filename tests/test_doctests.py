"""Every docstring example in urnkit, and the README's examples, run and print what they show."""

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
README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.mark.parametrize("name", ["urnkit", *MODULES])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_readme_examples() -> None:
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 10
    assert result.failed == 0
