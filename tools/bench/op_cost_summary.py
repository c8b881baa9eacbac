#!/usr/bin/env python3
"""op_cost's summary of an ftrace function_graph trace (with funcgraph-tail).

Usage: op_cost_summary.py TRACE

For each entry point the trace was started on (its set_graph_function: the
outermost traced calls), how many times it ran and its average time, then
each function it calls directly: its average time per call of the entry
point (all its calls added up) and how many times it runs per call, sorted
by that time. "(own)" is the entry point's time outside its traced calls.
Times are microseconds as the tracer measured them (its overhead included).
"""

import re
import sys
from collections import defaultdict

# "  0) + 12.345 us   |    } /* lite_op_begin [lite] */" and the like.
LINE = re.compile(r"^\s*\d+\)\s+(?:[+!#*@$]\s*)?(?:([\d.]+)\s*(us|ms|s)\s*)?\|(\s*)(.*?)\s*$")
NAME = re.compile(r"^([\w.]+)")


def duration_us(value, unit):
    if value is None:
        return None
    scale = {"us": 1.0, "ms": 1e3, "s": 1e6}[unit]
    return float(value) * scale


def parse(lines):
    """(root, child) -> [total_us, calls]; root -> [total_us, calls]."""
    roots = defaultdict(lambda: [0.0, 0])
    children = defaultdict(lambda: [0.0, 0])
    stack = []  # names of the open calls, outermost first
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        dur = duration_us(m.group(1), m.group(2))
        text = m.group(4)
        if text.endswith("{"):
            n = NAME.match(text)
            stack.append(n.group(1) if n else "?")
            continue
        if text.startswith("}"):
            if not stack:
                continue  # a call that began before the trace
            name = stack.pop()
            record(roots, children, stack, name, dur)
            continue
        if text.endswith(");"):
            n = NAME.match(text)
            record(roots, children, stack, n.group(1) if n else "?", dur)
    return roots, children


def record(roots, children, stack, name, dur):
    if dur is None:
        return
    if not stack:
        roots[name][0] += dur
        roots[name][1] += 1
    elif len(stack) == 1:
        children[(stack[0], name)][0] += dur
        children[(stack[0], name)][1] += 1


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], errors="replace") as f:
        roots, children = parse(f)
    if not roots:
        sys.exit("op_cost_summary: no traced calls in " + sys.argv[1])
    for root, (total, calls) in sorted(roots.items(), key=lambda kv: -kv[1][1]):
        avg = total / calls
        print(f"{root}: {calls} calls, {avg:.1f} us each")
        rows = [(name, t / calls, n / calls) for (r, name), (t, n) in children.items() if r == root]
        inside = sum(t for _, t, _ in rows)
        rows.append(("(own)", max(avg - inside, 0.0), 1.0))
        for name, t, per in sorted(rows, key=lambda r: -r[1]):
            share = 100.0 * t / avg if avg else 0.0
            print(f"  {name:<36} {t:9.1f} us {share:5.1f} %  {per:5.2f} per call")
        print()


if __name__ == "__main__":
    main()
