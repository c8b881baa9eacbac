"""RPC over LITE (docs/rpc.md): a service whose handler is a Python callable,
and a client that calls it."""

import threading
from typing import Callable, Optional

from ._context import Buffer, Context
from ._errors import LiteError, check
from ._ffi import ffi, lib

MSG_MAX = 1 << 20  # LITE_RPC_MSG_MAX
REQ_ONEWAY = 1  # LITE_RPC_REQ_ONEWAY
WAIT_FOREVER = 0xFFFFFFFF


class Service:
    """A registered RPC service, served by this process.

        svc = lite.Service(ctx, "demo.echo", max_request=4096, max_reply=4096)
        svc.serve(lambda request: request[::-1], threads=2)   # background
        ...
        svc.close()

    `handler(request: bytes) -> bytes` answers each call; for a one-way
    message its result is ignored. An exception in the handler answers that
    call with an empty reply (and is counted in `handler_errors`).
    """

    def __init__(self, ctx: Context, name: str, mode: int = 0o711, max_request: int = 4096,
                 max_reply: int = 4096, depth: int = 0, max_clients: int = 0):
        opts = ffi.new("struct lite_service_opts *", {
            "mode": mode, "max_request": max_request, "max_reply": max_reply,
            "depth": depth, "max_clients": max_clients})
        svc = ffi.new("lite_service_t *")
        self._info = ffi.new("struct lite_service_info *")
        check(lib.lite_rpc_register(ctx.raw, name.encode(), opts, svc, self._info),
              "lite_rpc_register")
        self.ctx, self.name, self.service = ctx, name, svc[0]
        self.served = 0
        self.handler_errors = 0
        self._stop = threading.Event()
        self._threads = []
        self._count_lock = threading.Lock()

    def _data(self, req) -> bytes:
        """The request's bytes, read in place from the mapped rings."""
        start = ffi.cast("char *", self._info.rings) + req.offset
        return bytes(ffi.buffer(start, req.length))

    def serve_one(self, handler: Callable[[bytes], Buffer], timeout_ms: int = 1000) -> bool:
        """Takes at most one request (waiting up to timeout_ms) and answers it.
        Returns whether there was one."""
        req = ffi.new("struct lite_rpc_request *")
        count = ffi.new("uint32_t *")
        check(lib.lite_rpc_recv(self.ctx.raw, self.service, req, 1, timeout_ms, count),
              "lite_rpc_recv")
        if count[0] == 0:
            return False
        try:
            reply = handler(self._data(req))
        except Exception:  # noqa: BLE001 - a handler's bug must not kill the service
            reply = b""
            with self._count_lock:
                self.handler_errors += 1
        if req.flags & REQ_ONEWAY:
            check(lib.lite_rpc_release(self.ctx.raw, self.service, req.id), "lite_rpc_release")
        else:
            data = ffi.from_buffer(reply if reply is not None else b"")
            check(lib.lite_rpc_reply(self.ctx.raw, self.service, req.id, data, len(data)),
                  "lite_rpc_reply")
        with self._count_lock:
            self.served += 1
        return True

    def serve(self, handler: Callable[[bytes], Buffer], threads: int = 1) -> None:
        """Serves in `threads` background threads until close()."""
        def loop():
            while not self._stop.is_set():
                try:
                    self.serve_one(handler, 200)
                except LiteError:
                    if self._stop.is_set():
                        return
                    raise
        for _ in range(threads):
            t = threading.Thread(target=loop, daemon=True)
            t.start()
            self._threads.append(t)

    def close(self) -> None:
        """Stops the serving threads and unregisters: callers are refused
        (ECONNREFUSED) from then on."""
        self._stop.set()
        for t in self._threads:
            t.join()
        self._threads = []
        if self.service is not None:
            check(lib.lite_rpc_unregister(self.ctx.raw, self.service, ffi.NULL),
                  "lite_rpc_unregister")
            self.service = None

    def __enter__(self) -> "Service":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Client:
    """An opened service: calls and one-way messages to it."""

    def __init__(self, ctx: Context, name: str):
        svc = ffi.new("lite_service_t *")
        peer = ffi.new("struct lite_service_peer *")
        check(lib.lite_rpc_open(ctx.raw, name.encode(), svc, peer), "lite_rpc_open")
        self.ctx, self.name, self.service = ctx, name, svc[0]
        self.node_id, self.max_reply = peer.node_id, peer.max_reply

    def call(self, request: Buffer, timeout_ms: int = 0, priority: int = 0,
             reply_max: Optional[int] = None) -> bytes:
        """Sends `request`, waits for the reply (timeout_ms 0: lite.ko's
        rpc_timeout_ms) and returns it."""
        req = ffi.from_buffer(request)
        size = self.max_reply if reply_max is None else reply_max
        reply = ffi.new("char[]", max(size, 1))
        length = ffi.new("size_t *")
        check(lib.lite_rpc_call_prio(self.ctx.raw, self.service, req, len(req), reply, size,
                                     length, timeout_ms, 0, priority), "lite_rpc_call")
        return bytes(ffi.buffer(reply, length[0]))

    def send(self, message: Buffer, timeout_ms: int = 0) -> None:
        """A one-way message: returns once the server's node has it."""
        msg = ffi.from_buffer(message)
        check(lib.lite_send(self.ctx.raw, self.service, msg, len(msg), timeout_ms), "lite_send")

    def close(self) -> None:
        if self.service is not None:
            check(lib.lite_rpc_close(self.ctx.raw, self.service), "lite_rpc_close")
            self.service = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
