"""The kill-restart loop of innosim serve on real files (issue 28).

Usage: python3 tests/tools/kill_restart_loop.py BINARY DIR CYCLES COMMITS

Each cycle starts `BINARY serve --dir DIR`, checks through PyMySQL that every
commit acknowledged so far is there, makes COMMITS autocommit inserts, and
kills the server with SIGKILL. Prints cycles per second over the first and the
last 50 cycles. DIR is removed first. Needs PyMySQL (pip install pymysql).
"""
import os, shutil, signal, subprocess, sys, time

import pymysql

binary, d, cycles, commits = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
shutil.rmtree(d, ignore_errors=True)
port = 3419
times = []
acked = 0
for cyc in range(cycles):
    t0 = time.time()
    p = subprocess.Popen([binary, "serve", "--dir", d, "--port", str(port)], stderr=subprocess.DEVNULL)
    while True:
        try:
            c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", database="test", charset="utf8", autocommit=True)
            break
        except Exception:
            time.sleep(0.005)
    cur = c.cursor()
    if cyc == 0:
        cur.execute("create table if not exists k (id int primary key, v int) engine=innodb")
    cur.execute("select count(*) from k")
    n = cur.fetchone()[0]
    assert n == acked, (cyc, n, acked)
    for i in range(commits):
        cur.execute("insert into k values (%s, %s)", (acked, cyc))
        acked += 1
    p.send_signal(signal.SIGKILL)
    p.wait()
    times.append(time.time() - t0)
first = times[:50]; last = times[-50:]
print(f"{cycles} cycles of {commits} commits: first 50 {50/sum(first):.1f} cycles/s, last 50 {50/sum(last):.1f} cycles/s; {acked} acknowledged commits all found")
