"""The Python package against a real lite.ko, in the VM cluster
(tests/vm/compat.sh runs these in a guest with LITE_PY_CLUSTER=1 and
LITE_PY_HOME set to another node's id)."""

import errno
import os
import threading
import time

import pytest

import lite

pytestmark = pytest.mark.skipif(os.environ.get("LITE_PY_CLUSTER") != "1",
                                reason="needs lite.ko and a cluster (LITE_PY_CLUSTER=1)")

HOME = int(os.environ.get("LITE_PY_HOME", "0"))
TAG = "py%d" % os.getpid()


@pytest.fixture
def ctx():
    with lite.Context() as c:
        yield c


@pytest.fixture
def region(ctx):
    name = TAG + ".buf"
    ctx.alloc(name, 1 << 16, home=HOME)
    r = ctx.map(name)
    yield r
    r.unmap()
    ctx.free(name)


def test_identity_and_members(ctx):
    me = ctx.node_id()
    assert me > 0
    members = dict(ctx.members())
    assert members[me] and HOME in members and members[HOME]
    assert ctx.node_lookup(ctx.node_name(HOME)) == HOME


def test_read_and_write_any_buffer(region):
    assert region.home == HOME and region.size == 1 << 16
    region.write(b"bytes!", 0)
    region.write(bytearray(b"bytearray"), 100)
    region.write(memoryview(b"xxmemoryview")[2:], 200)
    assert region.read(0, 6) == b"bytes!"
    assert region.read(100, 9) == b"bytearray"
    out = bytearray(10)
    region.read_into(memoryview(out), 200)
    assert out == b"memoryview"
    assert region.read(0, 6, priority=lite.PRIO_LOW) == b"bytes!"


def test_numpy_arrays_without_a_copy(region):
    np = pytest.importorskip("numpy")
    a = np.arange(1024, dtype=np.uint32)
    region.write(a, 4096)
    b = np.zeros(1024, dtype=np.uint32)
    region.read_into(b, 4096)  # straight into the array's memory
    assert (a == b).all()


def test_atomics_memset_memcpy(ctx, region):
    assert region.faa(5, 8) == 0 and region.faa(5, 8) == 5
    assert region.cas(10, 42, 8) == 10 and region.cas(10, 43, 8) == 42
    region.memset(0xab, 512, 16)
    assert region.read(512, 16) == b"\xab" * 16
    region.memcpy_from(region, 16, offset=1024, src_offset=512)
    assert region.read(1024, 16) == b"\xab" * 16


def test_errors_carry_errno_and_message(ctx, region):
    with pytest.raises(lite.LiteError) as e:
        ctx.map(TAG + ".missing")
    assert e.value.errno == errno.ENOENT and e.value.call == "lite_map"
    with pytest.raises(lite.LiteError) as e:
        region.read(region.size - 4, 8)
    assert e.value.errno == errno.EINVAL
    with ctx.map(region.name, lite.ACCESS_READ) as ro:
        with pytest.raises(lite.LiteError) as e:
            ro.write(b"no")
        assert e.value.errno == errno.EACCES
    with pytest.raises(BufferError, match="writable"):
        region.read_into(b"immutable")


def test_free_makes_handles_stale(ctx):
    name = TAG + ".gone"
    ctx.alloc(name, 4096, home=HOME)
    r = ctx.map(name)
    ctx.free(name)
    # The manager revokes every grant before the home frees the memory; the
    # revoke reaches this node's lite.ko within seconds (docs/datapath.md).
    deadline = time.monotonic() + 30
    with pytest.raises(lite.LiteError) as e:
        while time.monotonic() < deadline:
            r.read(0, 8)
            time.sleep(0.2)
    assert e.value.errno == errno.ESTALE


def test_rpc_service_and_client(ctx):
    name = TAG + ".echo"
    seen = []

    def handler(request):
        if request == b"boom":
            raise RuntimeError("a bug in the handler")
        seen.append(request)
        return request[::-1]

    with lite.Service(ctx, name, max_request=256, max_reply=256) as svc:
        svc.serve(handler, threads=2)
        with lite.Context() as cctx, lite.Client(cctx, name) as client:
            for i in range(50):
                msg = b"call %d" % i
                assert client.call(msg) == msg[::-1]
            client.send(b"one-way")
            assert client.call(b"boom") == b""
            with pytest.raises(lite.LiteError) as e:
                client.call(b"x" * 300)
            assert e.value.errno == errno.EMSGSIZE
        for _ in range(50):
            if b"one-way" in seen:
                break
            threading.Event().wait(0.1)
        assert b"one-way" in seen and svc.handler_errors == 1
    # Unregistered: a new caller finds nothing.
    with pytest.raises(lite.LiteError) as e:
        lite.Client(ctx, name)
    assert e.value.errno == errno.ENOENT


def test_lock_and_barrier(ctx):
    lock_name, bar_name = TAG + ".lock", TAG + ".bar"
    lite.create_sync(ctx, lock_name, home=HOME)
    lite.create_sync(ctx, bar_name, home=HOME)
    try:
        with lite.Context() as other:
            mine, theirs = lite.Lock(ctx, lock_name), lite.Lock(other, lock_name)
            with mine:
                assert not theirs.try_acquire()
            assert theirs.try_acquire()
            theirs.release()
            with pytest.raises(lite.LiteError) as e:
                theirs.release()
            assert e.value.errno == errno.EPERM

            errors = []

            def arrive(c):
                try:
                    lite.Barrier(c, bar_name).wait(2, timeout_ms=30000)
                except lite.LiteError as err:
                    errors.append(err)

            t = threading.Thread(target=arrive, args=(other,))
            t.start()
            arrive(ctx)
            t.join()
            assert errors == []
    finally:
        ctx.free(lock_name)
        ctx.free(bar_name)
