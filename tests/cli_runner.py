"""Running ``truedeal ARGS`` in the test process, as the console script does.

In-process runs spare the ~0.2 s start-up of a fresh interpreter per call;
the few end-to-end tests that need a real process use subprocess instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from truedeal.cli import main

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Ran:
    """What one command did: its exit code and its output bytes."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def out(self) -> str:
        return self.stdout.decode()

    @property
    def err(self) -> str:
        return self.stderr.decode()


def run(*args: object, stdin: str | bytes | None = None, cwd: Path = ROOT, env: Mapping[str, str] | None = None) -> Ran:
    """Run ``truedeal ARGS`` in this process; the working folder is ``cwd``,
    and ``env`` is set in the environment while it runs."""
    before = os.getcwd()
    os.chdir(cwd)
    try:
        with CliRunner().isolation(input=stdin, env=env) as (out, err, _mixed):
            code = main([str(a) for a in args])
            sys.stdout.flush()
            sys.stderr.flush()
    finally:
        os.chdir(before)
    return Ran(code, out.getvalue(), err.getvalue())
