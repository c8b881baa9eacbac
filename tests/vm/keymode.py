#!/usr/bin/env python3
"""Raw generic netlink to lite.ko for tests/vm/lmr.sh's key-mode section.

What litenl cannot do, each as one process (no process start inside a
measurement). Numbers of commands and attributes come from LITE_NUMS
(NAME=NUMBER ..., from the uapi header, as lmr.sh's map_answers uses).

  keymode.py node-key-mode
      prints NODE_GET's LITE_ATTR_KEY_MODE ("none" if absent)
  keymode.py reader PROBE HOME INCARNATION LMR NAME KEY ADDR LEN READY GO
      as this node's agent: answers lite_probe map-loop's MAP with a grant
      into lmr LMR on node HOME (key KEY, one chunk ADDR/LEN; INCARNATION
      is both the home's and this node's), prints the
      first READ's result, creates READY, waits (60 s) for GO to exist,
      READs again and prints "stale read: OK|<errno name>"
  keymode.py quarantine LMR
      LMR_FREE with LITE_ATTR_QUARANTINE; prints "errno N"
  keymode.py free-bad-flag LMR
      LMR_FREE with LITE_ATTR_QUARANTINE carrying a payload: "errno N"
  keymode.py lost LMR COMMAND...
      joins the events group, runs COMMAND (e.g. rdma link delete rxe0),
      prints "lost lmr=ID reason=N" for each LITE_CMD_EVENT_LMR_LOST seen
      within 10 s
  keymode.py summarize FILE
      key_mode_cost's lines (round=R mode=M [size=S] NAME=US...) as a
      markdown table: per metric and mode the median and min-max
  keymode.py lmr-keys
      LMR_GET (root only: EPERM otherwise, printed as "errno 1 ..." with
      exit status 1): per hosted LMR "lmr ID NAME key=0xKEY chunks=N", then
      "readkey ID 0xKEY" if it has a read-only key (LITE_ATTR_READ_KEY,
      key_mode=lmr), then "chunk ID 0xADDR LENGTH" per chunk. litenl prints
      no keys or chunk
      addresses; tests that need them read them here, as root
  keymode.py grant PROBE HOME INCARNATION LMR NAME KEY SIZE CHUNKS OPS
      as this node's agent: runs PROBE (a command line: grant_probe NAME,
      maybe behind setpriv), prints the MAP upcall's credentials
      ("upcall uid=U gid=G groups=A,B truncated=0|1"), answers it with a
      grant into LMR on node HOME with KEY, SIZE and CHUNKS
      ("0xADDR:LEN,..."), as a compromised manager could, prints
      "map answer: errno N MESSAGE; probe map: ...", then sends each of
      OPS ("r OFF;w OFF;...") to the probe and prints its answers
  keymode.py timing SIZE COUNT
      COUNT LMR_ALLOC + LMR_FREE pairs of SIZE bytes; prints
      "alloc_p50_us=... free_p50_us=... pair_p50_us=... pair_min_us=...
      pair_max_us=..."
Exit status: 0, or 1 when a request failed unexpectedly.
"""
import collections
import os
import select
import shlex
import socket
import statistics
import struct
import subprocess
import sys
import time



def lite_nums():
    """NAME=NUMBER of the uapi header's enums, as lmr.sh's lite_nums."""
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "../../kmod/include/uapi/lite_genl.h")
    nums, on, n = {}, False, -1
    for line in open(header):
        w = line.split()
        if line.startswith(("enum lite_genl_cmd ", "enum lite_genl_attr ",
                            "enum lite_chunk_attr ", "enum lite_upcall_kind ")):
            on, n = True, -1
            continue
        if on and line.startswith("};"):
            on = False
        if on and w and w[0].startswith("LITE_"):
            name = w[0].rstrip(",")
            if len(w) > 2 and w[1] == "=":
                if not w[2].rstrip(",").isdigit():
                    continue
                n = int(w[2].rstrip(","))
            else:
                n += 1
            nums[name] = n
    return nums


# LITE_NUMS from lmr.sh, or read from the header (other suites).
N = ({k: int(v) for k, v in (a.split("=") for a in os.environ["LITE_NUMS"].split())}
     if os.environ.get("LITE_NUMS") else lite_nums())
GENL_ID_CTRL, NLMSG_ERROR, NLMSG_DONE, NESTED = 0x10, 2, 3, 0x8000
SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, NETLINK_EXT_ACK, NETLINK_CAP_ACK = 270, 1, 11, 10


def A(n):
    return N["LITE_ATTR_" + n]


def C(n):
    return N["LITE_CMD_" + n]


def attr(kind, data):
    n = 4 + len(data)
    return struct.pack("HH", n, kind) + data + b"\0" * (-n % 4)


def attrs(buf, off=0):
    out = {}
    while off + 4 <= len(buf):
        n, kind = struct.unpack_from("HH", buf, off)
        if n < 4:
            break
        out.setdefault(kind & 0x3fff, []).append(buf[off + 4:off + n])
        off += (n + 3) & ~3
    return out


def u32(k, v):
    return attr(A(k), struct.pack("I", v))


def u64(k, v):
    return attr(A(k), struct.pack("Q", v))


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
        self.s.bind((0, 0))
        self.s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.s.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        self.seq, self.upcalls, self.events = 100, [], []
        self.family, self.mcgrp = self.resolve()

    def recv(self, timeout):
        r, _, _ = select.select([self.s], [], [], timeout)
        if not r:
            return []
        data, off, msgs = self.s.recv(1 << 20), 0, []
        while off + 16 <= len(data):
            n, typ, _flags, sq, _pid = struct.unpack_from("IHHII", data, off)
            msgs.append((typ, sq, data[off + 16:off + n]))
            off += (n + 3) & ~3
        return msgs

    def resolve(self):
        body = struct.pack("BBH", 3, 1, 0) + attr(2, b"lite\0")
        self.s.send(struct.pack("IHHII", 16 + len(body), GENL_ID_CTRL, 1, 1, 0) + body)
        a = attrs(self.recv(5)[0][2], 4)
        family = struct.unpack("H", a[1][0][:2])[0]
        mcgrp = None
        for grp in attrs(a.get(7, [b""])[0]).values():
            g = attrs(grp[0])
            if g.get(1, [b""])[0].rstrip(b"\0") == b"events":
                mcgrp = struct.unpack("I", g[2][0])[0]
        return family, mcgrp

    def keep(self, typ, p):
        if typ != self.family:
            return
        if p[0] == C("UPCALL"):
            self.upcalls.append(attrs(p, 4))
        elif p[0] == C("EVENT_LMR_LOST"):
            self.events.append(attrs(p, 4))

    def request(self, cmd, body=b""):
        """(errno, extack message, replies); upcalls and events are kept."""
        self.seq += 1
        payload = struct.pack("BBH", cmd, 1, 0) + body
        self.s.send(struct.pack("IHHII", 16 + len(payload), self.family, 1 | 4, self.seq, 0) + payload)
        replies, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline:
            for typ, sq, p in self.recv(1):
                if typ == NLMSG_ERROR and sq == self.seq:
                    err = -struct.unpack_from("i", p)[0]
                    ext = attrs(p, 20)
                    return err, ext.get(1, [b""])[0].rstrip(b"\0").decode(), replies
                if typ == self.family and sq == self.seq:
                    replies.append(attrs(p, 4))
                else:
                    self.keep(typ, p)
        raise SystemExit("no answer to command %d" % cmd)

    def dump(self, cmd):
        """(errno, extack message, replies) of a dump request."""
        self.seq += 1
        payload = struct.pack("BBH", cmd, 1, 0)
        self.s.send(struct.pack("IHHII", 16 + len(payload), self.family, 1 | 0x300, self.seq, 0) +
                    payload)
        replies, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline:
            for typ, sq, p in self.recv(1):
                if sq != self.seq:
                    self.keep(typ, p)
                elif typ == NLMSG_DONE:
                    return 0, "", replies
                elif typ == NLMSG_ERROR:
                    err = -struct.unpack_from("i", p)[0]
                    ext = attrs(p, 20)
                    return err, ext.get(1, [b""])[0].rstrip(b"\0").decode(), replies
                elif typ == self.family:
                    replies.append(attrs(p, 4))
        raise SystemExit("no end to dump %d" % cmd)

    def wait_upcall(self, kind, secs=10):
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline:
            for i, u in enumerate(self.upcalls):
                if struct.unpack("I", u[A("UPCALL_KIND")][0])[0] == kind:
                    return self.upcalls.pop(i)
            for typ, _sq, p in self.recv(0.2):
                self.keep(typ, p)
        return None


def errno_name(line):
    return line.split(": ", 1)[1] if ": " in line else line


def reader(g, probe, home, inc, lmr, name, key, addr, length, ready, go):
    err, msg, _ = g.request(C("AGENT_ATTACH"))
    if err:
        print("AGENT_ATTACH: errno %d %s" % (err, msg))
        return 1
    p = subprocess.Popen([probe, "map-loop", name], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    up = g.wait_upcall(N["LITE_UPCALL_MAP"])
    if not up:
        print("no MAP upcall")
        p.kill()
        return 1
    chunk = attr(A("CHUNK") | NESTED, attr(N["LITE_CHUNK_ATTR_ADDR"], struct.pack("Q", addr)) +
                 attr(N["LITE_CHUNK_ATTR_LENGTH"], struct.pack("Q", length)))
    body = (attr(A("UPCALL_ID"), up[A("UPCALL_ID")][0]) + u32("ERRNO", 0) +
            u64("GRANT_ID", 7000 + lmr) + u64("LMR_ID", lmr) + attr(A("NAME"), name.encode() + b"\0") +
            u32("NODE_ID", home) + u32("ACCESS", 1) + u64("EPOCH", inc) + u64("SIZE", length) +
            u32("MEMORY_KEY", key) + attr(A("CHUNKS") | NESTED, chunk) +
            u64("INCARNATION", inc) + u64("GRANTED_AT_MS", 1))
    err, msg, _ = g.request(C("UPCALL_COMPLETE"), body)
    line = p.stdout.readline().strip()
    print("map answer: errno %d %s; probe %s" % (err, msg, line))
    if err or line != "map: OK":
        p.kill()
        return 1
    p.stdin.write("r\n")
    p.stdin.flush()
    print("first read: " + errno_name(p.stdout.readline().strip()))
    open(ready, "w").close()
    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.stdin.write("r\n")
    p.stdin.flush()
    print("stale read: " + errno_name(p.stdout.readline().strip()))
    p.stdin.close()
    p.wait()
    g.request(C("AGENT_DETACH"))
    return 0


def get_u(a, name, fmt="I"):
    return struct.unpack(fmt, a[A(name)][0])[0]


def chunk_list(a):
    out = []
    for c in a.get(A("CHUNKS"), []):
        for ca in attrs(c).get(A("CHUNK"), []):
            ca = attrs(ca)
            out.append((struct.unpack("Q", ca[N["LITE_CHUNK_ATTR_ADDR"]][0])[0],
                        struct.unpack("Q", ca[N["LITE_CHUNK_ATTR_LENGTH"]][0])[0]))
    return out


def lmr_keys(g):
    err, msg, rep = g.dump(C("LMR_GET"))
    if err:
        print("errno %d %s" % (err, msg))
        return 1
    lmrs = collections.OrderedDict()  # a long chunk list goes on in more messages
    for a in rep:
        lmr = get_u(a, "LMR_ID", "Q")
        if lmr not in lmrs:
            # No LITE_ATTR_READ_KEY: key_mode=global, or a lite.ko before it.
            rkey = get_u(a, "READ_KEY") if N.get("LITE_ATTR_READ_KEY") in a else None
            lmrs[lmr] = (a[A("NAME")][0].rstrip(b"\0").decode(), get_u(a, "MEMORY_KEY"), rkey, [])
        lmrs[lmr][3].extend(chunk_list(a))
    for lmr, (name, key, rkey, chunks) in lmrs.items():
        print("lmr %d %s key=0x%x chunks=%d" % (lmr, name, key, len(chunks)))
        if rkey is not None:
            print("readkey %d 0x%x" % (lmr, rkey))
        for addr, length in chunks:
            print("chunk %d 0x%x %d" % (lmr, addr, length))
    return 0


def grant(g, probe, home, inc, lmr, name, key, size, chunks, ops):
    err, msg, _ = g.request(C("AGENT_ATTACH"))
    if err:
        print("AGENT_ATTACH: errno %d %s" % (err, msg))
        return 1
    p = subprocess.Popen(shlex.split(probe), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    up = g.wait_upcall(N["LITE_UPCALL_MAP"])
    if not up:
        print("no MAP upcall")
        p.kill()
        return 1
    groups = up.get(A("GROUPS"), [b""])[0]
    print("upcall uid=%d gid=%d groups=%s truncated=%d" % (
        get_u(up, "UID"), get_u(up, "GID"),
        ",".join(str(x) for x in struct.unpack("%dI" % (len(groups) // 4), groups)),
        A("GROUPS_TRUNCATED") in up))
    nest = b"".join(attr(A("CHUNK") | NESTED,
                         attr(N["LITE_CHUNK_ATTR_ADDR"], struct.pack("Q", a)) +
                         attr(N["LITE_CHUNK_ATTR_LENGTH"], struct.pack("Q", n)))
                    for a, n in chunks)
    grant_id = (1 << 32) | (time.monotonic_ns() & 0xffffffff) | 1
    body = (attr(A("UPCALL_ID"), up[A("UPCALL_ID")][0]) + u32("ERRNO", 0) +
            u64("GRANT_ID", grant_id) + u64("LMR_ID", lmr) + attr(A("NAME"), name.encode() + b"\0") +
            u32("NODE_ID", home) + u32("ACCESS", 3) + u64("EPOCH", inc) + u64("SIZE", size) +
            u32("MEMORY_KEY", key) + attr(A("CHUNKS") | NESTED, nest) +
            u64("INCARNATION", inc) + u64("GRANTED_AT_MS", 1))
    err, msg, _ = g.request(C("UPCALL_COMPLETE"), body)
    if err:
        print("map answer: errno %d %s" % (err, msg))
        p.kill()
        p.wait()
        return 0
    line = p.stdout.readline().strip()
    print("map answer: errno %d %s; probe %s" % (err, msg, line))
    for op in (o.strip() for o in ops.split(";") if o.strip()):
        p.stdin.write(op + "\n")
        p.stdin.flush()
        print("%s: %s" % (op, p.stdout.readline().strip()))
    p.stdin.close()
    p.wait()
    g.request(C("AGENT_DETACH"))
    return 0


def timing(g, size, count):
    alloc, free, pair = [], [], []
    for i in range(count):
        lmr = 90000 + i
        t0 = time.monotonic()
        err, msg, _ = g.request(C("LMR_ALLOC"), u64("LMR_ID", lmr) + attr(A("NAME"), b"km.t\0") +
                                u64("SIZE", size) + u32("UID", 0) + u32("GID", 0) + u32("MODE", 0o600))
        t1 = time.monotonic()
        if err:
            print("LMR_ALLOC: errno %d %s" % (err, msg))
            return 1
        err, msg, _ = g.request(C("LMR_FREE"), u64("LMR_ID", lmr))
        t2 = time.monotonic()
        if err:
            print("LMR_FREE: errno %d %s" % (err, msg))
            return 1
        alloc.append((t1 - t0) * 1e6)
        free.append((t2 - t1) * 1e6)
        pair.append((t2 - t0) * 1e6)
    print("alloc_p50_us=%.0f free_p50_us=%.0f pair_p50_us=%.0f pair_min_us=%.0f pair_max_us=%.0f" %
          (statistics.median(alloc), statistics.median(free), statistics.median(pair),
           min(pair), max(pair)))
    return 0


def summarize(path):
    v = collections.defaultdict(list)
    for line in open(path):
        f = dict(w.split("=", 1) for w in line.split() if "=" in w)
        tag = "LMR_ALLOC+FREE %s B" % f["size"] if "size" in f else "lite-bench"
        for k, x in f.items():
            if k not in ("round", "mode", "size"):
                v[(tag + " " + k, f["mode"])].append(float(x))

    def cell(x):
        return "%.0f [%.0f-%.0f]" % (statistics.median(x), min(x), max(x)) if x else "n/a"
    print("| metric (us) | global: median [min-max] | lmr: median [min-max] | lmr / global |")
    print("|---|---|---|---|")
    for key in sorted({k for k, _ in v}):
        g, lm = v.get((key, "global"), []), v.get((key, "lmr"), [])
        ratio = "%.2f" % (statistics.median(lm) / statistics.median(g)) if g and lm else ""
        print("| %s | %s | %s | %s |" % (key, cell(g), cell(lm), ratio))
    rounds = {m: max((len(x) for (_, mm), x in v.items() if mm == m), default=0)
              for m in ("global", "lmr")}
    print("rounds: global %d, lmr %d" % (rounds["global"], rounds["lmr"]))
    return 0


def main(argv):
    if argv[1:2] == ["summarize"]:
        return summarize(argv[2])
    g = Genl()
    what = argv[1]
    if what == "node-key-mode":
        err, msg, rep = g.request(C("NODE_GET"))
        v = rep[0].get(A("KEY_MODE")) if rep else None
        print(struct.unpack("I", v[0])[0] if v else "none")
        return 0 if not err else 1
    if what == "reader":
        probe, home, inc, lmr, name, key, addr, length, ready, go = argv[2:12]
        return reader(g, probe, int(home), int(inc), int(lmr), name, int(key, 0),
                      int(addr, 0), int(length), ready, go)
    if what in ("quarantine", "free-bad-flag"):
        flag = attr(A("QUARANTINE"), b"" if what == "quarantine" else b"\1\0\0\0")
        err, msg, _ = g.request(C("LMR_FREE"), u64("LMR_ID", int(argv[2])) + flag)
        print("errno %d %s" % (err, msg))
        return 0
    if what == "lost":
        g.s.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, g.mcgrp)
        subprocess.run(argv[3:], check=False)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not g.events:
            for typ, _sq, p in g.recv(0.2):
                g.keep(typ, p)
        for e in g.events:
            print("lost lmr=%d reason=%d" % (struct.unpack("Q", e[A("LMR_ID")][0])[0],
                                             struct.unpack("I", e[A("REASON")][0])[0]))
        return 0
    if what == "lmr-keys":
        return lmr_keys(g)
    if what == "grant":
        probe, home, inc, lmr, name, key, size, chunks, ops = argv[2:11]
        chunks = [(int(a, 0), int(n, 0)) for a, n in (c.split(":") for c in chunks.split(","))]
        return grant(g, probe, int(home), int(inc), int(lmr), name, int(key, 0),
                     int(size, 0), chunks, ops)
    if what == "timing":
        return timing(g, int(argv[2]), int(argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
