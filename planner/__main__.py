"""``python -m planner``: the same as the ``planner`` command."""

from planner.cli import run

if __name__ == "__main__":
    run()
