"""What one phase of a profiled run cost: the difference between two cProfile dumps of one process.

    .venv/bin/python bench/profile_diff.py BEFORE.prof AFTER.prof [--sort tottime|cumtime] [--top N] [--match TEXT]

``bench/rollout_roles.py`` dumps its profile so far at every stats report (``<role>.<n>.prof``,
with ``ROLLOUT_ROLE_PROFILE_DIR``); subtracting the dump taken before a phase from the one taken
after it leaves that phase alone. Prints, per function, the calls, own time, cumulative time and
their shares of the phase's total own time. Cumulative times of recursive or re-entered
functions (coroutines resumed many times) are cProfile's own figures, differenced as they are.
"""

from __future__ import annotations

import argparse
import pstats
from typing import Any

Row = tuple[int, int, float, float]
"""(primitive calls, calls, own seconds, cumulative seconds)."""


def phase_rows(before: str, after: str) -> dict[tuple[str, int, str], Row]:
    """Per function, what the ``after`` dump adds to the ``before`` dump (functions with calls)."""
    old: dict[Any, Any] = pstats.Stats(before).stats  # type: ignore[attr-defined]
    new: dict[Any, Any] = pstats.Stats(after).stats  # type: ignore[attr-defined]
    rows: dict[tuple[str, int, str], Row] = {}
    for function, (cc, nc, tt, ct, _callers) in new.items():
        occ, onc, ott, oct_ = old.get(function, (0, 0, 0.0, 0.0, {}))[:4]
        if nc - onc > 0 or tt - ott > 1e-9:
            rows[function] = (cc - occ, nc - onc, tt - ott, ct - oct_)
    return rows


def _is_idle(function: tuple[str, int, str]) -> bool:
    """The event loop's wait for I/O: not CPU, left out of the shares."""
    return "'poll' of 'select." in function[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--sort", choices=("tottime", "cumtime", "calls"), default="tottime")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--match", default="", help="only functions whose file or name contains TEXT")
    args = parser.parse_args()
    rows = phase_rows(args.before, args.after)
    idle = sum(row[2] for function, row in rows.items() if _is_idle(function))
    total = sum(row[2] for row in rows.values()) - idle
    column = {"tottime": 2, "cumtime": 3, "calls": 1}[args.sort]
    chosen = [(f, r) for f, r in rows.items() if args.match in f"{f[0]}:{f[2]}"]
    chosen.sort(key=lambda item: item[1][column], reverse=True)
    print(f"phase: {total:.2f} s own time over {len(rows)} functions (shares of it), "
          f"besides {idle:.2f} s waiting in the event loop's poll")
    print(f"{'calls':>10} {'own s':>9} {'own %':>6} {'cum s':>9} {'cum %':>6}  function")
    for (path, line, name), (_cc, nc, tt, ct) in chosen[:args.top]:
        where = path.split("kubeloop/", 1)[-1] if "kubeloop/" in path else path.rsplit("/", 1)[-1]
        print(f"{nc:>10} {tt:>9.3f} {100 * tt / max(total, 1e-9):>6.1f} {ct:>9.3f} {100 * ct / max(total, 1e-9):>6.1f}"
              f"  {where}:{line}({name})")


if __name__ == "__main__":
    main()
