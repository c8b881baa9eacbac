"""LITE from Python: remote memory, RPC, locks and barriers (docs/python.md).

A binding over libLITE's C API (liblite.so.0) through cffi's ABI mode:

    import lite
    with lite.Context() as ctx:
        ctx.alloc("demo.counter", 4096, home=ctx.node_lookup("node2"))
        with ctx.map("demo.counter") as r:
            r.faa(1)
"""

from ._context import (ACCESS_READ, ACCESS_WRITE, PRIO_HIGH, PRIO_LOW, Context,
                       Region)
from ._errors import LiteError
from ._rpc import Client, Service
from ._sync import Barrier, Lock, create_sync

__all__ = [
    "ACCESS_READ", "ACCESS_WRITE", "PRIO_HIGH", "PRIO_LOW", "Context", "Region",
    "LiteError", "Client", "Service", "Barrier", "Lock", "create_sync",
]
