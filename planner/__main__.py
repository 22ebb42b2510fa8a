"""``python -m planner``: the same as the ``planner`` command."""

from planner.cli import main

if __name__ == "__main__":
    main()
