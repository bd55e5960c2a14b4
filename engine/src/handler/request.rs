//! The requests a session makes of the engine and what it gets back.

use crate::record::Value;
use crate::trx::Isolation;

/// One end of a key range, as values of the index's leading columns.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RangeBound {
    /// No limit.
    Unbounded,
    /// Inclusive.
    Included(Vec<Value>),
    /// Exclusive.
    Excluded(Vec<Value>),
}

/// A statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Request {
    /// START TRANSACTION (commits any open transaction first, as MySQL).
    Begin,
    /// START TRANSACTION WITH CONSISTENT SNAPSHOT: a transaction that
    /// registers InnoDB at once and, under REPEATABLE READ, takes its read
    /// view now rather than at its first read
    /// (`innobase_start_trx_and_assign_read_view`).
    BeginSnapshot,
    /// COMMIT.
    Commit,
    /// ROLLBACK.
    Rollback,
    /// SAVEPOINT name.
    Savepoint(String),
    /// ROLLBACK TO SAVEPOINT name.
    RollbackToSavepoint(String),
    /// RELEASE SAVEPOINT name.
    ReleaseSavepoint(String),
    /// SET SESSION TRANSACTION ISOLATION LEVEL.
    SetIsolation(Isolation),
    /// SET autocommit.
    SetAutocommit(bool),
    /// SET SESSION innodb_lock_wait_timeout = seconds (1 to 1073741824).
    SetLockWaitTimeout(u64),
    /// The table lock a DDL statement takes before it changes the table
    /// (`row_merge_lock_table`, `row_lock_table_for_mysql`): S, or X
    /// (`exclusive`), in the session's transaction, begun for it if none
    /// is open. It waits like any lock (the lock wait timeout, deadlock
    /// detection, INNODB_LOCK_WAITS) and is held until the transaction
    /// ends: never autocommitted, since the DDL runs under it. The DDL
    /// functions ([`Engine::create_indexes`](super::Engine::create_indexes) and the others) make this
    /// request themselves when their session does not hold the lock yet.
    LockTable {
        /// Table name.
        table: String,
        /// X rather than S.
        exclusive: bool,
    },
    /// INSERT INTO table VALUES (row).
    Insert {
        /// Table name.
        table: String,
        /// One value per column.
        row: Vec<Value>,
    },
    /// UPDATE table SET ... WHERE primary key = key.
    Update {
        /// Table name.
        table: String,
        /// Primary key values.
        key: Vec<Value>,
        /// Column names and new values.
        set: Vec<(String, Value)>,
    },
    /// DELETE FROM table WHERE primary key = key.
    Delete {
        /// Table name.
        table: String,
        /// Primary key values.
        key: Vec<Value>,
    },
    /// SELECT * FROM table WHERE primary key = key.
    Get {
        /// Table name.
        table: String,
        /// Primary key values.
        key: Vec<Value>,
    },
    /// A locking read: `read` (a [`Request::Get`], [`Request::Scan`] or
    /// [`Request::Ranges`])
    /// with FOR UPDATE (`exclusive`) or LOCK IN SHARE MODE. It reads the
    /// newest committed-or-own version and locks what it reads.
    Locking {
        /// The read.
        read: Box<Request>,
        /// FOR UPDATE rather than LOCK IN SHARE MODE.
        exclusive: bool,
        /// The read is a SELECT's, whose WHERE a later server pushes down
        /// with the range's end (index condition pushdown): read under
        /// [`crate::LaterRule::IndexConditionPushdown`] only.
        index_condition: bool,
    },
    /// A read (plain, or a [`Request::Locking`] or [`Request::SkipLocked`]
    /// one) through a secondary index that holds every column the
    /// statement reads, whole (MySQL's covering keys: the index's own
    /// columns and the primary key's). InnoDB's `build_template` then
    /// finds each column it must return in the secondary record
    /// (`need_to_access_clustered` stays false) unless the read locks X,
    /// which fetches the whole row: a read that locks S (LOCK IN SHARE
    /// MODE, a plain read under SERIALIZABLE) locks the index entries and
    /// neither looks up nor locks their clustered records. On the
    /// clustered index, or with FOR UPDATE, it is `read` alone.
    IndexOnly {
        /// The read.
        read: Box<Request>,
    },
    /// A locking read that skips the rows other transactions hold locks
    /// on instead of waiting (FOR UPDATE / FOR SHARE ... SKIP LOCKED, as
    /// MySQL 8.0 has it): `read` is a [`Request::Scan`].
    SkipLocked {
        /// The scan.
        read: Box<Request>,
        /// FOR UPDATE rather than FOR SHARE.
        exclusive: bool,
    },
    /// UPDATE's read under READ COMMITTED and READ UNCOMMITTED, InnoDB's
    /// semi-consistent read: an X-locking [`Request::Scan`] of the
    /// clustered index that, where a row's lock would wait, returns the
    /// row's last committed version without locking it
    /// ([`Engine::semi_consistent_rows`](super::Engine::semi_consistent_rows) says which); the caller locks
    /// those rows its WHERE matches with a locking read of their key,
    /// which waits. On a table with a primary key the scan stops after
    /// the first row it reads so, which comes last in its rows: MySQL's
    /// UPDATE reads that row again with its lock (waiting) before it reads
    /// on, so the caller goes on from after it with another read, and the
    /// rows past it are read (and locked) only then, in their state after
    /// the wait. Under REPEATABLE READ and SERIALIZABLE, or through a
    /// secondary index, it is [`Request::Locking`] FOR UPDATE.
    SemiConsistent {
        /// The scan.
        read: Box<Request>,
    },
    /// SELECT * FROM table [FORCE INDEX (index)] WHERE key range
    /// ORDER BY key \[DESC\] LIMIT n.
    Scan {
        /// Table name.
        table: String,
        /// A secondary index name, or `None` for the primary key.
        index: Option<String>,
        /// Lower end.
        low: RangeBound,
        /// Upper end.
        high: RangeBound,
        /// Descending order.
        reverse: bool,
        /// At most this many rows.
        limit: Option<usize>,
    },
    /// Several ranges of one index read one after the other, in the order
    /// given, their rows in that order (MySQL's multi-range read of an IN
    /// list): a range that is one whole primary key is a point read
    /// ([`Request::Get`]), any other a [`Request::Scan`]; each locks as
    /// that read would. For a table with a primary key.
    Ranges {
        /// Table name.
        table: String,
        /// A secondary index name, or `None` for the primary key.
        index: Option<String>,
        /// The ranges, low and high ends.
        ranges: Vec<(RangeBound, RangeBound)>,
    },
}

impl Request {
    /// Whether it reads or changes a table (what makes MySQL register
    /// InnoDB in the transaction): everything but the transaction's own
    /// control and the session's settings.
    pub fn touches_table(&self) -> bool {
        !matches!(
            self,
            Request::Begin
                | Request::BeginSnapshot
                | Request::Commit
                | Request::Rollback
                | Request::SetIsolation(_)
                | Request::SetAutocommit(_)
                | Request::SetLockWaitTimeout(_)
                | Request::Savepoint(_)
                | Request::ReleaseSavepoint(_)
                | Request::RollbackToSavepoint(_)
        )
    }

    /// A read of every row of `table`, in primary key order.
    pub fn scan_all(table: &str) -> Request {
        Request::Scan {
            table: table.to_string(),
            index: None,
            low: RangeBound::Unbounded,
            high: RangeBound::Unbounded,
            reverse: false,
            limit: None,
        }
    }

    /// Whether the request reads no range at all (a read of no ranges,
    /// plain or locking): the SQL layer's impossible WHERE, which it
    /// answers without asking the engine, as MySQL never calls the
    /// storage engine for one (no table lock, no read view).
    pub fn reads_nothing(&self) -> bool {
        match self {
            Request::Ranges { ranges, .. } => ranges.is_empty(),
            Request::Locking { read, .. }
            | Request::SkipLocked { read, .. }
            | Request::SemiConsistent { read }
            | Request::IndexOnly { read } => read.reads_nothing(),
            _ => false,
        }
    }

    /// A point read as the range of its one key (SKIP LOCKED reads
    /// ranges); any other request as it is.
    pub fn as_range(self) -> Request {
        match self {
            Request::Get { table, key } => Request::Scan {
                table,
                index: None,
                low: RangeBound::Included(key.clone()),
                high: RangeBound::Included(key),
                reverse: false,
                limit: None,
            },
            r => r,
        }
    }

    /// The reads of a [`Request::Ranges`], each a point read or a scan.
    pub fn range_reads(
        table: &str,
        index: &Option<String>,
        ranges: &[(RangeBound, RangeBound)],
        pk_len: usize,
    ) -> Vec<Request> {
        ranges
            .iter()
            .map(|(low, high)| match (index, low, high) {
                (None, RangeBound::Included(a), RangeBound::Included(b))
                    if a == b && a.len() == pk_len =>
                {
                    Request::Get {
                        table: table.to_string(),
                        key: a.clone(),
                    }
                }
                _ => Request::Scan {
                    table: table.to_string(),
                    index: index.clone(),
                    low: low.clone(),
                    high: high.clone(),
                    reverse: false,
                    limit: None,
                },
            })
            .collect()
    }
}

/// A statement's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// Done, nothing to report.
    Ok,
    /// Rows changed.
    Affected(u64),
    /// A point read.
    Row(Option<Vec<Value>>),
    /// A range read.
    Rows(Vec<Vec<Value>>),
}

/// The result of submitting a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Finished.
    Done(Response),
    /// Waiting for another transaction; call [`Engine::resume`](super::Engine::resume).
    Waiting,
}
