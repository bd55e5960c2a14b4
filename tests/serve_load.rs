//! 64 connections for 30 s against `innosim serve` (the real binary, a
//! child process, on real files): transactions that conflict on a small
//! table, so that lock waits, timeouts and deadlocks happen all the time.
//! No error but 1205 and 1213; and the server's peak resident memory stays
//! within its buffer pool plus a fixed cost per connection.

use engine::wire::reply::Reply;
use rand::{Rng, SeedableRng};
use sim::client::Client;
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 64;
/// The buffer pool the server is given.
const POOL_BYTES: u64 = 32 << 20;
/// What a connection may cost beyond the pool: its thread's stack as far
/// as it is touched, its 16 KiB read buffer and packet reader, its
/// session's state in the engine (a few KiB), and room for the
/// allocator's arenas: 1 MiB. (Measured at well under that: the test
/// prints the figure.)
const PER_CONNECTION: u64 = 1 << 20;

/// A resident-memory figure of a process, in bytes (`VmRSS`, `VmHWM`).
fn memory(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map(|kb| kb * 1024)
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

fn connect(port: u16) -> Client {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match Client::connect(("127.0.0.1", port), "root", "", Some("test")) {
            Ok(c) => return c,
            Err(e) if Instant::now() > deadline => panic!("cannot connect: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

#[test]
fn sixty_four_connections_for_thirty_seconds_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_innosim"))
        .args(["serve", "--dir"])
        .arg(dir.path().join("data"))
        .args(["--port", &port.to_string()])
        .args(["--innodb-buffer-pool-size", &POOL_BYTES.to_string()])
        .args(["--innodb-lock-wait-timeout", "1"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = server.id();
    let mut setup = connect(port);
    let ok = |r: Reply| assert!(matches!(r, Reply::Ok(_)), "{r:?}");
    ok(setup
        .query(
            "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, pad VARCHAR(100)) ENGINE=InnoDB",
        )
        .unwrap());
    for i in 0..200 {
        ok(setup
            .query(&format!("INSERT INTO t VALUES ({i}, 0, REPEAT('x', 100))"))
            .unwrap());
    }
    let idle = memory(pid, "VmRSS:");
    let until = Instant::now() + Duration::from_secs(30);
    let workers: Vec<_> = (0..CONNECTIONS)
        .map(|w| {
            std::thread::spawn(move || {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(w as u64);
                let mut c = connect(port);
                let (mut commits, mut timeouts, mut deadlocks) = (0u64, 0u64, 0u64);
                while Instant::now() < until {
                    let a = rng.gen_range(0..200);
                    let b = rng.gen_range(0..200);
                    let mut failed = None;
                    for sql in [
                        "BEGIN".to_string(),
                        format!("UPDATE t SET v = v + 1 WHERE id = {a}"),
                        format!("SELECT v FROM t WHERE id BETWEEN {b} AND {b} + 5"),
                        format!("UPDATE t SET v = v - 1 WHERE id = {b}"),
                        "COMMIT".to_string(),
                    ] {
                        if let Reply::Err(e) = c.query(&sql).unwrap() {
                            failed = Some(e.code);
                            break;
                        }
                    }
                    match failed {
                        None => commits += 1,
                        Some(1205) => {
                            timeouts += 1;
                            assert!(matches!(c.query("ROLLBACK").unwrap(), Reply::Ok(_)));
                        }
                        Some(1213) => deadlocks += 1,
                        Some(code) => panic!("connection {w}: error {code}"),
                    }
                }
                c.quit().unwrap();
                (commits, timeouts, deadlocks)
            })
        })
        .collect();
    let mut totals = (0, 0, 0);
    for w in workers {
        let (c, t, d) = w.join().unwrap();
        totals = (totals.0 + c, totals.1 + t, totals.2 + d);
    }
    let peak = memory(pid, "VmHWM:");
    // The table's values add up to zero: each commit added one and took one.
    let sum = match setup.query("SELECT SUM(v) FROM t").unwrap() {
        Reply::Rows { rows, .. } => String::from_utf8(rows[0][0].clone().unwrap()).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(sum, "0");
    let _ = setup.query("SHUTDOWN");
    assert!(server.wait().unwrap().success());
    println!(
        "{} commits, {} lock wait timeouts, {} deadlocks; resident memory idle {} KiB, peak {} KiB \
         ({} KiB a connection above idle)",
        totals.0,
        totals.1,
        totals.2,
        idle >> 10,
        peak >> 10,
        (peak.saturating_sub(idle) / CONNECTIONS as u64) >> 10
    );
    assert!(totals.0 > 0, "no transaction committed");
    let bound = idle + POOL_BYTES + CONNECTIONS as u64 * PER_CONNECTION;
    assert!(
        peak <= bound,
        "peak resident memory {peak} above idle {idle} + pool {POOL_BYTES} + {CONNECTIONS} x {PER_CONNECTION}"
    );
}
