#!/usr/bin/env python3
"""op_cost's summary of an ftrace function_graph trace (with funcgraph-tail).

Usage: op_cost_summary.py TRACE [LEVELS]

For each entry point the trace was started on (its set_graph_function: the
outermost traced calls), how many times it ran and its average time, then
each function it calls directly, and under each of those the functions
they call, LEVELS deep (default 2): average time per call of the entry point (all its calls added
up) and how many times it runs per call, sorted by that time; steps under
0.05 calls per entry point (interrupts that happened to land there) are
left out. "(own)" is a function's time outside its traced calls. Times are
microseconds as the tracer measured them (its overhead included).
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


def parse(lines, levels):
    """root -> [total_us, calls]; (root, path...) -> [total_us, calls] for
    the calls up to `levels` below a root."""
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
            record(roots, children, stack, name, dur, levels)
            continue
        if text.endswith(");"):
            n = NAME.match(text)
            record(roots, children, stack, n.group(1) if n else "?", dur, levels)
    return roots, children


def record(roots, children, stack, name, dur, levels):
    if dur is None:
        return
    if not stack:
        roots[name][0] += dur
        roots[name][1] += 1
    elif len(stack) <= levels:
        key = tuple(stack) + (name,)
        children[key][0] += dur
        children[key][1] += 1


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        sys.exit(__doc__)
    levels = int(sys.argv[2]) if len(sys.argv) == 3 else 2
    with open(sys.argv[1], errors="replace") as f:
        roots, children = parse(f, levels)
    if not roots:
        sys.exit("op_cost_summary: no traced calls in " + sys.argv[1])
    for root, (total, calls) in sorted(roots.items(), key=lambda kv: -kv[1][1]):
        if calls < 10:
            continue  # an interrupt's handler, not an entry point
        print(f"{root}: {calls} calls, {total / calls:.1f} us each")
        print_level(children, (root,), total / calls, calls, "  ", levels)
        print()


def print_level(children, parent, parent_us, calls, indent, levels):
    rows = [(key[-1], t / calls, n / calls) for key, (t, n) in children.items()
            if key[:-1] == parent and n / calls >= 0.05]
    inside = sum(t for _, t, _ in rows)
    rows.append(("(own)", max(parent_us - inside, 0.0), None))
    for name, t, per in sorted(rows, key=lambda r: -r[1]):
        share = 100.0 * t / parent_us if parent_us else 0.0
        times = "" if per is None else f"  {per:5.2f} per call"
        print(f"{indent}{name:<{44 - len(indent)}} {t:9.1f} us {share:5.1f} %{times}")
        if per is not None and len(parent) < levels:
            print_level(children, parent + (name,), t, calls, indent + "  ", levels)


if __name__ == "__main__":
    main()
