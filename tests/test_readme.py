"""The README's code names exist and its commands run: promises that would drift silently.

Checked, from ``README.md`` as written:

- every backticked path (``worker/cli/__init__.py``, ``embedders/base.py``, a bare
  ``settings.py`` inside the ``worker/`` bullet) exists; a bare or partial path resolves
  against the folders of the list items it sits in, else against the repository root,
  else as the tail of one repository path. ``<placeholder>`` parts check their folder;
- every dotted ``chunkweave.x.y`` name is a module, or a name defined in one (via ``ast``);
- every ``path.py: Name``, ``Name`` in ``path.py``, ``Name`` protocol (``path.py``),
  ``path.py`` holds ``Name`` and ``path.py`` (... ``Name`` ...) pair: the name is
  defined in that module;
- every class name (``IngestPipeline``) and ``Class.member`` is defined in the package;
- a method list before ``(path.py: Class)`` is exactly the class's public methods;
- ``from ... import ...`` lines of Python code blocks import what exists;
- every ``chunkweave ...`` line of a shell code block: ``chunkweave <command> --help``
  exits 0 (run through the ``[project.scripts]`` entry point) and lists every option
  the line uses;
- the type-only (``TYPE_CHECKING``) imports that close an import loop are exactly the
  ones the README names next to its "no cycle" rule.

Each checker also runs on a made-up README snippet with wrong names, so it can fail.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

_CODE = re.compile(r"`([^`]+)`")
_ITEM = re.compile(r"^(\s*)[-*] ")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_DOTTED = re.compile(r"^chunkweave(\.[A-Za-z_]\w*)+$")
_CLASSNAME = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)*(?:\.[a-z_]\w*)?$")
_PATH_TOKEN = re.compile(r"^[\w.<>+-]+(?:/[\w.<>+-]*)*$")
_ENV_PART = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]*$")
_EXTENSIONS = {"py", "sh", "yml", "yaml", "toml", "md", "pgo", "json", "jsonl", "tsv", "onnx"}
# Made at run time by scripts/bootstrap.sh, not part of the repository.
_RUNTIME = (".venv",)

_PY = r"[\w./<>-]+\.py"
_PAIRS = (
    re.compile(rf"`(?P<path>{_PY}): (?P<name>\w+)`"),
    re.compile(rf"`(?P<name>[A-Za-z_]\w*)`(?: protocol)? (?:in |\()`(?P<path>{_PY})`"),
    re.compile(rf"`(?P<path>{_PY})` holds `(?P<name>\w+)`"),
)
_PAREN = re.compile(rf"`(?P<path>{_PY})` \((?P<inner>[^()]*)\)")
_METHODS = re.compile(
    rf"(?P<list>(?:`\w+`(?:, and |, | and ))+`\w+`) \(`(?P<path>{_PY}): (?P<cls>\w+)`\)"
)


@dataclass(frozen=True)
class Line:
    """One README line outside code blocks, with the folders of its enclosing list items."""

    number: int
    text: str
    folders: tuple[str, ...]  # innermost first, e.g. ("worker/tasks", "worker")


def prose_lines(markdown: str) -> Iterator[Line]:
    """Yield the lines outside fenced code blocks, each with its list-item folders.

    A list item whose first code span is a folder (``worker/``, ``tasks/``) gives that
    folder, relative to its parent item's, to everything written inside it.
    """
    stack: list[tuple[int, str | None]] = []  # (indent, folder) of the open list items
    fenced = False
    for number, text in enumerate(markdown.splitlines(), 1):
        if text.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        item = _ITEM.match(text)
        if item:
            indent = len(item.group(1))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            first = _CODE.search(text)
            folder = None
            if first and first.group(1).endswith("/") and first.start() <= indent + 2:
                parent = next((f for _, f in reversed(stack) if f), "")
                folder = f"{parent}/{first.group(1).rstrip('/')}".lstrip("/")
            stack.append((indent, folder))
        elif text and not text[0].isspace():
            stack.clear()  # a paragraph or table line ends every open list
        folders = tuple(f for _, f in reversed(stack) if f)
        yield Line(number, text, folders)


def code_blocks(markdown: str, language: str) -> Iterator[list[tuple[int, str]]]:
    """Yield each fenced code block in ``language`` as its ``(line number, line)`` pairs."""
    block: list[tuple[int, str]] | None = None
    for number, text in enumerate(markdown.splitlines(), 1):
        if text.lstrip().startswith("```"):
            if block is not None:
                yield block
                block = None
            elif text.strip() == f"```{language}":
                block = []
        elif block is not None:
            block.append((number, text))


@functools.cache
def _tree(root: Path) -> tuple[str, ...]:
    """Every file and folder of the repository, relative, posix (links not followed)."""
    found: list[str] = []
    skip = {".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith(".venv")]
        rel = Path(folder).relative_to(root)
        found += [(rel / name).as_posix() for name in [*dirs, *files]]
    return tuple(found)


def find_path(code: str, folders: tuple[str, ...], root: Path) -> list[Path]:
    """The repository paths a README path names (empty: it names nothing).

    Tried in order: under each enclosing list folder (innermost first), under the
    root, then (for a path with a folder part) as the tail of repository paths.
    """
    rel = code.rstrip("/")
    if "<" in rel:  # `worker/sources/<scheme>.py`: the folder must exist
        rel = rel.split("<")[0].rstrip("/")
        if not rel:
            return [root]
    for base in (*folders, ""):
        if (root / base / rel).exists():
            return [root / base / rel]
    if "/" not in rel:
        return []
    return [root / p for p in _tree(root) if p.endswith("/" + rel)]


def _is_path(token: str) -> bool:
    if not _PATH_TOKEN.match(token) or token.startswith(("..", "~", "<", "/", *_RUNTIME)):
        return False
    if _ENV_PART.match(token.split("/")[0]):  # `CHUNKWEAVE_DATA_DIR/uploads`
        return False
    return "/" in token or token.rpartition(".")[2] in _EXTENSIONS


@functools.cache
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements at module level, including those inside ``if``/``try`` blocks."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.Try):
            blocks = [node.body, node.orelse]
            if isinstance(node, ast.Try):
                blocks += [node.finalbody, *(h.body for h in node.handlers)]
            for block in blocks:
                yield from _top_level(block)


def _bound(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    return names + [
        e.id for t in targets if isinstance(t, ast.Tuple) for e in t.elts if isinstance(e, ast.Name)
    ]


def defined_names(path: Path) -> set[str]:
    """The names a module binds at top level (defs, classes, assignments, imports)."""
    return {name for node in _top_level(_parsed(path).body) for name in _bound(node)}


def _classes(path: Path) -> dict[str, ast.ClassDef]:
    body = _top_level(_parsed(path).body)
    return {n.name: n for n in body if isinstance(n, ast.ClassDef)}


def public_methods(path: Path, cls: str) -> set[str] | None:
    """The public methods class ``cls`` of ``path`` defines, or None without that class."""
    node = _classes(path).get(cls)
    if node is None:
        return None
    defs = (n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return {n.name for n in defs if not n.name.startswith("_")}


def _package_classes(root: Path) -> dict[str, list[ast.ClassDef]]:
    """Every class of the package (through the part links), by name."""
    found: dict[str, list[ast.ClassDef]] = {}
    for folder, _, files in os.walk(root / "chunkweave", followlinks=True):
        for name in files:
            if name.endswith(".py"):
                for cls, node in _classes(Path(folder) / name).items():
                    found.setdefault(cls, []).append(node)
    return found


def _has_member(name: str, member: str, classes: dict[str, list[ast.ClassDef]]) -> bool:
    for node in classes.get(name, []):
        for stmt in node.body:
            if member in _bound(stmt):
                return True
        bases = [b.id for b in node.bases if isinstance(b, ast.Name) and b.id != name]
        if any(_has_member(base, member, classes) for base in bases):
            return True
    return False


def module_file(dotted: str, root: Path) -> tuple[Path | None, list[str]]:
    """The file of the longest module prefix of ``dotted``, and the names after it."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:i])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate, parts[i:]
    return None, parts


def check_dotted(dotted: str, root: Path) -> str | None:
    """Tell what is wrong with a dotted name (``chunkweave.parsers.errors.ErrorCode``)."""
    path, rest = module_file(dotted, root)
    if path is None:
        return f"no module for {dotted}"
    if not rest:
        return None
    if rest[0] not in defined_names(path):
        return f"{dotted}: {rest[0]} is not defined in {path.relative_to(root)}"
    classes = _classes(path)
    if (
        len(rest) > 1
        and rest[0] in classes
        and not _has_member(rest[0], rest[1], {rest[0]: [classes[rest[0]]]})
    ):
        return f"{dotted}: {rest[0]} has no {rest[1]}"
    return None


def _check_pair(path_code: str, name: str, line: Line, root: Path) -> str | None:
    paths = [p for p in find_path(path_code, line.folders, root) if p.is_file()]
    if not paths:
        return f"line {line.number}: `{path_code}` (for {name}) names no file"
    if not any(name in defined_names(p) for p in paths):
        where = ", ".join(str(p.relative_to(root)) for p in paths)
        return f"line {line.number}: {name} is not defined in {where}"
    return None


def readme_problems(markdown: str, root: Path) -> list[str]:
    """Every code name of ``markdown`` (a README) that does not resolve under ``root``."""
    problems: list[str] = []
    classes = _package_classes(root)
    for line in prose_lines(markdown):
        for code in _CODE.findall(line.text):
            token = code.split()[0] if code.strip() else ""
            if ": " not in code and _is_path(token) and not find_path(token, line.folders, root):
                problems.append(f"line {line.number}: `{token}` names no file or folder")
            elif _DOTTED.match(code) and (err := check_dotted(code, root)):
                problems.append(f"line {line.number}: {err}")
            elif _CLASSNAME.match(code) and not (root / code).exists():
                name, _, member = code.partition(".")
                if name not in classes:
                    problems.append(f"line {line.number}: no class {name} in the package")
                elif member and not _has_member(name, member, classes):
                    problems.append(f"line {line.number}: class {name} has no {member}")
        pairs = [(m["path"], m["name"]) for pattern in _PAIRS for m in pattern.finditer(line.text)]
        for m in _PAREN.finditer(line.text):
            names = [c for c in _CODE.findall(m["inner"]) if _IDENT.match(c)]
            pairs += [(m["path"], name) for name in names]
        problems += [err for p, n in pairs if (err := _check_pair(p, n, line, root))]
        for m in _METHODS.finditer(line.text):
            listed = set(_CODE.findall(m["list"]))
            paths = [p for p in find_path(m["path"], line.folders, root) if p.is_file()]
            actual = next((ms for p in paths if (ms := public_methods(p, m["cls"]))), None)
            if actual is not None and listed != actual:
                problems.append(
                    f"line {line.number}: {m['cls']} methods listed {sorted(listed)}, "
                    f"defined {sorted(actual)}"
                )
    for block in code_blocks(markdown, "python"):
        offset = block[0][0] - 1 if block else 0
        for node in ast.walk(ast.parse("\n".join(text for _, text in block))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for dotted in names:
                if dotted.startswith("chunkweave") and (err := check_dotted(dotted, root)):
                    problems.append(f"line {node.lineno + offset}: {err}")
    return problems


def shown_commands(markdown: str) -> list[tuple[int, list[str]]]:
    """The ``chunkweave`` command lines of the shell code blocks, as argument lists."""
    found = []
    for number, text in (line for block in code_blocks(markdown, "sh") for line in block):
        words = shlex.split(text, comments=True)
        if words and words[0] == "chunkweave":
            found.append((number, [w.strip("[]") for w in words[1:]]))
    return found


# Runs `chunkweave <path...> --help` for each path through the console script's function,
# in one interpreter, and prints {path: [exit code, output]} as JSON.
_HELP_SCRIPT = """
import contextlib, io, json, sys
import {module} as cli
results = {{}}
for path in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            cli.{func}([*path, "--help"], prog_name="chunkweave")
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        except Exception as err:
            code, _ = 1, out.write(repr(err))
    results[" ".join(path)] = [code, out.getvalue()]
print(json.dumps(results))
"""


_HELPS: dict[tuple[str, ...], tuple[int, str]] = {}  # kept for the whole test session


def help_texts(paths: set[tuple[str, ...]]) -> dict[tuple[str, ...], tuple[int, str]]:
    """Exit code and output of ``chunkweave <path> --help`` for each path.

    The command is the ``chunkweave`` entry of ``[project.scripts]``, imported with
    the repository root on ``PYTHONPATH``; one fresh interpreter runs every path not
    run before.
    """
    missing = sorted(paths - _HELPS.keys())
    if missing:
        with open(ROOT / "pyproject.toml", "rb") as fh:
            target = tomllib.load(fh)["project"]["scripts"]["chunkweave"]
        module, _, func = target.partition(":")
        script = _HELP_SCRIPT.format(module=module, func=func)
        proc = subprocess.run(
            [sys.executable, "-c", script, json.dumps(missing)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        results = json.loads(proc.stdout.strip().splitlines()[-1])
        _HELPS.update({path: tuple(results[" ".join(path)]) for path in missing})
    return {path: _HELPS[path] for path in paths}


def subcommands(help_text: str) -> set[str]:
    """The command names a click ``--help`` lists under ``Commands:``."""
    _, found, rest = help_text.partition("\nCommands:\n")
    if not found:
        return set()
    return {m.group(1) for m in re.finditer(r"^  (\S+)", rest, re.MULTILINE)}


def command_problems(commands: list[tuple[int, list[str]]]) -> list[str]:
    """What is wrong with each shown command line: no such command, help fails, options.

    A line's command path grows word by word while the next word is a subcommand
    its help lists; the path's ``--help`` must exit 0 and name every option used.
    """
    helps: dict[tuple[str, ...], tuple[int, str]] = {}
    paths: dict[int, tuple[str, ...]] = {number: () for number, _ in commands}
    open_lines = dict(commands)
    while open_lines:
        helps |= help_texts({paths[n] for n in open_lines} - helps.keys())
        for number, args in list(open_lines.items()):
            path = paths[number]
            following = args[len(path)] if len(args) > len(path) else None
            if following is not None and following in subcommands(helps[path][1]):
                paths[number] = (*path, following)
            else:
                del open_lines[number]
    problems = []
    for number, args in commands:
        path = paths[number]
        code, text = helps[path]
        shown = " ".join(("chunkweave", *path))
        if not path:
            problems.append(f"line {number}: chunkweave has no command {args[:1]}")
        elif code != 0:
            problems.append(f"line {number}: {shown} --help exited {code}:\n{text[-800:]}")
        else:
            options = [a.split("=")[0] for a in args if a.startswith("-")]
            missing = [
                o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)
            ]
            if missing:
                problems.append(f"line {number}: {shown} --help does not list {missing}")
    return problems


def test_readme_code_names_resolve() -> None:
    assert readme_problems(README.read_text(encoding="utf-8"), ROOT) == []


def test_readme_commands_have_their_help_and_options() -> None:
    commands = shown_commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 10, "found too few chunkweave commands in the README's code blocks"
    assert command_problems(commands) == []


def test_command_problems_name_the_line() -> None:
    commands = [(1, ["parse", "--format"]), (2, ["nope"]), (3, ["chunk", "--no-such-option"])]
    assert command_problems(commands) == [
        "line 2: chunkweave has no command ['nope']",
        "line 3: chunkweave chunk --help does not list ['--no-such-option']",
    ]


def _is_type_checking(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_edges(root: Path) -> dict[tuple[str, str], bool]:
    """Every import between package modules, as repository paths -> "type-only?".

    Paths are the files' own (``chunking/units.py``, through the part links), so
    they read as the README writes them. An import under ``if TYPE_CHECKING:`` is
    type-only; any other (module or function level) is not.
    """
    modules: dict[str, str] = {}
    for folder, _, files in os.walk(root / "chunkweave", followlinks=True):
        for name in (f for f in files if f.endswith(".py")):
            path = Path(folder) / name
            parts = path.relative_to(root).with_suffix("").parts
            dotted = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[dotted] = path.resolve().relative_to(root.resolve()).as_posix()
    edges: dict[tuple[str, str], bool] = {}
    for module, rel in modules.items():
        package = module if rel.endswith("__init__.py") else module.rpartition(".")[0]

        def visit(node: ast.AST, typed: bool, module: str = module, package: str = package) -> None:
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                targets = subs + ([base] if len(subs) < len(node.names) else [])
            else:
                targets = []
            for target in targets:
                if target in modules and target != module:
                    key = (modules[module], modules[target])
                    edges[key] = edges.get(key, True) and typed
            for child in ast.iter_child_nodes(node):
                visit(
                    child,
                    typed
                    or (
                        isinstance(node, ast.If) and _is_type_checking(node) and child in node.body
                    ),
                )

        visit(_parsed(root / rel), False)
    return edges


def type_only_loops(root: Path) -> set[tuple[str, str]]:
    """The type-only imports ``a -> b`` through which ``b`` leads back to ``a``."""
    edges = import_edges(root)
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)

    def reaches(start: str, goal: str) -> bool:
        seen, todo = {start}, [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    return {(a, b) for (a, b), typed in edges.items() if typed and reaches(b, a)}


def test_readme_names_the_type_only_import_loops() -> None:
    # "no cycle" holds outside TYPE_CHECKING (tests/test_layout.py); the README names
    # the type-only imports that still close a loop, and must name exactly those.
    prose = "\n".join(line.text for line in prose_lines(README.read_text(encoding="utf-8")))
    paragraph = next((p for p in prose.split("\n\n") if "no cycle" in p), "")
    _, _, tail = " ".join(paragraph.split()).partition("Type-only imports close")
    named = set(re.findall(r"`([\w/]+\.py)` -> `([\w/]+\.py)`", tail))
    assert "no cycle" in paragraph, "the README no longer states the import-graph rule"
    assert named == type_only_loops(ROOT)


@pytest.fixture
def fake_repo(tmp_path: Path) -> Path:
    """A tiny repository: ``chunkweave/worker/cli/__init__.py`` and a Source protocol."""
    cli = tmp_path / "chunkweave" / "worker" / "cli"
    cli.mkdir(parents=True)
    for folder in (tmp_path / "chunkweave", tmp_path / "chunkweave" / "worker"):
        (folder / "__init__.py").write_text("")
    (cli / "__init__.py").write_text("_COMMANDS = {}\n\nclass Group:\n    size: int = 0\n")
    sources = tmp_path / "chunkweave" / "worker" / "sources"
    sources.mkdir()
    (sources / "__init__.py").write_text("")
    (sources / "base.py").write_text(
        "class Source:\n    def claims(self): ...\n    def fetched(self): ...\n"
    )
    return tmp_path


def test_resolver_accepts_what_exists(fake_repo: Path) -> None:
    snippet = (
        "See `chunkweave/worker/cli/__init__.py` and `chunkweave.worker.cli._COMMANDS`.\n"
        "- `chunkweave/worker/` the service:\n"
        "  - `cli/` holds `Group.size`; `sources/base.py` (the `Source` protocol).\n"
        "\n"
        "| a | `_COMMANDS` in `chunkweave/worker/cli/__init__.py` |\n"
        "| b | `claims`, `fetched` (`sources/base.py: Source`) in `chunkweave/worker/<x>.py` |\n"
        "```python\nfrom chunkweave.worker.cli import Group\n```\n"
    )
    assert readme_problems(snippet, fake_repo) == []


def test_resolver_reports_each_wrong_name(fake_repo: Path) -> None:
    snippet = (
        "| a | `_COMMAND_MODULES` in `chunkweave/worker/cli/__init__.py` |\n"
        "| b | `claims`, `expand` (`sources/base.py: Source`) |\n"
        "See `chunkweave/worker/sources/local.py`, `chunkweave.worker.cli.Nope`.\n"
        "- `chunkweave/worker/` the service:\n"
        "  - `settings.py`, and `Group.width`, `Missing`.\n"
        "```python\nfrom chunkweave.worker import enqueue\n```\n"
    )
    problems = readme_problems(snippet, fake_repo)
    assert problems == [
        "line 1: _COMMAND_MODULES is not defined in chunkweave/worker/cli/__init__.py",
        "line 2: Source methods listed ['claims', 'expand'], defined ['claims', 'fetched']",
        "line 3: `chunkweave/worker/sources/local.py` names no file or folder",
        "line 3: chunkweave.worker.cli.Nope: Nope is not defined in "
        "chunkweave/worker/cli/__init__.py",
        "line 5: `settings.py` names no file or folder",
        "line 5: class Group has no width",
        "line 5: no class Missing in the package",
        "line 7: chunkweave.worker.enqueue: enqueue is not defined in "
        "chunkweave/worker/__init__.py",
    ]


def test_shown_commands_are_read_from_shell_blocks() -> None:
    snippet = (
        "Run `chunkweave docs` (inline: not a shown command).\n"
        "```sh\n"
        'chunkweave status [JOB] [--json]   # with a comment: "quoted" #\n'
        "scripts/run.sh --watch inbox\n"
        'chunkweave search "what is it?" -k 5\n'
        "```\n"
        "```python\nchunkweave = 1\n```\n"
    )
    assert shown_commands(snippet) == [
        (3, ["status", "JOB", "--json"]),
        (5, ["search", "what is it?", "-k", "5"]),
    ]
