"""Host tests of the Python package: no lite.ko needed.

The cffi declarations must match the C headers byte for byte (ABI mode has
no compiler to catch a mismatch): the C compiler says where each field is.
"""

import errno
import os
import subprocess
import tempfile

import pytest

import lite
from lite._errors import check
from lite._ffi import CDEF, ffi

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

STRUCTS = {
    "lite_lmr_info": ["lmr_id", "size_bytes", "home_node_id", "access"],
    "lite_member": ["node_id", "state", "incarnation"],
    "lite_service_opts": ["mode", "max_request", "max_reply", "depth", "max_clients"],
    "lite_service_info": ["service_id", "port", "slot_bytes", "depth", "max_clients",
                          "ring_bytes", "rings", "map_bytes"],
    "lite_service_peer": ["service_id", "node_id", "max_request", "max_reply", "depth"],
    "lite_rpc_request": ["id", "offset", "length", "client_node", "flags", "reserved"],
}


def c_layout():
    """{struct: (size, {field: offset})} as gcc compiles api/*.h."""
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "api/lite.h"',
             '#include "api/lite_rpc.h"', '#include "api/lite_sync.h"', "int main(void) {"]
    for s, fields in STRUCTS.items():
        lines.append('printf("%s size %%zu\\n", sizeof(struct %s));' % (s, s))
        for f in fields:
            lines.append('printf("%s %s %%zu\\n", offsetof(struct %s, %s));' % (s, f, s, f))
    lines.append("return 0; }")
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
        with open(src, "w") as f:
            f.write("\n".join(lines))
        subprocess.run(["cc", "-I", REPO, "-o", exe, src], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    layout = {}
    for line in out.splitlines():
        s, field, value = line.split()
        size, offsets = layout.setdefault(s, [0, {}])
        if field == "size":
            layout[s][0] = int(value)
        else:
            offsets[field] = int(value)
    return layout


def test_struct_layouts_match_the_c_headers():
    for s, (size, offsets) in c_layout().items():
        assert ffi.sizeof("struct " + s) == size, s
        for field, offset in offsets.items():
            assert ffi.offsetof("struct " + s, field) == offset, (s, field)


def test_every_declared_function_is_in_the_library():
    import re
    for name in re.findall(r"\b(lite_[a-z_]+)\(", CDEF):
        assert getattr(lite._ffi.lib, name) is not None, name


def test_no_device_is_a_clear_error():
    with pytest.raises(lite.LiteError) as e:
        lite.Context("/nonexistent/lite")
    assert e.value.errno == errno.ENOENT
    assert e.value.call == "lite_open"
    assert "ENOENT" in str(e.value)


def test_lite_error_is_an_os_error():
    err = lite.LiteError(errno.EACCES, "not yours", "lite_map")
    assert isinstance(err, OSError)
    assert err.errno == errno.EACCES and err.message == "not yours"
    assert "lite_map: not yours (EACCES)" in str(err)


def test_check_passes_results_and_raises_negative_errnos():
    assert check(0, "x") == 0 and check(7, "x") == 7
    with pytest.raises(lite.LiteError) as e:
        check(-errno.EHOSTDOWN, "lite_read")
    assert e.value.errno == errno.EHOSTDOWN and "EHOSTDOWN" in str(e.value)


def test_the_library_is_found_by_its_soname_path(monkeypatch):
    from lite import _ffi
    paths = list(_ffi._candidates())
    assert paths[-1] == "liblite.so.0"
