"""Shared pytest set-up: exercise markers are enforced, hypothesis gets a fixed budget."""

import os

from hypothesis import HealthCheck, Phase, settings

pytest_plugins = ["tenxor.course.markers"]

# The explain phase (which parts of a failing example matter) costs seconds per failing
# test, and failing tests are the common case while exercises are unfinished.
settings.register_profile(
    "default",
    max_examples=100,
    deadline=None,
    phases=[phase for phase in Phase if phase is not Phase.explain],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("quick", parent=settings.get_profile("default"), max_examples=10)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=1000)
# CI replays the same examples on every run (no database, derandomized), so a red build
# always reproduces; local runs draw new examples each time.
settings.register_profile(
    "ci", parent=settings.get_profile("default"), derandomize=True, database=None
)
# Grading replays fixed examples too, as many as the instructor chooses.
settings.register_profile("ci-quick", parent=settings.get_profile("ci"), max_examples=10)
settings.register_profile("ci-thorough", parent=settings.get_profile("ci"), max_examples=1000)
# check() answers while a learner works, in a fraction of a second: a few examples, the same
# ones every time, and the first bug only (grading keeps the full search). check() replays a
# failing example from its blob and never shows the blob. Its runs fix hypothesis's seed
# (SEED_OPTION of tenxor.course.engine), which draws the same examples as derandomize does
# without hashing each test's source on every run.
settings.register_profile(
    "check",
    parent=settings.get_profile("ci"),
    derandomize=False,
    max_examples=5,
    report_multiple_bugs=False,
    print_blob=True,
)
# The progress table needs each test's outcome only: the same examples as check, no shrinking
# (a failing example fails as it is found).
settings.register_profile(
    "progress",
    parent=settings.get_profile("check"),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
default_profile = "ci" if os.environ.get("CI") == "true" else "default"
settings.load_profile(os.environ.get("TENXOR_HYPOTHESIS_PROFILE", default_profile))
