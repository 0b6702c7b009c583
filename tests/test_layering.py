"""The resolver's layers (docs/architecture.md): data flows one way, domain → store →
services → representations → web and CLI, so each layer imports only those below it.

Read from the source with :mod:`ast`, every import counted (those inside functions too).
A house rule, not an RFC.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

RESOLVER = Path(__file__).resolve().parent.parent / "src" / "urnkit" / "resolver"
LAYERS = ("domain", "store", "representations", "services", "web", "cli")
# What each layer may import of the resolver's own packages and modules (itself always).
ALLOWED = {
    "domain": set(),
    "representations": {"domain"},
    "store": {"domain"},
    "services": {"domain", "store", "representations", "statistics"},
}
# What the pure layers may import from outside the standard library and urnkit's core.
# python-stdnum checks the ISBNs and ISSNs a record names (docs/dependencies.md).
OUTSIDE = {"domain": {"stdnum"}, "representations": {"werkzeug"}}


def imported(path: Path) -> set[str]:
    """The absolute module names ``path`` imports, and ``module.name`` for each name it
    imports from a module (a name may be a submodule)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def resolver_parts(modules: set[str]) -> set[str]:
    """The resolver's packages and top modules among ``modules`` (``urnkit.resolver.X…``)."""
    parts = {name.split(".")[2] for name in modules if name.startswith("urnkit.resolver.")}
    return {p for p in parts if (RESOLVER / p).is_dir() or (RESOLVER / f"{p}.py").is_file()}


def layer_imports(layer: str) -> dict[str, set[str]]:
    """Each module of ``layer`` (path relative to the resolver) and what it imports."""
    return {
        str(path.relative_to(RESOLVER)): imported(path)
        for path in sorted((RESOLVER / layer).rglob("*.py"))
    }


def test_every_layer_is_a_package_here() -> None:
    assert all((RESOLVER / layer / "__init__.py").is_file() for layer in LAYERS)


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_those_below_it(layer: str) -> None:
    wrong = {
        module: sorted(parts - ALLOWED[layer] - {layer})
        for module, names in layer_imports(layer).items()
        if (parts := resolver_parts(names)) - ALLOWED[layer] - {layer}
    }
    assert wrong == {}


@pytest.mark.parametrize("layer", sorted(OUTSIDE))
def test_the_pure_layers_import_only_the_standard_library(layer: str) -> None:
    allowed = set(sys.stdlib_module_names) | {"urnkit"} | OUTSIDE[layer]
    wrong = {
        module: sorted(tops - allowed)
        for module, names in layer_imports(layer).items()
        if (tops := {name.split(".")[0] for name in names}) - allowed
    }
    assert wrong == {}


def test_the_check_sees_a_wrong_import(tmp_path: Path) -> None:
    source = tmp_path / "wrong.py"
    source.write_text(
        "def late():\n"
        "    from urnkit.resolver.web import app\n"
        "    from urnkit.resolver import store\n"
    )
    assert resolver_parts(imported(source)) == {"web", "store"}
