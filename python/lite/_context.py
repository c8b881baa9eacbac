"""The device (Context) and LMRs (Region): libLITE's C API, in Python."""

from typing import Optional, Union

from ._errors import LiteError, check
from ._ffi import ffi, lib

# api/lite.h and uapi/lite.h's values.
ACCESS_READ = 1
ACCESS_WRITE = 2
PRIO_HIGH = 1
PRIO_LOW = 2
PEER_CONNECTED = 2
MEMBERS_MAX = 1025

Buffer = Union[bytes, bytearray, memoryview]


class Context:
    """One open file of /dev/lite: what every call goes through.

    Use it as a context manager (closed at the end, with every handle it
    mapped); one Context may be used by many threads at once. libLITE's
    calls release the GIL while they wait.

        with lite.Context() as ctx:
            ctx.alloc("demo.buf", 4096)
            with ctx.map("demo.buf") as r:
                r.write(b"hello")
    """

    def __init__(self, path: Optional[str] = None):
        self._ctx = None
        out = ffi.new("struct lite_ctx **")
        check(lib.lite_open(path.encode() if path else ffi.NULL, out), "lite_open")
        self._ctx = out[0]

    def close(self) -> None:
        """Closes the file: its handles, services and locks go with it."""
        if self._ctx is not None:
            lib.lite_close(self._ctx)
            self._ctx = None

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_ctx", None) is not None:
            self.close()

    @property
    def raw(self):
        """The struct lite_ctx * (for the RPC and lock classes)."""
        if self._ctx is None:
            raise ValueError("the Context is closed")
        return self._ctx

    # --- the cluster -----------------------------------------------------

    def node_id(self) -> int:
        """This node's id in the cluster (LiteError ENOTCONN: no agent)."""
        out = ffi.new("uint32_t *")
        check(lib.lite_node_id(self.raw, out, ffi.NULL), "lite_node_id")
        return out[0]

    def members(self) -> list:
        """(node_id, connected) of this node and each peer it knows."""
        arr = ffi.new("struct lite_member[]", MEMBERS_MAX)
        n = ffi.new("uint32_t *")
        check(lib.lite_members(self.raw, arr, MEMBERS_MAX, n), "lite_members")
        return [(arr[i].node_id, arr[i].state == PEER_CONNECTED)
                for i in range(min(n[0], MEMBERS_MAX))]

    def node_lookup(self, name: str) -> int:
        """A node's id from its name ("node2")."""
        out = ffi.new("uint32_t *")
        check(lib.lite_node_lookup(self.raw, name.encode(), out), "lite_node_lookup")
        return out[0]

    def node_name(self, node_id: int) -> str:
        buf = ffi.new("char[]", 80)
        check(lib.lite_node_name(self.raw, node_id, buf, 80), "lite_node_name")
        return ffi.string(buf).decode()

    # --- LMRs ------------------------------------------------------------

    def alloc(self, name: str, size: int, mode: int = 0o600, home: int = 0) -> int:
        """Allocates the LMR `name` of `size` bytes on node `home` (0: this
        node), `mode` as a file's (a subset of 0o666). Returns its id."""
        out = ffi.new("uint64_t *")
        check(lib.lite_alloc(self.raw, name.encode(), size, mode, home, out), "lite_alloc")
        return out[0]

    def map(self, name: str, access: int = ACCESS_READ | ACCESS_WRITE) -> "Region":
        """A handle to the LMR `name` with `access` (ACCESS_READ,
        ACCESS_WRITE or both) as a Region."""
        handle = ffi.new("lite_handle_t *")
        info = ffi.new("struct lite_lmr_info *")
        check(lib.lite_map(self.raw, name.encode(), access, handle, info), "lite_map")
        return Region(self, name, handle[0], info.size_bytes, info.home_node_id, info.access)

    def free(self, name: str) -> None:
        """Deletes the LMR `name` (its owner only): every handle, on every
        node, goes stale."""
        check(lib.lite_free(self.raw, name.encode()), "lite_free")

    def set_priority(self, priority: int) -> None:
        """The default priority of this context's operations (PRIO_HIGH needs
        CAP_SYS_NICE or lite.ko's qos_high_gid)."""
        check(lib.lite_set_priority(self.raw, priority), "lite_set_priority")


def _readable(data: Buffer):
    """A C view of any buffer-protocol object, without a copy."""
    return ffi.from_buffer(data)


def _writable(buf):
    try:
        return ffi.from_buffer(buf, require_writable=True)
    except BufferError as e:
        raise BufferError("read_into needs a writable buffer (bytearray, memoryview "
                          "of one, numpy array), not %s" % type(buf).__name__) from e


class Region:
    """A mapped LMR: one-sided operations on it by offset.

    Reads and writes take any buffer-protocol object (bytes, bytearray,
    memoryview, a numpy array) and copy nothing on the Python side.
    """

    def __init__(self, ctx: Context, name: str, handle: int, size: int, home: int, access: int):
        self.ctx, self.name, self.handle = ctx, name, handle
        self.size, self.home, self.access = size, home, access

    def __enter__(self) -> "Region":
        return self

    def __exit__(self, *exc) -> None:
        self.unmap()

    def unmap(self) -> None:
        if self.handle is not None:
            check(lib.lite_unmap(self.ctx.raw, self.handle), "lite_unmap")
            self.handle = None

    def read(self, offset: int = 0, length: Optional[int] = None, priority: int = 0) -> bytearray:
        """length bytes (default: to the end) at offset, in a new bytearray
        (filled in place: no copy after the read; read_into fills yours)."""
        if length is None:
            length = self.size - offset
        buf = bytearray(length)
        self.read_into(buf, offset, priority)
        return buf

    def read_into(self, buf, offset: int = 0, priority: int = 0) -> None:
        """Fills the writable buffer `buf` (its whole length) from offset."""
        view = _writable(buf)
        check(lib.lite_read_prio(self.ctx.raw, self.handle, offset, view, len(view), priority),
              "lite_read")

    def write(self, data: Buffer, offset: int = 0, priority: int = 0) -> None:
        """Writes all of `data` at offset."""
        view = _readable(data)
        check(lib.lite_write_prio(self.ctx.raw, self.handle, offset, view, len(view), priority),
              "lite_write")

    def memset(self, value: int, offset: int = 0, length: Optional[int] = None) -> None:
        if length is None:
            length = self.size - offset
        check(lib.lite_memset(self.ctx.raw, self.handle, offset, value, length), "lite_memset")

    def memcpy_from(self, src: "Region", length: int, offset: int = 0, src_offset: int = 0) -> None:
        """Copies length bytes of `src` at src_offset here at offset, on the
        nodes (nothing passes through this process)."""
        check(lib.lite_memcpy(self.ctx.raw, self.handle, offset, src.handle, src_offset, length),
              "lite_memcpy")

    def faa(self, add: int, offset: int = 0) -> int:
        """Atomic fetch-and-add of the 8-byte word at offset; the old value."""
        old = ffi.new("uint64_t *")
        check(lib.lite_faa(self.ctx.raw, self.handle, offset, add, old), "lite_faa")
        return old[0]

    def cas(self, expected: int, desired: int, offset: int = 0) -> int:
        """Atomic compare-and-swap of the word at offset; the old value (the
        swap happened if it equals `expected`)."""
        old = ffi.new("uint64_t *")
        check(lib.lite_cas(self.ctx.raw, self.handle, offset, expected, desired, old), "lite_cas")
        return old[0]


__all__ = ["Context", "Region", "LiteError", "ACCESS_READ", "ACCESS_WRITE", "PRIO_HIGH", "PRIO_LOW"]
