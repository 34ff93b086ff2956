"""What the Python end-to-end scripts of tests/ share: a skip (exit 77, which ctest's
SKIP_RETURN_CODE reads), a failure named after the script, a free loopback port, waiting for a
condition, an HTTP GET, and one sample of a Prometheus exposition.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from checks import fail, free_port, get, metric, skip, wait  # noqa: E402

    port = free_port()
    text = wait("the agent's metrics", lambda: get(f"http://127.0.0.1:{port}/metrics"))
    if metric(text, "podtopo_podresources_up") != 1:
        fail("the agent does not read the kubelet")
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request


def skip(why):
    """Exits 77: ctest reports the test as skipped, with this reason in its output."""
    print(f"SKIP: {why}")
    sys.exit(77)


def fail(why):
    """Exits 1 with "SCRIPT: why" on stderr."""
    sys.exit(f"{os.path.splitext(os.path.basename(sys.argv[0]))[0]}: {why}")


def free_port():
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Timeout(Exception):
    pass


def poll(what, check, seconds=30, interval=0.2):
    """check() until it returns something true, which is returned; an exception counts as not
    yet. Raises Timeout naming `what` and the last value or exception."""
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            last = check()
            if last:
                return last
        except Exception as e:  # not there yet
            last = e
        time.sleep(interval)
    raise Timeout(f"timed out after {seconds} s waiting for {what} (last: {last})")


def wait(what, check, seconds=30, interval=0.2):
    """poll(), failing the script on a timeout."""
    try:
        return poll(what, check, seconds, interval)
    except Timeout as e:
        fail(str(e))


def get(url, timeout=10):
    """The body of GET url, as text."""
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def metric(text, name, labels=""):
    """The value of the sample `name` + `labels` ('{kind="x"}') in a Prometheus exposition;
    None when there is none."""
    m = re.search(r"^" + re.escape(name + labels) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def stop(procs, seconds=10):
    """SIGTERM to each process still running, then SIGKILL to those that have not exited after
    `seconds`."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                p.kill()
