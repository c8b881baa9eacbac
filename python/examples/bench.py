#!/usr/bin/python3
"""The Python layer's cost per operation: ITERS 8-byte reads and
fetch-and-adds on the LMR NAME from Python, p50 and p99 in microseconds and
the process's CPU time per operation, printed as lite-bench's rows are (run
beside lite-bench on the same LMR to compare; tests/vm/compat.sh does).

    PYTHONPATH=python python3 python/examples/bench.py --iters 300 cost.lmr
"""

import argparse
import sys
import time

import lite


def row(name, fn, iters):
    lat = []
    cpu0 = time.thread_time()
    for _ in range(iters):
        t0 = time.perf_counter_ns()
        fn()
        lat.append(time.perf_counter_ns() - t0)
    cpu = (time.thread_time() - cpu0) / iters * 1e6
    lat.sort()
    print("python %-5s 8 B  p50 %.1f us  p99 %.1f us  cpu %.1f us/op"
          % (name, lat[iters // 2] / 1000, lat[iters * 99 // 100] / 1000, cpu))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name", help="an LMR this process may read and write")
    p.add_argument("--iters", type=int, default=300, help="operations per row (default 300)")
    args = p.parse_args()
    if args.iters < 10:
        p.error("--iters must be at least 10")
    with lite.Context() as ctx, ctx.map(args.name) as r:
        buf = bytearray(8)
        row("read", lambda: r.read_into(buf, 8), args.iters)
        row("faa", lambda: r.faa(1), args.iters)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lite.LiteError as e:
        print("bench.py: %s" % e, file=sys.stderr)
        sys.exit(1)
