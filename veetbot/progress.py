"""One progress bar for long commands: drawn in place on a terminal, silent otherwise,
so pipes, logs and ``--json`` output stay clean."""
from __future__ import annotations

import sys
from typing import TextIO


class ProgressBar:
    """``stage  42% [########            ] 42000/100000``; call it as ``bar(stage, done, total)``."""

    WIDTH = 30

    def __init__(self, stream: TextIO | None = None, *, label_width: int = 12) -> None:
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label_width = label_width
        self.drawn = False

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled or not total:
            return
        filled = self.WIDTH * done // total
        self.stream.write(
            f"\r{stage[: self.label_width]:<{self.label_width}}{100 * done // total:>4}%"
            f" [{'#' * filled}{' ' * (self.WIDTH - filled)}] {done}/{total}\x1b[K"
        )
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False
