//! Plan generation: what a seed and a profile give. Every draw comes from
//! the seed's generators, in a fixed order (a new kind of draw goes last,
//! or on a generator of its own, so that no earlier draw moves).

use super::*;
use crate::profile::{Profile, Shape};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

impl Plan {
    /// The plan a seed and a profile give.
    pub fn generate(
        seed: u64,
        profile: &Profile,
        flush: Option<FlushAtCommit>,
        canary: Option<String>,
    ) -> Plan {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let flush = flush.unwrap_or(match rng.gen_range(0..3) {
            0 => FlushAtCommit::Lazy,
            1 => FlushAtCommit::Sync,
            _ => FlushAtCommit::Write,
        });
        // Swarm testing: a random non-empty subset of the fault kinds.
        let mut faults: Vec<FaultKind> = profile
            .faults
            .iter()
            .copied()
            .filter(|k| !k.drawn_last() && !k.drawn_apart() && !k.drawn_with_ddl())
            .filter(|_| rng.gen_bool(0.6))
            .collect();
        if faults.is_empty() {
            faults.push(FaultKind::ProcessCrash);
        }
        let formats = [RowFormat::Redundant, RowFormat::Compact, RowFormat::Dynamic];
        let mut plan = Plan {
            seed,
            profile: profile.name.clone(),
            flush: flush.setting(),
            pool_pages: rng.gen_range(profile.pool_pages.0..=profile.pool_pages.1),
            lock_wait_timeout_s: rng.gen_range(1..=5),
            row_formats: [
                format_name(formats[rng.gen_range(0..3)]).into(),
                format_name(formats[rng.gen_range(0..3)]).into(),
            ],
            disk_headroom_kib: faults
                .contains(&FaultKind::DiskFull)
                .then(|| rng.gen_range(64..4096)),
            faults,
            canary,
            sessions: profile.sessions,
            transactions: Vec::new(),
            crash_after_ios: (0..profile.crashes)
                .map(|_| rng.gen_range(10..800))
                .collect(),
            shape: profile.shape,
            preload: profile.preload,
            sync_latency_us: profile.sync_latency_us,
            think_us: profile.think_us,
            group_commit: false,
            commit_mutex: false,
            log_file_kib: default_log_file_kib(),
            crash_at_statements: Vec::new(),
            crash_after_checkpoints: Vec::new(),
            tables: Vec::new(),
            fsync_failures_at_statements: Vec::new(),
            fsync_failures_in_recovery: Vec::new(),
            schedule: None,
            system_tables: false,
            sort_buffer_bytes: None,
            timed: profile.timed,
            cpu: profile.cpu,
            p_long_pause: profile.p_long_pause,
            latency: profile.latency.clone(),
        };
        if let Some((lo, hi)) = profile.sessions_range {
            plan.sessions = rng.gen_range(lo..=hi);
        }
        let (t0, t1) = profile.lock_wait_timeout_s;
        if (t0, t1) != (1, 5) {
            plan.lock_wait_timeout_s = rng.gen_range(t0..=t1);
        }
        for i in 0..profile.transactions {
            let mut t = match profile.shape {
                Shape::Mixed => txn(&mut rng, profile),
                Shape::HotRows => hot_txn(&mut rng, profile),
                Shape::Oltp => oltp_txn(&mut rng, profile, true),
                Shape::OltpWriteOnly => oltp_txn(&mut rng, profile, false),
                Shape::OltpInsert => oltp_insert_txn(&mut rng, profile, i as u64),
                Shape::Transfer => transfer_txn(&mut rng, profile),
            };
            if profile.mixed_isolation && rng.gen_bool(0.5) {
                let levels = [
                    "READ-UNCOMMITTED",
                    "READ-COMMITTED",
                    "REPEATABLE-READ",
                    "SERIALIZABLE",
                ];
                t.isolation = Some(levels[rng.gen_range(0..4)].to_string());
            }
            plan.transactions.push(t);
        }
        // Drawn last, so that the rest of every plan is what it was before
        // group commit was simulated.
        plan.group_commit = rng.gen_bool(0.5);
        // Also last: a quarter of the mixed seeds think ten times longer,
        // so that their runs span seconds between crashes and the time
        // promise of flush 0 and 2 (a commit acknowledged a window before
        // a power loss survives it) has commits to hold the engine to.
        if profile.shape == Shape::Mixed && rng.gen_bool(0.25) {
            plan.think_us = plan.think_us.saturating_mul(10);
        }
        // The fault kinds added since (crashes during recovery, bit rot),
        // each switched on like the others, at the very end.
        for &k in profile.faults.iter().filter(|k| k.drawn_last()) {
            if rng.gen_bool(0.6) {
                plan.faults.push(k);
            }
        }
        // Last: a quarter of the plans run on the smallest log the engine
        // allows (two 130 KiB files, 256 KiB of redo; see
        // engine::handler::config::LOG_CAPACITY_MIN_BYTES), which wraps
        // around many times a run.
        if rng.gen_bool(0.25) {
            plan.log_file_kib = 130;
        }
        // Last again: some mixed plans hold long REPEATABLE READ readers,
        // whose one snapshot outlives many commits and purge rounds, so
        // that reads by old views (through the secondary indexes too) are
        // judged while purge works behind them.
        if profile.shape == Shape::Mixed && rng.gen_bool(0.3) {
            for _ in 0..rng.gen_range(1..=3) {
                let reader = long_reader(&mut rng, profile);
                let at = rng.gen_range(0..=plan.transactions.len());
                plan.transactions.insert(at, reader);
            }
        }
        // Last of all: some ROLLBACK TO SAVEPOINTs become RELEASE
        // SAVEPOINTs of the same name.
        for t in &mut plan.transactions {
            for st in &mut t.statements {
                if let PlannedStmt::RollbackTo(name) = st {
                    if rng.gen_bool(0.3) {
                        *st = PlannedStmt::ReleaseSavepoint(std::mem::take(name));
                    }
                }
            }
        }
        // Last: bounded scans on every index. In the mixed workloads some
        // scans get both ends, some of them exclusive, and some locking
        // scans go through a secondary index.
        if profile.shape == Shape::Mixed {
            for t in &mut plan.transactions {
                for st in &mut t.statements {
                    bound_scan(&mut rng, profile, st);
                }
            }
            // And some locking scans are repeated later in their
            // transaction, as an application re-reads what it locked: the
            // second must see what the first saw, changed only by the
            // transaction's own writes (no phantoms).
            for t in &mut plan.transactions {
                let mut i = 0;
                while i < t.statements.len() {
                    if matches!(t.statements[i], PlannedStmt::LockingScan { .. })
                        && rng.gen_bool(0.3)
                    {
                        let again = t.statements[i].clone();
                        let at = rng.gen_range(i + 1..=t.statements.len());
                        t.statements.insert(at, again);
                        i += 1;
                    }
                    i += 1;
                }
            }
        }
        // Last: a third of the plans that crash also crash at a statement
        // drawn from the whole workload. The I/O counts above count from
        // each start, so they strike within its first 800 I/Os; an
        // anchor reaches a long run's later part too.
        if profile.crashes > 0 && !plan.transactions.is_empty() && rng.gen_bool(0.33) {
            let txn = rng.gen_range(0..plan.transactions.len());
            let statement = rng.gen_range(0..=plan.transactions[txn].statements.len());
            plan.crash_at_statements.push(CrashAnchor {
                txn,
                statement,
                after_ios: rng.gen_range(0..40),
            });
        }
        // Last: some row statements of the mixed workloads leave their
        // transaction to run alone in autocommit mode, just before it
        // (crash anchors follow their transactions).
        if profile.shape == Shape::Mixed {
            let mut i = plan.transactions.len();
            while i > 0 {
                i -= 1;
                let t = &mut plan.transactions[i];
                let alone = t.statements.first().is_some_and(|st| {
                    !matches!(
                        st,
                        PlannedStmt::Savepoint(_)
                            | PlannedStmt::RollbackTo(_)
                            | PlannedStmt::ReleaseSavepoint(_)
                            | PlannedStmt::Transfer { .. }
                    )
                });
                if !alone || t.statements.len() < 2 || !rng.gen_bool(0.2) {
                    continue;
                }
                let st = t.statements.remove(0);
                plan.transactions.insert(
                    i,
                    PlannedTxn {
                        statements: vec![st],
                        rollback: false,
                        isolation: None,
                        autocommit: true,
                    },
                );
                for a in &mut plan.crash_at_statements {
                    if a.txn > i {
                        a.txn += 1;
                    } else if a.txn == i {
                        if a.statement == 0 {
                            // It named the statement that moved.
                        } else {
                            a.txn += 1;
                            a.statement -= 1;
                        }
                    }
                }
            }
        }
        // Last: the lock profiles roll back to savepoints too. A third of
        // their transactions set one before a random statement and roll
        // back to it (or, one time in four, release it) after a later one:
        // the locks taken in between stay until the transaction ends.
        if matches!(
            profile.shape,
            Shape::HotRows | Shape::Oltp | Shape::OltpWriteOnly
        ) {
            for t in &mut plan.transactions {
                let n = t.statements.len();
                if n < 2 || !rng.gen_bool(0.33) {
                    continue;
                }
                let at = rng.gen_range(0..n - 1);
                let back = rng.gen_range(at + 1..n) + 1;
                let name = "lk".to_string();
                let end = if rng.gen_bool(0.25) {
                    PlannedStmt::ReleaseSavepoint(name.clone())
                } else {
                    PlannedStmt::RollbackTo(name.clone())
                };
                t.statements.insert(back, end);
                t.statements.insert(at, PlannedStmt::Savepoint(name));
            }
        }
        // Last: long secondary keys. A tenth of the values the mixed
        // workloads write to `docs.v` (VARCHAR(40), indexed) are 30 to 40
        // letters long, so that its index holds few entries a page and
        // splits and merges often.
        if profile.shape == Shape::Mixed {
            for t in &mut plan.transactions {
                for st in &mut t.statements {
                    let v = match st {
                        PlannedStmt::Insert { table, row } if table == "docs" => row.get_mut(1),
                        PlannedStmt::Update { table, set, .. } if table == "docs" => {
                            set.iter_mut().find(|(c, _)| c == "v").map(|(_, v)| v)
                        }
                        _ => None,
                    };
                    if let Some(v) = v.filter(|v| !matches!(v, PValue::Null)) {
                        if rng.gen_bool(0.1) {
                            let l = rng.gen_range(30..=40);
                            *v = text(&mut rng, l);
                        }
                    }
                }
            }
        }
        // Last: some updates of the mixed workloads move their row to a new
        // primary key (a delete and an insert in the engine, 1062 if the
        // key is taken).
        if profile.shape == Shape::Mixed {
            for t in &mut plan.transactions {
                for st in &mut t.statements {
                    if let PlannedStmt::Update { table, set, .. } = st {
                        if rng.gen_bool(0.15) {
                            let to = key(&mut rng, profile, table);
                            set.insert(0, ("id".to_string(), to));
                        }
                    }
                }
            }
        }
        // Kinds drawn apart (misdirected writes): their own generator, so
        // no draw above moved when they came.
        let mut apart = ChaCha8Rng::seed_from_u64(seed ^ 0xA9A2_7000_0000_0005);
        for &k in profile.faults.iter().filter(|k| k.drawn_apart()) {
            if apart.gen_bool(0.6) {
                plan.faults.push(k);
            }
        }
        // Half the mixed plans draw a table of their own (its own
        // generator too): its statements go into a third of the
        // transactions, one to three each, at drawn places.
        if profile.shape == Shape::Mixed && apart.gen_bool(0.5) {
            let format = format_name(formats[apart.gen_range(0..3)]);
            let mut spec = crate::schema::TableSpec::draw(&mut apart, "t1", format);
            spec.draw_collations(&mut ChaCha8Rng::seed_from_u64(seed ^ 0xC011_A7E0_0000_0011));
            let domain = (profile.key_space / 8).max(8);
            plan.scatter(&mut apart, |rng| {
                seed_table_stmt(rng, profile, &spec, domain)
            });
            plan.tables.push(spec);
        }
        // Half the plans also crash just after one of the first
        // checkpoints of a (re)start (some as its slot is written, before
        // the sync), once or twice.
        if apart.gen_bool(0.5) {
            plan.crash_after_checkpoints = (0..apart.gen_range(1..=2))
                .map(|_| CheckpointCrash {
                    nth: apart.gen_range(1..=2),
                    after_ios: if apart.gen_bool(0.3) {
                        1
                    } else {
                        apart.gen_range(2..=40)
                    },
                })
                .collect();
        }
        // Last, from a generator of their own: two in five mixed plans
        // create and drop scratch tables while the workload runs, one to
        // four times, each DDL statement alone in an autocommit
        // transaction at a drawn place: a mostly valid sequence (a create
        // of a table that exists, 1050, and a drop of one that does not,
        // 1146, now and then). Half of them also crash a few I/O
        // operations after the statement is issued, inside the DDL; half
        // of those at the third, which in a CREATE TABLE is usually the
        // directory sync after the file's creation (exists, create,
        // sync_dir, unless the buffer pool had pages to flush first), where
        // a power loss may take the unsynced name away.
        let mut ddl = ChaCha8Rng::seed_from_u64(seed ^ 0xDD1D_0000_0000_0007);
        if profile.shape == Shape::Mixed && ddl.gen_bool(0.4) {
            let mut at: Vec<usize> = (0..ddl.gen_range(1..=4))
                .map(|_| ddl.gen_range(0..=plan.transactions.len()))
                .collect();
            at.sort_unstable();
            let mut exists = [false; SCRATCH_TABLES.len()];
            for (n, &pos) in at.iter().enumerate() {
                let i = ddl.gen_range(0..SCRATCH_TABLES.len());
                let table = SCRATCH_TABLES[i].to_string();
                let create = if exists[i] {
                    ddl.gen_bool(0.15)
                } else {
                    !ddl.gen_bool(0.1)
                };
                let st = if create {
                    exists[i] = true;
                    PlannedStmt::CreateTable {
                        table,
                        row_format: format_name(formats[ddl.gen_range(0..3)]).into(),
                    }
                } else {
                    exists[i] = false;
                    PlannedStmt::DropTable { table }
                };
                // Each earlier insertion moved this place on by one.
                let txn = pos + n;
                plan.insert_transaction(
                    txn,
                    PlannedTxn {
                        statements: vec![st],
                        rollback: false,
                        isolation: None,
                        autocommit: true,
                    },
                );
                if profile.crashes > 0 && ddl.gen_bool(0.5) {
                    plan.crash_at_statements.push(CrashAnchor {
                        txn,
                        statement: 0,
                        after_ios: if ddl.gen_bool(0.5) {
                            2
                        } else {
                            ddl.gen_range(0..12)
                        },
                    });
                }
            }
        }
        for &k in profile.faults.iter().filter(|k| k.drawn_with_ddl()) {
            if ddl.gen_bool(0.7) {
                plan.faults.push(k);
            }
        }
        // From a generator of its own, so the draws above stay as they
        // were: half the plans that create a scratch table also TRUNCATE
        // it at a drawn place where it exists, half of those with a crash
        // a few I/O operations into the TRUNCATE (its new file, its
        // dictionary commit, the old file's removal or the rename).
        let mut trunc = ChaCha8Rng::seed_from_u64(seed ^ 0x7A0C_0000_0000_000B);
        if profile.shape == Shape::Mixed && trunc.gen_bool(0.5) {
            let mut exists = [false; SCRATCH_TABLES.len()];
            let mut places = Vec::new();
            for (i, t) in plan.transactions.iter().enumerate() {
                for (k, &e) in exists.iter().enumerate() {
                    if e {
                        places.push((i, k));
                    }
                }
                for st in &t.statements {
                    match st {
                        PlannedStmt::CreateTable { table, .. }
                        | PlannedStmt::DropTable { table } => {
                            let k = SCRATCH_TABLES
                                .iter()
                                .position(|s| s == table)
                                .expect("a scratch table");
                            exists[k] = matches!(st, PlannedStmt::CreateTable { .. });
                        }
                        _ => {}
                    }
                }
            }
            for (k, &e) in exists.iter().enumerate() {
                if e {
                    places.push((plan.transactions.len(), k));
                }
            }
            if !places.is_empty() {
                let (txn, k) = places[trunc.gen_range(0..places.len())];
                plan.insert_transaction(
                    txn,
                    PlannedTxn {
                        statements: vec![PlannedStmt::TruncateTable {
                            table: SCRATCH_TABLES[k].to_string(),
                        }],
                        rollback: false,
                        isolation: None,
                        autocommit: true,
                    },
                );
                if profile.crashes > 0 && trunc.gen_bool(0.5) {
                    plan.crash_at_statements.push(CrashAnchor {
                        txn,
                        statement: 0,
                        after_ios: trunc.gen_range(0..16),
                    });
                }
            }
        }
        // Last, from a generator of its own: a third of the mixed plans
        // have a table without a primary key, `t2` (clustered on InnoDB's
        // hidden row id), whose inserts and scans go into a third of the
        // transactions, one to three each, and into a few autocommit
        // inserts of their own.
        let mut bare = ChaCha8Rng::seed_from_u64(seed ^ 0x0B0D_0000_0000_0009);
        if profile.shape == Shape::Mixed && bare.gen_bool(0.35) {
            let format = format_name(formats[bare.gen_range(0..3)]);
            let mut spec = crate::schema::TableSpec::draw_without_key(&mut bare, "t2", format);
            spec.draw_collations(&mut ChaCha8Rng::seed_from_u64(seed ^ 0xC011_A7E0_0000_0012));
            let domain = (profile.key_space / 8).max(8);
            plan.scatter(&mut bare, |rng| {
                keyless_table_stmt(rng, profile, &spec, domain)
            });
            for _ in 0..bare.gen_range(0..=3) {
                let row = (0..spec.columns.len())
                    .map(|c| spec.value(&mut bare, c, domain))
                    .collect();
                let at = bare.gen_range(0..=plan.transactions.len());
                plan.insert_transaction(
                    at,
                    PlannedTxn {
                        statements: vec![PlannedStmt::Insert {
                            table: spec.name.clone(),
                            row,
                        }],
                        rollback: false,
                        isolation: None,
                        autocommit: true,
                    },
                );
            }
            plan.tables.push(spec);
        }
        // From a generator of its own: three in five plans with a drawn
        // table `t1` give it a child `t3` with a FOREIGN KEY to its primary
        // key, and seven in ten of those a grandchild `t4` of `t3`, so that
        // cascades go two levels deep; their statements (inserts of rows
        // whose key values come from the parent's domain, updates of those
        // columns and of the key, deletes) go into a third of the
        // transactions, one to three each, at drawn places.
        let mut fk = ChaCha8Rng::seed_from_u64(seed ^ 0xF0E1_0000_0000_0019);
        if let Some(t1) = plan.tables.iter().find(|t| t.name == "t1").cloned() {
            if fk.gen_bool(0.6) {
                let domain = (profile.key_space / 8).max(8);
                let format = format_name(formats[fk.gen_range(0..3)]);
                let t3 = crate::schema::TableSpec::draw_child(&mut fk, "t3", &t1, format);
                let mut family = vec![t3.clone()];
                if fk.gen_bool(0.7) {
                    let format = format_name(formats[fk.gen_range(0..3)]);
                    family.push(crate::schema::TableSpec::draw_child(
                        &mut fk, "t4", &t3, format,
                    ));
                }
                for spec in &family {
                    plan.scatter(&mut fk, |rng| seed_table_stmt(rng, profile, spec, domain));
                }
                plan.tables.extend(family);
            }
        }
        // Last, from a generator of its own: ROW_FORMAT=COMPRESSED, for
        // each table of the plan with the profile's probability, at a
        // KEY_BLOCK_SIZE drawn from the profile's.
        let mut zip = ChaCha8Rng::seed_from_u64(seed ^ 0x21B0_0000_0000_000B);
        if profile.p_compressed > 0.0 {
            let mut draw = |format: &mut String| {
                if zip.gen_bool(profile.p_compressed) {
                    let sizes = &profile.key_block_sizes;
                    let key_block_size = sizes[zip.gen_range(0..sizes.len())];
                    *format = format_name(RowFormat::Compressed { key_block_size }).into();
                }
            };
            for f in &mut plan.row_formats {
                draw(f);
            }
            for t in &mut plan.tables {
                draw(&mut t.row_format);
            }
        }
        online_index(&mut plan, profile, seed);
        // Last, from a generator of its own: a quarter of the plans with
        // no compressed table keep every table in the system tablespace
        // (innodb_file_per_table OFF, MySQL 5.1's default).
        let mut system = ChaCha8Rng::seed_from_u64(seed ^ 0x5157_0000_0000_0017);
        let compressed = plan
            .row_formats
            .iter()
            .chain(plan.tables.iter().map(|t| &t.row_format))
            .any(|f| format_of(f).is_some_and(|f| f.zip_size().ok().flatten().is_some()));
        plan.system_tables = !compressed && system.gen_bool(0.25);
        // From a generator of its own too: half the plans that build
        // an index give fast index creation a sort buffer of a few hundred
        // bytes at most, so that the build spills sorted runs to its
        // merge file and merges them back (the default 1 MiB holds every
        // table the plans have).
        let mut sort = ChaCha8Rng::seed_from_u64(seed ^ 0x5047_0000_0000_0029);
        let builds = plan.transactions.iter().any(|t| {
            t.statements
                .iter()
                .any(|s| matches!(s, PlannedStmt::CreateIndex { .. }))
        });
        if builds && sort.gen_bool(0.5) {
            plan.sort_buffer_bytes = Some(sort.gen_range(32..=256));
        }
        // From a generator of its own: a third of the time-driven plans
        // without group commit commit through the binary log's mutex
        // (MySQL 5.1's built-in InnoDB), where a commit waits uncommitted
        // with its locks for its turn.
        let mut binlog = ChaCha8Rng::seed_from_u64(seed ^ 0x4249_4e4c_0000_0030);
        if plan.timed && !plan.group_commit && binlog.gen_bool(1.0 / 3.0) {
            plan.commit_mutex = true;
        }
        filtered_changes(&mut plan, profile, seed);
        rebuilds(&mut plan, profile, seed);
        plan
    }
}

/// From a generator of its own, after everything else: two in five mixed
/// plans rebuild one to three of their tables with a primary key by a
/// copying ALTER TABLE ([`PlannedStmt::RebuildTable`]) at drawn places,
/// half of them with a crash a few I/O operations in where the plan
/// crashes (the copy, the dictionary swap, the rename).
fn rebuilds(plan: &mut Plan, profile: &Profile, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xA17E_0000_0000_0037);
    if profile.shape != Shape::Mixed || !rng.gen_bool(0.4) {
        return;
    }
    let mut tables = vec!["sb".to_string(), "docs".to_string()];
    tables.extend(
        plan.tables
            .iter()
            .filter(|t| !t.primary_key.is_empty())
            .map(|t| t.name.clone()),
    );
    for _ in 0..rng.gen_range(1..=3) {
        let table = tables[rng.gen_range(0..tables.len())].clone();
        let at = rng.gen_range(0..=plan.transactions.len());
        plan.insert_transaction(
            at,
            PlannedTxn {
                statements: vec![PlannedStmt::RebuildTable { table }],
                rollback: false,
                isolation: None,
                autocommit: true,
            },
        );
        if profile.crashes > 0 && rng.gen_bool(0.5) {
            plan.crash_at_statements.push(CrashAnchor {
                txn: at,
                statement: 0,
                after_ios: rng.gen_range(0..80),
            });
        }
    }
}

/// From a generator of its own, last of all: three in five mixed plans
/// run three to twelve UPDATEs and DELETEs of a range of `sb` that a
/// condition on `k` filters ([`PlannedStmt::ChangeWhere`]), in drawn
/// transactions that are not in autocommit mode, half of which (those
/// that set no level of their own) then run under READ COMMITTED or READ
/// UNCOMMITTED. Under those levels their reads are semi-consistent and
/// let go of the rows they reject, two paths nothing else in a plan takes.
fn filtered_changes(plan: &mut Plan, profile: &Profile, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xF17E_0000_0000_0031);
    if profile.shape != Shape::Mixed || !rng.gen_bool(0.6) {
        return;
    }
    let open: Vec<usize> = (0..plan.transactions.len())
        .filter(|&i| !plan.transactions[i].autocommit)
        .collect();
    if open.is_empty() {
        return;
    }
    for _ in 0..rng.gen_range(3..=12) {
        let i = open[rng.gen_range(0..open.len())];
        let t = &mut plan.transactions[i];
        if t.isolation.is_none() && rng.gen_bool(0.5) {
            t.isolation = Some(
                if rng.gen_bool(0.5) {
                    "READ-COMMITTED"
                } else {
                    "READ-UNCOMMITTED"
                }
                .into(),
            );
        }
        let from = rng.gen_range(1..=profile.key_space);
        let to = (from + rng.gen_range(0..=profile.key_space / 4)).min(profile.key_space);
        let set = if rng.gen_bool(0.3) {
            Vec::new()
        } else if rng.gen_bool(0.5) {
            vec![("k".to_string(), PValue::UInt(rng.gen_range(0..50)))]
        } else {
            let l = rng.gen_range(1..=120);
            vec![("c".to_string(), text(&mut rng, l))]
        };
        let st = PlannedStmt::ChangeWhere {
            table: "sb".into(),
            from,
            to,
            below: rng.gen_range(1..50),
            set,
        };
        let at = rng.gen_range(0..=plan.transactions[i].statements.len());
        plan.insert_statement(i, at, st);
    }
}

/// The name of the index the workloads create and drop on `t1`.
pub const ONLINE_INDEX: &str = "ox";

/// From a generator of its own, last: half the mixed plans with a drawn
/// table `t1` create a secondary index on it while the workload runs
/// (fast index creation, beside the open transactions; refused while one
/// of them has changed the table), half of those drop it later and some
/// create it again. Consistent scans through it go into a third of the
/// transactions, before and after it exists, and a REPEATABLE READ
/// reader just before the CREATE INDEX reads the table, then the index:
/// a view older than the index must get 1412. Half the builds crash a few
/// I/O operations in (its dictionary entries, its scan, its merge file,
/// its pages, its final commit) where the plan crashes.
fn online_index(plan: &mut Plan, profile: &Profile, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x1DE7_0000_0000_000D);
    if profile.shape != Shape::Mixed || !rng.gen_bool(0.5) {
        return;
    }
    let Some(spec) = plan.tables.iter().find(|t| t.name == "t1").cloned() else {
        return;
    };
    let eligible: Vec<usize> = (0..spec.columns.len())
        .filter(|&c| !matches!(spec.columns[c].ty.as_str(), "TEXT" | "BLOB"))
        .collect();
    if eligible.is_empty() {
        return;
    }
    let mut columns = vec![eligible[rng.gen_range(0..eligible.len())]];
    if rng.gen_bool(0.3) {
        let c = eligible[rng.gen_range(0..eligible.len())];
        if !columns.contains(&c) {
            columns.push(c);
        }
    }
    let index = crate::schema::IndexSpec {
        name: ONLINE_INDEX.into(),
        columns,
        unique: false,
    };
    let domain = (profile.key_space / 8).max(8);
    let first = index.columns[0];
    let scan = |rng: &mut ChaCha8Rng| {
        let reverse = rng.gen_bool(0.5);
        let (mut from, mut to) = (None, None);
        if rng.gen_bool(0.6) {
            let (a, b) = (
                spec.value(rng, first, domain),
                spec.value(rng, first, domain),
            );
            (from, to) = scan_ends(rng, a, b, reverse);
        }
        PlannedStmt::Scan {
            table: spec.name.clone(),
            index: Some(ONLINE_INDEX.into()),
            reverse,
            limit: rng.gen_range(1..30),
            from,
            to,
            open: rng.gen_bool(0.3),
        }
    };
    plan.scatter(&mut rng, scan);
    let alone = |st: PlannedStmt| PlannedTxn {
        statements: vec![st],
        rollback: false,
        isolation: None,
        autocommit: true,
    };
    let n = plan.transactions.len();
    let create_at = rng.gen_range(0..=n);
    // The old reader: a snapshot of the table, some reads to outlive the
    // build, then the new index.
    let mut reader = vec![PlannedStmt::Scan {
        table: spec.name.clone(),
        index: None,
        reverse: false,
        limit: 50,
        from: None,
        to: None,
        open: false,
    }];
    for _ in 0..rng.gen_range(2..=8) {
        reader.push(if rng.gen_bool(0.4) {
            scan(&mut rng)
        } else {
            PlannedStmt::Get {
                table: "sb".into(),
                key: key(&mut rng, profile, "sb").into(),
            }
        });
    }
    reader.extend((0..rng.gen_range(1..=3)).map(|_| scan(&mut rng)));
    let back = rng.gen_range(0..=create_at.min(2));
    plan.insert_transaction(
        create_at - back,
        PlannedTxn {
            statements: reader,
            rollback: false,
            isolation: Some("REPEATABLE-READ".into()),
            autocommit: false,
        },
    );
    let create_at = create_at + 1;
    let create = PlannedStmt::CreateIndex {
        table: spec.name.clone(),
        index: index.clone(),
    };
    plan.insert_transaction(create_at, alone(create.clone()));
    let mut crash_at = vec![create_at];
    if rng.gen_bool(0.5) {
        let drop_at = rng.gen_range(create_at + 1..=plan.transactions.len());
        plan.insert_transaction(
            drop_at,
            alone(PlannedStmt::DropIndex {
                table: spec.name.clone(),
                index: ONLINE_INDEX.into(),
            }),
        );
        if rng.gen_bool(0.3) {
            let again = rng.gen_range(drop_at + 1..=plan.transactions.len());
            plan.insert_transaction(again, alone(create));
            crash_at.push(again);
        }
    }
    if profile.crashes > 0 {
        for txn in crash_at {
            if rng.gen_bool(0.5) {
                plan.crash_at_statements.push(CrashAnchor {
                    txn,
                    statement: 0,
                    after_ios: rng.gen_range(0..60),
                });
            }
        }
    }
}

fn text(rng: &mut ChaCha8Rng, len: usize) -> PValue {
    if len > 64 {
        return PValue::Long {
            len,
            seed: rng.gen(),
        };
    }
    PValue::Text(
        (0..len)
            .map(|_| (b'a' + rng.gen_range(0..26u8)) as char)
            .collect(),
    )
}

impl Plan {
    /// Puts statements `stmt` draws into a third of the transactions that
    /// are not in autocommit mode, one to three each, at drawn places.
    fn scatter(
        &mut self,
        rng: &mut ChaCha8Rng,
        mut stmt: impl FnMut(&mut ChaCha8Rng) -> PlannedStmt,
    ) {
        for i in 0..self.transactions.len() {
            if self.transactions[i].autocommit || !rng.gen_bool(0.33) {
                continue;
            }
            for _ in 0..rng.gen_range(1..=3) {
                let st = stmt(rng);
                let at = rng.gen_range(0..=self.transactions[i].statements.len());
                self.insert_statement(i, at, st);
            }
        }
    }
}

/// A statement on a table without a primary key, which nothing can
/// address by key: inserts of whole rows, and scans (locking ones too) of
/// its clustered index, whole, or of a secondary index, bounded by values
/// of the index's first column.
fn keyless_table_stmt(
    rng: &mut ChaCha8Rng,
    profile: &Profile,
    spec: &crate::schema::TableSpec,
    domain: u64,
) -> PlannedStmt {
    let table = spec.name.clone();
    if rng.gen_bool(0.55) {
        return PlannedStmt::Insert {
            row: (0..spec.columns.len())
                .map(|c| spec.value(rng, c, domain))
                .collect(),
            table,
        };
    }
    let which = rng.gen_range(0..=spec.indexes.len());
    let index = (which > 0).then(|| spec.indexes[which - 1].name.clone());
    let reverse = rng.gen_bool(0.5);
    let limit = rng.gen_range(1..12);
    let (mut from, mut to) = (None, None);
    let open = rng.gen_bool(0.3);
    if which > 0 && rng.gen_bool(0.6) {
        let first = spec.indexes[which - 1].columns[0];
        let (a, b) = (
            spec.value(rng, first, domain),
            spec.value(rng, first, domain),
        );
        (from, to) = scan_ends(rng, a, b, reverse);
    }
    scan_stmt(rng, profile, table, index, reverse, limit, (from, to, open))
}

/// A scan of `index` (`None`: the clustered index) of `table`, a locking
/// one (shared or exclusive, with even odds) as often as the profile says.
#[allow(clippy::too_many_arguments)]
fn scan_stmt(
    rng: &mut ChaCha8Rng,
    profile: &Profile,
    table: String,
    index: Option<String>,
    reverse: bool,
    limit: usize,
    (from, to, open): (Option<PValue>, Option<PValue>, bool),
) -> PlannedStmt {
    if rng.gen_bool(profile.p_locking_read) {
        PlannedStmt::LockingScan {
            table,
            index,
            reverse,
            limit,
            from,
            to,
            open,
            exclusive: rng.gen_bool(0.5),
        }
    } else {
        PlannedStmt::Scan {
            table,
            index,
            reverse,
            limit,
            from,
            to,
            open,
        }
    }
}

/// Gives a scan (sometimes) bounds: a locking one may move to its table's
/// secondary index first; then, with even odds, a start, an end and
/// exclusive ends are drawn, in the index's terms (primary keys, `k`'s
/// values 0 to 49, or short strings for `v`).
fn bound_scan(rng: &mut ChaCha8Rng, profile: &Profile, st: &mut PlannedStmt) {
    let (table, index, reverse, from, to, open, locking) = match st {
        PlannedStmt::Scan {
            table,
            index,
            reverse,
            from,
            to,
            open,
            ..
        } => (table, index, *reverse, from, to, open, false),
        PlannedStmt::LockingScan {
            table,
            index,
            reverse,
            from,
            to,
            open,
            ..
        } => (table, index, *reverse, from, to, open, true),
        _ => return,
    };
    if locking && rng.gen_bool(0.3) {
        *index = Some(if table == "sb" { "k" } else { "v" }.into());
        *from = None;
    }
    if !rng.gen_bool(0.5) {
        return;
    }
    let draw = |rng: &mut ChaCha8Rng| match index.as_deref() {
        None => key(rng, profile, table),
        Some("k") => PValue::UInt(rng.gen_range(0..50)),
        _ => {
            let l = rng.gen_range(0..3);
            text(rng, l)
        }
    };
    let (a, b) = (draw(rng), draw(rng));
    (*from, *to) = scan_ends(rng, a, b, reverse);
    *open = rng.gen_bool(0.3);
}

/// A scan's ends from two drawn values: the lower one first (the higher
/// for a descending scan), each kept with its own odds (a start 0.8, an
/// end 0.6).
fn scan_ends(
    rng: &mut ChaCha8Rng,
    a: PValue,
    b: PValue,
    reverse: bool,
) -> (Option<PValue>, Option<PValue>) {
    use crate::judge::reads::to_model;
    let (lo, hi) = if to_model(&a.value()) <= to_model(&b.value()) {
        (a, b)
    } else {
        (b, a)
    };
    let (start, end) = if reverse { (hi, lo) } else { (lo, hi) };
    (
        rng.gen_bool(0.8).then_some(start),
        rng.gen_bool(0.6).then_some(end),
    )
}

/// A statement on a table the seed drew: inserts of whole rows, updates
/// of a column by primary key (sometimes a key column, sometimes an
/// indexed one, so that keys move and unique keys collide), deletes, point
/// reads, and scans (locking ones too) of any of its indexes, bounded by
/// values of the index's first column.
fn seed_table_stmt(
    rng: &mut ChaCha8Rng,
    profile: &Profile,
    spec: &crate::schema::TableSpec,
    domain: u64,
) -> PlannedStmt {
    let table = spec.name.clone();
    let key = |rng: &mut ChaCha8Rng| {
        PKey(
            spec.primary_key
                .iter()
                .map(|&c| spec.value(rng, c, domain))
                .collect(),
        )
    };
    match rng.gen_range(0..100) {
        0..=34 => PlannedStmt::Insert {
            row: (0..spec.columns.len())
                .map(|c| spec.value(rng, c, domain))
                .collect(),
            table,
        },
        35..=54 => {
            let c = rng.gen_range(0..spec.columns.len());
            let set = vec![(spec.columns[c].name.clone(), spec.value(rng, c, domain))];
            PlannedStmt::Update {
                key: key(rng),
                table,
                set,
            }
        }
        55..=64 => PlannedStmt::Delete {
            key: key(rng),
            table,
        },
        65..=79 if rng.gen_bool(profile.p_locking_read) => PlannedStmt::LockingGet {
            key: key(rng),
            table,
            exclusive: rng.gen_bool(0.5),
        },
        65..=79 => PlannedStmt::Get {
            key: key(rng),
            table,
        },
        _ => {
            let which = rng.gen_range(0..=spec.indexes.len());
            let (index, first) = match which {
                0 => (None, spec.primary_key[0]),
                i => (
                    Some(spec.indexes[i - 1].name.clone()),
                    spec.indexes[i - 1].columns[0],
                ),
            };
            let reverse = rng.gen_bool(0.5);
            let limit = rng.gen_range(1..12);
            let (mut from, mut to) = (None, None);
            if rng.gen_bool(0.6) {
                let (a, b) = (
                    spec.value(rng, first, domain),
                    spec.value(rng, first, domain),
                );
                (from, to) = scan_ends(rng, a, b, reverse);
            }
            let open = rng.gen_bool(0.3);
            scan_stmt(rng, profile, table, index, reverse, limit, (from, to, open))
        }
    }
}

/// A REPEATABLE READ transaction of 10 to 40 reads: point reads and scans
/// of the secondary indexes.
fn long_reader(rng: &mut ChaCha8Rng, profile: &Profile) -> PlannedTxn {
    let statements = (0..rng.gen_range(10..=40))
        .map(|_| {
            let table = if rng.gen_bool(0.6) { "sb" } else { "docs" };
            if rng.gen_bool(0.6) {
                PlannedStmt::Scan {
                    table: table.into(),
                    index: Some(if table == "sb" { "k" } else { "v" }.into()),
                    reverse: rng.gen_bool(0.5),
                    limit: rng.gen_range(1..40),
                    from: None,
                    to: None,
                    open: false,
                }
            } else {
                PlannedStmt::Get {
                    table: table.into(),
                    key: key(rng, profile, table).into(),
                }
            }
        })
        .collect();
    PlannedTxn {
        statements,
        rollback: false,
        isolation: Some("REPEATABLE-READ".into()),
        autocommit: false,
    }
}

fn key(rng: &mut ChaCha8Rng, profile: &Profile, table: &str) -> PValue {
    let k = rng.gen_range(1..=profile.key_space);
    if table == "sb" {
        PValue::UInt(k)
    } else {
        PValue::Int(k as i64)
    }
}

fn doc(rng: &mut ChaCha8Rng, profile: &Profile) -> PValue {
    if rng.gen_bool(0.1) {
        PValue::Null
    } else if rng.gen_bool(profile.p_long_value) {
        PValue::Long {
            len: rng.gen_range(1_000..40_000),
            seed: rng.gen(),
        }
    } else {
        let len = rng.gen_range(0..300);
        text(rng, len)
    }
}

fn row(rng: &mut ChaCha8Rng, profile: &Profile, table: &str, key: PValue) -> Vec<PValue> {
    if table == "sb" {
        let c_len = rng.gen_range(1..=120);
        vec![
            key,
            PValue::UInt(rng.gen_range(0..50)),
            text(rng, c_len),
            text(rng, 8),
        ]
    } else {
        let v = if rng.gen_bool(0.2) {
            PValue::Null
        } else {
            let l = rng.gen_range(0..12);
            text(rng, l)
        };
        vec![key, v, doc(rng, profile)]
    }
}

fn txn(rng: &mut ChaCha8Rng, profile: &Profile) -> PlannedTxn {
    let n = rng.gen_range(1..=profile.max_statements);
    let mut statements = Vec::with_capacity(n);
    let mut sp = 0;
    for _ in 0..n {
        if rng.gen_bool(profile.p_savepoint) {
            if sp > 0 && rng.gen_bool(0.5) {
                statements.push(PlannedStmt::RollbackTo(format!(
                    "sp{}",
                    rng.gen_range(0..sp)
                )));
            } else {
                statements.push(PlannedStmt::Savepoint(format!("sp{sp}")));
                sp += 1;
            }
            continue;
        }
        let table = if rng.gen_bool(0.6) { "sb" } else { "docs" };
        let k = key(rng, profile, table);
        let stmt = match rng.gen_range(0..100) {
            0..=34 => PlannedStmt::Insert {
                table: table.into(),
                row: row(rng, profile, table, k),
            },
            35..=59 => {
                let set = if table == "sb" {
                    if rng.gen_bool(0.5) {
                        vec![("k".to_string(), PValue::UInt(rng.gen_range(0..50)))]
                    } else {
                        let l = rng.gen_range(1..=120);
                        vec![("c".to_string(), text(rng, l))]
                    }
                } else if rng.gen_bool(0.5) {
                    let l = rng.gen_range(0..12);
                    vec![("v".to_string(), text(rng, l))]
                } else {
                    vec![("doc".to_string(), doc(rng, profile))]
                };
                PlannedStmt::Update {
                    table: table.into(),
                    key: k.clone().into(),
                    set,
                }
            }
            60..=74 => PlannedStmt::Delete {
                table: table.into(),
                key: k.clone().into(),
            },
            75..=89 if rng.gen_bool(profile.p_locking_read) => PlannedStmt::LockingGet {
                table: table.into(),
                key: k.clone().into(),
                exclusive: rng.gen_bool(0.5),
            },
            75..=89 => PlannedStmt::Get {
                table: table.into(),
                key: k.clone().into(),
            },
            _ if rng.gen_bool(profile.p_locking_read) => PlannedStmt::LockingScan {
                table: table.into(),
                index: None,
                reverse: rng.gen_bool(0.5),
                limit: rng.gen_range(1..10),
                from: Some(key(rng, profile, table)),
                to: None,
                open: false,
                exclusive: rng.gen_bool(0.5),
            },
            _ => PlannedStmt::Scan {
                table: table.into(),
                index: if rng.gen_bool(0.5) {
                    None
                } else {
                    Some(if table == "sb" {
                        "k".into()
                    } else {
                        "v".into()
                    })
                },
                reverse: rng.gen_bool(0.5),
                limit: rng.gen_range(1..20),
                from: None,
                to: None,
                open: false,
            },
        };
        statements.push(stmt);
    }
    PlannedTxn {
        statements,
        rollback: rng.gen_bool(profile.p_rollback),
        isolation: None,
        autocommit: false,
    }
}

/// A hot-rows transaction: updates and reads of a few preloaded rows.
fn hot_txn(rng: &mut ChaCha8Rng, profile: &Profile) -> PlannedTxn {
    let n = rng.gen_range(1..=profile.max_statements);
    let statements = (0..n)
        .map(|_| {
            let k = PValue::UInt(rng.gen_range(1..=profile.key_space));
            match rng.gen_range(0..10) {
                0..=4 => PlannedStmt::Update {
                    table: "sb".into(),
                    key: k.clone().into(),
                    set: vec![("k".into(), PValue::UInt(rng.gen_range(0..50)))],
                },
                5..=7 => PlannedStmt::LockingGet {
                    table: "sb".into(),
                    key: k.clone().into(),
                    exclusive: rng.gen_bool(0.6),
                },
                // A short locking range over the hot rows: it locks them
                // one after another, so it can wait again after a grant.
                8 => PlannedStmt::LockingScan {
                    table: "sb".into(),
                    index: None,
                    reverse: rng.gen_bool(0.5),
                    limit: rng.gen_range(2..=3),
                    from: Some(k),
                    to: None,
                    open: false,
                    exclusive: rng.gen_bool(0.6),
                },
                _ => PlannedStmt::Get {
                    table: "sb".into(),
                    key: k.clone().into(),
                },
            }
        })
        .collect();
    PlannedTxn {
        statements,
        rollback: rng.gen_bool(profile.p_rollback),
        isolation: None,
        autocommit: false,
    }
}

/// sysbench's oltp_read_write transaction on the preloaded ids, or
/// without `reads` its oltp_write_only one (the same writes).
fn oltp_txn(rng: &mut ChaCha8Rng, profile: &Profile, reads: bool) -> PlannedTxn {
    let mut statements: Vec<PlannedStmt> = Vec::new();
    if reads {
        let mut id = || PValue::UInt(rng.gen_range(1..=profile.key_space));
        statements.extend((0..10).map(|_| PlannedStmt::Get {
            table: "sb".into(),
            key: id().into(),
        }));
        statements.push(PlannedStmt::Scan {
            table: "sb".into(),
            index: None,
            reverse: false,
            limit: 100,
            from: Some(id()),
            to: None,
            open: false,
        });
    }
    statements.push(PlannedStmt::Update {
        table: "sb".into(),
        key: PValue::UInt(rng.gen_range(1..=profile.key_space)).into(),
        set: vec![("k".into(), PValue::UInt(rng.gen_range(0..50)))],
    });
    let c_len = rng.gen_range(1..=120);
    let c = text(rng, c_len);
    statements.push(PlannedStmt::Update {
        table: "sb".into(),
        key: PValue::UInt(rng.gen_range(1..=profile.key_space)).into(),
        set: vec![("c".into(), c)],
    });
    let gone = PValue::UInt(rng.gen_range(1..=profile.key_space));
    statements.push(PlannedStmt::Delete {
        table: "sb".into(),
        key: gone.clone().into(),
    });
    let row = row(rng, profile, "sb", gone);
    statements.push(PlannedStmt::Insert {
        table: "sb".into(),
        row,
    });
    PlannedTxn {
        statements,
        rollback: false,
        isolation: None,
        autocommit: false,
    }
}

/// sysbench's oltp_insert event: the `i`th transaction inserts, in
/// autocommit mode, the `i`th id past the preloaded ones (as sysbench's
/// auto-increment hands them out, in plan order) with a random `k`.
fn oltp_insert_txn(rng: &mut ChaCha8Rng, profile: &Profile, i: u64) -> PlannedTxn {
    let id = PValue::UInt(profile.preload.max(profile.key_space) + i + 1);
    PlannedTxn {
        statements: vec![PlannedStmt::Insert {
            table: "sb".into(),
            row: row(rng, profile, "sb", id),
        }],
        rollback: false,
        isolation: None,
        autocommit: true,
    }
}

/// Transfers between accounts, in random order of the two accounts.
fn transfer_txn(rng: &mut ChaCha8Rng, profile: &Profile) -> PlannedTxn {
    let n = rng.gen_range(1..=profile.max_statements);
    let statements = (0..n)
        .map(|_| {
            let from = rng.gen_range(1..=profile.key_space);
            let mut to = rng.gen_range(1..profile.key_space.max(2));
            if to >= from {
                to += 1;
            }
            PlannedStmt::Transfer {
                from,
                to: to.min(profile.key_space.max(2)),
                amount: rng.gen_range(1..=300),
            }
        })
        .collect();
    PlannedTxn {
        statements,
        rollback: rng.gen_bool(profile.p_rollback),
        isolation: None,
        autocommit: false,
    }
}
