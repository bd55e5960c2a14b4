//! `innosim serve` under the clients people really use: the `mariadb`
//! command-line client, PyMySQL and sysbench, installed by
//! `tests/tools/setup-clients.sh` (part of the README's test command). A
//! missing client fails the test with that instruction; it never skips.

mod common;

use common::serve::{bad_packets, one, reconnect, serve_on, Log};
use sim::client::Client;
use sim::serve::{self, Handle};
use std::process::{Command, Output};

fn start() -> (Handle, Log, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let host = serve::DirHost::new(&dir.path().join("data"), sim::script::script_config()).unwrap();
    let (h, log) = serve_on(Box::new(host), "", None, None, 151);
    (h, log, dir)
}

/// Runs a client, which must be installed.
fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {program} ({e}): run tests/tools/setup-clients.sh first")
        })
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn mariadb(h: &Handle, sql: &str) -> Output {
    let port = h.addr.port().to_string();
    run(
        "mariadb",
        &[
            "--protocol=TCP",
            "-h127.0.0.1",
            "-P",
            &port,
            "-uroot",
            "test",
            "-e",
            sql,
        ],
    )
}

#[test]
fn the_mariadb_client_runs_statements_prints_rows_vertically_and_reports_errors() {
    let (h, _log, _dir) = start();
    let o = mariadb(
        &h,
        "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10)) ENGINE=InnoDB; \
         INSERT INTO t VALUES (1, 'one'), (2, NULL); SELECT a, b FROM t ORDER BY a",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "a\tb\n1\tone\n2\tNULL\n");
    // \G: each row vertically.
    let o = mariadb(&h, "SELECT a, b FROM t WHERE a = 1\\G");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "*************************** 1. row ***************************\na: 1\nb: one\n"
    );
    // SHOW TABLE STATUS, as the client prints it.
    let o = mariadb(&h, "SHOW TABLE STATUS LIKE 't'\\G");
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for line in [
        "Name: t",
        "Engine: InnoDB",
        "Row_format: Compact",
        "Rows: 2",
    ] {
        assert!(
            out.lines().any(|l| l.trim() == line),
            "{line} not in\n{out}"
        );
    }
    // A failing statement: MySQL's error line and exit status 1; the
    // statements before it ran.
    let o = mariadb(&h, "INSERT INTO t VALUES (3, 'x'); SELECT * FROM nope");
    assert_eq!(o.status.code(), Some(1));
    // (The client echoes the failing statement between dashes first.)
    let err = text(&o.stderr);
    assert!(
        err.ends_with("\nERROR 1146 (42S02) at line 1: Table 'test.nope' doesn't exist\n"),
        "{err}"
    );
    let o = mariadb(&h, "INSERT INTO t VALUES (3, 'again')");
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.ends_with("\nERROR 1062 (23000) at line 1: Duplicate entry '3' for key 'PRIMARY'\n"),
        "{err}"
    );
    h.shutdown().unwrap();
}

#[test]
fn pymysql_binds_parameters_and_raises_1205_and_1213() {
    let (h, _log, _dir) = start();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/tools/pymysql_session.py"
    );
    let o = run("python3", &[script, &h.addr.port().to_string()]);
    let out = text(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}\n(run tests/tools/setup-clients.sh if PyMySQL is missing)",
        text(&o.stderr)
    );
    for check in [
        "ok a parameter with a quote",
        "ok autocommit off: rollback and commit",
        "ok 1205 as OperationalError",
        "ok 1213 as OperationalError, one victim",
        "all ok",
    ] {
        assert!(out.lines().any(|l| l == check), "{check} not in\n{out}");
    }
    h.shutdown().unwrap();
}

/// `transactions:` and `ignored errors:` of a sysbench run's report.
fn sysbench_counts(out: &str) -> (u64, u64) {
    let count = |key: &str| {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no '{key}' in\n{out}"))
    };
    (count("transactions:"), count("ignored errors:"))
}

#[test]
fn sysbench_oltp_read_write_prepares_runs_and_cleans_up_with_and_without_prepared_statements() {
    let (h, _log, _dir) = start();
    let port = format!("--mysql-port={}", h.addr.port());
    let base = [
        "oltp_read_write",
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        &port,
        "--mysql-user=root",
        "--mysql-password=",
        "--mysql-db=test",
        "--tables=1",
        "--table-size=1000",
    ];
    let sysbench = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let o = run("sysbench", &args);
        let out = text(&o.stdout) + &text(&o.stderr);
        assert!(o.status.success(), "sysbench {extra:?}:\n{out}");
        assert!(!out.contains("FATAL"), "sysbench {extra:?}:\n{out}");
        out
    };
    sysbench(&["prepare"]);
    for ps in ["--db-ps-mode=auto", "--db-ps-mode=disable"] {
        for threads in ["--threads=4", "--threads=16"] {
            let out = sysbench(&[threads, ps, "--time=4", "run"]);
            let (transactions, ignored) = sysbench_counts(&out);
            assert!(transactions > 0, "{threads} {ps}:\n{out}");
            // The errors sysbench ignores are the deadlocks (and lock
            // wait timeouts) it retries: never more than the attempts.
            assert!(ignored <= transactions * 20, "{threads} {ps}:\n{out}");
        }
    }
    sysbench(&["cleanup"]);
    let o = mariadb(&h, "SHOW TABLES");
    assert_eq!(text(&o.stdout), "", "cleanup left tables");
    h.shutdown().unwrap();
}

/// The cells of every table row the client printed (`| a | b |` lines,
/// the header included).
fn table_rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn has_row(rows: &[Vec<String>], want: &[&str]) -> bool {
    rows.iter()
        .any(|r| r.len() >= want.len() && r.iter().zip(want).all(|(a, b)| a == b))
}

/// Statements typed into the client in batch mode, echoed with their
/// results as the interactive client prints them (`-vvv`), going on past
/// errors.
fn typed(h: &Handle, statements: &str) -> (String, String) {
    use std::io::Write;
    let port = h.addr.port().to_string();
    let mut child = Command::new("mariadb")
        .args([
            "--protocol=TCP",
            "-h127.0.0.1",
            "-P",
            &port,
            "-uroot",
            "test",
        ])
        .args(["-vvv", "--force"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mariadb: run tests/tools/setup-clients.sh first");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(statements.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    (text(&o.stdout), text(&o.stderr))
}

#[test]
fn the_seeds_mysql_transcripts_typed_into_the_client_give_the_seeds_rows_warnings_and_errors() {
    let (h, _log, _dir) = start();
    // seeds/000: file formats and strict mode, with the server's
    // innodb_file_per_table on as in the article.
    let (out, err) = typed(
        &h,
        "set global innodb_file_per_table=1;\n\
         set global innodb_file_format='antelope';\n\
         create table t3(c1 int) engine=InnoDB ROW_FORMAT=Dynamic;\n\
         show warnings;\n\
         set session innodb_strict_mode=on;\n\
         create table test(c1 int primary key) engine=InnoDB ROW_FORMAT=Compressed KEY_BLOCK_SIZE=8;\n\
         set session innodb_strict_mode=off;\n\
         create table test(c1 int primary key) engine=InnoDB ROW_FORMAT=Compressed KEY_BLOCK_SIZE=8;\n\
         show warnings;\n\
         set global innodb_file_format='Barracuda';\n\
         create table testformat(c1 int primary key, c2 varchar(20))engine=InnoDB ROW_FORMAT=Compressed;\n\
         insert into testformat values(10,'venu'),(20,'anuganti'),(30,'innodb'),(40,'yahoo'),(50,'mysql');\n\
         show create table testformat;\n\
         show table status like 'testformat';\n",
    );
    assert!(
        out.contains("Query OK, 0 rows affected, 2 warnings"),
        "{out}"
    );
    let rows = table_rows(&out);
    for w in [
        "InnoDB: ROW_FORMAT=DYNAMIC requires innodb_file_format > Antelope.",
        "InnoDB: assuming ROW_FORMAT=COMPACT.",
        "InnoDB: KEY_BLOCK_SIZE requires innodb_file_format > Antelope.",
        "InnoDB: ignoring KEY_BLOCK_SIZE=8.",
        "InnoDB: ROW_FORMAT=COMPRESSED requires innodb_file_format > Antelope.",
    ] {
        assert!(has_row(&rows, &["Warning", "1478", w]), "{w} not in\n{out}");
    }
    assert!(
        err.contains("ERROR 1005 (HY000) at line 6: Can't create table 'test.test' (errno: 1478)"),
        "{err}"
    );
    assert!(
        out.contains("Query OK, 0 rows affected, 4 warnings"),
        "{out}"
    );
    assert!(out.contains("Query OK, 5 rows affected"), "{out}");
    assert!(
        out.contains("Records: 5  Duplicates: 0  Warnings: 0"),
        "{out}"
    );
    assert!(out.contains("ROW_FORMAT=COMPRESSED"), "{out}");
    // The seed's status row, to the Auto_increment column.
    assert!(
        has_row(
            &rows,
            &[
                "testformat",
                "InnoDB",
                "10",
                "Compressed",
                "5",
                "3276",
                "16384",
                "0",
                "0",
                "0",
                "NULL"
            ]
        ),
        "{out}"
    );
    // seeds/002: sysbench 0.4's table described, then fast index creation
    // and dropping, each "0 rows affected" with its Records line.
    let (out, err) = typed(
        &h,
        "CREATE TABLE sbtest (id int(10) unsigned NOT NULL auto_increment, \
         k int(10) unsigned NOT NULL default '0', c char(120) NOT NULL default '', \
         pad char(60) NOT NULL default '', PRIMARY KEY (id), KEY k (k)) ENGINE=InnoDB;\n\
         insert into sbtest (k, c, pad) values (0, '', 'qqqq'), (0, '', 'wwww');\n\
         desc sbtest;\n\
         alter table sbtest add index (c , pad);\n\
         alter table sbtest drop index c;\n\
         alter table sbtest add index (k);\n\
         alter table sbtest drop index k;\n",
    );
    assert_eq!(err, "", "{out}");
    let rows = table_rows(&out);
    for want in [
        &["Field", "Type", "Null", "Key", "Default", "Extra"][..],
        &[
            "id",
            "int(10) unsigned",
            "NO",
            "PRI",
            "NULL",
            "auto_increment",
        ],
        &["k", "int(10) unsigned", "NO", "MUL", "0", ""],
        &["c", "char(120)", "NO", "", "", ""],
        &["pad", "char(60)", "NO", "", "", ""],
    ] {
        assert!(has_row(&rows, want), "{want:?} not in\n{out}");
    }
    assert_eq!(
        out.matches("Query OK, 0 rows affected").count(),
        5,
        "the CREATE and four ALTERs:\n{out}"
    );
    assert_eq!(
        out.matches("Records: 0  Duplicates: 0  Warnings: 0")
            .count(),
        4,
        "{out}"
    );
    h.shutdown().unwrap();
}

#[test]
fn two_clients_reproduce_the_seeds_lock_wait_through_the_innodb_tables_and_get_1205() {
    use std::io::Write;
    let (h, _log, _dir) = start();
    let o = mariadb(
        &h,
        "set global innodb_file_format='Barracuda'; set global innodb_file_per_table=1; \
         create table testformat(c1 int primary key, c2 varchar(20)) engine=InnoDB ROW_FORMAT=Compressed; \
         insert into testformat values(10,'venu'),(20,'anuganti'),(30,'innodb')",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let port = h.addr.port().to_string();
    let client = |extra: &[&str]| {
        let mut c = Command::new("mariadb");
        c.args([
            "--protocol=TCP",
            "-h127.0.0.1",
            "-P",
            &port,
            "-uroot",
            "test",
        ])
        .args(extra)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
        c
    };
    // One session selects the row for update and stays in its transaction
    // (its client prints the row once it has it).
    let mut holder = client(&["--unbuffered"]).spawn().unwrap();
    let mut holder_in = holder.stdin.take().unwrap();
    holder_in
        .write_all(b"begin;\nselect * from testformat where c1=20 for update;\n")
        .unwrap();
    holder_in.flush().unwrap();
    let mut holder_out = std::io::BufReader::new(holder.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("anuganti") {
        line.clear();
        let n = std::io::BufRead::read_line(&mut holder_out, &mut line).unwrap();
        assert!(n > 0, "the holder's client ended");
    }
    let mut watch = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    let one = |c: &mut Client, sql: &str| match c.query(sql).unwrap() {
        engine::wire::reply::Reply::Rows { rows, .. } => {
            String::from_utf8(rows[0][0].clone().unwrap()).unwrap()
        }
        other => panic!("{other:?}"),
    };
    // The other updates it and waits, until the timeout.
    let waiter = client(&[
        "-e",
        "set session innodb_lock_wait_timeout=2; update testformat set c2='updated' where c1=20",
    ])
    .spawn()
    .unwrap();
    while one(
        &mut watch,
        "select count(*) from information_schema.innodb_lock_waits",
    ) != "1"
    {
        std::thread::yield_now();
    }
    let o = mariadb(
        &h,
        "select * from information_schema.innodb_lock_waits; \
         select * from information_schema.innodb_trx; \
         select * from information_schema.innodb_locks",
    );
    let out = text(&o.stdout);
    let sections: Vec<Vec<Vec<&str>>> = out
        .split("requesting_trx_id")
        .nth(1)
        .map(|rest| {
            rest.split("\ntrx_id")
                .flat_map(|s| s.split("\nlock_id"))
                .map(|s| s.lines().skip(1).map(|l| l.split('\t').collect()).collect())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(sections.len(), 3, "{out}");
    let (waits, trx, locks) = (&sections[0], &sections[1], &sections[2]);
    // innodb_lock_waits: the waiter's lock on the holder's.
    assert_eq!(waits.len(), 1, "{out}");
    let (req_trx, req_lock, blk_trx, blk_lock) =
        (waits[0][0], waits[0][1], waits[0][2], waits[0][3]);
    assert!(req_lock.starts_with(&format!("{req_trx}:")), "{out}");
    assert!(blk_lock.starts_with(&format!("{blk_trx}:")), "{out}");
    // The same record: trx:space:page:heap with the same last three.
    assert_eq!(
        req_lock.split_once(':').unwrap().1,
        blk_lock.split_once(':').unwrap().1
    );
    // innodb_trx: the waiter in LOCK WAIT with its query, the holder
    // RUNNING and idle.
    let waiting = trx.iter().find(|r| r[0] == req_trx).expect("the waiter");
    assert_eq!(waiting[1], "LOCK WAIT", "{out}");
    assert_eq!(waiting[3], req_lock, "{out}");
    assert!(
        waiting.contains(&"update testformat set c2='updated' where c1=20"),
        "{out}"
    );
    let running = trx.iter().find(|r| r[0] == blk_trx).expect("the holder");
    assert_eq!(running[1], "RUNNING", "{out}");
    assert_eq!(running[3], "NULL", "{out}");
    // innodb_locks: both X record locks on PRIMARY of test.testformat, on
    // the row whose key is 20.
    assert_eq!(locks.len(), 2, "{out}");
    for l in locks {
        assert_eq!(
            &l[2..6],
            &["X", "RECORD", "`test`.`testformat`", "`PRIMARY`"],
            "{out}"
        );
        assert_eq!(l[9], "20", "{out}");
    }
    // After the timeout: the seed's 1205, and the holder still holds.
    let o = waiter.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).ends_with(
            "ERROR 1205 (HY000) at line 1: Lock wait timeout exceeded; try restarting transaction\n"
        ),
        "{}",
        text(&o.stderr)
    );
    holder_in.write_all(b"rollback;\n").unwrap();
    drop(holder_in);
    let o = holder.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    h.shutdown().unwrap();
}

#[test]
fn a_power_loss_in_the_middle_of_sysbench_keeps_every_commit_it_saw_acknowledged() {
    let host = serve::SimHost::new(sim::script::script_config(), 12, &[]);
    let (h, _log) = serve_on(Box::new(host), "", None, None, 151);
    let port = format!("--mysql-port={}", h.addr.port());
    let base = [
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        &port,
        "--mysql-user=root",
        "--mysql-password=",
        "--mysql-db=test",
    ];
    let o = run(
        "sysbench",
        &[
            &base[..],
            &[
                "oltp_read_write",
                "--tables=1",
                "--table-size=1000",
                "prepare",
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = mariadb(
        &h,
        "CREATE TABLE side (thread INT NOT NULL, n INT NOT NULL, PRIMARY KEY (thread, n)) ENGINE=InnoDB",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Each transaction updates sbtest1 and adds row (thread, n) to the side
    // table; each thread counts the commits acknowledged to it.
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/tools/sysbench_acked.lua"
    );
    let load = Command::new("sysbench")
        .args([script])
        .args(base)
        .args(["--threads=4", "--time=60", "run"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sysbench: run tests/tools/setup-clients.sh first");
    let mut watch = Client::connect(h.addr, "root", "", Some("test")).unwrap();
    let count = |c: &mut Client| match c.query("SELECT COUNT(*) FROM side").unwrap() {
        engine::wire::reply::Reply::Rows { rows, .. } => {
            String::from_utf8(rows[0][0].clone().unwrap())
                .unwrap()
                .parse::<u64>()
                .unwrap()
        }
        other => panic!("{other:?}"),
    };
    while count(&mut watch) < 400 {
        std::thread::yield_now();
    }
    // The plug, in the middle of the run.
    assert!(watch
        .query("SET GLOBAL innosim_crash = 'power-loss'")
        .is_err());
    let o = load.wait_with_output().unwrap();
    let err = text(&o.stderr);
    let acked: Vec<(u32, u64)> = err
        .lines()
        .filter_map(|l| {
            let mut w = l.strip_prefix("acked ")?.split(' ');
            Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
        })
        .collect();
    assert_eq!(acked.len(), 4, "one count a thread:\n{err}");
    let out = text(&o.stdout);
    assert!(
        out.contains("errno = 2013"),
        "the run ended by the crash:\n{out}"
    );
    // After recovery: every thread's acknowledged rows, and at most the one
    // it had in flight.
    let mut c = (0..1_000)
        .find_map(|_| Client::connect(h.addr, "root", "", Some("test")).ok())
        .expect("the server came back");
    for (thread, n) in &acked {
        let q = format!("SELECT COUNT(*), COALESCE(MAX(n), 0) FROM side WHERE thread = {thread}");
        let r = match c.query(&q).unwrap() {
            engine::wire::reply::Reply::Rows { rows, .. } => rows[0].clone(),
            other => panic!("{other:?}"),
        };
        let num = |v: &Option<Vec<u8>>| -> u64 { text(v.as_ref().unwrap()).parse().unwrap() };
        let (rows, max) = (num(&r[0]), num(&r[1]));
        assert!(
            rows == max && (rows == *n || rows == n + 1),
            "thread {thread}: {n} acknowledged, {rows} rows up to {max}"
        );
    }
    for t in ["side", "sbtest1"] {
        match c.query(&format!("CHECK TABLE {t}")).unwrap() {
            engine::wire::reply::Reply::Rows { rows, .. } => {
                assert_eq!(rows[0][3].as_deref(), Some(&b"OK"[..]), "{t}")
            }
            other => panic!("{other:?}"),
        }
    }
    h.shutdown().unwrap();
}

#[test]
fn a_recorded_sysbench_run_replays_exactly_and_its_packets_mutated_harm_no_other_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sysbench.jsonl");
    let host = serve::SimHost::new(sim::script::script_config(), 21, &[]);
    let (h, _log) = serve_on(Box::new(host), "", None, Some(path.clone()), 151);
    let port = format!("--mysql-port={}", h.addr.port());
    let args = |extra: &[&'static str]| -> Vec<String> {
        [
            "oltp_read_write",
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            &port,
            "--mysql-user=root",
            "--mysql-password=",
            "--mysql-db=test",
            "--tables=1",
            "--table-size=500",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain(extra.iter().map(|a| a.to_string()))
        .collect()
    };
    for extra in [&["prepare"][..], &["--threads=4", "--time=2", "run"]] {
        let a = args(extra);
        let o = run(
            "sysbench",
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    }
    let mut c = reconnect(&h);
    assert!(matches!(
        c.query("SHUTDOWN").unwrap(),
        engine::wire::reply::Reply::Ok(_)
    ));
    h.wait().unwrap();
    // The run again on the simulated disk: every answer the same.
    let quiet: serve::Logger = std::sync::Arc::new(|_| {});
    let r = serve::record::replay(&path, quiet).unwrap();
    assert_eq!(r.mismatch, None);
    assert!(r.answers > 1_000, "{r:?}");
    // Its packets, mutated, to a live server.
    let packets = serve::record::packets(&path).unwrap();
    let data = dir.path().join("data");
    let host = serve::DirHost::new(&data, sim::script::script_config()).unwrap();
    let (h, log) = serve_on(Box::new(host), "", None, None, 151);
    let mut witness = reconnect(&h);
    let o = mariadb(
        &h,
        "CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, \
         c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) ENGINE=InnoDB; \
         INSERT INTO sbtest1 (id) VALUES (1), (2), (3)",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let check = "SELECT COUNT(*) FROM sbtest1 WHERE id = 2";
    let answered = bad_packets(&h, &packets, 200, 5, &mut witness, check, "1");
    assert!(answered > 0);
    assert_eq!(one(&mut witness, "SELECT 1"), "1");
    h.shutdown().unwrap();
    assert!(log
        .lock()
        .unwrap()
        .iter()
        .any(|l| l == "engine closed cleanly"));
}
