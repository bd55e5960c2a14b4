//! `innosim serve --record` and `innosim replay-served`: a served run with
//! lock waits, a deadlock, prepared statements and a power loss on
//! command, replayed on the simulated disk with every answer the same; and
//! its command packets sent again, mutated, to a live server, which
//! answers or closes each connection and goes on serving the others.

mod common;

use common::serve::{bad_packets, one, reconnect, serve_on};
use engine::wire::reply::Reply;
use sim::serve::{self, record};
use std::sync::Arc;

fn ok(r: Reply) {
    assert!(matches!(r, Reply::Ok(_)), "{r:?}");
}

fn code(r: Reply) -> u16 {
    match r {
        Reply::Err(e) => e.code,
        other => panic!("not an error: {other:?}"),
    }
}

/// A session on the simulated disk with everything a replay must repeat.
fn recorded_session(path: &std::path::Path) {
    let host = serve::SimHost::new(sim::script::script_config(), 4, &[]);
    let (h, _log) = serve_on(Box::new(host), "", None, Some(path.to_path_buf()), 151);
    let mut a = reconnect(&h);
    ok(
        a.query("CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY (v)) ENGINE=InnoDB")
            .unwrap(),
    );
    for i in 0..50 {
        ok(a.query(&format!("INSERT INTO t VALUES ({i}, {})", i % 7))
            .unwrap());
    }
    // Prepared statements.
    let st = a
        .prepare("SELECT id, v FROM t WHERE id BETWEEN ? AND ?")
        .unwrap()
        .unwrap();
    let r = a.execute(&st, &[Some(&b"3"[..]), Some(&b"9"[..])]).unwrap();
    assert!(
        matches!(&r, Reply::Rows { rows, .. } if rows.len() == 7),
        "{r:?}"
    );
    // A lock wait that times out (1205), in real time.
    let mut b = reconnect(&h);
    ok(a.query("BEGIN").unwrap());
    ok(a.query("UPDATE t SET v = 100 WHERE id = 1").unwrap());
    ok(b.query("SET innodb_lock_wait_timeout = 1").unwrap());
    assert_eq!(
        code(b.query("UPDATE t SET v = 200 WHERE id = 1").unwrap()),
        1205
    );
    // A deadlock: b waits for a, a asks for b's row.
    ok(b.query("BEGIN").unwrap());
    ok(b.query("UPDATE t SET v = 300 WHERE id = 2").unwrap());
    b.send_query("UPDATE t SET v = 301 WHERE id = 1").unwrap();
    let mut watch = reconnect(&h);
    while one(
        &mut watch,
        "SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS",
    ) != "1"
    {
        std::thread::yield_now();
    }
    let ra = a.query("UPDATE t SET v = 101 WHERE id = 2").unwrap();
    let rb = b.finish().unwrap();
    let codes: Vec<u16> = [ra, rb]
        .into_iter()
        .filter_map(|r| match r {
            Reply::Err(e) => Some(e.code),
            _ => None,
        })
        .collect();
    assert_eq!(codes, vec![1213]);
    let _ = a.query("COMMIT");
    let _ = b.query("COMMIT");
    // A power loss in the middle of more commits.
    ok(watch
        .query("SET GLOBAL innosim_crash = 'power-loss' AFTER 25")
        .unwrap());
    for i in 100..1_000 {
        if a.query(&format!("INSERT INTO t VALUES ({i}, 0)")).is_err() {
            break;
        }
    }
    let mut c = reconnect(&h);
    let n: u64 = one(&mut c, "SELECT COUNT(*) FROM t").parse().unwrap();
    assert!(n >= 50, "{n}");
    ok(c.query("SHUTDOWN").unwrap());
    h.wait().unwrap();
}

#[test]
fn a_recorded_run_replays_with_every_answer_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    recorded_session(&path);
    let quiet: serve::Logger = Arc::new(|_| {});
    let r = record::replay(&path, quiet.clone()).unwrap();
    assert_eq!(r.mismatch, None);
    assert_eq!(r.restarts, 1, "the power loss happens again");
    assert!(r.answers > 60, "{r:?}");
    // An answer changed in the file is found.
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.find("\"out\":[\"").unwrap() + 8;
    let mut bad = text.clone();
    let flipped = if &text[at..at + 1] == "0" { "1" } else { "0" };
    bad.replace_range(at..at + 1, flipped);
    let bad_path = dir.path().join("bad.jsonl");
    std::fs::write(&bad_path, bad).unwrap();
    let r = record::replay(&bad_path, quiet).unwrap();
    assert!(r.mismatch.is_some(), "{r:?}");
}

#[test]
fn mutated_and_random_packets_end_only_their_own_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    recorded_session(&path);
    let packets = record::packets(&path).unwrap();
    assert!(packets.len() > 60, "{}", packets.len());
    let data = dir.path().join("data");
    let host = serve::DirHost::new(&data, sim::script::script_config()).unwrap();
    let (h, log) = serve_on(Box::new(host), "", None, None, 151);
    let mut witness = reconnect(&h);
    ok(witness
        .query("CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY (v)) ENGINE=InnoDB")
        .unwrap());
    ok(witness.query("INSERT INTO t VALUES (1, 1)").unwrap());
    let check = "SELECT COUNT(*) FROM t WHERE id = 1";
    let answered = bad_packets(&h, &packets, 300, 28, &mut witness, check, "1");
    assert!(answered > 0, "no packet was ever answered");
    h.shutdown().unwrap();
    let log = log.lock().unwrap();
    assert!(log.iter().any(|l| l == "engine closed cleanly"), "{log:?}");
    // And the files are sound.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_innosim"))
        .arg("check")
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
