//! Plans: everything a simulated run does, as data. A seed and a profile
//! generate a plan; the runner executes it; the shrinker makes it smaller;
//! the corpus saves it as readable JSON. Executing the same plan always does
//! the same thing.

use crate::profile::{FaultKind, Profile};
use engine::{FlushAtCommit, RangeBound, Request, RowFormat, Value};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// A column value in a plan. Long strings are stored as a length and a seed
/// (their bytes are generated) so that a saved plan stays readable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PValue {
    /// NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A short string.
    Text(String),
    /// `len` generated letters.
    Long {
        /// Length in bytes.
        len: usize,
        /// Seeds the letters.
        seed: u64,
    },
}

impl PValue {
    /// The engine value.
    pub fn value(&self) -> Value {
        match self {
            PValue::Null => Value::Null,
            PValue::Int(i) => Value::Int(*i),
            PValue::UInt(u) => Value::UInt(*u),
            PValue::Text(s) => Value::Bytes(s.clone().into_bytes()),
            PValue::Long { len, seed } => Value::Bytes(long_letters(*len, *seed)),
        }
    }
}

/// `len` letters drawn from `seed` by xorshift, eight letters per step
/// (a letter a byte, scaled to 0..26 without a division).
fn long_letters(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend(
            x.to_le_bytes()
                .map(|b| b'a' + ((u32::from(b) * 26) >> 8) as u8),
        );
    }
    out.truncate(len);
    out
}

/// One statement of a planned transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PlannedStmt {
    /// INSERT.
    Insert {
        /// Table.
        table: String,
        /// Values.
        row: Vec<PValue>,
    },
    /// UPDATE by primary key.
    Update {
        /// Table.
        table: String,
        /// Primary key.
        key: PValue,
        /// Column and value.
        set: Vec<(String, PValue)>,
    },
    /// DELETE by primary key.
    Delete {
        /// Table.
        table: String,
        /// Primary key.
        key: PValue,
    },
    /// SELECT by primary key.
    Get {
        /// Table.
        table: String,
        /// Primary key.
        key: PValue,
    },
    /// A bounded full scan.
    Scan {
        /// Table.
        table: String,
        /// Secondary index, or the primary key.
        index: Option<String>,
        /// Descending.
        reverse: bool,
        /// LIMIT.
        limit: usize,
    },
    /// SAVEPOINT.
    Savepoint(String),
    /// ROLLBACK TO SAVEPOINT.
    RollbackTo(String),
}

impl PlannedStmt {
    /// The engine request (savepoints included).
    pub fn request(&self) -> Request {
        match self {
            PlannedStmt::Insert { table, row } => Request::Insert {
                table: table.clone(),
                row: row.iter().map(PValue::value).collect(),
            },
            PlannedStmt::Update { table, key, set } => Request::Update {
                table: table.clone(),
                key: vec![key.value()],
                set: set.iter().map(|(c, v)| (c.clone(), v.value())).collect(),
            },
            PlannedStmt::Delete { table, key } => Request::Delete {
                table: table.clone(),
                key: vec![key.value()],
            },
            PlannedStmt::Get { table, key } => Request::Get {
                table: table.clone(),
                key: vec![key.value()],
            },
            PlannedStmt::Scan {
                table,
                index,
                reverse,
                limit,
            } => Request::Scan {
                table: table.clone(),
                index: index.clone(),
                low: RangeBound::Unbounded,
                high: RangeBound::Unbounded,
                reverse: *reverse,
                limit: Some(*limit),
            },
            PlannedStmt::Savepoint(n) => Request::Savepoint(n.clone()),
            PlannedStmt::RollbackTo(n) => Request::RollbackToSavepoint(n.clone()),
        }
    }
}

/// A planned transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedTxn {
    /// Its statements, in order.
    pub statements: Vec<PlannedStmt>,
    /// Ends in ROLLBACK instead of COMMIT.
    pub rollback: bool,
}

/// A whole run, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The seed it came from (also seeds the scheduler and crash outcomes).
    pub seed: u64,
    /// The profile it came from.
    pub profile: String,
    /// innodb_flush_log_at_trx_commit.
    pub flush: u8,
    /// Buffer pool pages.
    pub pool_pages: usize,
    /// innodb_lock_wait_timeout in seconds.
    pub lock_wait_timeout_s: u64,
    /// Row formats of the tables `sb` and `docs`.
    pub row_formats: [String; 2],
    /// Fault kinds switched on (swarm testing).
    pub faults: Vec<FaultKind>,
    /// With a full disk: KiB of room above what setup used.
    pub disk_headroom_kib: Option<u64>,
    /// The planted canary, if any.
    pub canary: Option<String>,
    /// Concurrent sessions.
    pub sessions: usize,
    /// Transactions, in the order sessions start them.
    pub transactions: Vec<PlannedTxn>,
    /// For each crash, the I/O operations after the (re)start at which it
    /// strikes. Every run also ends with one more crash.
    pub crash_after_ios: Vec<u64>,
}

/// Row format names in plans.
pub fn format_name(f: RowFormat) -> &'static str {
    match f {
        RowFormat::Redundant => "REDUNDANT",
        RowFormat::Compact => "COMPACT",
        RowFormat::Dynamic => "DYNAMIC",
        // ROW_FORMAT=COMPRESSED arrives with compression.
        _ => "COMPACT",
    }
}

/// The row format of a name in a plan.
pub fn format_of(name: &str) -> Option<RowFormat> {
    Some(match name {
        "REDUNDANT" => RowFormat::Redundant,
        "COMPACT" => RowFormat::Compact,
        "DYNAMIC" => RowFormat::Dynamic,
        _ => return None,
    })
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
    /// Checks a plan loaded from a file.
    pub fn validate(&self) -> Result<(), String> {
        FlushAtCommit::from_setting(self.flush).map_err(|e| e.to_string())?;
        if self.pool_pages < 8
            || self.sessions == 0
            || self.sessions > 64
            || self.lock_wait_timeout_s == 0
        {
            return Err(
                "pool_pages >= 8, sessions in 1..=64 and a positive lock wait timeout are required"
                    .into(),
            );
        }
        for f in &self.row_formats {
            format_of(f).ok_or_else(|| format!("unknown row format '{f}'"))?;
        }
        for t in &self.transactions {
            for s in &t.statements {
                let table = match s {
                    PlannedStmt::Insert { table, .. }
                    | PlannedStmt::Update { table, .. }
                    | PlannedStmt::Delete { table, .. }
                    | PlannedStmt::Get { table, .. }
                    | PlannedStmt::Scan { table, .. } => table,
                    _ => continue,
                };
                if table != "sb" && table != "docs" {
                    return Err(format!("unknown table '{table}'"));
                }
            }
        }
        Ok(())
    }

    /// Statements in the plan (the shrinker's measure).
    pub fn statement_count(&self) -> usize {
        self.transactions
            .iter()
            .map(|t| t.statements.len() + 1)
            .sum()
    }

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
        };
        for _ in 0..profile.transactions {
            let t = txn(&mut rng, profile);
            plan.transactions.push(t);
        }
        plan
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
                    key: k,
                    set,
                }
            }
            60..=74 => PlannedStmt::Delete {
                table: table.into(),
                key: k,
            },
            75..=89 => PlannedStmt::Get {
                table: table.into(),
                key: k,
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
            },
        };
        statements.push(stmt);
    }
    PlannedTxn {
        statements,
        rollback: rng.gen_bool(profile.p_rollback),
    }
}
