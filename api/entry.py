"""The ``negagraph`` console script's entry point.

Loading a command (:mod:`api.cli`, then the command's module: SQLAlchemy, numpy, the
game...) takes up to a second or more before it runs, and a Ctrl-C meanwhile ended in a
``KeyboardInterrupt`` traceback. This module imports nothing heavy (nor does
``api/__init__.py``): :func:`main` first makes SIGINT end the process at once with one
``interrupted`` line and status 130, as an interrupted command does, then loads the
command line and the module of the command asked for (:func:`api.cli.preload`), restores
Python's own SIGINT handling and runs it.

A Ctrl-C in the first few milliseconds, while Python itself starts (before this module
runs), is still Python's to handle.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType


def interrupted(signum: int, frame: FrameType | None) -> None:
    """SIGINT while loading: one line, status 130, at once (nothing to clean up yet; an
    exception could leave the half-imported modules to misbehave on the way out)."""
    os.write(2, b"interrupted\n")
    os._exit(130)


def main() -> None:
    """Entry point of the ``negagraph`` console script."""
    # SIGINT ignored (a background job): leave it so.
    loading = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if loading:
        signal.signal(signal.SIGINT, interrupted)
    from api.cli import main as cli_main
    from api.cli import preload

    preload(sys.argv[1:])  # the command's own module (api.cli loads none)

    if loading:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    cli_main()


__all__ = ["main"]
