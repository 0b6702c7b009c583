"""Every docstring example in urnkit runs and prints what it shows (DESIGN.md: docstrings with an
example that runs)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import urnkit

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(urnkit.__path__, prefix="urnkit.")
) + ["urnkit"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
