"""The size rule for src/: no function over 80 lines, no class over 400 lines.

A house rule, not an RFC: a function that fits on a screen and a class that reads in one sitting
(docs/development.md). Lines run from ``def`` or ``class`` to the last line of the body,
docstring and comments included, decorators not; nested functions and methods count on their
own and inside what holds them. Alembic's migration scripts are generated and left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
EXCLUDED = SRC / "urnkit" / "resolver" / "migrations"
MAX_FUNCTION_LINES = 80
MAX_CLASS_LINES = 400


def offenders(source: str, path: str) -> list[str]:
    """Each function over :data:`MAX_FUNCTION_LINES` and class over :data:`MAX_CLASS_LINES`
    in ``source``, as ``path:line name (N lines)``; ``name`` is dotted from the module."""
    found: list[str] = []

    def visit(node: ast.AST, outer: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{outer}{child.name}"
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                limit = MAX_CLASS_LINES if isinstance(child, ast.ClassDef) else MAX_FUNCTION_LINES
                if lines > limit:
                    found.append(f"{path}:{child.lineno} {name} ({lines} lines)")
                visit(child, f"{name}.")
            else:
                visit(child, outer)

    visit(ast.parse(source, filename=path), "")
    return found


def test_no_function_or_class_in_src_is_too_long() -> None:
    # House rule, not an RFC: functions <= 80 lines, classes <= 400 lines.
    found = [
        offence
        for path in sorted(SRC.rglob("*.py"))
        if not path.is_relative_to(EXCLUDED)
        for offence in offenders(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not found, (
        f"{len(found)} over the size rule (functions <= {MAX_FUNCTION_LINES} lines, "
        f"classes <= {MAX_CLASS_LINES}):\n" + "\n".join(found)
    )


# The checker itself: it must catch an oversized function or class and accept one at the limit,
# so that the test above fails for the right reason. House rule, not an RFC.


def _function(lines: int, keyword: str = "def", indent: str = "") -> str:
    """A function of exactly ``lines`` lines (two at least)."""
    body = f"{indent}    x = 1\n" * (lines - 1)
    return f"{indent}{keyword} f():\n{body}"


def _class(lines: int) -> str:
    """A class of exactly ``lines`` lines (two at least)."""
    return "class C:\n" + "    x = 1\n" * (lines - 1)


@given(st.integers(min_value=2, max_value=3 * MAX_FUNCTION_LINES))
@settings(deadline=None)  # parsing a long source: a shared machine's load is no finding
def test_checker_judges_a_function_by_its_length(lines: int) -> None:
    found = offenders(_function(lines), "m.py")
    assert found == ([f"m.py:1 f ({lines} lines)"] if lines > MAX_FUNCTION_LINES else [])


@given(st.integers(min_value=2, max_value=2 * MAX_CLASS_LINES))
@settings(deadline=None)  # parsing a long source: a shared machine's load is no finding
def test_checker_judges_a_class_by_its_length(lines: int) -> None:
    found = offenders(_class(lines), "m.py")
    assert found == ([f"m.py:1 C ({lines} lines)"] if lines > MAX_CLASS_LINES else [])


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(_function(MAX_FUNCTION_LINES), [], id="function-at-limit"),
        pytest.param(_function(MAX_FUNCTION_LINES + 1), ["m.py:1 f (81 lines)"], id="function"),
        pytest.param(
            _function(MAX_FUNCTION_LINES + 1, "async def"), ["m.py:1 f (81 lines)"], id="async"
        ),
        pytest.param(
            "class C:\n" + _function(MAX_FUNCTION_LINES + 1, indent="    "),
            ["m.py:2 C.f (81 lines)"],
            id="method",
        ),
        pytest.param(
            "def outer():\n"
            + _function(MAX_FUNCTION_LINES + 1, "async def", indent="    ")
            + "    return f\n",
            ["m.py:1 outer (83 lines)", "m.py:2 outer.f (81 lines)"],
            id="nested",
        ),
        pytest.param(
            "@decorator\n" + _function(MAX_FUNCTION_LINES), [], id="decorator-not-counted"
        ),
        pytest.param(_class(MAX_CLASS_LINES), [], id="class-at-limit"),
        pytest.param(_class(MAX_CLASS_LINES + 1), ["m.py:1 C (401 lines)"], id="class"),
        pytest.param(
            "if True:\n    " + _class(MAX_CLASS_LINES + 1).replace("\n    ", "\n        "),
            ["m.py:2 C (401 lines)"],
            id="class-in-a-block",
        ),
    ],
)
def test_checker_catches_oversized_and_accepts_the_limit(source: str, expected: list[str]) -> None:
    assert offenders(source, "m.py") == expected
