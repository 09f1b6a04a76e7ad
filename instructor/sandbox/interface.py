"""The sandbox as grading sees it: the only module of the sandbox that grading imports.

mode = sandbox_mode()                       # the strongest this machine allows
with grading_users() as users:              # a block of users of the workers' own
    config = SandboxConfig(package, tree, mode, slot, users, judge, limits, system)
    give_up_root(config)                    # the judge: its own user, for good
    sandbox = Sandbox(launcher_for(config), kinds, limits)
    sandbox.call("tenxor.views", "transpose", (x, 0, 1), {})
"""

from __future__ import annotations

from instructor.sandbox.allowlist import system_steps
from instructor.sandbox.exposure import course_secrets, exposure
from instructor.sandbox.judge_side import Raising, Sandbox
from instructor.sandbox.launcher import (
    BLOCK,
    JUDGE_USERS,
    SandboxConfig,
    SandboxLimits,
    give_up_root,
    grading_users,
    launcher_for,
    sweep,
)
from instructor.sandbox.machine import (
    namespaces_allowed,
    namespaces_refusal,
    sandbox_mode,
    scratch_base,
    usable_cpus,
)
from instructor.sandbox.plain_data import Kinds, tensor_kinds
from instructor.sandbox.protections import (
    ALLOWLIST,
    HIDDEN_FOLDERS,
    JUDGE_USER,
    SandboxMode,
    protections_in_brief,
    protections_in_words,
)

__all__ = [
    "ALLOWLIST",
    "BLOCK",
    "HIDDEN_FOLDERS",
    "JUDGE_USER",
    "JUDGE_USERS",
    "Kinds",
    "Raising",
    "Sandbox",
    "SandboxConfig",
    "SandboxLimits",
    "SandboxMode",
    "course_secrets",
    "exposure",
    "give_up_root",
    "grading_users",
    "launcher_for",
    "namespaces_allowed",
    "namespaces_refusal",
    "protections_in_brief",
    "protections_in_words",
    "sandbox_mode",
    "scratch_base",
    "sweep",
    "system_steps",
    "usable_cpus",
    "tensor_kinds",
]
