#!/usr/bin/env python3
"""kmod_layers.py: fails on a call (or data reference) from a lite.ko layer
to a layer above it.

lite.ko is built from layer folders (kmod/transport, kmod/qos, ...); their
order is the order of the `lite-y +=` lines in kmod/Kbuild, bottom first,
and a layer may use only itself and the layers listed before it. The root
(kmod/lite_main.c) composes them and may use every layer. A lower layer
reaches an upper one only through an ops table the upper one registers
(docs/architecture.md, "lite.ko's layers").

The input is `nm -A` of every object of lite.ko, which the //kmod:lite_ko
rule writes to lite_ko_symbols.txt: an undefined symbol in one object that
another object defines is a use of that object. This sees what the compiler
saw: macros, inlines from headers (counted in the object that includes
them) and data as well as calls; a use through a function pointer is not a
symbol reference, which is what an ops table is for.

Headers are checked as well: a file of one layer may include only the
headers of its own layer and the layers before it (`#include "LAYER/..."`),
so no layer depends on another's types from above either; the one
exception, with its reason, is INCLUDES_UP below.

Usage: tools/kmod_layers.py KBUILD SYMBOLS [KMOD_DIR]
                                             (tools/lint.sh layers runs it)
       tools/kmod_layers.py --self-test       (the check finds what it must)
Exit status: 0 no upward use; 1 upward uses, one line each; 2 bad input.
"""

import os
import re
import sys

# (including file, included header): an include of a later layer's header
# that is allowed, and why. Keep it short.
INCLUDES_UP = {
    ("transport/lite_transport.h", "qos/lite_qos_throttle.h"):
        "a peer embeds its QoS state, read on the data path without a "
        "pointer chase; types only, the transport calls nothing of qos",
}

def layer_order(kbuild_text):
    """The layer folders in the order Kbuild lists them, bottom first."""
    order = []
    joined = re.sub(r"\\\n", " ", kbuild_text)
    for line in joined.splitlines():
        m = re.match(r"^lite-y\s*\+?:?=\s*(.*)$", line)
        if not m:
            continue
        for obj in m.group(1).split():
            folder = obj.split("/")[0] if "/" in obj else ""
            if folder and folder not in order:
                order.append(folder)
    return order


def layer_of(obj):
    obj = obj[2:] if obj.startswith("./") else obj
    return obj.split("/")[0] if "/" in obj else ""


def upward_uses(order, symbols_lines):
    """[(object, symbol, defining object)] for every use of a later layer."""
    rank = {name: i for i, name in enumerate(order)}
    defined = {}  # symbol -> object
    undefined = []  # (object, symbol)
    for line in symbols_lines:
        m = re.match(r"^(\S+?):\s*(?:[0-9a-f]+)?\s+([A-Za-z])\s+(\S+)$", line)
        if not m:
            continue
        obj, kind, sym = m.groups()
        obj = obj[2:] if obj.startswith("./") else obj
        if kind == "U":
            undefined.append((obj, sym))
        elif kind.isupper():
            defined[sym] = obj
    if not defined:
        raise ValueError("no symbols")
    for obj in sorted({o for o, _ in undefined} | set(defined.values())):
        if layer_of(obj) and layer_of(obj) not in rank:
            raise ValueError(f"{obj} is in no layer Kbuild lists")
    found = set()
    for obj, sym in undefined:
        target = defined.get(sym)
        if target is None:
            continue  # the kernel's
        caller, callee = layer_of(obj), layer_of(target)
        if not caller:
            continue  # the root composes every layer
        if not callee or rank[callee] > rank[caller]:
            found.add((obj, sym, target))
    return sorted(found)


def upward_includes(order, kmod_dir):
    """[(file, header)] for every include of a later layer's header."""
    rank = {name: i for i, name in enumerate(order)}
    found = []
    for layer in order:
        folder = os.path.join(kmod_dir, layer)
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".c", ".h")):
                continue
            path = f"{layer}/{name}"
            with open(os.path.join(folder, name)) as f:
                for m in re.finditer(r'^#\s*include\s+"([a-z_]+)/([^"]+)"',
                                     f.read(), re.M):
                    other = m.group(1)
                    if other in rank and rank[other] > rank[layer] and \
                            (path, f"{other}/{m.group(2)}") not in INCLUDES_UP:
                        found.append((path, f"{other}/{m.group(2)}"))
    return found


SELF_TEST_KBUILD = """lite-y := lite_main.o
lite-y += core/a.o
lite-y += low/b.o \\
\t  low/c.o
lite-y += high/d.o
"""
SELF_TEST_SYMBOLS = """./lite_main.o:                 U d_fn
./core/a.o:0000000000000000 T a_fn
./low/b.o:0000000000000010 T b_fn
./low/b.o:                 U a_fn
./low/b.o:                 U d_fn
./low/c.o:                 U b_fn
./low/c.o:                 U d_data
./low/c.o:                 U kmalloc
./high/d.o:0000000000000000 T d_fn
./high/d.o:0000000000000008 D d_data
./high/d.o:                 U b_fn
./core/a.o:                 U main_fn
./lite_main.o:0000000000000000 T main_fn
"""


def self_test():
    order = layer_order(SELF_TEST_KBUILD)
    assert order == ["core", "low", "high"], order
    got = upward_uses(order, SELF_TEST_SYMBOLS.splitlines())
    want = [("core/a.o", "main_fn", "lite_main.o"),
            ("low/b.o", "d_fn", "high/d.o"),
            ("low/c.o", "d_data", "high/d.o")]
    assert got == want, got
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for layer, name, text in [
                ("core", "a.h", '#include "low/b.h"\n'),
                ("low", "b.h", '#include "core/a.h"\n#include "c.h"\n'),
                ("low", "c.c", '#include "high/d.h"\n'),
                ("high", "d.h", '#include "low/b.h"\n')]:
            os.makedirs(os.path.join(d, layer), exist_ok=True)
            with open(os.path.join(d, layer, name), "w") as f:
                f.write(text)
        got = upward_includes(order, d)
    assert got == [("core/a.h", "low/b.h"), ("low/c.c", "high/d.h")], got
    print("kmod_layers: self-test: finds a call up, data up, a use of the root "
          "and includes up; passes uses down, within a layer and from the root")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) not in (3, 4):
        print(__doc__.split("\n\n")[-2], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        order = layer_order(f.read())
    if not order:
        print(f"kmod_layers: no layer folders in {argv[1]}", file=sys.stderr)
        return 2
    try:
        with open(argv[2]) as f:
            found = upward_uses(order, f.readlines())
    except ValueError as e:
        print(f"kmod_layers: {argv[2]}: {e}", file=sys.stderr)
        return 2
    for obj, sym, target in found:
        print(f"kmod_layers: {obj} uses {sym} from {target}: "
              f"{layer_of(obj)} may not use {layer_of(target) or 'the root'}")
    includes = upward_includes(order, argv[3]) if len(argv) == 4 else []
    for path, header in includes:
        print(f"kmod_layers: {path} includes {header}: "
              f"{layer_of(path)} may not use {layer_of(header)}'s types")
    print(f"kmod_layers: layers, bottom first: {' < '.join(order)}; "
          f"{len(found)} upward use(s) of a symbol"
          + (f", {len(includes)} upward include(s) "
             f"({len(INCLUDES_UP)} allowed, named in the script)" if len(argv) == 4 else ""))
    return 1 if found or includes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
