"""Which app may import which (docs/architecture.md, "Dependencies"): checked on the source, so a
new import that breaks the layering fails here rather than in a reviewer's head."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "api",
    "audit",
    "chat",
    "config",
    "contextwindow",
    "llm",
    "mcp_server",
    "memory",
    "profiles",
    "projects",
    "staff",
    "userdata",
    "web",
}
# What each package may import from the others. staff is imported by no one (config.urls names
# it as a string); the pure library imports nothing of the project, nor Django.
ALLOWED = {
    "contextwindow": set(),
    "web": set(),
    "audit": set(),
    "llm": {"contextwindow", "memory.report"},
    "profiles": {"audit", "web"},
    # Of chat, only its models: what memory tells the tabs goes through its own signal, which
    # chat publishes (memory.signals, chat.publisher).
    "memory": {
        "audit",
        "chat.models",
        "contextwindow",
        "llm",
        "profiles",
        "projects.models",
        "web",
    },
    "chat": {"contextwindow", "llm", "memory", "profiles", "web"},
    "userdata": {"audit", "chat", "memory", "profiles", "projects", "web"},
    # Projects build on the chat and the memory (a project's page lists its conversations
    # and what it knows); those reach a project only through their models' relations.
    "projects": {"audit", "chat", "memory", "profiles", "web"},
    "staff": {"audit", "chat", "contextwindow", "llm", "memory", "profiles", "projects"}
    | {"userdata", "web"},
    "config": {"api", "chat", "mcp_server"},
    # The /v1 API: a key's user (profiles) through the chat's turn, in a project the client
    # names (projects' reads); config sends /v1/ to its handler (api.asgi).
    "api": {"chat", "llm", "profiles", "projects.models", "projects.selectors", "web"},
    # The MCP server: a key's user (profiles) over memory's services; config mounts it.
    "mcp_server": {
        "audit",
        "chat.limits",
        "chat.models",
        "memory",
        "profiles",
        "projects.models",
        "projects.selectors",
    },
}


def imports_of(package: str):
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                yield path.relative_to(ROOT), name


def allowed(package: str, module: str) -> bool:
    return any(module == rule or module.startswith(rule + ".") for rule in ALLOWED[package])


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_a_package_imports_only_what_the_layering_allows(package):
    wrong = [
        f"{path}: {name}"
        for path, name in imports_of(package)
        if name.split(".")[0] in PACKAGES - {package} and not allowed(package, name)
    ]
    assert not wrong, "imports across the layering:\n" + "\n".join(wrong)


def test_the_context_window_library_imports_no_django():
    found = [
        f"{path}: {name}" for path, name in imports_of("contextwindow") if name.startswith("django")
    ]
    assert not found


def test_no_import_circle_between_chat_and_memory():
    """chat imports memory; memory imports only chat's models, which import nothing of memory."""
    models = ROOT / "chat" / "models.py"
    found = [
        name
        for path, name in imports_of("chat")
        if path == models.relative_to(ROOT) and name.split(".")[0] == "memory"
    ]
    assert not found


def test_no_module_imports_another_modules_private_names():
    """A name with a leading underscore is its module's own: one another module needs is made
    public (and kept as such) rather than reached into."""
    found = []
    for package in sorted(PACKAGES):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    if node.module.split(".")[0] not in PACKAGES:
                        continue
                    private = [a.name for a in node.names if a.name.startswith("_")]
                    found += [f"{path.relative_to(ROOT)}: {node.module}.{n}" for n in private]
    assert not found, "private names imported:\n" + "\n".join(found)
