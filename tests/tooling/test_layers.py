"""The layers of the library read one way (DESIGN.md, section 5): the imports between the
project's modules make no cycle, and no module imports from a layer above its own.

Every import statement of every .py file under tenxor/ and instructor/ counts, wherever it
stands: at the top, under `if TYPE_CHECKING:`, or in a function body. Relative imports are
resolved, and `from package import name` counts as an import of the submodule when `name` is
one. (Importing a submodule also runs its packages' __init__.py, as every import of a package
does; only the module an import names counts.)
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from tenxor.course.catalog import CHAPTERS, Chapter

pytestmark = pytest.mark.provided

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tenxor_shell", "tenxor", "instructor")

Layers = list[tuple[str, ...]]

# The layers, lowest first. A module may import from its own layer (without making a cycle)
# and from the layers below it. A name ending in ".*" stands for every module of a package.
WRITTEN_LAYERS: Layers = [
    ("tenxor_shell",),  # the tenxor command's way in: it imports nothing of tenxor
    # chapters 1 and 2, and what provided code needs before them
    ("tenxor.storage", "tenxor.strides", "tenxor.row_major", "tenxor.python_values"),
    ("tenxor.views",),  # chapter 3
    ("tenxor.broadcasting",),  # chapter 4: the kernels map, zip and reduce
    ("tenxor.reductions",),  # chapter 5: the Tenxor class delegates to it
    ("tenxor.core",),  # the Tenxor class
    ("tenxor.creation",),  # tensor, zeros, arange, rand, where, ...
    ("tenxor.scatter",),  # chapter 6: gather and scatter
    ("tenxor.graph_attention",),  # chapter 6: GATv2
    ("tenxor.printing",),
    ("tenxor.diagrams", "tenxor.diagrams.*"),
    ("tenxor",),  # the package top, tenxor/__init__.py: it assembles every layer
    ("tenxor.course", "tenxor.course.*"),  # check, the catalog, the engine, ...
    ("tenxor_shell.command",),  # the tenxor command
    # the instructor's package, in its three rooms; the tops of the package and its rooms
    # import nothing (the worker loads them before it confines itself)
    ("instructor", "instructor.authoring", "instructor.sandbox", "instructor.entry_points"),
    # authoring: turning the instructor's tree into a course
    ("instructor.authoring.regions", "instructor.authoring.probe",
     "instructor.authoring.cell_findings"),
    ("instructor.authoring.release",),
    ("instructor.authoring.verify",),
    # the sandbox: first what the worker loads (the standard library only), then the worker
    ("instructor.sandbox.os_calls", "instructor.sandbox.protections",
     "instructor.sandbox.plain_data", "instructor.sandbox.reachable"),
    ("instructor.sandbox.worker",),  # the one process that runs a submission's code
    ("instructor.sandbox.worker_group", "instructor.sandbox.leftovers",
     "instructor.sandbox.allowlist"),  # root: count, clean up after, and wall in a worker
    ("instructor.sandbox.launcher",),  # root: starts and ends workers
    ("instructor.sandbox.judge_side", "instructor.sandbox.exposure",
     "instructor.sandbox.machine"),
    ("instructor.sandbox.interface",),  # all that grading may import of the sandbox
    # grading: from the judge's plugin to the class report
    ("instructor.grading.replay", "instructor.grading.credit", "instructor.grading.spreadsheet",
     "instructor.grading.wheels"),
    ("instructor.authoring.pyodide",),  # the course in the browser: Pyodide, then the site
    ("instructor.authoring.site",),  # (it checks its wheels as the autograder's are checked)
    ("instructor.grading.judge", "instructor.grading.autograder"),
    ("instructor.grading.fingerprints", "instructor.grading.shards"),  # what a grade depends
    # on, and which share of a batch a machine grades
    ("instructor.grading.intake", "instructor.grading.preloaded"),
    ("instructor.grading.setup",),
    ("instructor.grading.judge_run", "instructor.grading.gradescope"),
    ("instructor.grading.student_report",),  # a student's report.html, from their results
    ("instructor.grading.batch",),
    ("instructor.grading.merge", "instructor.grading.canvas",  # after a batch: join, export
     "instructor.grading.collect"),  # and before one: Canvas's download, a folder per student
    ("instructor.grading",),
    ("instructor.grading.class_report",),  # the class report, from every results.json
    ("instructor.cli", "instructor.ci"),  # the tenxor-instructor command; the test run
]  # fmt: skip


def with_new_chapters(layers: Layers, chapters: Iterable[Chapter]) -> Layers:
    """`layers` with a layer for each chapter whose modules they do not name, in the
    catalog's order, above the last chapter they name: a new chapter builds on every earlier
    one (and on the Tenxor class), and provided code does not lean on it."""
    named = {name for layer in layers for name in layer}
    new = [tuple(m for m in chapter.modules if m not in named) for chapter in chapters]
    new = [modules for modules in new if modules]
    chapter_modules = {m for chapter in chapters for m in chapter.modules}
    last = max(i for i, layer in enumerate(layers) if chapter_modules & set(layer))
    return [*layers[: last + 1], *new, *layers[last + 1 :]]


# The library's chapters the catalog adds after those written above get layers of their own.
LAYERS: Layers = with_new_chapters(WRITTEN_LAYERS, CHAPTERS)


@dataclass(frozen=True)
class Import:
    """One import of a project module: the importing module, the imported one, the line."""

    importer: str
    imported: str
    line: int


# ---------------------------------------------------------------------------------------------
# Reading the imports
# ---------------------------------------------------------------------------------------------


def project_modules(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Every module of `packages` under `root`, by dotted name (a package by its own name)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def relative_base(module: str, path: Path, level: int) -> str:
    """The package that a relative import with `level` dots, in `module`, starts from."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    return ".".join(package[: len(package) - (level - 1)])


def named_modules(node: ast.Import | ast.ImportFrom, module: str, path: Path,
                  modules: dict[str, Path]) -> list[str]:  # fmt: skip
    """The absolute names of the modules one import statement imports."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        start = relative_base(module, path, node.level)
        base = f"{start}.{base}" if base else start
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """Every import of a project module in the file of `module`, wherever it stands."""
    packages = {name.split(".")[0] for name in modules}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in named_modules(node, module, path, modules):
                if name.split(".")[0] in packages:
                    found.append(Import(module, name, node.lineno))
    return found


def import_graph(modules: dict[str, Path]) -> list[Import]:
    """The imports of project modules in every project module, in order."""
    return [
        found for module, path in modules.items() for found in imports_of(module, path, modules)
    ]


# ---------------------------------------------------------------------------------------------
# Checking them
# ---------------------------------------------------------------------------------------------


def find_cycles(imports: Iterable[Import]) -> list[list[Import]]:
    """Import cycles, each as the imports that make it, from a depth-first walk of the graph
    (one cycle for every import that leads back to a module still on the walk's path)."""
    edges: dict[str, list[Import]] = defaultdict(list)
    for found in imports:
        edges[found.importer].append(found)
    on_path: list[Import] = []
    state: dict[str, str] = {}  # "open" while a module is on the path, then "done"
    cycles = []

    def walk(module: str) -> None:
        state[module] = "open"
        for found in edges[module]:
            if state.get(found.imported) == "open":
                starts = [i for i, step in enumerate(on_path) if step.importer == found.imported]
                cycles.append(on_path[starts[0] if starts else len(on_path) :] + [found])
            elif found.imported not in state:
                on_path.append(found)
                walk(found.imported)
                on_path.pop()
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            walk(module)
    return cycles


def describe_cycle(cycle: list[Import]) -> str:
    """A cycle module by module, with the line of each import: `a -(line 3)-> b -(line 9)-> a`."""
    steps = "".join(f"{step.importer} -(line {step.line})-> " for step in cycle)
    return f"import cycle: {steps}{cycle[0].importer}"


def layer_of(module: str, layers: Layers) -> int | None:
    """The position of `module`'s layer in `layers` (0 is the lowest), or None."""
    for position, names in enumerate(layers):
        if any(fnmatchcase(module, name) for name in names):
            return position
    return None


def layer_name(position: int, layers: Layers) -> str:
    """A layer in words: `layer 4 (tenxor.core)`."""
    names = ", ".join(name for name in layers[position] if not name.endswith(".*"))
    return f"layer {position} ({names})"


def upward_imports(imports: Iterable[Import], layers: Layers) -> list[str]:
    """Every import from a layer to a higher one, in words."""
    problems = []
    for found in imports:
        low, high = layer_of(found.importer, layers), layer_of(found.imported, layers)
        if low is not None and high is not None and high > low:
            problems.append(
                f"{found.importer} imports {found.imported} on line {found.line}: an upward "
                f"import, from {layer_name(low, layers)} to {layer_name(high, layers)}"
            )
    return problems


# ---------------------------------------------------------------------------------------------
# The project
# ---------------------------------------------------------------------------------------------

MODULES = project_modules(ROOT)
IMPORTS = import_graph(MODULES)


def test_every_module_has_a_layer():
    missing = [module for module in MODULES if layer_of(module, LAYERS) is None]
    assert not missing, f"modules in no layer (add them to LAYERS): {', '.join(missing)}"


def test_every_imported_project_module_exists():
    unknown = [f"{i.importer} imports {i.imported} on line {i.line}, and there is no such module"
               for i in IMPORTS if i.imported not in MODULES]  # fmt: skip
    assert not unknown, "\n".join(unknown)


def test_the_imports_make_no_cycle():
    cycles = [describe_cycle(cycle) for cycle in find_cycles(IMPORTS)]
    assert not cycles, "\n".join(cycles)


def test_no_module_imports_from_a_higher_layer():
    problems = upward_imports(IMPORTS, LAYERS)
    assert not problems, "\n".join(problems)


# The instructor's rooms: grading reaches the sandbox through one module, nothing imports the
# worker (a launcher starts it by name), and the worker loads only what its view holds.
SANDBOX, SANDBOX_INTERFACE, WORKER = (
    "instructor.sandbox",
    "instructor.sandbox.interface",
    "instructor.sandbox.worker",
)
ROOM_TOPS = ("instructor", "instructor.authoring", "instructor.sandbox", "instructor.grading")


def in_room(module: str, room: str) -> bool:
    """Whether `module` is the package `room` or one of its modules."""
    return module == room or module.startswith(room + ".")


def past_the_interface(imports: Iterable[Import]) -> list[str]:
    """Every import, by a module outside the sandbox, of a sandbox module other than its
    interface, in words."""
    return [
        f"{i.importer} imports {i.imported} on line {i.line}: outside the sandbox, import "
        f"only {SANDBOX_INTERFACE}"
        for i in imports
        if in_room(i.imported, SANDBOX)
        and not in_room(i.importer, SANDBOX)
        and i.imported != SANDBOX_INTERFACE
    ]


def loaded_by(module: str, imports: Iterable[Import]) -> set[str]:
    """The project modules that importing `module` loads: its own imports, theirs, and so on,
    with the packages above each."""
    edges: dict[str, set[str]] = defaultdict(set)
    for found in imports:
        edges[found.importer].add(found.imported)
    loaded, waiting = set(), [module]
    while waiting:
        name = waiting.pop()
        for package in [".".join(name.split(".")[:n]) for n in range(1, name.count(".") + 2)]:
            if package not in loaded:
                loaded.add(package)
                waiting += sorted(edges[package])
    return loaded


def test_outside_the_sandbox_only_its_interface_is_imported():
    problems = past_the_interface(IMPORTS)
    assert not problems, "\n".join(problems)


def test_no_module_imports_the_worker():
    """The launcher keeps root and the worker runs submitted code: the launcher starts it
    by name (instructor.entry_points), and no module, the launcher's least, imports it."""
    importers = [f"{i.importer} (line {i.line})" for i in IMPORTS if i.imported == WORKER]
    assert not importers, f"{WORKER} is imported by: {', '.join(importers)}"


def test_the_worker_loads_only_the_modules_its_view_holds():
    from instructor.sandbox.allowlist import WORKER_MODULES

    held = {str(Path(path).with_suffix("")).replace("/", ".").removesuffix(".__init__")
            for path in WORKER_MODULES}  # fmt: skip
    loaded = loaded_by(WORKER, IMPORTS)
    assert loaded <= held, (
        f"the worker loads {sorted(loaded - held)}, which its view "
        f"(instructor.sandbox.allowlist.WORKER_MODULES) does not hold: {sorted(held)}"
    )


def test_the_tops_of_the_rooms_import_nothing_of_the_project():
    found = [f"{i.importer} imports {i.imported} on line {i.line}"
             for i in IMPORTS if i.importer in ROOM_TOPS[:3]]  # fmt: skip
    assert not found, "\n".join(found)


def test_module_names_written_as_strings_come_from_entry_points():
    """A module started by name (a boot script, a pytest plugin) is named in
    instructor.entry_points alone: anywhere else, a string holding "instructor.x" in code
    (not a docstring) would break unseen when the module moves."""
    found = []
    for module, path in MODULES.items():
        if module == "instructor.entry_points":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
                      and node.body and isinstance(node.body[0], ast.Expr)}  # fmt: skip
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {node.value[:60]!r}"
                  for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in docstrings and "instructor." in node.value]  # fmt: skip
    assert not found, "module names outside instructor/entry_points.py:\n" + "\n".join(found)


def test_every_entry_point_names_a_module_with_its_function():
    from instructor import entry_points

    named = {"WORKER": "main", "LAUNCHER": "main", "SWEEPER": "main", "EXPOSURE": "main",
             "JUDGE": "check_imports", "PROBE": "reach", "CLI": "main"}  # fmt: skip
    for constant, function in named.items():
        module = getattr(entry_points, constant)
        assert module in MODULES, f"entry_points.{constant} = {module!r}: no such module"
        assert f"def {function}(" in MODULES[module].read_text(encoding="utf-8"), (
            f"entry_points.{constant} = {module!r} has no function {function}()"
        )


def test_the_readme_names_every_module_of_the_instructor_package_once():
    """README's tree of the instructor's package has one line per module, and no other."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = [line.split()[0] for line in readme.splitlines() if line.startswith("instructor/")]
    files = sorted(
        path.relative_to(ROOT).as_posix() for path in (ROOT / "instructor").rglob("*.py")
    )
    doubled = sorted({name for name in listed if listed.count(name) > 1})
    assert sorted(set(listed)) == files and not doubled, (
        f"README.md's tree of instructor/ leaves out {sorted(set(files) - set(listed))}, "
        f"names {sorted(set(listed) - set(files))}, which do not exist, and lists "
        f"{doubled} more than once"
    )


def test_import_tenxor_leaves_the_diagrams_unimported():
    """Drawing and printing find the tensor: the package imports tenxor.diagrams only when a
    diagram is drawn (it costs a noticeable fraction of a second, and check() waits for it)."""
    script = "import sys, tenxor; print(sorted(m for m in sys.modules if 'diagrams' in m))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=ROOT, check=True)  # fmt: skip
    assert result.stdout.strip() == "[]", result.stdout


# ---------------------------------------------------------------------------------------------
# The checks themselves, on made-up modules
# ---------------------------------------------------------------------------------------------


def test_the_checks_name_a_made_up_cycle_and_upward_import():
    layers = [("low",), ("middle", "middle.*"), ("high",)]
    imports = [
        Import("high", "low", 1),
        Import("low", "middle.a", 3),
        Import("middle.a", "middle.b", 5),
        Import("middle.b", "middle.a", 7),
    ]
    cycles = [describe_cycle(cycle) for cycle in find_cycles(imports)]
    assert cycles == ["import cycle: middle.a -(line 5)-> middle.b -(line 7)-> middle.a"]
    assert upward_imports(imports, layers) == [
        "low imports middle.a on line 3: an upward import, from layer 0 (low) to layer 1 (middle)"
    ]
    assert find_cycles([Import("a", "a", 2)]) == [[Import("a", "a", 2)]]


def test_imports_in_type_checking_blocks_and_function_bodies_count(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("from . import low\nfrom .sub import deep\n")
    (tmp_path / "pkg" / "low.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from .sub.deep import Thing\n"
        "def late():\n"
        "    import pkg\n"
    )
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "deep.py").write_text(
        "from .. import low\nfrom ..low import late\n"
    )
    modules = project_modules(tmp_path, ["pkg"])
    found = {(i.importer, i.imported, i.line) for i in import_graph(modules)}
    assert found == {
        ("pkg", "pkg.low", 1),
        ("pkg", "pkg.sub.deep", 2),
        ("pkg.low", "pkg.sub.deep", 3),
        ("pkg.low", "pkg", 5),
        ("pkg.sub.deep", "pkg.low", 1),
        ("pkg.sub.deep", "pkg.low", 2),
    }
    assert find_cycles(import_graph(modules))


def test_the_room_rules_name_a_made_up_reach_past_the_interface():
    imports = [
        Import("instructor.grading.batch", "instructor.sandbox.launcher", 4),
        Import("instructor.grading.batch", "instructor.sandbox.interface", 5),
        Import("instructor.sandbox.interface", "instructor.sandbox.launcher", 9),
        Import("instructor.sandbox.launcher", "instructor.sandbox.os_calls", 2),
    ]
    assert past_the_interface(imports) == [
        "instructor.grading.batch imports instructor.sandbox.launcher on line 4: outside the "
        "sandbox, import only instructor.sandbox.interface"
    ]
    assert loaded_by("instructor.sandbox.interface", imports) == {
        "instructor",
        "instructor.sandbox",
        "instructor.sandbox.interface",
        "instructor.sandbox.launcher",
        "instructor.sandbox.os_calls",
    }


def test_a_chapter_the_layers_do_not_name_gets_a_layer_above_the_last_chapter():
    layers = [("tenxor.storage",), ("tenxor.core",), ("tenxor.graph_attention",), ("tenxor",)]
    chapters = [Chapter(1, "n1", ("tenxor.storage",)),
                Chapter(6, "n6", ("tenxor.graph_attention",)),
                Chapter(7, "n7", ("tenxor.norms",))]  # fmt: skip
    assert with_new_chapters(layers, chapters) == [
        ("tenxor.storage",), ("tenxor.core",), ("tenxor.graph_attention",), ("tenxor.norms",),
        ("tenxor",),
    ]  # fmt: skip


def test_no_module_keeps_state_in_global_statements():
    """State lives in explicit objects (a class instance, pytest's stash), not in module
    variables that functions rebind with `global`."""
    found = [f"{path.relative_to(ROOT)}:{node.lineno} global {', '.join(node.names)}"
             for path in MODULES.values()
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Global)]  # fmt: skip
    assert not found, "\n".join(found)


def test_one_module_of_each_package_asks_to_die_with_its_parent():
    """The death signal is asked for in tenxor/course/engine/lifeline.py (the check engine's
    processes) and instructor/sandbox/os_calls.py (the sandbox's, which loads no line of
    tenxor before it confines itself) alone."""
    asking = sorted(str(path.relative_to(ROOT)) for path in MODULES.values()
                    if "PDEATHSIG" in path.read_text(encoding="utf-8"))  # fmt: skip
    assert asking == ["instructor/sandbox/os_calls.py", "tenxor/course/engine/lifeline.py"], (
        f"modules that ask for a death signal: {asking}"
    )
