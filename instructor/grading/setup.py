"""The set-up of a grading run: the sandbox mode this machine allows, the judge's tree, the
folders a worker must not see, and the worker users and slots the run claims."""

from __future__ import annotations

import compileall
import contextlib
import os
import queue
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from instructor.authoring.release import NOT_NEEDED_FOR_TESTS, solved_source, write_tree
from instructor.grading.preloaded import Starter, Starts
from instructor.sandbox.interface import (
    ALLOWLIST,
    BLOCK,
    HIDDEN_FOLDERS,
    JUDGE_USER,
    JUDGE_USERS,
    SandboxConfig,
    SandboxLimits,
    SandboxMode,
    course_secrets,
    exposure,
    grading_users,
    namespaces_refusal,
    sandbox_mode,
    scratch_base,
    sweep,
    system_steps,
    usable_cpus,
)
from tenxor.course.catalog import EXERCISE_MODULES, RECORDS
from tenxor.course.engine import start

GRADING_LIMITS = SandboxLimits()
EXAMPLES = {"10": "ci-quick", "100": "ci", "1000": "ci-thorough"}  # per property test
EXAMPLES_OF = {profile: int(count) for count, profile in EXAMPLES.items()}  # and back
# A judge process costs about as much CPU time to start and to collect the tests as running
# this many property-test examples: one submission's tests are spread over more judge
# processes only where each gets at least as many examples to run (measured with 10 examples
# a test: one chapter graded sooner in one process, the whole course sooner in two), and a
# batch's examples are recorded once (a recorder process a slot) only where its judges would
# otherwise draw more examples again than that.
EXAMPLES_PER_JUDGE = 5000
# The judges' tree: the course with its reference solutions, its tests and the judge itself.
JUDGE_TREE_EXCLUDED = tuple(part for part in NOT_NEEDED_FOR_TESTS if part != "instructor")
# The release's tree, of which the workers get the package: every exercise a stub.
RELEASE_TREE_EXCLUDED = (*NOT_NEEDED_FOR_TESTS, "tests")


@dataclass
class GradingSetup:
    """What grading a batch needs once: the judge's tree, the sandbox mode, what the worker
    must not see, and which worker users and CPUs are free."""

    course: Path
    scratch: Path
    mode: SandboxMode
    limits: SandboxLimits
    judges: int  # test processes (pytest-xdist) per submission, at most (judges_for)
    users: int  # the first of the worker users this grading claimed
    profile: str = "ci"  # the hypothesis profile of the tests (tests/conftest.py)
    slots: queue.Queue = field(default_factory=queue.Queue)
    examples: list[Path] = field(default_factory=list)  # the batch's recorded examples
    starter: Starter | None = None  # what forks the batch's judges (grading.preloaded)

    @property
    def starts(self) -> Starts:
        """What starts the batch's test processes, as engine.start does: its starter's fork,
        or engine.start itself where the set-up has no starter (one made by hand)."""
        return self.starter.start if self.starter else start

    @property
    def judge_tree(self) -> Path:
        """The judges' tree: the reference solutions, the tests, the judge."""
        return self.scratch / "judge"

    @property
    def release_tree(self) -> Path:
        """The release's package, every exercise a stub: what a submission is laid over."""
        return self.scratch / "release"

    def examples_for(self, tests: int) -> int:
        """The property-test examples that `tests` tests run at most, at the set-up's profile."""
        return tests * EXAMPLES_OF.get(self.profile, EXAMPLES_OF["ci"])

    def judges_for(self, tests: int) -> int:
        """How many of the set-up's judge processes one submission's `tests` are spread over:
        as many as give each EXAMPLES_PER_JUDGE examples to run, one at least."""
        return max(1, min(self.judges, self.examples_for(tests) // EXAMPLES_PER_JUDGE))

    def records_for(self, groups: int, tests: int) -> bool:
        """Whether a batch whose `groups` of students are graded by a judge each on `tests`
        tests draws its examples once, a recorder on each slot: where every judge but one
        would draw more examples again than the recorders cost to start."""
        drawn_again = (groups - 1) * self.examples_for(tests)
        return drawn_again > self.slots.qsize() * EXAMPLES_PER_JUDGE

    def config(self, package: Path, slot: int) -> SandboxConfig:
        """The sandbox of the judge in `slot`, for the submission's package in `package`."""
        judge = self.users + JUDGE_USERS + slot if JUDGE_USER.is_on(self.mode) else None
        return SandboxConfig(
            package=str(package),
            tree=str(self.judge_tree),
            mode=self.mode,
            slot=slot * self.judges,
            users=self.users,
            judge=judge,
            modules=("tenxor", *EXERCISE_MODULES),
            records=RECORDS,
            limits=self.limits,
            system=system_steps() if ALLOWLIST.is_on(self.mode) else (),
        )

    @contextlib.contextmanager
    def judge_folder(self, slot: int) -> Iterator[Path]:
        """A folder of the judge's own for one run: the only one it may write."""
        judge = self.config(Path(), slot)
        with tempfile.TemporaryDirectory(prefix="tenxor-judge-", dir=self.scratch) as folder:
            if judge.judge is not None:
                os.chown(folder, judge.judge, judge.judges_group)
            try:
                yield Path(folder)
            finally:
                sweep(judge.judge)  # whatever a judge of this slot left running


UNPROTECTED_REFUSAL = (
    "grading did not start: without root, workers get an allowlisted view only where "
    "bubblewrap may make user namespaces, and here it may not ({why}). Unprotected, each "
    "submission would run as you, able to read and change every file you can (other "
    "students', the course's hidden tests). Grade as root, allow unprivileged user namespaces, "
    "or pass --unprotected to grade anyway; every report will say it ran unprotected."
)


class GradingRefused(Exception):
    """Grading would not be safe here, and did not start: the reason says what to change."""


@contextlib.contextmanager
def grading_setup(
    course: Path,
    closed: list[Path],
    limits: SandboxLimits,
    jobs: int,
    mode: SandboxMode | None = None,
    profile: str = "ci",
    unprotected: bool = False,
    grouped: bool = False,
) -> Iterator[GradingSetup]:
    """Set up grading: the judge's tree, the sandbox mode (the strongest allowed when `mode` is
    None) and the worker users. Each of `jobs` slots runs one judge with a share of the
    CPUs (pytest-xdist's processes); when `grouped` (judges that grade several
    submissions in turn, in one process each), there is a slot for each CPU instead.
    Where workers get no allowlisted view, grading first checks, as their user, that
    they can open none of the course and the folders `closed` (the output and the
    submissions) and read no copy of a solution or hidden test (instructor.sandbox.exposure);
    GradingRefused says what they could, and nothing is changed. Without any view or
    users of their own, grading runs only when told it may run `unprotected`."""
    mode = sandbox_mode(mode)
    if mode is SandboxMode.UNPROTECTED and not unprotected:
        why = namespaces_refusal(own_user=False) or "the unprotected sandbox was asked for"
        raise GradingRefused(UNPROTECTED_REFUSAL.format(why=why))
    judges = max(1, usable_cpus() // max(1, jobs))  # one in a 0.5-CPU container
    if max(1, jobs) * judges > JUDGE_USERS or jobs >= BLOCK - JUDGE_USERS:
        raise ValueError(f"--jobs {jobs} needs more than the {BLOCK} users of a block")
    slots = max(1, jobs) * judges if grouped else max(1, jobs)
    judges = 1 if grouped else judges
    with (
        tempfile.TemporaryDirectory(prefix="tenxor-grading-", dir=scratch_base(mode)) as scratch,
        contextlib.ExitStack() as claimed,
    ):
        users = claimed.enter_context(grading_users()) if mode.other_users else 0
        if JUDGE_USER.is_on(mode):  # the judges may read their tree; workers nothing of it
            os.chown(scratch, 0, users + BLOCK - 1)
            os.chmod(scratch, 0o750)
        setup = GradingSetup(course, Path(scratch), mode, limits, judges, users, profile)
        write_tree(course, setup.judge_tree, JUDGE_TREE_EXCLUDED, solved_source, bytecode=True)
        write_tree(course, setup.release_tree, RELEASE_TREE_EXCLUDED, bytecode=True)
        if HIDDEN_FOLDERS.is_on(mode) and not ALLOWLIST.is_on(mode):
            folders = [course.resolve(), *[folder.resolve() for folder in closed]]
            why = exposure(course_secrets(course), users, folders, setup.judge_tree)
            if why:
                raise GradingRefused(f"grading did not start: {why}")
        # Its packages compiled once here: the judges, launchers and workers may not write
        # their tree's bytecode, so each would compile what it imports from it again. (The
        # trees keep the course's bytecode of the modules they copy as they are, which is not
        # compiled again; the test modules get pytest's own bytecode when the tests to grade
        # are collected, unless the course's came along; each submission's package, a copy
        # of the release's, keeps the release's bytecode of the modules it does not replace.)
        for package in (setup.judge_tree / "tenxor", setup.judge_tree / "instructor",
                        setup.release_tree / "tenxor"):  # fmt: skip
            compileall.compile_dir(package, quiet=1)
        for slot in range(slots):
            setup.slots.put(slot)
        setup.starter = claimed.enter_context(Starter(setup.scratch, profile))
        yield setup
