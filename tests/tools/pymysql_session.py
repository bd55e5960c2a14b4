"""PyMySQL against innosim serve: parameters, autocommit on and off, and a
lock wait timeout (1205) and a deadlock (1213) seen as the driver's
exceptions. Run by tests/real_clients.rs as
`python3 pymysql_session.py PORT`; prints one line per check and exits 1 on
the first that fails."""

import sys
import threading

import pymysql

PORT = int(sys.argv[1])


def connect(**kw):
    return pymysql.connect(host="127.0.0.1", port=PORT, user="root", password="",
                           database="test", charset="utf8", **kw)


def check(name, cond, got=None):
    if not cond:
        print(f"FAILED {name}: {got!r}")
        sys.exit(1)
    print(f"ok {name}")


a = connect(autocommit=True)
with a.cursor() as c:
    c.execute("DROP TABLE IF EXISTS py")
    c.execute("CREATE TABLE py (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2)) ENGINE=InnoDB")
    n = c.executemany("INSERT INTO py VALUES (%s, %s, %s)",
                      [(1, "o'brien", "1.50"), (2, None, "2.00"), (3, "ü", "3.25")])
    check("executemany affected rows", n == 3, n)
    c.execute("SELECT id, name, price FROM py WHERE name = %s", ("o'brien",))
    row = c.fetchone()
    check("a parameter with a quote", row is not None and row[0] == 1 and str(row[2]) == "1.50", row)
    c.execute("SELECT name FROM py WHERE id = %s", (3,))
    check("utf8 text round trip", c.fetchone()[0] == "ü")
    c.execute("SELECT COUNT(*) FROM py WHERE name IS NULL")
    check("NULL parameter stored", c.fetchone()[0] == 1)

# Autocommit off: a rollback undoes, a commit keeps.
b = connect(autocommit=False)
with b.cursor() as c:
    c.execute("INSERT INTO py VALUES (10, 'gone', 0)")
    b.rollback()
    c.execute("INSERT INTO py VALUES (11, 'kept', 0)")
    b.commit()
with a.cursor() as c:
    c.execute("SELECT id FROM py WHERE id >= 10 ORDER BY id")
    ids = [r[0] for r in c.fetchall()]
    check("autocommit off: rollback and commit", ids == [11], ids)

# 1205: a row lock held past the waiter's timeout.
holder = connect(autocommit=False)
waiter = connect(autocommit=False)
with holder.cursor() as h, waiter.cursor() as w:
    h.execute("UPDATE py SET name = 'held' WHERE id = 1")
    w.execute("SET SESSION innodb_lock_wait_timeout = 1")
    try:
        w.execute("UPDATE py SET name = 'waited' WHERE id = 1")
        check("1205 raised", False, "no error")
    except pymysql.err.OperationalError as e:
        check("1205 as OperationalError", e.args[0] == 1205, e.args)
    waiter.rollback()
    holder.rollback()

# 1213: two transactions that wait for each other; one is the victim.
x = connect(autocommit=False)
y = connect(autocommit=False)
with x.cursor() as cx, y.cursor() as cy:
    cx.execute("UPDATE py SET name = 'x' WHERE id = 1")
    cy.execute("UPDATE py SET name = 'y' WHERE id = 2")
    errors = []

    def x_wants_2():
        try:
            cx.execute("UPDATE py SET name = 'x' WHERE id = 2")
        except pymysql.err.OperationalError as e:
            errors.append(e.args[0])

    t = threading.Thread(target=x_wants_2)
    t.start()
    # x waits for y's lock: seen in the server's own lock tables.
    with a.cursor() as c:
        for _ in range(100000):
            c.execute("SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS")
            if c.fetchone()[0] == 1:
                break
    try:
        cy.execute("UPDATE py SET name = 'y' WHERE id = 1")
    except pymysql.err.OperationalError as e:
        errors.append(e.args[0])
    t.join()
    check("1213 as OperationalError, one victim", errors == [1213], errors)
    x.rollback()
    y.rollback()

print("all ok")
