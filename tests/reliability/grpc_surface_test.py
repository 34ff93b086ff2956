#!/usr/bin/env python3
"""The gRPC surface of `podtopo serve`: hostile bytes and clients against its PodResources
server, load while pods churn, the kubelet's rate limit, and the server's memory (RSS).

    grpc_surface_test.py --podtopo BIN --proto-root DIR [--load-bin PODRESOURCES_LOAD]
                         [--calls N] [--clients 64] [--rounds 2] [--seed S]
                         [--never-read CONNECTIONSxSTREAMS]

The server runs as tests/podresources/with_serve.sh runs it (preset:demo, serve's default
configuration, docs/examples/pod-scope-mixed.yaml in its pods dir). Each round, against one
server with the rate limit lifted, every step ends with a fresh connection calling List, which
must answer with pod-scope-mixed and its 4 pod CPUs ("still serving"):
  random       connections sending random bytes: raw, after the HTTP/2 preface, or inside
               frames of random types on random streams;
  truncated    a valid List call (preface, SETTINGS, HEADERS, DATA) cut at every byte and the
               connection closed; a gRPC message whose length prefix promises more than the
               DATA frame brings (END_STREAM): stream 1 must be answered (trailers or
               RST_STREAM), not left hanging; the uncut call must be answered with DATA;
  oversized    requests of 64 KiB + 1, 4 MiB and 256 MiB (128 MiB in round 1 only with
               --calls up to 10,000: the ctest run) (RESOURCE_EXHAUSTED), which must not
               raise the server's peak RSS (VmHWM) by more than its 64 MiB gRPC memory quota
               + 32 MiB; a DATA frame announcing 16 MiB; 1 MiB of headers in CONTINUATION frames;
  nested       requests nesting unknown groups 50 deep (decoded: List answers) and 30,000
               deep (past protobuf's recursion limit: refused, the server lives), for List and Get;
  never-read   connections that open hundreds of streams, grant the server 2 GiB of flow-control
               window and never read; meanwhile other clients are answered within their deadline;
  load         CLIENTS concurrent clients, each its own connection, N calls in all (List / Get /
               GetAllocatableResources, every answer checked) while a churn thread adds and
               removes pods (tests/podresources' podresources_load --mode unlimited).
Memory: the server's RSS (VmRSS) after a warm-up, after each round, with the never-reading
clients connected, and its peak (VmHWM); the growth from round 1 to the last round must stay
under max(16 MiB, 25 %), i.e. no growth per call or connection.
Rate limit, as the kubelet's (pkg/kubelet/apis/podresources/grpc/ratelimit.go: one
golang.org/x/time/rate bucket in a unary interceptor of the whole server, 100 qps, burst 10):
  * default limits: a burst of calls from 64 clients gets at least the 10 of the bucket and at
    most 10 + 100/s of the elapsed time (+1); every refusal is RESOURCE_EXHAUSTED "rejected by
    rate limit"; after a pause the server answers again;
  * one bucket for every method of v1 and v1alpha1 (server at 0.1 qps, burst 10: after 10
    calls, List, Get, GetAllocatableResources and v1alpha1 List are all refused);
  * calls that fail before the handler (undecodable request, unknown method, oversized
    request) take no token, as in grpc-go where the interceptor runs after decoding; a Get of a
    missing pod (NOT_FOUND) takes one, as the interceptor runs before the handler.
Exit 0 = all held, 1 = a failure, 77 = skipped (reason printed). Prints "[measure]" lines."""
import argparse
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import kill_test  # noqa: E402
import serve_e2e  # noqa: E402
from serve_e2e import Failure, check, measure  # noqa: E402

LIST = "/v1.PodResourcesLister/List"
GET = "/v1.PodResourcesLister/Get"
ALLOCATABLE = "/v1.PodResourcesLister/GetAllocatableResources"
LIST_V1ALPHA1 = "/v1alpha1.PodResourcesLister/List"
MIB = 1 << 20
# Bounds of the never-read step (measured with the callback API: 14 threads, about 8.5 KiB a
# stream; with the synchronous API: one thread per stream, about 23 KiB a stream).
MAX_SERVER_THREADS = 64
MAX_KIB_PER_UNREAD_STREAM = 14
# Set in main(): podtopo built with AddressSanitizer (scripts/test.sh's build). Its allocator
# keeps freed memory in quarantine and pads every allocation, so RSS says nothing about
# podtopo's own buffering: the RSS bounds are then reported, not checked (an optimised build,
# `PODTOPO_SKIP_SANITIZERS=1 scripts/test.sh`, checks them).
SANITIZED = False


def check_rss(ok, message):
    if SANITIZED:
        if not ok:
            print(f"NOTE (AddressSanitizer build, RSS not checked): {message}", flush=True)
        return
    check(ok, message)


# ---- HTTP/2 and protobuf by hand ---------------------------------------------------------

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 7, 8, 9
END_STREAM, END_HEADERS = 0x1, 0x4


def frame(ftype, flags, stream, payload, length=None):
    n = len(payload) if length is None else length
    return struct.pack(">I", n)[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def hpack_literal(name, value):
    """A literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2)."""
    def string(s):
        b = s.encode()
        assert len(b) < 127
        return bytes([len(b)]) + b
    return b"\x00" + string(name) + string(value)


def request_headers(path):
    return b"".join(hpack_literal(n, v) for n, v in (
        (":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
        ("content-type", "application/grpc"), ("te", "trailers")))


def grpc_message(payload, length=None):
    return b"\x00" + struct.pack(">I", len(payload) if length is None else length) + payload


def call_frames(stream, path=LIST, payload=b""):
    return (frame(HEADERS, END_HEADERS, stream, request_headers(path))
            + frame(DATA, END_STREAM, stream, grpc_message(payload)))


def conversation(path=LIST, payload=b""):
    return PREFACE + frame(SETTINGS, 0, 0, b"") + call_frames(1, path, payload)


def varint(n):
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def unknown_bytes_field(size):
    """Field 1000 (no PodResources request has it), length-delimited, `size` bytes."""
    return varint(1000 << 3 | 2) + varint(size) + b"x" * size


def nested_groups(depth):
    """Unknown field 7 as a group nested `depth` deep (protobuf decodes groups recursively)."""
    return varint(7 << 3 | 3) * depth + varint(7 << 3 | 4) * depth


def raw_connect(path, timeout=2.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def send_and_close(path, data):
    try:
        s = raw_connect(path)
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may close first: that is its right
        s.close()
    except OSError:
        pass


def read_frames(sock, until, seconds):
    """Reads frames (type, flags, stream, payload) until until(frames) is true, the server
    closes, or `seconds` pass."""
    buf, frames = b"", []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not until(frames):
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
        while len(buf) >= 9:
            n = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + n:
                break
            frames.append((buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF,
                           buf[9:9 + n]))
            buf = buf[9 + n:]
    return frames


def answered(stream, or_goaway=False):
    """until() for read_frames: the stream got its trailers (END_STREAM) or RST_STREAM (or,
    with or_goaway, the connection a GOAWAY)."""
    def done(frames):
        return any((s == stream and (t == RST_STREAM or (t in (HEADERS, DATA) and f & END_STREAM)))
                   or (or_goaway and t == GOAWAY) for t, f, s, _ in frames)
    return done


# ---- the server ----------------------------------------------------------------------------

def rss_kib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise Failure(f"/proc/{pid}/status has no {field}")


class Server:
    def __init__(self, args, grpc, pr_pb, work, flags):
        self.grpc, self.pr_pb = grpc, pr_pb
        self.serve = serve_e2e.Serve(args.podtopo, work, node="preset:demo", config=None,
                                     flags=flags + ["--log-level", "warn"], metrics=False)
        shutil.copy(os.path.join(REPO, "docs", "examples", "pod-scope-mixed.yaml"),
                    self.serve.pods)
        self.serve.start()
        self.channel = grpc.insecure_channel("unix://" + self.serve.socket)
        # Until it answers. `spent`: the calls that reached a handler, each of which took a
        # token of the rate limit (OK, or FAILED_PRECONDITION before the state is restored).
        self.spent = 0
        deadline = time.monotonic() + 30
        while True:
            code, ready = self.list_code(self.channel)
            self.spent += code not in ("UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED")
            if ready:
                break
            check(time.monotonic() < deadline, "the server never listed pod-scope-mixed:\n"
                  + self.serve.tail())
            time.sleep(0.02)

    def rss(self):
        return rss_kib(self.serve.proc.pid)

    def peak(self):
        return rss_kib(self.serve.proc.pid, "VmHWM")

    def threads(self):
        return len(os.listdir(f"/proc/{self.serve.proc.pid}/task"))

    def reset_peak(self):
        """VmHWM from now on (Linux: 5 > /proc/PID/clear_refs); the current RSS otherwise."""
        with open(f"/proc/{self.serve.proc.pid}/clear_refs", "w") as f:
            f.write("5")

    def method(self, channel, path):
        return channel.unary_unary(path)  # bytes in, bytes out

    def list_code(self, channel, timeout=10):
        """(status code of a List call, whether it answered pod-scope-mixed with 4 CPUs)."""
        try:
            raw = self.method(channel, LIST)(b"", timeout=timeout)
        except self.grpc.RpcError as e:
            return e.code().name, False
        r = self.pr_pb.ListPodResourcesResponse.FromString(raw)
        return "OK", any(p.namespace == "default" and p.name == "pod-scope-mixed"
                         and len(p.cpu_ids) == 4 for p in r.pod_resources)

    def lists_mixed(self, channel, timeout=10):
        return self.list_code(channel, timeout)[1]

    def still_serving(self, after):
        self.serve.alive()
        ch = self.grpc.insecure_channel("unix://" + self.serve.socket)
        try:
            check(self.lists_mixed(ch), f"after {after}: List on a fresh connection does not "
                  "answer pod-scope-mixed with its 4 CPUs\n" + self.serve.tail())
        finally:
            ch.close()

    def code(self, path, payload, channel=None, timeout=30):
        """The status code name of one call ('OK' when it answers)."""
        try:
            self.method(channel or self.channel, path)(payload, timeout=timeout)
            return "OK"
        except self.grpc.RpcError as e:
            return e.code().name

    def close(self):
        self.channel.close()
        t = time.monotonic()
        self.serve.stop()
        if sys.exc_info()[0] is None:  # (not while a failure is on its way out)
            check(self.serve.proc.returncode == 0, f"the server exited "
                  f"{self.serve.proc.returncode} {time.monotonic() - t:.1f} s after SIGTERM:\n"
                  + self.serve.tail())


# ---- hostile clients -----------------------------------------------------------------------

def random_bytes(srv, rng, connections):
    for i in range(connections):
        junk = rng.randbytes(rng.randrange(1, 16384))
        kind = i % 3
        if kind == 1:
            junk = PREFACE + junk
        elif kind == 2:
            junk = PREFACE + frame(SETTINGS, 0, 0, b"") + b"".join(
                frame(rng.randrange(256), rng.randrange(256), rng.randrange(1 << 31),
                      rng.randbytes(rng.randrange(64)))
                for _ in range(rng.randrange(1, 20)))
        send_and_close(srv.serve.socket, junk)
    srv.still_serving(f"{connections} connections of random bytes")


def truncated(srv, stride):
    whole = conversation()
    # The uncut call is answered with data: the frames below are a real call.
    s = raw_connect(srv.serve.socket)
    s.sendall(whole)
    frames = read_frames(s, answered(1), 10)
    s.close()
    check(any(t == DATA and st == 1 for t, _, st, _ in frames) and answered(1)(frames),
          f"the hand-made List call was not answered with DATA and trailers: {frames}")
    for cut in range(0, len(whole), stride):
        send_and_close(srv.serve.socket, whole[:cut])
    srv.still_serving(f"a List call cut at {len(range(0, len(whole), stride))} points")
    # A gRPC message promising 100 bytes, the DATA frame bringing 10, then END_STREAM.
    short = (PREFACE + frame(SETTINGS, 0, 0, b"")
             + frame(HEADERS, END_HEADERS, 1, request_headers(LIST))
             + frame(DATA, END_STREAM, 1, grpc_message(b"\x00" * 10, length=100)))
    s = raw_connect(srv.serve.socket)
    s.sendall(short)
    frames = read_frames(s, answered(1), 10)
    s.close()
    check(answered(1)(frames), "a truncated gRPC message was never answered (stream 1 left "
          f"open): {[(t, f, st) for t, f, st, _ in frames]}")
    check(not any(t == DATA and st == 1 for t, _, st, _ in frames),
          "a truncated gRPC message was answered with data")
    srv.still_serving("a gRPC message shorter than its length prefix")


def oversized(srv, sizes):
    """Requests over the 64 KiB limit; the server must refuse them without holding them: its
    peak RSS may grow by its gRPC memory quota (64 MiB) and some slack, not by the requests."""
    before = srv.rss()
    srv.reset_peak()
    for size in sizes:
        code = srv.code(LIST, unknown_bytes_field(size))
        check(code == "RESOURCE_EXHAUSTED", f"a {size}-byte List request: {code}, expected "
              "RESOURCE_EXHAUSTED")
    peak, bound = srv.peak(), before + (64 + 32) * 1024
    check_rss(peak <= bound, f"requests of up to {max(sizes) // MIB} MiB took the server's peak RSS "
          f"to {peak // 1024} MiB (it was at {before // 1024} MiB; allowed {bound // 1024} MiB): "
          "it buffers requests it refuses")
    srv.still_serving("requests of " + ", ".join(f"{n / MIB:g} MiB" for n in sizes))
    s = raw_connect(srv.serve.socket)
    try:
        s.sendall(PREFACE + frame(SETTINGS, 0, 0, b"")
                  + frame(HEADERS, END_HEADERS, 1, request_headers(LIST))
                  + frame(DATA, 0, 1, b"\x00" * 65536, length=0xFFFFFF))
    except OSError:
        pass
    refused = answered(1, or_goaway=True)
    frames = read_frames(s, refused, 5)
    s.close()
    check(refused(frames), "a DATA frame announcing 16 MiB (over the server's "
          "SETTINGS_MAX_FRAME_SIZE) got neither RST_STREAM, trailers nor GOAWAY: "
          f"{[(t, f, st) for t, f, st, _ in frames]}")
    srv.still_serving("a DATA frame announcing 16 MiB")
    block = request_headers(LIST) + b"".join(hpack_literal(f"x-pad-{i}", "v" * 100)
                                             for i in range(9000))
    chunks = [block[i:i + 16384] for i in range(0, len(block), 16384)]
    data = PREFACE + frame(SETTINGS, 0, 0, b"") + frame(HEADERS, 0, 1, chunks[0])
    data += b"".join(frame(CONTINUATION, END_HEADERS if i == len(chunks) - 1 else 0, 1, c)
                     for i, c in enumerate(chunks[1:], 1))
    s = raw_connect(srv.serve.socket)
    try:
        s.sendall(data)
    except OSError:
        pass
    # gRPC C++ leaves a stream whose header list is over its SETTINGS_MAX_HEADER_LIST_SIZE (8 KiB)
    # unanswered (measured); what matters here is that it neither dies nor stops serving.
    read_frames(s, answered(1), 0.5)
    s.close()
    srv.still_serving(f"{len(block) // 1024} KiB of headers in CONTINUATION frames")


def nested(srv, pr_pb):
    get = pr_pb.GetPodResourcesRequest(pod_name="pod-scope-mixed",
                                       pod_namespace="default").SerializeToString()
    code = srv.code(LIST, nested_groups(50))
    check(code == "OK", f"a List request with unknown groups 50 deep: {code}, expected OK")
    code = srv.code(GET, get + nested_groups(50))
    check(code == "OK", f"a Get request with unknown groups 50 deep: {code}, expected OK")
    for path, head in ((LIST, b""), (GET, get)):
        code = srv.code(path, head + nested_groups(30000))
        check(code != "OK", f"{path} with unknown groups 30,000 deep was answered OK")
    srv.still_serving("requests nesting unknown groups 50 and 30,000 deep")


def never_read(srv, connections, streams, callers):
    """Opens connections that flood requests, grant 2 GiB of window and never read; returns the
    server's RSS while they are connected. The server answers with gRPC's callback API, so no
    thread waits for a stream it cannot write: its thread count stays small (the synchronous
    API held one thread per such stream: 5,561 threads for 8 x 1,000), and what a stream costs
    it (gRPC keeps the call until the connection can be written or closes) stays under
    MAX_KIB_PER_UNREAD_STREAM."""
    rss_before = srv.rss()
    held = []
    for _ in range(connections):
        s = raw_connect(srv.serve.socket)
        s.setblocking(False)
        data = (PREFACE + frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 0x7FFFFFFF))
                + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0x7FFFFFFF - 65535))
                + b"".join(call_frames(1 + 2 * i) for i in range(streams)))
        try:
            s.sendall(data)
        except (BlockingIOError, OSError):
            pass  # the server stops reading a client that does not read: fine
        held.append(s)
    time.sleep(1.0)  # let the server answer into the full sockets
    late = []

    def caller():
        ch = srv.grpc.insecure_channel("unix://" + srv.serve.socket)
        try:
            for _ in range(20):
                t = time.monotonic()
                if not srv.lists_mixed(ch, timeout=5):
                    late.append("List did not answer within 5 s")
                    return
                late.append(time.monotonic() - t)
        finally:
            ch.close()
    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rss = srv.rss()
    threads = srv.threads()
    failures = [x for x in late if isinstance(x, str)]
    check(not failures, f"with {connections} connections that never read: {failures[0]}\n"
          + srv.serve.tail() if failures else "")
    measure(f"List while {connections} x {streams} streams are never read, slowest of "
            f"{len(late)}", max(late))
    measure(f"server threads while {connections} x {streams} streams are never read", threads, "")
    check(threads <= MAX_SERVER_THREADS, f"the server has {threads} threads while "
          f"{connections} x {streams} streams are never read (at most {MAX_SERVER_THREADS}): "
          "a thread waits for each stream it cannot write")
    per_stream = max(0, rss - rss_before) / (connections * streams)
    measure(f"server RSS per never-read stream ({connections} x {streams})", per_stream, " KiB")
    check_rss(per_stream <= MAX_KIB_PER_UNREAD_STREAM, f"each never-read stream costs the server "
          f"{per_stream:.1f} KiB of RSS (at most {MAX_KIB_PER_UNREAD_STREAM})")
    for s in held:
        s.close()
    srv.still_serving(f"{connections} connections with {streams} streams each, never read")
    return rss


def load(srv, args, calls):
    per_client = max(1, -(-calls // args.clients))
    env = dict(os.environ, PODRESOURCES_SOCKET=srv.serve.socket,
               PODRESOURCES_PODS_DIR=srv.serve.pods, PODRESOURCES_TMP=srv.serve.work)
    t = time.monotonic()
    r = subprocess.run([args.load_bin, "--mode", "unlimited", "--clients", str(args.clients),
                        "--calls", str(per_client)], env=env, capture_output=True, text=True,
                       timeout=3600)
    print("  " + r.stdout.strip(), flush=True)
    check(r.returncode == 0, f"podresources_load failed ({r.returncode}):\n{r.stdout}\n"
          f"{r.stderr}\n" + srv.serve.tail())
    srv.still_serving(f"{args.clients} clients x {per_client} calls with pods churning")
    return per_client * args.clients, time.monotonic() - t


# ---- rate limit ----------------------------------------------------------------------------

def burst(srv, clients, each, path=LIST):
    """`clients` threads call `path` `each` times as fast as they can; returns (codes, seconds
    from the first call to the last answer)."""
    codes, starts, lock = [], [], threading.Lock()
    go = threading.Barrier(clients + 1)

    def run():
        ch = srv.grpc.insecure_channel("unix://" + srv.serve.socket)
        try:
            m = srv.method(ch, path)
            srv.grpc.channel_ready_future(ch).result(timeout=10)
            go.wait()
            # Each thread notes its own start: one can call before the main thread wakes, and
            # a window that starts late undercounts the tokens the bucket refilled.
            with lock:
                starts.append(time.monotonic())
            for _ in range(each):
                try:
                    m(b"", timeout=10)
                    c = ("OK", "")
                except srv.grpc.RpcError as e:
                    c = (e.code().name, e.details())
                with lock:
                    codes.append(c)
        finally:
            ch.close()
    threads = [threading.Thread(target=run) for _ in range(clients)]
    for t in threads:
        t.start()
    go.wait()
    for t in threads:
        t.join()
    return codes, time.monotonic() - min(starts)


def kubelet_limits(args, grpc, pr_pb, work):
    srv = Server(args, grpc, pr_pb, work, [])  # serve's defaults: the kubelet's 100 qps, 10
    try:
        # Connections are made before the burst; the bucket is full after a second of quiet.
        time.sleep(1.2)
        codes, seconds = burst(srv, 64, 10)
        served = sum(1 for c, _ in codes if c == "OK")
        others = [c for c in codes if c[0] != "OK" and c != ("RESOURCE_EXHAUSTED",
                                                             "rejected by rate limit")]
        check(not others, f"refusals other than RESOURCE_EXHAUSTED 'rejected by rate limit': "
              f"{others[:3]}")
        bound = 10 + 100 * seconds + 1
        check(10 <= served <= bound, f"a burst of {len(codes)} calls in {seconds:.3f} s: "
              f"{served} served, the kubelet's bucket serves 10 to {bound:.0f}")
        measure(f"kubelet limits: {len(codes)} calls from 64 clients in {seconds:.2f} s, served "
                f"(allowed 10..{bound:.0f})", served, "")
        time.sleep(1.2)
        check(srv.code(LIST, b"") == "OK", "after a pause the server does not answer again")
    finally:
        srv.close()


def one_bucket(args, grpc, pr_pb, work):
    # 0.1 qps: a token every 10 s, so that what the test does in between refills nothing.
    srv = Server(args, grpc, pr_pb, os.path.join(work, "bucket"),
                 ["--rate-limit-qps", "0.1", "--rate-limit-burst", "10"])
    get = pr_pb.GetPodResourcesRequest(pod_name="pod-scope-mixed",
                                       pod_namespace="default").SerializeToString()
    try:
        left = 10 - srv.spent
        check(left > 0, f"the readiness calls took the whole bucket ({srv.spent} calls)")
        # Calls that never reach the handler take no token.
        for path, payload, want in ((LIST, b"\xff\xff\xff", "INTERNAL"),
                                    ("/v1.PodResourcesLister/Watch", b"", "UNIMPLEMENTED"),
                                    ("/v1.Nope/List", b"", "UNIMPLEMENTED"),
                                    (LIST, unknown_bytes_field(70000), "RESOURCE_EXHAUSTED")):
            for _ in range(15):
                code = srv.code(path, payload)
                check(code == want, f"{path} with {len(payload)} bytes: {code}, expected {want}")
        methods = [(LIST, b""), (GET, get), (ALLOCATABLE, b""), (LIST_V1ALPHA1, b"")]
        codes = [srv.code(*methods[i % 4]) for i in range(left + 4)]
        check(codes[:left] == ["OK"] * left, f"after 60 calls that failed before the handler "
              f"the {left} tokens left were not all there: {codes}")
        check(codes[left:] == ["RESOURCE_EXHAUSTED"] * 4, "the bucket is not shared by every "
              f"method of v1 and v1alpha1: once it is empty, List, Get, GetAllocatableResources "
              f"and v1alpha1 List gave {codes[left:]} (in the order of calls {left + 1}..)")
    finally:
        srv.close()
    srv = Server(args, grpc, pr_pb, os.path.join(work, "notfound"),
                 ["--rate-limit-qps", "0.1", "--rate-limit-burst", "10"])
    try:
        missing = pr_pb.GetPodResourcesRequest(pod_name="nope",
                                               pod_namespace="default").SerializeToString()
        left = 10 - srv.spent
        codes = [srv.code(GET, missing) for _ in range(left)] + [srv.code(LIST, b"")]
        check(codes == ["NOT_FOUND"] * left + ["RESOURCE_EXHAUSTED"], "a Get of a missing pod "
              f"must take a token (the kubelet's interceptor runs before the handler): {codes}")
    finally:
        srv.close()
    measure("one bucket for v1 and v1alpha1; undecodable, unknown-method and oversized calls "
            "take no token; NOT_FOUND takes one", "held", "")


# ---- main ----------------------------------------------------------------------------------

def surface(args, grpc, pr_pb, work):
    rng = random.Random(args.seed)
    srv = Server(args, grpc, pr_pb, os.path.join(work, "surface"), ["--rate-limit-qps", "0"])
    quick = args.calls <= 10000
    try:
        if args.never_read:
            connections, streams = (int(x) for x in args.never_read.split("x"))
            measure("server RSS before", srv.rss() / 1024, " MiB")
            held = never_read(srv, connections, streams, 16)
            measure(f"server RSS with {connections} x {streams} never-read streams",
                    held / 1024, " MiB")
            time.sleep(0.5)
            measure("server RSS after they closed", srv.rss() / 1024, " MiB")
            measure("server peak RSS (VmHWM)", srv.peak() / 1024, " MiB")
            return
        if args.load_bin:
            load(srv, args, 64 * 20)  # warm-up: the server's threads and buffers exist
        rss0 = srv.rss()
        measure("server RSS after warm-up", rss0 / 1024, " MiB")
        rss = []
        for r in range(1, args.rounds + 1):
            t = time.monotonic()
            steps = []

            def step(name, fn, *a):
                t_step = time.monotonic()
                out = fn(*a)
                steps.append(f"{name} {time.monotonic() - t_step:.1f} s -> "
                             f"{srv.rss() / 1024:.1f} MiB")
                return out
            step("random", random_bytes, srv, rng, 60 if quick else 600)
            step("truncated", truncated, srv, 7 if quick else 1)
            big = [256 * MIB] if not quick else [128 * MIB] if r == 1 else []
            step("oversized", oversized, srv, [64 * 1024 + 1, 4 * MIB] + big)
            step("nested", nested, srv, pr_pb)
            held = step("never-read", never_read, srv, 8 if quick else 32,
                        200 if quick else 1000, 4 if quick else 16)
            measure(f"round {r}: server RSS with the never-reading connections", held / 1024,
                    " MiB")
            if args.load_bin:
                calls, secs = step("load", load, srv, args, args.calls)
                measure(f"round {r}: {calls} calls from {args.clients} clients with pods "
                        "churning", secs)
            else:
                print("NOTE: no --load-bin: the load step did not run", flush=True)
            print(f"  round {r} steps (time, server RSS after): " + "; ".join(steps), flush=True)
            # Let gRPC finish with the closed connections before measuring.
            time.sleep(0.5)
            rss.append(srv.rss())
            measure(f"round {r}: server RSS after the round ({time.monotonic() - t:.1f} s)",
                    rss[-1] / 1024, " MiB")
        measure("server peak RSS (VmHWM) since the last oversized step", srv.peak() / 1024,
                " MiB")
        if len(rss) > 1:
            growth = rss[-1] - rss[0]
            allowed = max(16 * 1024, rss[0] // 4)
            check_rss(growth <= allowed, f"the server's RSS grew by {growth / 1024:.1f} MiB from "
                  f"round 1 to round {len(rss)} (allowed {allowed / 1024:.1f} MiB): "
                  f"{[round(x / 1024, 1) for x in rss]} MiB")
            measure(f"server RSS growth from round 1 to round {len(rss)}", growth / 1024, " MiB")
    finally:
        srv.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--podtopo", required=True)
    ap.add_argument("--proto-root", required=True)
    ap.add_argument("--load-bin", help="tests/podresources' podresources_load")
    ap.add_argument("--calls", type=int, default=3200, help="calls per load step, in all")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--never-read", metavar="CONNECTIONSxSTREAMS",
                    help="run only the never-read step, at that size (e.g. 32x1000)")
    args = ap.parse_args()
    print(f"grpc_surface_test: seed {args.seed}", flush=True)
    global SANITIZED
    with open(args.podtopo, "rb") as f:
        SANITIZED = b"__asan_init" in f.read()
    if SANITIZED:
        print("NOTE: podtopo is built with AddressSanitizer: RSS bounds are reported, not "
              "checked", flush=True)
    reason = kill_test.grpc_missing()
    if reason:
        print(f"SKIP: {reason}", flush=True)
        return 77
    import grpc
    import harness
    if args.load_bin and not os.access(args.load_bin, os.X_OK):
        print(f"FAIL: --load-bin {args.load_bin} is not an executable", flush=True)
        return 1
    work = tempfile.mkdtemp(prefix="podtopo-grpc-")
    t0 = time.monotonic()
    try:
        _, _, pr_pb, _ = harness.generate_stubs(args.proto_root, os.path.join(work, "gen"))
        steps = (("surface", surface), ("kubelet limits", kubelet_limits),
                 ("one bucket", one_bucket))
        for name, step in steps[:1] if args.never_read else steps:
            t = time.monotonic()
            step(args, grpc, pr_pb, os.path.join(work, name.replace(" ", "-")))
            print(f"grpc_surface_test: {name}: PASS ({time.monotonic() - t:.1f} s)", flush=True)
    except Failure as f:
        print(f"FAIL (seed {args.seed}): {f}", flush=True)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"grpc_surface_test: all passed in {time.monotonic() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
