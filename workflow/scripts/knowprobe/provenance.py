"""What a rule's script imports: the knowprobe modules it runs and the third-party packages it needs.

Snakemake reruns a rule when its script changes, not when a module the script imports does. Each
rule therefore declares, as inputs, the files of every knowprobe module its script reaches
(transitively, lazy imports inside functions included), derived here from the source, so the
declaration cannot fall behind an edit. The same walk gives the third-party packages each
rule's conda env must hold (tests/test_envs.py).
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT_NAME = "knowprobe"


def _module_file(parts: list[str]) -> Path | None:
    """The file of knowprobe module ``parts`` (relative to the package), or None."""
    base = PACKAGE.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _package_parts(path: Path) -> list[str]:
    """The dotted location, within knowprobe, of the package that holds ``path``."""
    return list(path.parent.relative_to(PACKAGE).parts)


def _with_parents(path: Path) -> list[Path]:
    """A module and the ``__init__.py`` of each package above it, which importing it runs."""
    files = [path]
    for depth in range(len(_package_parts(path)) + 1):
        init = PACKAGE.joinpath(*_package_parts(path)[:depth], "__init__.py")
        if init != path and init.is_file():
            files.append(init)
    return files


def _imports(path: Path) -> tuple[tuple[Path, ...], frozenset[str]]:
    """The knowprobe module files and the third-party top-level names one file imports."""
    # every rule's inputs walk the same modules (the Snakefile asks for about 100 rules, at parse
    # time and again for each job's input function): each file is parsed once a process, and
    # again only once it changed
    stat = path.stat()
    return _parsed_imports(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _parsed_imports(path: Path, mtime_ns: int, size: int) -> tuple[tuple[Path, ...], frozenset[str]]:
    inside = path.is_relative_to(PACKAGE)
    modules, third_party = [], set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [(alias.name.split("."), []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            if node.level:  # relative: within the package of this file
                if not inside:
                    continue
                base = _package_parts(path)[: len(_package_parts(path)) - (node.level - 1)]
                targets = [([ROOT_NAME, *base, *(node.module or "").split(".")], names)]
            else:
                targets = [(node.module.split("."), names)]
        else:
            continue
        for dotted, names in targets:
            dotted = [part for part in dotted if part]
            if dotted[0] != ROOT_NAME:
                if dotted[0] not in sys.stdlib_module_names:
                    third_party.add(dotted[0])
                continue
            found = _module_file(dotted[1:])
            if found is not None:
                modules.append(found)
            # ``from knowprobe.x import y`` where y is a module of package x
            modules += [f for f in (_module_file([*dotted[1:], name]) for name in names) if f is not None]
    return tuple(modules), frozenset(third_party)


def reach(script: str | Path) -> tuple[list[Path], set[str]]:
    """Every knowprobe module file ``script`` reaches (sorted) and the third-party packages they
    and the script import (top-level names)."""
    seen: set[Path] = set()
    third_party: set[str] = set()
    todo = [Path(script).resolve()]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        modules, names = _imports(path)
        third_party |= names
        for module in modules:
            todo += _with_parents(module)
    return sorted(p for p in seen if p.is_relative_to(PACKAGE)), third_party


def modules(script: str | Path) -> list[Path]:
    """The knowprobe module files a script runs, sorted."""
    return reach(script)[0]
