//! The SQL front end against random and mutated statements: every
//! statement ends with a typed MySQL error or a result, never a panic, a
//! halted engine or a damaged table; a statement that fails changes
//! nothing (checked on a table of known contents).

use engine::sql::{Outcome, Reply, Server};
use proptest::prelude::*;
use sim::clock::SimClock;
use sim::storage::SimStorage;

const SEEDS: &[&str] = &[
    "CREATE TABLE `sbtest` ( `id` int(10) unsigned NOT NULL auto_increment, `k` int(10) unsigned NOT NULL DEFAULT '0', `c` char(120) NOT NULL DEFAULT '', `pad` char(60) NOT NULL DEFAULT '', PRIMARY KEY (`id`), KEY `k` (`k`) ) ENGINE=InnoDB",
    "insert into sbtest values (1, 2, 'c', 'pad'), (2, 3, 'cc', 'pad2')",
    "insert into sbtest (k, c, pad) values (5, 'x', 'y')",
    "select c from sbtest where id between 1 and 10 order by c limit 5",
    "select distinct c from sbtest where id in (1,2,3)",
    "select count(*), sum(k), min(id), max(c), avg(k) from sbtest where k > 1",
    "update sbtest set k=k+1 where id=2",
    "delete from sbtest where id >= 5 and id < 10",
    "select * from sbtest where k = 3 for update",
    "select * from sbtest where id = 1 lock in share mode",
    "set global innodb_file_format='Barracuda'",
    "create table t2(c1 int primary key, c2 varchar(20)) engine=InnoDB ROW_FORMAT=Compressed KEY_BLOCK_SIZE=4",
    "show table status like 'sbtest'",
    "show create table sbtest",
    "show variables like '%format%'",
    "select * from information_schema.innodb_trx",
    "begin",
    "savepoint a",
    "rollback to savepoint a",
    "commit",
    "select 1 + 2 * 3, 'a' = 'a ', 7 div 2, 1 / 3, -(-5), not null is null",
    "create table n(a int, b char(3), key(a)) engine=InnoDB",
    "insert into n values (1, 'x'), (1, 'x'), (null, 'y')",
    "update n set a = a + 1 where b = 'x' limit 1",
    "delete from n where a is null or a = 2",
    "check table sbtest, n",
    "select k, count(*) as n, sum(id) from sbtest where id > 0 group by k having n > 1 order by n desc, k limit 3",
    "select c, max(id) from sbtest group by 1 desc",
    "set global innodb_file_per_table=0",
    "create table sys1(a int primary key, b text) engine=InnoDB",
    "insert into sys1 values (1, repeat('x', 10000))",
    "truncate table sys1",
    "set global innodb_file_per_table=1",
];

fn mutate(s: &str, ops: &[(u8, usize, u8)]) -> String {
    let mut b: Vec<u8> = s.as_bytes().to_vec();
    const TOKENS: &[&str] = &[
        "(",
        ")",
        ",",
        "'",
        "`",
        "\"",
        ";",
        " where ",
        " select ",
        "--",
        "/*",
        "*/",
        "/*!",
        "@@",
        "\\",
        " null ",
        "99999999999999999999999999999999999",
        " and ",
        "=",
        " in (",
        "-",
    ];
    for &(kind, pos, x) in ops {
        if b.is_empty() {
            break;
        }
        let p = pos % (b.len() + 1);
        match kind % 4 {
            0 => {
                let end = (p + usize::from(x % 8) + 1).min(b.len());
                b.drain(p.min(b.len())..end);
            }
            1 => {
                let t = TOKENS[usize::from(x) % TOKENS.len()];
                b.splice(p..p, t.bytes());
            }
            2 => {
                if p < b.len() {
                    b[p] = x;
                }
            }
            _ => b.truncate(p),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn server() -> Server {
    let st = SimStorage::new();
    let clock = SimClock::new();
    st.set_clock(clock.clone());
    Server::open(Box::new(st), Box::new(clock), sim::script::script_config())
        .unwrap()
        .0
}

fn run(server: &mut Server, c: u32, sql: &str) -> Reply {
    match server.execute(c, sql) {
        Outcome::Done(r) => r,
        Outcome::Blocked => panic!("one connection cannot block: {sql}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mutated_statements_get_typed_errors(
        ops in proptest::collection::vec(proptest::collection::vec((any::<u8>(), any::<usize>(), any::<u8>()), 0..4), SEEDS.len()),
    ) {
        let mut s = server();
        let c = s.connect();
        for (seed, ops) in SEEDS.iter().zip(&ops) {
            let sql = mutate(seed, ops);
            if let Reply::Error(e) = run(&mut s, c, &sql) {
                prop_assert!(e.code >= 1000 && e.code < 4000, "{sql}: {e}");
                prop_assert!(!e.message.is_empty());
                prop_assert!(e.code != 1030, "{sql}: an engine failure: {e}");
            }
        }
        prop_assert!(s.engine().halted().is_none());
        for t in s.engine().table_names() {
            let report = s.engine_mut().check_table(&t).unwrap();
            prop_assert!(report.problems.is_empty(), "{t}: {:?}", report.problems);
        }
    }

    #[test]
    fn random_bytes_are_syntax_errors_or_statements(text in "[ -~]{0,80}") {
        let mut s = server();
        let c = s.connect();
        if let Reply::Error(e) = run(&mut s, c, &text) {
            prop_assert!(e.code >= 1000 && e.code < 4000, "{text}: {e}");
        }
    }
}

#[test]
fn a_failed_statement_changes_nothing() {
    let mut s = server();
    let c = s.connect();
    run(
        &mut s,
        c,
        "create table t (id int primary key, v int not null)",
    );
    run(&mut s, c, "insert into t values (1, 1), (2, 2), (3, 3)");
    // In strict mode (MySQL 5.1's default would clip the value and warn)
    // the second row's update fails (1264): the first row's is undone.
    run(&mut s, c, "set sql_mode = 'STRICT_ALL_TABLES'");
    let r = run(&mut s, c, "update t set v = v * 1000000000 where id >= 1");
    assert!(matches!(&r, Reply::Error(e) if e.code == 1264), "{r:?}");
    let Reply::Rows { rows, .. } = run(&mut s, c, "select v from t") else {
        panic!()
    };
    let vals: Vec<String> = rows.iter().map(|r| r[0].render()).collect();
    assert_eq!(vals, ["1", "2", "3"]);
    // Inside a transaction too, and the transaction goes on.
    run(&mut s, c, "begin");
    run(&mut s, c, "insert into t values (4, 4)");
    let r = run(&mut s, c, "insert into t values (5, 5), (4, 4)");
    assert!(matches!(&r, Reply::Error(e) if e.code == 1062), "{r:?}");
    run(&mut s, c, "commit");
    let Reply::Rows { rows, .. } = run(&mut s, c, "select count(*) from t") else {
        panic!()
    };
    assert_eq!(rows[0][0].render(), "4");
}
