"""What sandbox this machine allows: namespaces for bubblewrap's allowlisted view, root for
users of the workers' own, and a scratch folder the judges' users can reach."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from instructor.sandbox.allowlist import bubblewrap_refusal
from instructor.sandbox.protections import JUDGE_USER, SandboxMode


def namespaces_refusal(own_user: bool = True) -> str | None:
    """Why workers cannot run in bubblewrap's allowlisted view here (None where they can):
    under users of their `own_user`, that needs root; as this process's user, bubblewrap
    needs unprivileged user namespaces."""
    if not sys.platform.startswith("linux"):
        return "it needs Linux"
    if own_user and os.geteuid() != 0:
        return "it needs root"
    return bubblewrap_refusal(str(Path(__file__).resolve().parents[2]), own_user)


def namespaces_allowed() -> bool:
    """Whether workers can run in bubblewrap's allowlisted view, under users of their own."""
    return namespaces_refusal() is None


def sandbox_mode(requested: SandboxMode | None = None) -> SandboxMode:
    """The strongest sandbox this machine allows (when None is `requested`), or the weaker
    one `requested`; OSError when the one requested needs what this machine refuses."""
    if requested is None:
        if os.geteuid() == 0:
            return SandboxMode.ISOLATED if namespaces_allowed() else SandboxMode.SEPARATE_USER
        refused = namespaces_refusal(own_user=False)
        return SandboxMode.UNPROTECTED if refused else SandboxMode.SAME_USER
    requested = SandboxMode(requested)
    if requested.other_users and os.geteuid() != 0:
        raise OSError(f"the {requested} sandbox needs root")
    why = namespaces_refusal(requested.other_users) if requested.namespaces else None
    if why:
        raise OSError(f"the {requested} sandbox needs bubblewrap's namespaces: {why}")
    return requested


def scratch_base(mode: SandboxMode) -> str:
    """Where grading makes its scratch folder: the temporary folder, unless a judge's user
    could not reach it (a TMPDIR below a private home folder), then /tmp."""
    base = Path(tempfile.gettempdir()).resolve()
    if not JUDGE_USER.is_on(mode) or all(p.stat().st_mode & 0o001 for p in (base, *base.parents)):
        return str(base)
    return "/tmp"
