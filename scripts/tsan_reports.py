#!/usr/bin/python3
"""Summarises ThreadSanitizer reports (the text TSan writes to stderr or to log_path files): for
each report its kind, the top frame of every access, whether any podtopo frame is in the access
stacks, and what the memory is (heap block allocated by which code, global, stack...). Reports
with the same summary are counted together. The evidence behind scripts/tsan.supp's gRPC entries
is this script's output on runs without them (docs/client.md, "ThreadSanitizer"), e.g.:

    grep '^called_from_lib' scripts/tsan.supp > /tmp/libs.supp
    TSAN_OPTIONS="halt_on_error=0 suppress_equal_addresses=0 log_path=/tmp/tsan/pr \
      suppressions=/tmp/libs.supp" build-tsan/src/podresources/podresources_test
    scripts/tsan_reports.py /tmp/tsan/pr.* --supp scripts/tsan.supp

    tsan_reports.py LOG... [--frames N] [--supp FILE] [--check-grpc-top]

--frames N        also prints the first N frames of each access stack of one example report
--supp FILE       applies FILE's race: and race_top: entries as TSan does (a report matches when
                  one of its access stacks or threads' creation stacks does; race: compares every
                  frame, race_top: the first; function, file or module), counts the reports
                  each entry takes and summarises only the reports none of them matches
--check-grpc-top  exits 1 unless every report is a data race in which the first frame of each
                  access that is neither the C++ library's nor a TSan interceptor is gRPC's: in
                  its headers (/usr/include/grpcpp/, /usr/include/grpc/) or in Debian's gRPC,
                  abseil or protobuf libraries
"""
import argparse
import collections
import os
import re
import sys

ACCESS = re.compile(r"^  (Previous )?(Atomic )?(read|write|Read|Write) of size \d+ at \S+ by "
                    r"(main thread|thread T\d+)")
# "#3 function file:line[:column] (module+0xoffset)", clang's runtime adds " (BuildId: ...)".
FRAME = re.compile(r"^\s+#(\d+) (.*?) (\S+) \((\S+?)\+0x[0-9a-f]+\)(?: \(BuildId: [0-9a-f]+\))?$")
LOCATION = re.compile(r"^  Location is (.*?)(?: at 0x[0-9a-f]+)?(?: allocated by .*)?:?$")
GRPC_FILES = ("/usr/include/grpcpp/", "/usr/include/grpc/", "/usr/include/grpc++/")
STD_FILES = ("/usr/include/c++/",)


def short(fn, width=110):
    fn = re.sub(r"\(.*\)( const)?$", "", fn)  # drop the parameter list
    return fn if len(fn) <= width else fn[: width - 3] + "..."


def parse(text):
    """Yields (kind, accesses, location) per report; an access is a list of (function, file)."""
    for block in text.split("==================\n"):
        m = re.search(r"WARNING: ThreadSanitizer: (.*?)(?: \(pid=\d+\))?\n", block)
        if not m:
            continue
        kind = m.group(1)
        sections, current = [], None
        for line in block.splitlines():
            if ACCESS.match(line) or line.startswith("  Location is ") or \
                    re.match(r"^  (Thread|Mutex|As if|Stack of) ", line):
                current = [line.strip(), []]
                sections.append(current)
            elif current is not None and (fm := FRAME.match(line)):
                # The file as TSan matches it (no line number), the function, the module.
                path = re.sub(r":\d+(:\d+)?$", "", fm.group(3))
                current[1].append((fm.group(2), path, fm.group(4)))
        accesses = [s for s in sections if ACCESS.match("  " + s[0])]
        locs = [s for s in sections if s[0].startswith("Location is ")]
        threads = [s for s in sections if s[0].startswith("Thread ")]
        yield kind, accesses, locs[0] if locs else None, threads


def template_match(templ, s):
    """sanitizer_common's TemplateMatch: substring, '*' any text, '^' and '$' anchors."""
    if not s:
        return False
    rx = "".join(".*" if c == "*" else "$" if c == "$" else re.escape(c)
                 for c in templ.lstrip("^"))
    return re.search(("^" if templ.startswith("^") else "") + rx, s, re.S) is not None


def load_supp(path):
    entries = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                kind, _, templ = line.partition(":")
                if kind in ("race", "race_top"):
                    entries.append((kind, templ))
    return entries


def suppressed_by(entries, accesses, threads):
    """The entry TSan would match (OutputReport: mops' stacks, then threads' stacks)."""
    for _, stack in list(accesses) + list(threads):
        for kind, templ in entries:
            frames = stack if kind == "race" else stack[:1]
            for fn, path, module in frames:
                if any(template_match(templ, x) for x in (fn, path, module)):
                    return f"{kind}:{templ}"
    return None


def frame_origin(frame):
    fn, path, module = frame
    path = os.path.normpath(path) if path.startswith("/") else path
    if path.startswith(GRPC_FILES):
        return "grpc-header"
    if path.startswith(STD_FILES) or module.startswith(("libtsan", "libclang_rt.tsan")) or \
            (path == "<null>" and re.match(r"^(memcpy|memmove|memset|memcmp|operator new|"
                                            r"operator delete|malloc|free|__tsan_)", fn)):
        return "std"  # the C++ library's header code or TSan's interceptors
    if re.match(r"^lib(grpc|gpr|absl|upb|address_sorting|protobuf)", module):
        return "grpc-lib"  # Debian's uninstrumented gRPC, abseil, protobuf
    if path.startswith("/usr/") or path == "<null>":
        return "other:" + module
    return "podtopo"


def top_is_grpc(stack):
    """The access is gRPC's: the first frame that is neither the C++ library's nor a TSan
    interceptor is in gRPC's headers or in Debian's gRPC/abseil/protobuf libraries."""
    origins = [frame_origin(f) for f in stack]
    if not origins:
        return False
    i = 0
    while i < len(origins) and origins[i] == "std":
        i += 1
    return i < len(origins) and origins[i] in ("grpc-header", "grpc-lib")


def describe_location(loc):
    if loc is None:
        return "-"
    head, frames = loc
    what = re.sub(r" at 0x[0-9a-f]+", "", head).replace("Location is ", "")
    if "allocated by" in head:
        # The first frame that is not the allocator's interceptor.
        for fn, path, module in frames:
            if re.match(r"^(malloc|calloc|realloc|posix_memalign|aligned_alloc|operator new)",
                        fn):
                continue
            return f"{what.split(' allocated')[0]} allocated in {short(fn, 60)} ({module})"
    return what


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--frames", type=int, default=0)
    ap.add_argument("--check-grpc-top", action="store_true")
    ap.add_argument("--supp")
    args = ap.parse_args()
    entries = load_supp(args.supp) if args.supp else None
    hits = {}
    groups = collections.OrderedDict()
    examples = {}
    total = 0
    failures = 0
    for log in args.logs:
        with open(log, errors="replace") as f:
            text = f.read()
        for kind, accesses, loc, threads in parse(text):
            if entries is not None:
                hit = suppressed_by(entries, accesses, threads)
                hits[hit] = hits.get(hit, 0) + 1
                if hit is not None:
                    continue
            total += 1
            tops = []
            podtopo_below = False
            for head, stack in accesses:
                top = stack[0] if stack else ("?", "?", "?")
                tops.append(f"{short(top[0])} [{top[1]}]")
                podtopo_below |= any(frame_origin(f) == "podtopo" for f in stack)
            ok = len(accesses) > 0 and all(top_is_grpc(s) for _, s in accesses) and \
                kind.startswith("data race")
            if not ok:
                failures += 1
            key = (kind, tuple(tops), describe_location(loc), podtopo_below, ok)
            groups[key] = groups.get(key, 0) + 1
            examples.setdefault(key, accesses)
    if entries is not None:
        for (kind, templ) in entries:
            print(f"{hits.get(f'{kind}:{templ}', 0):5d} reports matched by {kind}:{templ}")
        print(f"{hits.get(None, 0):5d} reports matched by none: listed below")
    print(f"{total} reports, {len(groups)} distinct")
    for key, n in groups.items():
        kind, tops, loc, below, ok = key
        flag = "" if ok else "   <-- an access that is not gRPC's code"
        print(f"\n{n} x {kind}{flag}")
        for i, t in enumerate(tops):
            print(f"   access {i + 1} top: {t}")
        print(f"   memory: {loc}")
        print(f"   podtopo frames further down the access stacks: {'yes' if below else 'no'}")
        if args.frames:
            for head, stack in examples[key]:
                print(f"     {head}")
                for fn, path, module in stack[: args.frames]:
                    print(f"       {short(fn, 90)}  {path}")
    if args.check_grpc_top and failures:
        print(f"\n{failures} report(s) with an access that is not gRPC's code",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
