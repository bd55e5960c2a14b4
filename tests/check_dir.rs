//! `innosim check DIR` on real files: a clean directory passes (exit 0),
//! compressed pages included; a flipped bit in a table's page is found
//! (exit 1, the file and page named); a directory without a database is
//! refused (exit 2).

use engine::sql::{Outcome, Reply, Server};
use std::process::Command;

fn run(sql: &str, dir: &std::path::Path) {
    let storage = engine::io::OsStorage::new(dir).unwrap();
    let (mut s, _) = Server::open(
        Box::new(storage),
        Box::new(engine::io::OsClock::new()),
        sim::script::script_config(),
    )
    .unwrap();
    let c = s.connect();
    for stmt in sql.split(';').filter(|x| !x.trim().is_empty()) {
        match s.execute(c, stmt) {
            Outcome::Done(Reply::Error(e)) => panic!("{stmt}: {e}"),
            Outcome::Done(_) => {}
            Outcome::Blocked => panic!("{stmt}: blocked"),
        }
    }
    s.close().unwrap();
}

fn check(dir: &std::path::Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_innosim"))
        .arg("check")
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn check_finds_a_flipped_bit_and_passes_a_clean_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = String::new();
    for i in 0..300 {
        rows.push_str(&format!("({i}, repeat('abc', {})),", i % 50));
    }
    rows.pop();
    run(
        &format!(
            "SET GLOBAL innodb_file_per_table = 1; SET GLOBAL innodb_file_format = 'Barracuda';
             CREATE TABLE z (a INT PRIMARY KEY, b VARCHAR(200)) ENGINE=InnoDB KEY_BLOCK_SIZE=2;
             INSERT INTO z VALUES {rows}"
        ),
        dir.path(),
    );
    let (code, out) = check(dir.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("test.z: OK"), "{out}");
    assert!(out.contains(", 0 problems"), "{out}");
    assert!(
        !out.contains(" 0 compressed pages"),
        "compressed pages were decompressed: {out}"
    );
    // One bit of the clustered index's root (page 3 of z.ibd, 2 KiB pages).
    let file = dir.path().join("test").join("z.ibd");
    let file = if file.exists() {
        file
    } else {
        dir.path().join("test%2Fz.ibd")
    };
    let file = if file.exists() {
        file
    } else {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with("z.ibd"))
            .expect("the table's file")
    };
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[3 * 2048 + 300] ^= 0x10;
    std::fs::write(&file, bytes).unwrap();
    let (code, out) = check(dir.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("page 3"), "{out}");
    let empty = tempfile::tempdir().unwrap();
    let (code, out) = check(empty.path());
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("holds no database"), "{out}");
}
