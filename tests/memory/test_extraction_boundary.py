"""memory.extraction's ``__all__`` is its boundary: no other package imports anything else."""

import ast
from pathlib import Path

import memory.extraction

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "memory.extraction"


def imports_from_extraction(tree: ast.AST):
    """(line, name) of every name taken from memory.extraction or one of its modules."""
    aliases = set()  # names bound to the package itself ("from memory import extraction")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "memory":
                aliases |= {a.asname or a.name for a in node.names if a.name == "extraction"}
            elif node.module == PACKAGE:
                yield from ((node.lineno, a.name) for a in node.names)
            elif node.module.startswith(PACKAGE + "."):
                yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(PACKAGE + "."):
                    yield node.lineno, a.name
    yield from attributes_of(tree, aliases)


def attributes_of(node: ast.AST, aliases: set[str]):
    """(line, attr) of ``alias.attr``, outside functions whose parameters shadow the alias."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        args = node.args
        params = args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
        aliases = aliases - {a.arg for a in params if a is not None}
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in aliases
    ):
        yield node.lineno, node.attr
    for child in ast.iter_child_nodes(node):
        yield from attributes_of(child, aliases)


def test_other_packages_import_only_the_public_names():
    public = set(memory.extraction.__all__)
    outside = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0].startswith(".") or relative.parts[:2] == ("memory", "extraction"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        outside += [
            f"{relative}:{line} {name}"
            for line, name in imports_from_extraction(tree)
            if name not in public
        ]
    assert outside == []
