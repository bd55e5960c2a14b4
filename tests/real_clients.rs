//! `innosim serve` under the clients people really use: the `mariadb`
//! command-line client, PyMySQL and sysbench, installed by
//! `tests/tools/setup-clients.sh` (part of the README's test command). A
//! missing client fails the test with that instruction; it never skips.

use sim::serve::{self, Account, Handle};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

fn start() -> (Handle, Arc<Mutex<Vec<String>>>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let host = serve::DirHost::new(&dir.path().join("data"), sim::script::script_config()).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l = lines.clone();
    let log: serve::Logger = Arc::new(move |s| l.lock().unwrap().push(s));
    let mut settings = serve::Settings::new(Account::new("root", ""));
    settings.scramble_seed = 3;
    let (h, _) = serve::start(Box::new(host), listener, settings, log).unwrap();
    (h, lines, dir)
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
