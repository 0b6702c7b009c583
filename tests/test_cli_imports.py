"""The library's commands start like a small tool: run as ``python -m urnkit`` is, they import no
module of the resolver (``urnkit.resolver``) and none of the ``server`` extra's libraries, which
the resolver's commands load when they run (issue 33, point 4; ``benchmarks/start_bench.py``
times it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import packages_distributions, requires

import pytest

# What the child runs: the command, as ``python -m urnkit`` would, then the modules it imported.
_CHILD = """
import json, sys
from urnkit.cli import main
status = main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

LIBRARY_COMMANDS = [
    ["--version"],
    ["check", "urn:example:a"],
    ["check", "--strict", "URN:NBN:fi-fe2021"],
    ["parse", "urn:example:a?=q"],
    ["normalize", "URN:EXAMPLE:a"],
    ["compare", "urn:example:a", "URN:EXAMPLE:a"],
    ["explain", "urn:isbn:0451450523"],
    ["info", "urn:nbn:de:1234"],
    ["template", "new", "--kind", "urn-namespace", "example"],
]


def server_modules() -> set[str]:
    """The top-level modules of the ``server`` extra's distributions (not urnkit's own extras)."""
    names = set()
    for requirement in requires("urnkit") or []:
        if 'extra == "server"' in requirement and not requirement.startswith("urnkit"):
            found = re.match(r"[A-Za-z0-9._-]+", requirement)
            assert found is not None
            names.add(re.sub(r"[-_.]+", "-", found.group()).lower())
    modules = {
        module
        for module, distributions in packages_distributions().items()
        if any(re.sub(r"[-_.]+", "-", name).lower() in names for name in distributions)
    }
    assert {"sqlalchemy", "fastapi", "uvicorn", "jinja2"} <= modules  # the list is the extra's
    return modules


def imported_by(argv: list[str], tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    directory = tmp_path_factory.mktemp("command")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, cwd=directory
    )
    assert done.returncode in (0, 1), done.stderr
    return set(json.loads(done.stderr.splitlines()[-1]))


@pytest.mark.parametrize("argv", LIBRARY_COMMANDS, ids=" ".join)
def test_library_commands_import_nothing_of_the_server(
    argv: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    modules = imported_by(argv, tmp_path_factory)
    assert "urnkit.cli" in modules  # the command did run in the child
    assert sorted(name for name in modules if name.startswith("urnkit.resolver")) == []
    top = {name.partition(".")[0] for name in modules}
    assert sorted(top & server_modules()) == []


def test_a_resolver_command_still_loads_the_resolver(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    modules = imported_by(["db", "--help"], tmp_path_factory)
    assert "urnkit.resolver.cli" in modules


def test_help_lists_the_resolver_commands_too() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "urnkit", "--help"], capture_output=True, text=True, check=True
    )
    assert {"check", "parse", "serve", "import", "admin"} <= set(
        re.findall(r"^    (\S+)", done.stdout, re.MULTILINE)
    )
