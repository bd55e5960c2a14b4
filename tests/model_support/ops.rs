//! The operations a model test runs, the tables they address, and the
//! values they write: small descriptions (keys from small ranges, long
//! values as a length and a seed), so that a shrunk failure prints short.

use engine::{Isolation, RangeBound, Request, RowFormat, Value};

/// The sysbench-shaped table.
pub const SB: &str = "sbtest1";
/// The table with a long column.
pub const DOCS: &str = "docs1";
/// sbtest ids of point operations come mostly from here, so that inserts
/// collide and updates and deletes find rows.
pub const SB_HOT_IDS: u32 = 64;
/// Bulk inserts reach this far, so trees grow several levels.
pub const SB_IDS: u32 = 3000;
/// Values of the indexed column `k`: few, so the secondary index has
/// duplicates.
pub const SB_K_VALUES: u32 = 20;
/// docs ids, negative ones included (BIGINT is signed).
pub const DOCS_IDS: std::ops::Range<i64> = -8..56;
/// Values of docs' indexed VARCHAR(40) NULL column `v`: NULL, the empty
/// string, a trailing space (significant in VARCHAR), prefixes of each
/// other, and the longest value the column takes.
pub const V_CHOICES: [Option<&[u8]>; 9] = [
    None,
    Some(b""),
    Some(b"a"),
    Some(b"a "),
    Some(b"aa"),
    Some(b"ab"),
    Some(b"b"),
    Some(b"m"),
    Some(&[b'z'; 40]),
];

/// Which table an operation addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tbl {
    Sb,
    Docs,
}

impl Tbl {
    pub fn name(self) -> &'static str {
        match self {
            Tbl::Sb => SB,
            Tbl::Docs => DOCS,
        }
    }

    pub fn id_value(self, id: i64) -> Value {
        match self {
            Tbl::Sb => Value::UInt(id as u64),
            Tbl::Docs => Value::Int(id),
        }
    }

    /// The column the secondary index covers, its name, and a bound value.
    pub fn secondary(self) -> (usize, &'static str) {
        match self {
            Tbl::Sb => (1, "k"),
            Tbl::Docs => (1, "v"),
        }
    }

    pub fn secondary_value(self, x: i64) -> Value {
        match self {
            Tbl::Sb => Value::UInt(x as u64),
            Tbl::Docs => v_value(x as u8),
        }
    }
}

/// A long column value: its length and a seed for its bytes, so a failing
/// case prints short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Doc {
    pub len: u32,
    pub seed: u8,
}

/// One end of a range, as a number the scan's index interprets: an id, a
/// `k`, or an index into [`V_CHOICES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bnd {
    Unbounded,
    Included(i64),
    Excluded(i64),
}

/// A range scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanSpec {
    pub table: Tbl,
    pub secondary: bool,
    pub low: Bnd,
    pub high: Bnd,
    pub reverse: bool,
    pub limit: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// SELECT by primary key in the main session.
    Get {
        table: Tbl,
        id: i64,
    },
    /// A range scan in the main session.
    Scan(ScanSpec),
    /// INSERT into sbtest (new or duplicate key).
    InsertSb {
        id: u32,
        k: u32,
        c: u16,
    },
    /// INSERT into docs.
    InsertDoc {
        id: i64,
        v: u8,
        doc: Option<Doc>,
    },
    /// `n` INSERTs of consecutive ids into sbtest, to grow the trees.
    BulkInsertSb {
        start: u32,
        n: u16,
    },
    /// An INSERT with a value too long for its column: error 1406.
    InsertTooLong {
        table: Tbl,
        id: i64,
    },
    /// UPDATE sbtest SET k, c.
    UpdateSb {
        id: u32,
        k: Option<u32>,
        c: Option<u16>,
    },
    /// UPDATE docs SET v, doc.
    UpdateDoc {
        id: i64,
        v: Option<u8>,
        doc: Option<Option<Doc>>,
    },
    /// UPDATE SET id = new_id (and the indexed column, if `also`).
    UpdateKey {
        table: Tbl,
        id: i64,
        new_id: i64,
        also: Option<u8>,
    },
    /// DELETE by primary key.
    Delete {
        table: Tbl,
        id: i64,
    },
    Begin,
    Commit,
    Rollback,
    Savepoint(u8),
    RollbackToSavepoint(u8),
    ReleaseSavepoint(u8),
    /// SET autocommit to the other value.
    ToggleAutocommit,
    PurgeAll,
    Checkpoint,
    /// Advances the clock past the background period, so the log flush,
    /// page cleaner and purge run.
    Tick,
    /// Compares every table, read in the main session, with the model, and
    /// runs CHECK TABLE.
    Verify,
    /// close() and open on the same storage.
    Reopen,
    /// Drop without close, then open: crash recovery.
    Crash,
    /// BEGIN in the reader session.
    ReaderBegin,
    /// A point read in the reader session.
    ReaderGet {
        table: Tbl,
        id: i64,
    },
    /// A range scan in the reader session.
    ReaderScan(ScanSpec),
    /// COMMIT in the reader session.
    ReaderCommit,
}

/// One test case: a configuration and the operations.
#[derive(Debug, Clone)]
pub struct Case {
    pub buffer_pool_pages: usize,
    pub small_log: bool,
    pub doublewrite: bool,
    pub sb_format: RowFormat,
    pub docs_format: RowFormat,
    pub reader_isolation: Isolation,
    pub ops: Vec<Op>,
}

/// A value longer than this cannot stay in a record in any row format:
/// records are at most half a page.
pub fn index_page_half() -> usize {
    8 * 1024
}

pub fn doc_bytes(d: Doc) -> Vec<u8> {
    let seed = u32::from(d.seed);
    (0..d.len)
        .map(|i| b'a' + ((i / 7 + i * seed + seed) % 26) as u8)
        .collect()
}

pub fn doc_value(d: Option<Doc>) -> Value {
    d.map_or(Value::Null, |d| Value::Bytes(doc_bytes(d)))
}

pub fn v_value(i: u8) -> Value {
    V_CHOICES[usize::from(i) % V_CHOICES.len()].map_or(Value::Null, |b| Value::Bytes(b.to_vec()))
}

/// sbtest's CHAR(120) `c`: 0 to 120 letters. No trailing spaces, which CHAR
/// would drop.
pub fn sb_c(seed: u16) -> Value {
    let len = usize::from(seed) % 121;
    Value::Bytes(
        (0..len)
            .map(|i| b'a' + ((i + usize::from(seed)) % 26) as u8)
            .collect(),
    )
}

pub fn sb_row(id: u32, k: u32, c: u16) -> Vec<Value> {
    vec![
        Value::UInt(u64::from(id)),
        Value::UInt(u64::from(k)),
        sb_c(c),
        Value::Bytes(format!("pad{id}").into_bytes()),
    ]
}

pub fn doc_row(id: i64, v: u8, doc: Option<Doc>) -> Vec<Value> {
    vec![Value::Int(id), v_value(v), doc_value(doc)]
}

pub fn range_bound(table: Tbl, secondary: bool, b: Bnd) -> RangeBound {
    let value = |x: i64| {
        if secondary {
            table.secondary_value(x)
        } else {
            table.id_value(x)
        }
    };
    match b {
        Bnd::Unbounded => RangeBound::Unbounded,
        Bnd::Included(x) => RangeBound::Included(vec![value(x)]),
        Bnd::Excluded(x) => RangeBound::Excluded(vec![value(x)]),
    }
}

pub fn scan_request(s: &ScanSpec) -> Request {
    Request::Scan {
        table: s.table.name().into(),
        index: s.secondary.then(|| s.table.secondary().1.to_string()),
        low: range_bound(s.table, s.secondary, s.low),
        high: range_bound(s.table, s.secondary, s.high),
        reverse: s.reverse,
        limit: s.limit.map(usize::from),
    }
}
