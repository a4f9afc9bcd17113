"""Supervising child processes: spawning them in their own process group,
signalling, waiting, and the one-line messages of ``truedeal serve``."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

#: Longest Unix socket path the kernel takes (sun_path is 108 bytes).
MAX_SOCKET_PATH = 100


class ServeError(click.ClickException):
    """A problem at start: one line, exit code 2."""

    exit_code = 2


def say(text: str) -> None:
    click.echo(f"truedeal serve: {text}")
    sys.stdout.flush()


def warn(text: str) -> None:
    click.echo(f"truedeal serve: {text}", err=True)


# --------------------------------------------------------------------------- children


def death_signal() -> Callable[[], None] | None:
    """A preexec_fn that makes the kernel SIGTERM the child when this process
    dies (``PR_SET_PDEATHSIG``, Linux only; None elsewhere).  libc is loaded
    here, in the parent; the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:  # pragma: no cover - runs in the child, between fork and exec
        prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


def started(proc: subprocess.Popen | None) -> subprocess.Popen:
    """``proc``, which its owner has started (a bug otherwise)."""
    if proc is None:
        raise RuntimeError("the child process was not started")
    return proc


def spawn(cmd: list[str], **kw: Any) -> subprocess.Popen:
    # Children are spawned from the main thread before the web server's
    # thread starts, so preexec_fn is safe here.  (The death signal is sent
    # when the forking *thread* exits: hence the main thread.)
    return subprocess.Popen(cmd, start_new_session=True, preexec_fn=death_signal(), **kw)


def wait_exit(proc: subprocess.Popen, timeout: float, interrupt: Callable[[], bool] = lambda: False) -> bool:
    """Wait up to ``timeout`` s for ``proc``; stop early when ``interrupt()``.
    True if it exited."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if time.monotonic() >= deadline or interrupt():
            return False
        time.sleep(0.05)
    return True


def send_signal(pid: int, sig: int, group: bool = False) -> None:
    try:
        os.killpg(pid, sig) if group else os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    return "\n".join("    " + line for line in text)


# --------------------------------------------------------------------------- redis
