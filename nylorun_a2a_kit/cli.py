"""What every command the kit installs shares: ``--version``, and a bad option answered in one line, exit 4."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from nylorun_a2a_kit import __version__

USAGE_ERROR = 4


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit 4, the kit's code for bad input."""

    def __init__(self, *args, hint: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.hint = hint  # said with an unrecognized argument: where such arguments go
        self.add_argument("--version", action="version", version=f"%(prog)s {__version__}")

    def error(self, message: str) -> NoReturn:
        if self.hint and message.startswith("unrecognized arguments"):
            message = f"{message}: {self.hint}"
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(USAGE_ERROR)
