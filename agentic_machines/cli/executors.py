"""``--workers N`` and ``--scheduler ADDRESS``: where the commands that explore run the
harness calls (``explore``, ``test``).

Neither is the default: a process pool or a cluster pays only when a harness call costs
milliseconds (``docs/scaling_out.md``). ``--workers N`` starts a local pool of N
processes for the command; ``--scheduler ADDRESS`` connects to a running Dask scheduler
and uses its workers (``pip install -e ".[distributed]"``).

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> add_executor_arguments(p)
>>> with executor_from(p.parse_args([])) as ex:
...     ex is None
True
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from concurrent.futures import Executor
from typing import Any

from ..errors import InvalidArgument

__all__ = ["add_executor_arguments", "executor_from"]


def add_executor_arguments(parser: Any) -> None:
    """Add ``--workers`` and ``--scheduler`` (one or the other) to a subcommand's parser.

    >>> p = argparse.ArgumentParser()
    >>> add_executor_arguments(p)
    >>> p.parse_args(["--workers", "2"]).workers
    2
    """
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--workers",
        type=_workers,
        metavar="N",
        help="run the harness calls on a local pool of N processes (pays only for harness "
        "calls of milliseconds; the machine must pickle)",
    )
    group.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the harness calls on a Dask cluster, e.g. tcp://host:8786 "
        "(needs the [distributed] extra)",
    )


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--workers takes a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"--workers must be at least 1, got {n}")
    return n


@contextlib.contextmanager
def executor_from(args: argparse.Namespace) -> Iterator[Executor | None]:
    """The executor ``args`` ask for (``None``: run in this process), shut down after use.

    >>> with executor_from(argparse.Namespace(workers=1, scheduler=None)) as ex:
    ...     type(ex).__name__
    'ProcessPoolExecutor'
    """
    workers = getattr(args, "workers", None)
    scheduler = getattr(args, "scheduler", None)
    if workers is not None:
        from concurrent.futures import ProcessPoolExecutor  # loaded when the verb runs

        with ProcessPoolExecutor(workers) as pool:
            yield pool
        return
    if scheduler is not None:
        try:
            from distributed import Client  # the optional dask extra, only for --scheduler
        except ImportError:
            raise InvalidArgument(
                "--scheduler needs Dask: pip install -e '.[distributed]' (or drop --scheduler)"
            ) from None
        try:
            client = Client(scheduler, timeout="5s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise InvalidArgument(
                f"cannot reach the Dask scheduler at {scheduler!r}: {exc}; start one with "
                "'dask scheduler' (and 'dask worker ADDRESS') or check the address"
            ) from None
        with client:
            yield client.get_executor()
        return
    yield None
