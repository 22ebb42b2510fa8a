"""``python -m planner``: the same as the ``planner`` command."""

import gc

if __name__ == "__main__":
    # run() pauses the cyclic collector while the command loads; pausing it here already spares
    # the collections the CLI's own imports (click) would trigger before run() is reached
    gc.disable()
    from planner.cli import run

    run()
