"""Distributed locks and barriers (docs/locks.md)."""

import errno

from ._context import Context
from ._errors import LiteError, check
from ._ffi import ffi, lib


def create_sync(ctx: Context, name: str, mode: int = 0o600, home: int = 0) -> None:
    """Creates the LMR `name` to lock or meet on, on node `home` (0: here)."""
    check(lib.lite_sync_create(ctx.raw, name.encode(), mode, home), "lite_sync_create")


class Lock:
    """A distributed lock on the LMR `name` (made with create_sync).

        with lite.Lock(ctx, "demo.lock"):
            ...   # held; released at the end

    `owner_died` is True after an acquire whose previous holder died while
    holding the lock (the data it guards may be half-updated).
    """

    def __init__(self, ctx: Context, name: str):
        h = ffi.new("lite_handle_t *")
        check(lib.lite_sync_open(ctx.raw, name.encode(), h), "lite_sync_open")
        self.ctx, self.name, self.handle = ctx, name, h[0]
        self.owner_died = False

    def acquire(self, timeout_ms: int = 0) -> None:
        """Waits up to timeout_ms (0: lite.ko's rpc_timeout_ms) for the lock;
        LiteError ETIMEDOUT if it did not come."""
        rc = lib.lite_lock(self.ctx.raw, self.handle, timeout_ms)
        self.owner_died = rc == -errno.EOWNERDEAD
        if not self.owner_died:
            check(rc, "lite_lock")

    def try_acquire(self) -> bool:
        """Takes the lock if nobody holds it; returns whether it did."""
        rc = lib.lite_trylock(self.ctx.raw, self.handle)
        if rc == -errno.EBUSY:
            return False
        self.owner_died = rc == -errno.EOWNERDEAD
        if not self.owner_died:
            check(rc, "lite_trylock")
        return True

    def release(self) -> None:
        check(lib.lite_unlock(self.ctx.raw, self.handle), "lite_unlock")

    def __enter__(self) -> "Lock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class Barrier:
    """A barrier on the LMR `name`: wait(count) returns once `count` callers
    (any nodes, processes, threads) have arrived."""

    def __init__(self, ctx: Context, name: str):
        h = ffi.new("lite_handle_t *")
        check(lib.lite_sync_open(ctx.raw, name.encode(), h), "lite_sync_open")
        self.ctx, self.name, self.handle = ctx, name, h[0]

    def wait(self, count: int, timeout_ms: int = 0) -> None:
        check(lib.lite_barrier(self.ctx.raw, self.handle, count, timeout_ms), "lite_barrier")


__all__ = ["create_sync", "Lock", "Barrier", "LiteError"]
