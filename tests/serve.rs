//! `innosim serve` driven over loopback TCP by a protocol client (the
//! wire codec's other side): the connection phase, statements and their
//! replies, a lock wait between two connections that ends by the
//! timeout and one that ends by a commit, a connection closed in the
//! middle of a transaction, and broken packets that end only their own
//! connection.

use engine::wire::reply::Reply;
use engine::wire::Command;
mod common;

use common::serve::{reconnect, serve_on};
use sim::client::{Client, ClientError};
use sim::serve::{self, Handle};
use std::io::Write;
use std::sync::{Arc, Mutex};

fn start(password: &str) -> (Handle, Arc<Mutex<Vec<String>>>, tempfile::TempDir) {
    start_with(password, false)
}

/// A server on a fresh directory (with a Unix socket in it, `innosim.sock`,
/// if `socket`), its log lines, and the directory.
fn start_with(
    password: &str,
    socket: bool,
) -> (Handle, Arc<Mutex<Vec<String>>>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let host = serve::DirHost::new(dir.path(), sim::script::script_config()).unwrap();
    let (h, lines) = serve_on(
        Box::new(host),
        password,
        socket.then(|| dir.path().join("innosim.sock")),
        None,
        6,
    );
    (h, lines, dir)
}

fn rows(r: Reply) -> Vec<Vec<Option<String>>> {
    match r {
        Reply::Rows { rows, .. } => rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|v| v.map(|b| String::from_utf8(b).unwrap()))
                    .collect()
            })
            .collect(),
        other => panic!("not rows: {other:?}"),
    }
}

/// Asks `sql` (one value) on `c` until it gives `want`: for a state
/// another connection's statement reaches in its own time (a lock wait
/// begun, a transaction rolled back). Each try is a round trip to the
/// server, so the loop is paced by it; it gives up after many.
fn until(c: &mut Client, sql: &str, want: &str) {
    for _ in 0..200_000 {
        if rows(c.query(sql).unwrap())[0][0].as_deref() == Some(want) {
            return;
        }
        std::thread::yield_now();
    }
    panic!("{sql} never gave {want}");
}

const LOCK_WAITS: &str = "SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS";
const TRXS: &str = "SELECT COUNT(*) FROM information_schema.INNODB_TRX";

fn ok(r: Reply) -> engine::wire::reply::OkPacket {
    match r {
        Reply::Ok(o) => o,
        other => panic!("not OK: {other:?}"),
    }
}

fn error_code(r: Reply) -> u16 {
    match r {
        Reply::Err(e) => e.code,
        other => panic!("not an error: {other:?}"),
    }
}

#[test]
fn statements_run_over_the_protocol_with_mysqls_replies() {
    let (h, log, _dir) = start("secret");
    let mut c = Client::connect(h.addr, "root", "secret", Some("test")).unwrap();
    assert_eq!(c.greeting.version, serve::VERSION);
    let o = ok(c
        .query("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10)) ENGINE=InnoDB")
        .unwrap());
    assert_eq!(o.affected, 0);
    let o = ok(c.query("INSERT INTO t VALUES (1, 'x'), (2, NULL)").unwrap());
    assert_eq!(o.affected, 2);
    assert_eq!(o.info, "Records: 2  Duplicates: 0  Warnings: 0");
    assert_eq!(o.status & 2, 2, "autocommit in the status flags");
    let r = c.query("SELECT a, b FROM t ORDER BY a").unwrap();
    let Reply::Rows { columns, .. } = &r else {
        panic!("{r:?}")
    };
    assert_eq!(columns.len(), 2);
    assert_eq!(columns[0].name, "a");
    assert_eq!(
        rows(r),
        vec![
            vec![Some("1".into()), Some("x".into())],
            vec![Some("2".into()), None]
        ]
    );
    // A transaction shows in the status flags.
    let o = ok(c.query("BEGIN").unwrap());
    assert_eq!(o.status & 1, 1, "in transaction: {o:?}");
    let o = ok(c.query("UPDATE t SET b = 'y' WHERE a = 2").unwrap());
    assert_eq!((o.affected, o.status & 1), (1, 1));
    let o = ok(c.query("COMMIT").unwrap());
    assert_eq!(o.status & 1, 0);
    // A table's columns are defined by its schema, an expression's by
    // its value; an OK carries the AUTO_INCREMENT value generated.
    ok(c.query(
        "CREATE TABLE g (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         d DECIMAL(10,2), s VARCHAR(10) CHARACTER SET utf8, b BLOB) ENGINE=InnoDB",
    )
    .unwrap());
    let o = ok(c.query("INSERT INTO g (d) VALUES (1.5), (2)").unwrap());
    assert_eq!((o.affected, o.last_insert_id), (2, 1));
    let o = ok(c.query("INSERT INTO g (id, d) VALUES (10, 3)").unwrap());
    assert_eq!(o.last_insert_id, 0, "a value given is not generated");
    let r = c
        .query("SELECT id, d AS dd, s, b, id + 1 FROM g AS x WHERE id = 1")
        .unwrap();
    let Reply::Rows {
        columns, rows: got, ..
    } = r
    else {
        panic!("{r:?}")
    };
    use engine::wire::reply::{flag, ty};
    let t: Vec<(u8, u16, u32, u16, u8)> = columns
        .iter()
        .map(|d| (d.ty, d.flags, d.length, d.charset, d.decimals))
        .collect();
    let nn_pk = flag::NOT_NULL | flag::PRI_KEY | flag::AUTO_INCREMENT | flag::NUM | flag::UNSIGNED;
    assert_eq!(
        t,
        vec![
            (ty::LONG, nn_pk, 10, 63, 0),
            (ty::NEWDECIMAL, flag::NUM, 12, 63, 2),
            (ty::VAR_STRING, 0, 30, 33, 0),
            (ty::BLOB, flag::BLOB | flag::BINARY, 65535, 63, 0),
            (ty::LONGLONG, flag::NUM, 1, 63, 0),
        ]
    );
    assert_eq!(
        (columns[1].name.as_str(), columns[1].org_name.as_str()),
        ("dd", "d")
    );
    assert_eq!(
        (
            columns[0].schema.as_str(),
            columns[0].table.as_str(),
            columns[0].org_table.as_str()
        ),
        ("test", "x", "g")
    );
    assert_eq!(got[0][1].as_deref(), Some(&b"1.50"[..]));
    assert_eq!(
        rows(c.query("SELECT LAST_INSERT_ID(), DATABASE()").unwrap()),
        vec![vec![Some("1".into()), Some("test".into())]]
    );
    ok(c.query("SET NAMES utf8").unwrap());
    assert_eq!(
        error_code(c.query("SET NAMES utf8mb4").unwrap()),
        1115,
        "MySQL 5.1 has no utf8mb4"
    );
    // Errors are ERR packets with MySQL's code and SQLSTATE; the
    // connection goes on.
    match c.query("SELECT * FROM nosuch").unwrap() {
        Reply::Err(e) => {
            assert_eq!((e.code, e.sqlstate.as_str()), (1146, "42S02"));
            assert_eq!(e.message, "Table 'test.nosuch' doesn't exist");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(error_code(c.query("SELEKT 1").unwrap()), 1064);
    // Statement bytes that are not UTF-8 are refused, not replaced.
    let mut raw = b"INSERT INTO t VALUES (9, '".to_vec();
    raw.extend([0xE9, 0xFF]);
    raw.extend(b"')");
    assert_eq!(error_code(c.command(&Command::Query(raw)).unwrap()), 1300);
    assert_eq!(
        rows(c.query("SELECT COUNT(*) FROM t WHERE a = 9").unwrap()),
        vec![vec![Some("0".into())]]
    );
    ok(c.command(&Command::Ping).unwrap());
    ok(c.command(&Command::InitDb(b"test".to_vec())).unwrap());
    assert_eq!(
        error_code(c.command(&Command::InitDb(b"nodb".to_vec())).unwrap()),
        1049
    );
    assert_eq!(
        error_code(c.command(&Command::Unknown(0x63)).unwrap()),
        1047
    );
    assert_eq!(
        rows(c.query("SELECT b FROM t WHERE a = 2").unwrap()),
        vec![vec![Some("y".into())]]
    );
    c.quit().unwrap();
    // A wrong password, and an unknown user, are 1045.
    for (user, pw) in [("root", "Secret"), ("root", ""), ("nobody", "secret")] {
        match Client::connect(h.addr, user, pw, None) {
            Err(ClientError::Refused(e)) => {
                assert_eq!((e.code, e.sqlstate.as_str()), (1045, "28000"));
                let using = if pw.is_empty() { "NO" } else { "YES" };
                assert_eq!(
                    e.message,
                    format!(
                        "Access denied for user '{user}'@'localhost' (using password: {using})"
                    )
                );
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("{user} with {pw:?} got in"),
        }
    }
    // An unknown database at connect is refused too.
    assert!(matches!(
        Client::connect(h.addr, "root", "secret", Some("nodb")),
        Err(ClientError::Refused(e)) if e.code == 1049
    ));
    h.shutdown().unwrap();
    let log = log.lock().unwrap();
    assert!(
        log.iter()
            .any(|l| l.contains("connection 1 from 127.0.0.1")),
        "{log:?}"
    );
    assert!(log.iter().any(|l| l == "engine closed cleanly"), "{log:?}");
}

#[test]
fn a_lock_wait_blocks_only_its_connection_and_ends_by_timeout_or_release() {
    let (h, _log, _dir) = start("");
    let mut a = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    let mut b = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    let mut other = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    ok(
        a.query("CREATE TABLE t (a INT PRIMARY KEY, v INT) ENGINE=InnoDB")
            .unwrap(),
    );
    ok(a.query("INSERT INTO t VALUES (1, 0), (2, 0)").unwrap());
    ok(b.query("SET SESSION innodb_lock_wait_timeout = 1").unwrap());
    ok(a.query("BEGIN").unwrap());
    ok(a.query("UPDATE t SET v = 1 WHERE a = 1").unwrap());
    // b waits, in real time, for its timeout.
    b.send_query("UPDATE t SET v = 2 WHERE a = 1").unwrap();
    // It waits (the lock tables show it), and meanwhile another
    // connection is served.
    until(&mut other, LOCK_WAITS, "1");
    assert_eq!(
        rows(other.query("SELECT v FROM t WHERE a = 2").unwrap()),
        vec![vec![Some("0".into())]]
    );
    match b.finish().unwrap() {
        Reply::Err(e) => {
            assert_eq!(e.code, 1205);
            assert_eq!(
                e.message,
                "Lock wait timeout exceeded; try restarting transaction"
            );
        }
        r => panic!("{r:?}"),
    }
    until(&mut other, LOCK_WAITS, "0");
    // Waiting again, until a commits.
    b.send_query("UPDATE t SET v = 3 WHERE a = 1").unwrap();
    until(&mut other, LOCK_WAITS, "1");
    ok(a.query("COMMIT").unwrap());
    assert_eq!(ok(b.finish().unwrap()).affected, 1);
    // A connection that closes mid-transaction is rolled back and its
    // locks are released.
    ok(a.query("BEGIN").unwrap());
    ok(a.query("UPDATE t SET v = 9 WHERE a = 2").unwrap());
    drop(a);
    until(&mut other, TRXS, "0");
    ok(b.query("UPDATE t SET v = 4 WHERE a = 2").unwrap());
    assert_eq!(
        rows(other.query("SELECT a, v FROM t ORDER BY a").unwrap()),
        vec![
            vec![Some("1".into()), Some("3".into())],
            vec![Some("2".into()), Some("4".into())]
        ]
    );
    h.shutdown().unwrap();
}

#[test]
fn broken_packets_end_their_own_connection_only() {
    let (h, _log, _dir) = start("");
    let mut good = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    ok(good
        .query("CREATE TABLE t (a INT PRIMARY KEY) ENGINE=InnoDB")
        .unwrap());
    // Garbage instead of a handshake response.
    let mut s = std::net::TcpStream::connect(h.addr).unwrap();
    s.write_all(&[3, 0, 0, 1, 0xFF, 0xFF, 0xFF]).unwrap();
    drop(s);
    // A packet announced over max_allowed_packet after logging in.
    let mut bad = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    let huge = vec![b'x'; serve::MAX_ALLOWED_PACKET + 10_000];
    let mut q = b"SELECT '".to_vec();
    q.extend(&huge);
    let r = bad.command(&Command::Query(q));
    match r {
        Ok(Reply::Err(e)) => assert_eq!(e.code, 1153),
        Err(_) => {} // closed before the error could be read
        Ok(other) => panic!("{other:?}"),
    }
    // A cut command (COM_PROCESS_KILL without its id) on a third.
    let mut cut = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    let _ = cut.command(&Command::Unknown(0x0C));
    // The first connection is unharmed.
    ok(good.query("INSERT INTO t VALUES (1)").unwrap());
    assert_eq!(
        rows(good.query("SELECT a FROM t").unwrap()),
        vec![vec![Some("1".into())]]
    );
    h.shutdown().unwrap();
}

#[test]
fn kill_processlist_statistics_and_max_connections() {
    let (h, log, _dir) = start("");
    let mut a = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    let mut b = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    let mut admin = Client::connect(h.addr, "root", "", None).unwrap();
    ok(
        a.query("CREATE TABLE t (a INT PRIMARY KEY, v INT) ENGINE=InnoDB")
            .unwrap(),
    );
    ok(a.query("INSERT INTO t VALUES (1, 0), (2, 0)").unwrap());
    ok(a.query("BEGIN").unwrap());
    ok(a.query("UPDATE t SET v = 1 WHERE a = 1").unwrap());
    ok(b.query("BEGIN").unwrap());
    ok(b.query("UPDATE t SET v = 2 WHERE a = 2").unwrap());
    b.send_query("UPDATE t SET v = 3 WHERE a = 1").unwrap();
    until(&mut admin, LOCK_WAITS, "1");
    // SHOW PROCESSLIST: every connection, the blocked one with its
    // statement.
    let list = rows(admin.query("SHOW FULL PROCESSLIST").unwrap());
    let (aid, bid) = (a.greeting.connection_id, b.greeting.connection_id);
    let row_of = |id: u32| {
        list.iter()
            .find(|r| r[0].as_deref() == Some(id.to_string().as_str()))
            .cloned()
            .unwrap_or_else(|| panic!("no row for {id}: {list:?}"))
    };
    let rb = row_of(bid);
    assert_eq!(rb[1].as_deref(), Some("root"));
    assert_eq!(rb[3].as_deref(), Some("test"));
    assert_eq!(rb[4].as_deref(), Some("Query"));
    assert_eq!(rb[6].as_deref(), Some("Updating"));
    assert_eq!(rb[7].as_deref(), Some("UPDATE t SET v = 3 WHERE a = 1"));
    let ra = row_of(aid);
    assert_eq!((ra[4].as_deref(), ra[7].as_deref()), (Some("Sleep"), None));
    // KILL QUERY: b's statement ends with 1317, its transaction goes on.
    ok(admin.query(&format!("KILL QUERY {bid}")).unwrap());
    match b.finish().unwrap() {
        Reply::Err(e) => {
            assert_eq!(
                (e.code, e.message.as_str()),
                (1317, "Query execution was interrupted")
            )
        }
        r => panic!("{r:?}"),
    }
    assert_eq!(
        rows(b.query("SELECT v FROM t WHERE a = 2").unwrap()),
        vec![vec![Some("2".into())]],
        "b's own change is still there"
    );
    // KILL (the connection): b is closed, its transaction rolled back and
    // its locks released.
    ok(admin.query(&format!("KILL {bid}")).unwrap());
    // Its transaction is rolled back once its connection is closed: only
    // a's is left.
    until(&mut admin, TRXS, "1");
    assert!(
        b.query("SELECT 1").is_err(),
        "the killed connection is closed"
    );
    ok(a.query("UPDATE t SET v = 4 WHERE a = 2").unwrap());
    ok(a.query("COMMIT").unwrap());
    assert_eq!(
        rows(admin.query("SELECT a, v FROM test.t ORDER BY a").unwrap()),
        vec![
            vec![Some("1".into()), Some("1".into())],
            vec![Some("2".into()), Some("4".into())]
        ]
    );
    assert_eq!(error_code(admin.query("KILL 999").unwrap()), 1094);
    assert_eq!(
        error_code(admin.command(&Command::ProcessKill(998)).unwrap()),
        1094
    );
    // COM_FIELD_LIST: the table's columns, by pattern.
    let cols = admin.field_list("test.t", "").unwrap().unwrap();
    let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["a", "v"]);
    assert_eq!(cols[0].ty, engine::wire::reply::ty::LONG);
    let cols = admin.field_list("test.t", "v%").unwrap().unwrap();
    assert_eq!(cols.len(), 1);
    assert_eq!(
        admin.field_list("nosuch", "").unwrap().unwrap_err().code,
        1146
    );
    let stats = admin.statistics().unwrap();
    assert!(stats.starts_with("Uptime: "), "{stats}");
    assert!(stats.contains("  Questions: "), "{stats}");
    // max_connections is 6 here: a, admin and four more; the seventh is
    // refused with 1040.
    assert_eq!(
        rows(admin.query("SELECT @@max_connections").unwrap()),
        vec![vec![Some("6".into())]]
    );
    let more: Vec<Client> = (0..4)
        .map(|_| Client::connect(h.addr, "root", "", None).unwrap())
        .collect();
    match Client::connect(h.addr, "root", "", None) {
        Err(ClientError::Refused(e)) => {
            assert_eq!((e.code, e.message.as_str()), (1040, "Too many connections"))
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a seventh connection got in"),
    }
    drop(more);
    h.shutdown().unwrap();
    let log = log.lock().unwrap();
    assert!(
        log.iter().any(|l| l == &format!("connection {bid} killed")),
        "{log:?}"
    );
}

#[test]
fn a_unix_socket_serves_the_same_engine() {
    let (h, _log, dir) = start_with("", true);
    let sock = dir.path().join("innosim.sock");
    let mut u = Client::connect_unix(&sock, "root", "", Some("test")).unwrap();
    let mut t = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    ok(u.query("CREATE TABLE t (a INT PRIMARY KEY) ENGINE=InnoDB")
        .unwrap());
    ok(u.query("INSERT INTO t VALUES (1)").unwrap());
    assert_eq!(
        rows(t.query("SELECT a FROM t").unwrap()),
        vec![vec![Some("1".into())]]
    );
    h.shutdown().unwrap();
    assert!(!sock.exists(), "the socket file is removed at shutdown");
}

#[test]
fn prepared_statements_bind_parameters_and_answer_binary_rows() {
    let (h, _log, _dir) = start("");
    let mut c = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    ok(c.query(
        "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, k INT, c CHAR(20), d DATE, x DOUBLE) ENGINE=InnoDB",
    )
    .unwrap());
    let ins = c
        .prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
        .unwrap()
        .unwrap();
    assert_eq!((ins.params, ins.columns.len()), (5, 0));
    for (id, k, cc) in [(1, "10", "it's"), (2, "20", "a?b"), (3, "30", "x\\y")] {
        let idt = id.to_string();
        let o = ok(c
            .execute(
                &ins,
                &[
                    Some(idt.as_bytes()),
                    Some(k.as_bytes()),
                    Some(cc.as_bytes()),
                    Some(b"2020-01-02"),
                    Some(b"0.5"),
                ],
            )
            .unwrap());
        assert_eq!(o.affected, 1);
    }
    let o = ok(c
        .execute(&ins, &[Some(b"4"), None, None, None, None])
        .unwrap());
    assert_eq!(o.affected, 1);
    let sel = c
        .prepare("SELECT id, k, c, d, x, k + 1 AS k1 FROM t WHERE id BETWEEN ? AND ? ORDER BY id")
        .unwrap()
        .unwrap();
    assert_eq!(sel.params, 2);
    let names: Vec<&str> = sel.columns.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, vec!["id", "k", "c", "d", "x", "k1"]);
    assert_eq!(sel.columns[0].ty, engine::wire::reply::ty::LONG);
    assert_eq!(sel.columns[3].ty, engine::wire::reply::ty::DATE);
    let got = rows(c.execute(&sel, &[Some(b"1"), Some(b"4")]).unwrap());
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        got,
        vec![
            vec![
                s("1"),
                s("10"),
                s("it's"),
                s("2020-01-02"),
                s("0.5"),
                s("11")
            ],
            vec![
                s("2"),
                s("20"),
                s("a?b"),
                s("2020-01-02"),
                s("0.5"),
                s("21")
            ],
            vec![
                s("3"),
                s("30"),
                s("x\\y"),
                s("2020-01-02"),
                s("0.5"),
                s("31")
            ],
            vec![s("4"), None, None, None, None, None],
        ]
    );
    // A `?` in a string or a comment is no parameter.
    let q = c
        .prepare("SELECT c FROM t WHERE c = 'a?b' /* ? */ AND id = ?")
        .unwrap()
        .unwrap();
    assert_eq!(q.params, 1);
    assert_eq!(
        rows(c.execute(&q, &[Some(b"2")]).unwrap()),
        vec![vec![s("a?b")]]
    );
    // A parameter's bytes that are not UTF-8 are refused, not replaced.
    assert_eq!(
        error_code(c.execute(&q, &[Some(&[0xFF, 0xFE][..])]).unwrap()),
        1300
    );
    // Errors at prepare and at execute; an unknown statement.
    assert_eq!(
        c.prepare("SELECT * FROM nosuch WHERE a = ?")
            .unwrap()
            .unwrap_err()
            .code,
        1146
    );
    assert_eq!(c.prepare("SELEKT ?").unwrap().unwrap_err().code, 1064);
    assert_eq!(
        error_code(
            c.execute(&ins, &[Some(b"1"), None, None, None, None])
                .unwrap()
        ),
        1062
    );
    c.close_statement(&sel).unwrap();
    assert_eq!(
        error_code(c.execute(&sel, &[Some(b"1"), Some(b"2")]).unwrap()),
        1243
    );
    // The connection is still in step after all of it.
    assert_eq!(
        rows(c.query("SELECT COUNT(*) FROM t").unwrap()),
        vec![vec![s("4")]]
    );
    h.shutdown().unwrap();
}

fn ids(c: &mut Client) -> Vec<u64> {
    rows(c.query("SELECT id FROM t ORDER BY id").unwrap())
        .into_iter()
        .map(|r| r[0].as_deref().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn power_loss_on_command_drops_every_connection_and_recovery_keeps_each_acknowledged_commit() {
    let host = serve::SimHost::new(sim::script::script_config(), 5, &[]);
    let (h, log) = serve_on(Box::new(host), "", None, None, 6);
    let mut c = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    ok(
        c.query("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB")
            .unwrap(),
    );
    for i in 0..20 {
        ok(c.query(&format!("INSERT INTO t VALUES ({i}, 'v{i}')"))
            .unwrap());
    }
    // An open transaction's change dies with the power.
    let mut open = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    ok(open.query("BEGIN").unwrap());
    ok(open.query("INSERT INTO t VALUES (100, 'never')").unwrap());
    // A kind the server does not know is refused and changes nothing.
    assert_eq!(
        error_code(c.query("SET GLOBAL innosim_crash = 'meteor'").unwrap()),
        1231
    );
    // Now: no answer, every connection closed.
    assert!(c.query("SET GLOBAL innosim_crash = 'power-loss'").is_err());
    assert!(open.query("COMMIT").is_err());
    let mut c = reconnect(&h);
    assert_eq!(ids(&mut c), (0..20).collect::<Vec<_>>());
    // Later: after some I/O, in the middle of a stream of commits. Every
    // commit acknowledged before the connection dropped is kept (flush 1).
    ok(
        c.query("SET GLOBAL innosim_crash = 'power-loss-all' AFTER 30")
            .unwrap(),
    );
    let mut acked = (0..20).collect::<Vec<u64>>();
    for i in 200..2_000 {
        match c.query(&format!("INSERT INTO t VALUES ({i}, 'w')")) {
            Ok(r) => {
                ok(r);
                acked.push(i);
            }
            Err(_) => break,
        }
    }
    assert!(*acked.last().unwrap() < 1_999, "the crash never struck");
    let mut c = reconnect(&h);
    let found = ids(&mut c);
    let lost: Vec<_> = acked.iter().filter(|i| !found.contains(i)).collect();
    assert!(lost.is_empty(), "acknowledged commits lost: {lost:?}");
    // At most the one insert whose answer the crash cut off is there too.
    assert!(found.len() <= acked.len() + 1, "{found:?}");
    // The connection ids go on (none names two connections).
    let r = rows(c.query("SELECT CONNECTION_ID()").unwrap());
    let id: u32 = r[0][0].as_deref().unwrap().parse().unwrap();
    assert!(id > 3, "connection id {id} reused after a restart");
    h.shutdown().unwrap();
    let log = log.lock().unwrap();
    assert_eq!(
        log.iter().filter(|l| l.starts_with("recovered")).count(),
        2,
        "{log:?}"
    );
    assert!(log.iter().any(|l| l == "engine closed cleanly"), "{log:?}");
}

#[test]
fn shutdown_closes_the_engine_cleanly_and_real_files_refuse_a_crash_on_command() {
    let (h, log, _dir) = start("");
    let mut c = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    assert_eq!(
        error_code(c.query("SET GLOBAL innosim_crash = 'power-loss'").unwrap()),
        1231
    );
    ok(c.query("SHUTDOWN").unwrap());
    h.wait().unwrap();
    let log = log.lock().unwrap();
    assert!(log.iter().any(|l| l == "engine closed cleanly"), "{log:?}");
    // COM_SHUTDOWN does the same.
    let (h, log, _dir) = start("");
    let mut c = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    ok(c.command(&Command::Shutdown).unwrap());
    h.wait().unwrap();
    assert!(log
        .lock()
        .unwrap()
        .iter()
        .any(|l| l == "engine closed cleanly"));
}
