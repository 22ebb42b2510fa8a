"""`planner offers` and `planner gpus`."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
