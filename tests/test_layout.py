"""The package's shape: one import namespace, layers one way, no import cycles.

- Every module of ``chunkweave`` imports on its own, in a process that has imported no
  other chunkweave module (third-party libraries preloaded, then a fork per module).
- The import graph (module-level *and* function-level imports, all but
  ``TYPE_CHECKING`` blocks) has no cycle: a cycle hidden by moving an import into a
  function is still a cycle.
- Nor does the graph with the ``TYPE_CHECKING`` imports added: a cycle hidden by
  importing only for annotations is still two modules that each need the other.
- Layers import one way: parsers <- chunking <- storage <- worker.
- The store implementation (``chunkweave.storage.weaviate``, the Weaviate client, the
  local server) is imported inside ``storage/`` only; the layers above reach it through
  the store protocols and factories (``storage/stores.py``, ``storage/versions.py``).
- Chunking and the worker reach parsing through the parsers' public API only: no
  backend package (``chunkweave.parsers.pdf``, ``docx``, ``backends``), no PyMuPDF.
- No product module is over 400 lines (:data:`OVER_400` names the ones being split).
- Nothing imports the repository folders by their bare names (``import storage``).
- The wheel installs exactly one top-level package, and an application with its own
  ``worker.py`` and ``storage/`` can still ``from chunkweave import enqueue``.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "chunkweave"
LAYERS = ("parsers", "chunking", "storage", "worker")


def _modules() -> dict[str, Path]:
    """Every module of the package, by dotted name (through the part symlinks)."""
    found: dict[str, Path] = {}
    files = [
        Path(d) / f
        for d, _, names in os.walk(PACKAGE, followlinks=True)
        for f in names
        if f.endswith(".py")
    ]
    for path in sorted(files):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, path: Path, *, type_checking: bool = False) -> set[str]:
    """The package modules ``module`` imports anywhere outside ``TYPE_CHECKING``.

    With ``type_checking``, also those imported inside ``if TYPE_CHECKING:`` blocks.
    """
    return _source_imports(module, path.read_text(), path.name == "__init__.py", type_checking)


def _source_imports(module: str, source: str, is_package: bool, type_checking: bool) -> set[str]:
    tree = ast.parse(source, module)
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import mod` imports the submodule pkg.mod when there is one; pkg
            # itself counts only when a name comes from its __init__ (every submodule
            # import runs its parent packages first, which is no edge of its own).
            subs = {f"{base}.{a.name}" for a in node.names} & MODULES.keys()
            out.update(subs)
            if len(subs) < len(node.names):
                out.add(base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {name for name in out if name in MODULES and name != module}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}
TYPE_CHECKING_GRAPH = {
    name: _imports(name, path, type_checking=True) for name, path in MODULES.items()
}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_part_is_a_subpackage_of_chunkweave():
    assert {m.split(".")[1] for m in MODULES if m.count(".") >= 1} >= set(LAYERS)
    assert len(MODULES) > 80, "the walk through chunkweave/<part> symlinks found too little"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected component of 2+ modules (a cycle), sorted."""
    # Tarjan's strongly connected components.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in index:
            strong(module)
    return sorted(cycles)


def test_cycle_finder_finds_a_made_up_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"a", "f"}, "f": {"e"}}
    assert _cycles(graph) == [["a", "b", "c"], ["e", "f"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_type_checking_imports_are_edges_of_the_second_graph_only():
    source = (
        "from typing import TYPE_CHECKING\n"
        "from chunkweave.chunking.models import Chunk\n"
        "if TYPE_CHECKING:\n"
        "    from chunkweave.chunking.units import Piece\n"
    )
    module = "chunkweave.chunking.made_up"
    assert _source_imports(module, source, False, type_checking=False) == {
        "chunkweave.chunking.models"
    }
    assert _source_imports(module, source, False, type_checking=True) == {
        "chunkweave.chunking.models",
        "chunkweave.chunking.units",
    }
    # With it, a module and one it imports only for annotations make a cycle.
    graph = {name: set(deps) for name, deps in TYPE_CHECKING_GRAPH.items()}
    graph[module] = _source_imports(module, source, False, type_checking=True)
    graph["chunkweave.chunking.units"].add(module)
    assert [module, "chunkweave.chunking.units"] in _cycles(graph)


def test_import_graph_has_no_cycle():
    assert _cycles(GRAPH) == []


def test_import_graph_with_type_checking_imports_has_no_cycle():
    assert _cycles(TYPE_CHECKING_GRAPH) == []


def test_layers_import_one_way():
    upward = [
        (m, dep)
        for m, deps in GRAPH.items()
        for dep in deps
        if (a := _layer(m)) is not None and (b := _layer(dep)) is not None and b > a
    ]
    assert upward == []


def test_nothing_imports_the_bare_folder_names():
    offenders = []
    for path in [*ROOT.glob("tests/*.py"), *ROOT.glob("bench/*.py"), *MODULES.values()]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in LAYERS]
    assert offenders == []


def _layer_name(module: str) -> str | None:
    layer = _layer(module)
    return None if layer is None else LAYERS[layer]


def _every_import(path: Path) -> set[str]:
    """Every absolute module name ``path`` imports (third-party too, ``TYPE_CHECKING`` too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


#: What names the store implementation: only ``storage/`` may import these.
STORE_IMPLEMENTATION = ("chunkweave.storage.weaviate", "weaviate")
#: Parser internals: chunking and the worker use ``chunkweave.parsers`` (its ``api``,
#: ``page_images``, the models) instead.
PARSER_INTERNALS = (
    "chunkweave.parsers.pdf",
    "chunkweave.parsers.docx",
    "chunkweave.parsers.backends",
    "pymupdf",
    "fitz",
)


def _offenders(layers: tuple[str, ...], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{module} imports {name}"
        for module, path in MODULES.items()
        if _layer_name(module) in layers
        for name in _every_import(path)
        if _under(name, prefixes)
    )


def test_only_storage_names_the_store_implementation():
    assert _offenders(("parsers", "chunking", "worker"), STORE_IMPLEMENTATION) == []


def test_chunking_and_worker_use_the_parsers_public_api():
    assert _offenders(("chunking", "worker"), PARSER_INTERNALS) == []


def test_the_import_rules_catch_a_made_up_offender(tmp_path):
    made_up = tmp_path / "made_up.py"
    made_up.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from chunkweave.storage.weaviate.store import WeaviateStore\n"
        "import pymupdf\n"
        "from chunkweave.parsers import pdf\n"
    )
    found = _every_import(made_up)
    assert _under("chunkweave.storage.weaviate.store", STORE_IMPLEMENTATION)
    assert {n for n in found if _under(n, STORE_IMPLEMENTATION)} == {
        "chunkweave.storage.weaviate.store",
        "chunkweave.storage.weaviate.store.WeaviateStore",
    }
    assert {n for n in found if _under(n, PARSER_INTERNALS)} == {
        "pymupdf",
        "chunkweave.parsers.pdf",
    }
    assert not _under("chunkweave.parsers.page_images", PARSER_INTERNALS)


#: Most lines a product module may have.
MAX_LINES = 400
#: Modules over :data:`MAX_LINES` while another change splits them (remove each as it
#: shrinks: the test fails for a module listed here that is no longer over).
OVER_400: dict[str, str] = {}


def _lines_over() -> dict[str, int]:
    counts = {m: len(p.read_text().splitlines()) for m, p in MODULES.items()}
    return {m: n for m, n in sorted(counts.items()) if n > MAX_LINES}


def test_no_product_module_is_over_400_lines():
    over = _lines_over()
    unexpected = {m: n for m, n in over.items() if m not in OVER_400}
    assert unexpected == {}, f"over {MAX_LINES} lines: {unexpected}"
    assert sorted(set(OVER_400) - set(over)) == [], "no longer over: remove from OVER_400"


#: Third-party libraries the import check loads once before it forks: they cost most of
#: an import's time and have no say in whether chunkweave's own modules import alone.
#: Optional backends (docling, unstructured) stay out: a module must not need them.
_PRELOAD = (
    "pydantic",
    "pydantic_settings",
    "numpy",
    "pymupdf",
    "docx",
    "lxml.etree",
    "onnxruntime",
    "tokenizers",
    "weaviate",
    "celery",
    "redis",
    "fastapi",
    "uvicorn",
    "click",
    "rich",
    "boto3",
    "httpx",
    "prometheus_client",
    "watchdog.observers",
)

#: Runs in one child interpreter: preloads the libraries, then imports each module of
#: chunkweave in a fork of its own, which starts with none of chunkweave imported.
_FORK_IMPORTER = """
import importlib, json, os, sys, traceback
for lib in sys.argv[1].split(","):
    importlib.import_module(lib)
assert not [m for m in sys.modules if m.split(".")[0] == "chunkweave"]
failed = {}
for module in sys.argv[2].split(","):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(module)
            code = 0
        except BaseException:
            os.write(write, traceback.format_exc().strip().splitlines()[-1].encode())
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    if status:
        failed[module] = message or f"exit status {status}"
print(json.dumps(failed))
"""


def _import_each_alone(modules: list[str]) -> dict[str, str]:
    """Import each of ``modules`` in a fork that has imported no chunkweave module."""
    proc = subprocess.run(
        [sys.executable, "-c", _FORK_IMPORTER, ",".join(_PRELOAD), ",".join(modules)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_import_check_reports_a_module_that_fails():
    missing = "chunkweave.no_such_module"
    found = _import_each_alone(["chunkweave.parsers.elements", missing])
    assert found == {missing: f"ModuleNotFoundError: No module named '{missing}'"}


@pytest.mark.slow
def test_every_module_imports_alone():
    half = len(MODULES) // 2
    names = sorted(MODULES)
    with ThreadPoolExecutor(max_workers=2) as pool:
        parts = pool.map(_import_each_alone, [names[:half], names[half:]])
    failed = {m: err for part in parts for m, err in part.items()}
    assert failed == {}


def test_wheel_installs_one_top_level_package(tree_wheel: Path, tmp_path: Path):
    with zipfile.ZipFile(tree_wheel) as zf:
        names = zf.namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {
        "chunkweave",
        f"{tree_wheel.name.split('-')[0]}-{tree_wheel.name.split('-')[1]}.dist-info",
    }
    # The parts, their data (the bundled model, the PGO profile) and real files, not links.
    for needed in (
        "chunkweave/parsers/api.py",
        "chunkweave/chunking/api.py",
        "chunkweave/storage/pipeline/conductor.py",
        "chunkweave/worker/cli/__init__.py",
        "chunkweave/storage/models/all-MiniLM-L6-v2-int8/model.onnx",
    ):
        assert needed in names


def test_app_with_its_own_worker_and_storage_can_enqueue(tree_wheel: Path, tmp_path: Path):
    site = tmp_path / "site-packages"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            tree_wheel,
        ],
        check=True,
        timeout=300,
    )
    # `bin/` holds the `chunkweave` console script, not an importable package.
    packages = [p.name for p in site.iterdir() if p.name != "bin"]
    assert sorted(packages) == ["chunkweave", "chunkweave-0.1.0.dist-info"]
    app = tmp_path / "app"
    (app / "storage").mkdir(parents=True)
    (app / "worker.py").write_text("WHO = 'the app'\n")
    (app / "storage" / "__init__.py").write_text("WHO = 'the app'\n")
    script = (
        "import worker, storage, chunkweave\n"
        "from chunkweave import enqueue\n"
        "import chunkweave.worker.enqueue as e\n"
        "assert worker.WHO == storage.WHO == 'the app'\n"
        "assert e.enqueue.__module__ == 'chunkweave.worker.enqueue'\n"
        "print(chunkweave.__file__)\n"
    )
    # The wheel's copy first on the path (the dependencies come from this interpreter).
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=app, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(site))


#: Runs in one child interpreter: imports every module of chunkweave, then lists each
#: exception class defined in one of them that does not derive from the root.
_ROOTLESS_ERRORS = """
import importlib, inspect, json, sys
from chunkweave.errors import ChunkweaveError
found, rootless = [], []
for module in sys.argv[1].split(","):
    mod = importlib.import_module(module)
    for name, obj in vars(mod).items():
        if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module:
            found.append(f"{module}.{name}")
            if not issubclass(obj, ChunkweaveError):
                rootless.append(f"{module}.{name}")
print(json.dumps({"found": found, "rootless": rootless}))
"""


def test_every_exception_class_derives_from_the_one_root():
    # chunkweave.errors sits outside the layers so each may import it: it imports none.
    assert GRAPH["chunkweave.errors"] == set()
    proc = subprocess.run(
        [sys.executable, "-c", _ROOTLESS_ERRORS, ",".join(sorted(MODULES))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # The walk must see the classes it checks (a walk that finds nothing passes trivially).
    expected = {"chunkweave.parsers.errors.ParseError", "chunkweave.worker.webhook.WebhookError"}
    assert expected <= set(result["found"])
    assert result["rootless"] == []


#: Names that said too little: ``model`` meant the layout model, the heading classes and
#: the inspector's report; ``embedded`` named two unrelated packages.
VAGUE_NAMES = ("model", "embedded")
#: Renames left to do (empty: every module name is enforced).
PENDING_RENAMES: set[str] = set()


def test_module_names_say_what_they_hold():
    vague = [m for m in MODULES if set(m.split(".")) & set(VAGUE_NAMES)]
    assert sorted(set(vague) - PENDING_RENAMES) == []
    # One ``document`` module: the parsed document (parsers/document.py).
    documents = [m for m in MODULES if m.rsplit(".", 1)[-1] == "document"]
    assert sorted(set(documents) - PENDING_RENAMES) == ["chunkweave.parsers.document"]
    assert MODULES.keys() >= PENDING_RENAMES, "a pending rename is done: drop it from the list"
