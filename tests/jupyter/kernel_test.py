# SPDX-License-Identifier: MIT
# The mplua kernel through a real client (Debian's jupyter_client), started
# from its kernelspec (JUPYTER_PATH points at a temporary one): kernel_info,
# values, every rank's prints as whole lines, errors and the cell after them,
# a deadlock, interrupts of a spinning task (by signal and by message, each
# followed by a working cell), completion, inspection, is_complete, history,
# input through the stdin channel, a message with a bad signature dropped
# and logged, the sockets on the connection file's address only, and
# shutdown and restart leaving no process behind.
#   python3 kernel_test.py N KERNEL_NAME LOG
# Every wait has a generous bound as a guard only: nothing is timed.
import json
import os
import queue
import subprocess
import sys
import time

import zmq
from jupyter_client.manager import KernelManager
from jupyter_client.session import Session

N, NAME, LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3]
GUARD = 300


def fail(msg):
    print("FAIL (%d): %s" % (N, msg), file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def job_pids(connection_file):
    """Processes whose command line names the connection file."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if connection_file in cmd and int(d) != os.getpid():
            out.append(int(d))
    return out


def wait_gone(pids, what):
    end = time.time() + GUARD
    while any(os.path.exists("/proc/%d" % p) and not zombie(p) for p in pids):
        if time.time() > end:
            fail("%s: processes left: %s" % (what, pids))
        time.sleep(0.1)


def zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


log = open(LOG, "w")
km = KernelManager(kernel_name=NAME)
km.start_kernel(stderr=log)
kc = km.client()
kc.start_channels()
kc.wait_for_ready(timeout=GUARD)


def run(code, allow_stdin=False, stdin_hook=None, **kw):
    """Execute code; returns (reply content, [(msg_type, content) on iopub])."""
    out = []
    r = kc.execute_interactive(code, timeout=GUARD, allow_stdin=allow_stdin,
                               stdin_hook=stdin_hook,
                               output_hook=lambda m: out.append((m["msg_type"], m["content"])),
                               **kw)
    return r["content"], out


def stdout_of(out):
    return "".join(c["text"] for t, c in out if t == "stream" and c["name"] == "stdout")


def ok_cell(expect="2"):
    r, out = run("1 + 1")
    check(r["status"] == "ok", "cell after: %r" % r)
    res = [c for t, c in out if t == "execute_result"]
    check(len(res) == 1 and res[0]["data"]["text/plain"] == expect, "cell after: %r" % out)


# kernel_info
info = kc.kernel_info(reply=True, timeout=GUARD)["content"]
check(info["status"] == "ok" and info["protocol_version"] == "5.3", "kernel_info: %r" % info)
li = info["language_info"]
check(li["name"] == "lua" and li["version"].startswith("5.4") and li["file_extension"] == ".lua"
      and li["mimetype"] == "text/x-lua", "language_info: %r" % li)
check(("%d rank" % N) in info["banner"], "banner: %r" % info["banner"])

# an expression's value, with its execution count
r, out = run("6 * 7")
res = [c for t, c in out if t == "execute_result"]
check(r["status"] == "ok" and len(res) == 1 and res[0]["data"]["text/plain"] == "42"
      and res[0]["execution_count"] == r["execution_count"], "expression: %r %r" % (r, out))
r, out = run("t = {1, 2, x = {y = 'z'}}; t.self = t; return t")
res = [c for t, c in out if t == "execute_result"]
check(res and res[0]["data"]["text/plain"] == '<1>{1, 2, self = <1>, x = {y = "z"}}',
      "table: %r" % out)
r, out = run("a = mp.array('f64', {{1, 2}, {3, 4}})\na")  # a last line's value
res = [c for t, c in out if t == "execute_result"]
check(res and "f64, 2x2" in res[0]["data"]["text/plain"] and "<table>" in
      res[0]["data"].get("text/html", ""), "array: %r" % out)

# every rank's prints, each a whole line, all in the cell
r, out = run("mp.exec(function() for i = 1, 3 do print('rank ' .. mp.rank .. ' line ' .. i) end "
             "io.write('part', 'ial ', mp.rank, '\\n') end)")
check(r["status"] == "ok", "prints: %r" % r)
streams = [c["text"] for t, c in out if t == "stream"]
check(all(s.endswith("\n") for s in streams), "prints not whole lines: %r" % streams)
lines = sorted("".join(streams).splitlines())
want = sorted(["rank %d line %d" % (k, i) for k in range(N) for i in (1, 2, 3)] +
              ["partial %d" % k for k in range(N)])
check(lines == want, "prints: %r" % lines)

# an error: the error reply, its report, and the next cell
r, out = run("mp.exec(function() if mp.rank == %d then error('boom') end end)" % (N - 1))
check(r["status"] == "error" and r["ename"] == "TaskError" and "boom" in r["evalue"],
      "error reply: %r" % r)
tb = "\n".join(r["traceback"])
check(("rank %d/%d faulted" % (N - 1, N)) in tb and "stack traceback" in tb, "report: %r" % tb)
if N > 1:
    check("where the others were" in tb, "report without whereabouts: %r" % tb)
check(any(t == "error" for t, c in out), "no error on iopub: %r" % out)
ok_cell()
r, out = run("x = = 1")
check(r["status"] == "error" and r["ename"] == "SyntaxError", "syntax error: %r" % r)
ok_cell()

# a deadlock, reported
r, out = run("mp.exec(function() mp.recv(mp.rank) end)")
check(r["status"] == "error" and r["ename"] == "Deadlock" and
      "would wait forever" in "\n".join(r["traceback"]), "deadlock: %r" % r)
ok_cell()

# interrupts of a spinning task, by signal and by message, each then a cell
spin = ("mp.exec(function() print('spinning ' .. mp.rank) io.stdout:flush() "
        "while true do end end)")
for k in range(10):
    msg_id = kc.execute(spin)
    seen, end = set(), time.time() + GUARD
    while len(seen) < N:  # every rank spins
        check(time.time() < end, "interrupt %d: the task did not start" % k)
        m = kc.get_iopub_msg(timeout=GUARD)
        if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
            seen.update(l for l in m["content"]["text"].splitlines() if l.startswith("spinning"))
    if k % 2 == 0:
        km.interrupt_kernel()  # the kernelspec's mode: SIGINT to the kernel
    else:
        kc.control_channel.send(kc.session.msg("interrupt_request", {}))
    rep = kc.get_shell_msg(timeout=GUARD)
    while rep["parent_header"].get("msg_id") != msg_id:
        rep = kc.get_shell_msg(timeout=GUARD)
    c = rep["content"]
    check(c["status"] == "error" and c["ename"] == "Interrupted" and
          "interrupted" in "\n".join(c["traceback"]), "interrupt %d: %r" % (k, c))
    ok_cell()

# completion, inspection, is_complete, history
c = kc.complete("mp.ex", reply=True, timeout=GUARD)["content"]
check(c["status"] == "ok" and "exec" in c["matches"] and c["cursor_start"] == 3
      and c["cursor_end"] == 5, "complete mp.ex: %r" % c)
c = kc.complete("x = a:", reply=True, timeout=GUARD)["content"]
check({"get", "set", "dims", "sum"} <= set(c["matches"]) and c["cursor_start"] == 6,
      "complete a: %r" % c)
c = kc.complete("pri", reply=True, timeout=GUARD)["content"]
check(c["matches"] == ["print"], "complete pri: %r" % c)
c = kc.inspect("mp.send", reply=True, timeout=GUARD)["content"]
check(c["status"] == "ok" and c["found"] and "mp.send(to, ...)" in c["data"]["text/plain"],
      "inspect: %r" % c)
for code, want in (("function f()", "incomplete"), ("x = 1", "complete"), ("x = = 1", "invalid"),
                   ("t = {", "incomplete")):
    kc.is_complete(code)
    c = kc.get_shell_msg(timeout=GUARD)["content"]
    check(c["status"] == want, "is_complete %r: %r" % (code, c))
kc.history(hist_access_type="tail", n=3)
h = kc.get_shell_msg(timeout=GUARD)["content"]["history"]
check(len(h) == 3 and h[-1][2] == "1 + 1", "history: %r" % h)

# io.read through the stdin channel
got = []
r, out = run("line = io.read() return 'got ' .. line", allow_stdin=True,
             stdin_hook=lambda m: (got.append(m["content"]["prompt"]),
                                   kc.input("typed here")))
res = [c for t, c in out if t == "execute_result"]
check(got and res and res[0]["data"]["text/plain"] == "got typed here", "io.read: %r" % out)

# a message with a bad signature is dropped (and logged), never run
cf = json.load(open(km.connection_file))
bad = Session(key=b"not the key", signature_scheme="hmac-sha256")
ctx = zmq.Context.instance()
s = ctx.socket(zmq.DEALER)
s.connect("%s://%s:%d" % (cf["transport"], cf["ip"], cf["shell_port"]))
bad.send(s, bad.msg("execute_request", {"code": "HACKED = true", "silent": False,
                                        "store_history": True, "user_expressions": {},
                                        "allow_stdin": False}))
end = time.time() + GUARD
while "bad signature" not in open(LOG).read():
    check(time.time() < end, "the bad signature was not logged")
    time.sleep(0.1)
s.close(0)
r, out = run("HACKED")
res = [c for t, c in out if t == "execute_result"]
check(res and res[0]["data"]["text/plain"] == "nil", "a badly signed message ran: %r" % out)

# the sockets listen on the connection file's address only
ss = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True).stdout
for port in ("shell_port", "control_port", "stdin_port", "iopub_port", "hb_port"):
    rows = [l for l in ss.splitlines() if l.split()[3].endswith(":%d" % cf[port])]
    check(rows and all(l.split()[3] == "%s:%d" % (cf["ip"], cf[port]) for l in rows),
          "%s not on %s only: %r" % (port, cf["ip"], rows))

# restart: a new job; then shutdown: nothing left
old = job_pids(km.connection_file)
check(len(old) >= N + 1, "job processes: %r" % old)
km.restart_kernel(now=False)
wait_gone(old, "restart")
kc.wait_for_ready(timeout=GUARD)
r, out = run("x")
res = [c for t, c in out if t == "execute_result"]
check(r["status"] == "ok" and res and res[0]["data"]["text/plain"] == "nil",
      "after restart: %r" % out)
ok_cell()
cfile = km.connection_file
left = job_pids(cfile)
kc.stop_channels()
km.shutdown_kernel(now=False)
wait_gone(left, "shutdown")
check(not job_pids(cfile), "after shutdown: %r" % job_pids(cfile))
print("jupyter kernel ok (%d ranks)" % N)
