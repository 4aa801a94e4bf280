# SPDX-License-Identifier: MIT
# The mplua kernel against IPython's kernel and ipyparallel, through the same
# client (jupyter_client), rounds interleaved in one run:
#   1. an empty cell's round trip (execute_request to its reply and idle),
#      mplua at 1 rank against ipykernel (Debian's python3-ipykernel);
#   2. a cell running an empty task on 4 ranks (mp.exec(function() end))
#      against ipyparallel's view.apply_sync of an empty function on 4 engines.
# Prints medians and ratios. Run through scripts/bench/jupyter.sh.
import os
import statistics
import sys
import time

from jupyter_client.manager import start_new_kernel

ROUNDS, REPS = int(os.environ.get("ROUNDS", "5")), int(os.environ.get("REPS", "100"))


def cell_time(kc, code, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        r = kc.execute_interactive(code, timeout=120, output_hook=lambda m: None)
        times.append(time.perf_counter() - t)
        assert r["content"]["status"] == "ok", r["content"]
    return statistics.median(times)


def main():
    mplua1 = start_new_kernel(kernel_name=sys.argv[1], startup_timeout=120)
    mplua4 = start_new_kernel(kernel_name=sys.argv[2], startup_timeout=120)
    ipy = start_new_kernel(kernel_name="python3", startup_timeout=120)
    import ipyparallel as ipp
    cluster = ipp.Cluster(n=4, log_level=40)
    rc = cluster.start_and_connect_sync()
    rc.wait_for_engines(4, timeout=120)
    view = rc[:]
    view.apply_sync(lambda: None)
    rows = {"mplua empty cell": [], "ipykernel empty cell": [],
            "mplua mp.exec 4 ranks": [], "ipyparallel apply_sync 4 engines": []}
    for _ in range(ROUNDS):
        rows["mplua empty cell"].append(cell_time(mplua1[1], "", REPS))
        rows["ipykernel empty cell"].append(cell_time(ipy[1], "", REPS))
        rows["mplua mp.exec 4 ranks"].append(cell_time(mplua4[1], "mp.exec(function() end)", REPS))
        ts = []
        for _ in range(REPS):
            t = time.perf_counter()
            view.apply_sync(lambda: None)
            ts.append(time.perf_counter() - t)
        rows["ipyparallel apply_sync 4 engines"].append(statistics.median(ts))
    for k, v in rows.items():
        print("%-34s median %8.1f us  (rounds %s)" % (k, 1e6 * statistics.median(v),
              " ".join("%.0f" % (1e6 * x) for x in v)))
    m = lambda k: statistics.median(rows[k])
    print("empty cell: mplua / ipykernel = %.2f" % (m("mplua empty cell") / m("ipykernel empty cell")))
    print("empty task: ipyparallel / mplua = %.1fx" %
          (m("ipyparallel apply_sync 4 engines") / m("mplua mp.exec 4 ranks")))
    cluster.stop_cluster_sync()
    for km, kc in (mplua1, mplua4, ipy):
        kc.stop_channels()
        km.shutdown_kernel(now=False)


main()
