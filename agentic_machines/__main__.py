"""``python -m agentic_machines``: the same command as ``agentic-machines``."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
