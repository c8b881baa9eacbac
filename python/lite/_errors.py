"""LITE's errors as Python exceptions."""

import errno as _errno
import os

from ._ffi import ffi, lib


class LiteError(OSError):
    """A libLITE call failed.

    Attributes:
        errno: the error number (errno.EACCES, ...), as for any OSError.
        message: why, in lite.ko's, the manager's or libLITE's words ("" if
            nothing more than the errno is known).
        call: the libLITE function that failed ("lite_map", ...).
    """

    def __init__(self, err: int, message: str, call: str):
        text = message or os.strerror(err)
        super().__init__(err, "%s: %s (%s)" % (call, text, _name(err)))
        self.message = message
        self.call = call


def _name(err: int) -> str:
    name = ffi.string(lib.lite_errno_name(-err)).decode()
    return name if name != "E?" else _errno.errorcode.get(err, str(err))


def check(rc: int, call: str) -> int:
    """Returns rc (>= 0) or raises LiteError for a negative errno."""
    if rc >= 0:
        return rc
    msg = lib.lite_message()
    message = ffi.string(msg).decode(errors="replace") if msg != ffi.NULL else ""
    raise LiteError(-rc, message, call)
