#!/usr/bin/python3
"""A shared counter in remote memory, from Python: the LMR NAME (made on
node HOME if it does not exist yet) is fetch-and-added COUNT times.

    PYTHONPATH=python python3 python/examples/counter.py --home node2 \
        --count 200 demo.pycounter

Prints the counter's value at the end and the time per operation.
"""

import argparse
import errno
import sys
import time

import lite


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name", help="the LMR's name, e.g. demo.pycounter")
    p.add_argument("--home", default="", help="the node to hold it (a name; default: this node)")
    p.add_argument("--count", type=int, default=100, help="fetch-and-adds (default 100)")
    args = p.parse_args()
    if args.count < 1:
        p.error("--count must be at least 1")

    with lite.Context() as ctx:
        home = ctx.node_lookup(args.home) if args.home else 0
        try:
            ctx.alloc(args.name, 4096, mode=0o666, home=home)
        except lite.LiteError as e:
            if e.errno != errno.EEXIST:
                raise
        with ctx.map(args.name) as counter:
            start = time.perf_counter()
            for _ in range(args.count):
                counter.faa(1)
            took = time.perf_counter() - start
            value = counter.read(0, 8)
        print("%s on %s: %d after %d fetch-and-adds from %s, %.0f us each"
              % (args.name, ctx.node_name(counter.home), int.from_bytes(value, "little"),
                 args.count, ctx.node_name(ctx.node_id()), took / args.count * 1e6))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lite.LiteError as e:
        print("counter.py: %s" % e, file=sys.stderr)
        sys.exit(1)
