//! The server layer: MySQL-flavoured SQL over the engine. Mirrors, just
//! enough, what `sql_parse.cc` (`mysql_execute_command`), `sql_select.cc`,
//! `sql_insert.cc`, `sql_update.cc`, `sql_delete.cc`, `sql_show.cc` and
//! `set_var.cc` do for the statements the seeds and sysbench send.
//!
//! A [`Server`] owns an [`Engine`] and its connections. A statement is
//! parsed ([`parse`]), planned onto the engine's requests (an access path
//! per MySQL's choice: the primary key for conditions on it, a secondary
//! index for conditions on its leading columns, otherwise a scan of the
//! clustered index), and run one request at a time, so a statement that
//! waits for a lock is [`Outcome::Blocked`] and goes on with
//! [`Server::resume`] exactly where it stopped. A statement of several
//! requests (an UPDATE of many rows, an INSERT of several) runs inside
//! [`Engine::begin_statement`]: when it fails part-way, all of its changes
//! are undone together.
//!
//! The server's own definition of a table (types as written, defaults,
//! AUTO_INCREMENT, the options given) lives in the engine's dictionary row
//! as the table's SHOW CREATE TABLE text ([`schema`]), so a DDL statement
//! changes both or neither. Databases are name prefixes: table `t` of
//! database `test` is the engine's `test$t`, and a database exists while
//! its marker table `test$` does.
//!
//! # What it takes
//!
//! Its own parser of MySQL's grammar for the statements below ([`parse`]: a 1064 quotes the
//! statement from the token the grammar could not take, as MySQL's does), MySQL's error codes,
//! SQLSTATEs and texts ([`errmsg`]), and SHOW WARNINGS. A failure part-way through a statement
//! of several rows (1062, 1205, 1264 ...) undoes all of it (`cargo test --test sql_front_end
//! a_failed_statement`). What is there today:
//!
//! - CREATE TABLE with the seeds' and sysbench's definitions (TINYINT..BIGINT \[UNSIGNED] with
//!   display widths, CHAR, VARCHAR, TEXT and BLOB kinds, NOT NULL, DEFAULT, AUTO_INCREMENT,
//!   PRIMARY KEY, KEY/INDEX, UNIQUE, ENGINE, ROW_FORMAT, KEY_BLOCK_SIZE, CHARSET latin1, `/*!
//!   ... */`), CREATE TABLE ... LIKE, DROP TABLE \[IF EXISTS], CREATE/DROP DATABASE, USE. The
//!   server's definition of a table (types as written, defaults, options) is kept as its SHOW
//!   CREATE TABLE text in the same dictionary row as the engine's, so a DDL leaves both or
//!   neither.
//! - `innodb_file_format`, `innodb_strict_mode` and InnoDB Plugin 1.0's outcome for every
//!   ROW_FORMAT and KEY_BLOCK_SIZE (`ha_innobase::create`, `create_options_are_valid`): the
//!   seeds' warnings word for word in `corpus/scenarios/file_format_strict_mode.test`.
//! - INSERT (several rows, INSERT ... SELECT, SET), UPDATE and DELETE with any WHERE, ORDER BY
//!   and LIMIT; SELECT with column lists, WHERE (comparisons, BETWEEN, IN, LIKE, IS NULL,
//!   AND/OR/NOT/XOR, arithmetic), DISTINCT, COUNT/SUM/MIN/MAX/AVG, GROUP BY \[ASC|DESC] and
//!   HAVING (aliases and positions allowed, groups in GROUP BY order unless ORDER BY says
//!   otherwise, other columns from a group's first row: `corpus/scenarios/group_by.test`),
//!   ORDER BY, LIMIT, FOR UPDATE, LOCK IN SHARE MODE. The access path is the primary key for
//!   conditions on it, else the first secondary index whose leading column the WHERE bounds,
//!   else a scan of the clustered index; locking reads, UPDATE and DELETE lock what that path
//!   reads. On a table without a primary key (clustered on InnoDB's hidden DB_ROW_ID) a read
//!   reports each row's id beside it (`Engine::row_refs`, MySQL's handler reference) and UPDATE
//!   and DELETE name the row by it, so of two equal rows `DELETE ... LIMIT 1` takes one:
//!   `corpus/scenarios/no_primary_key.test`, and `cargo test --test keyless` (random inserts,
//!   updates and deletes of such rows, rollbacks, purges, old views, restarts and crashes
//!   against a model of the rows in insertion order).
//! - BEGIN/COMMIT/ROLLBACK/SAVEPOINT/ROLLBACK TO/RELEASE; SET \[GLOBAL|SESSION] autocommit,
//!   tx_isolation, SET TRANSACTION ISOLATION LEVEL, innodb_lock_wait_timeout,
//!   innodb_flush_log_at_trx_commit, innodb_file_format, innodb_file_per_table,
//!   innodb_strict_mode, innodb_compression_level, innodb_io_capacity,
//!   innodb_max_dirty_pages_pct (clamped to their ranges with MySQL's 1292 warning),
//!   unique_checks, foreign_key_checks, with MySQL's scope errors (1229, 1238, 1231, 1193).
//! - FOREIGN KEY constraints as InnoDB Plugin 1.0.6 keeps them
//!   (`engine/src/handler/foreign.rs`, `engine/src/row/foreign.rs`, after row0ins.c):
//!   `[CONSTRAINT c] FOREIGN KEY [i] (cols) REFERENCES t (cols) [ON DELETE|UPDATE RESTRICT|NO
//!   ACTION|CASCADE|SET NULL]` in CREATE and ALTER TABLE (ALTER ... DROP FOREIGN KEY too; a
//!   column's own REFERENCES is parsed and ignored, as MySQL ignores it); the key MySQL makes
//!   on the child's columns where none starts with them; InnoDB's `t_ibfk_N` names; SHOW CREATE
//!   TABLE's CONSTRAINT lines. A child row S-locks its parent record, a missing parent the gap
//!   after where it would be (1452); a change of a parent row scans the child's index the same
//!   way and refuses (1451) or acts, each cascaded change answering to its own constraints,
//!   InnoDB's refusals of a cyclic cascaded update and of a chain deeper than 15 included, all
//!   undone with the statement; these locks are taken at every isolation level, as InnoDB takes
//!   them. errno 150 for a bad definition (no parent, no index on the parent's columns, types
//!   that differ, SET NULL on NOT NULL), 121 for a constraint name taken in the database, 1217
//!   for DROP TABLE of a referenced table, 1553 for DROP INDEX of an index a constraint needs;
//!   TRUNCATE of a referenced table deletes row by row; RENAME of a parent carries its
//!   constraints; a copying ALTER that adds one checks the rows (1452); `foreign_key_checks=0`
//!   turns checks, locks and actions off and lets a parent come later. information_schema
//!   KEY_COLUMN_USAGE, TABLE_CONSTRAINTS and REFERENTIAL_CONSTRAINTS list them
//!   (`corpus/scenarios/foreign_keys.test`). `cargo test --test foreign_crash` crashes a DELETE
//!   that cascades through two levels at every I/O, under each flush setting, by process crash
//!   and power loss (about 900 crash points): no orphan, the delete whole or not at all.
//! - SHOW TABLES, DATABASES, TABLE STATUS \[LIKE|WHERE], CREATE TABLE, WARNINGS, ERRORS,
//!   VARIABLES \[LIKE|WHERE], INDEX, COLUMNS (and DESC), ENGINE INNODB STATUS (its LATEST
//!   DETECTED DEADLOCK and TRANSACTIONS sections); SELECT from information_schema TABLES,
//!   KEY_COLUMN_USAGE, TABLE_CONSTRAINTS, REFERENTIAL_CONSTRAINTS, INNODB_TRX, INNODB_LOCKS,
//!   INNODB_LOCK_WAITS, INNODB_CMP\[_RESET], INNODB_CMPMEM\[_RESET].
//! - CHECK TABLE t, ... (`Engine::check_table`, as `btr_validate_index` and
//!   `row_check_index_for_mysql`): every index walked, its order, links and levels checked,
//!   each secondary index compared entry for entry with the clustered index; MySQL's
//!   Table/Op/Msg_type/Msg_text rows (`status OK`, or each problem and `error Corrupt`).
//!
//! - TRUNCATE TABLE (`Engine::truncate_table`, as `row_truncate_table_for_mysql`): a new
//!   tablespace with a new space id under a temporary name, one synced dictionary transaction
//!   that replaces the definition, then the old file deleted and the new one renamed; recovery
//!   finishes a rename a crash cut short. The file goes back to its initial 4 pages and
//!   AUTO_INCREMENT restarts. `cargo test --test ddl_crash` crashes one TRUNCATE at each of its
//!   I/O operations under flush 0, 1 and 2, after a process crash, a power loss losing every
//!   unsynced operation and a seeded mix of kept, lost and torn ones: recovery always leaves
//!   the old rows or the empty table, one `t.ibd` and no other file, a clean CHECK TABLE and a
//!   table that takes rows.
//!
//! - Fast index creation (`Engine::create_indexes`, as Plugin 1.0's `row0merge.cc`): CREATE
//!   INDEX and ALTER TABLE ... ADD INDEX (several in one scan) enter the dictionary named as
//!   building, scan the clustered index once, sort each index's entries with a bounded sort
//!   buffer (`Config::sort_buffer_bytes`, 1 MiB; runs spill to a `#sql-merge-*` file and are
//!   merged), insert them in order, refuse a UNIQUE index over duplicates (1062, nothing left
//!   behind), and commit the names; a read view older than that commit gets 1412 on the new
//!   index. Startup drops an index a crash left half built and removes stale merge files. DROP
//!   INDEX is a dictionary change that frees the index's pages. `cargo test --test ddl_crash`
//!   crashes a CREATE UNIQUE INDEX whose sort spills runs at each of its I/O operations (381
//!   crashes over the three flush settings and three crash kinds): every row, and no new index
//!   or the whole of it, no merge file left. `corpus/scenarios/fast_index.test` shows 1412, the
//!   1062 and SHOW INDEX after them. Every DDL but CREATE TABLE first takes a table lock in the
//!   connection's transaction (`Request::LockTable`; S to build an index, X to drop one,
//!   TRUNCATE, DROP TABLE and a copying ALTER), waiting as a row statement waits: a CREATE
//!   INDEX beside a transaction that changed the table, even by deleting a missing key, blocks
//!   until that transaction ends or fails with 1205 at `innodb_lock_wait_timeout`, INNODB_LOCKS
//!   shows both table locks, and a deadlock through a table lock is detected
//!   (`corpus/scenarios/ddl_table_lock.test`). InnoDB 1.0 took S and X for fast index creation
//!   and DROP INDEX (`row_merge_lock_table`) but none for TRUNCATE or DROP TABLE, which MySQL
//!   5.1 let go ahead beside an open transaction; innosim makes them wait, as MySQL 5.5's
//!   metadata locks do.
//!
//! - ALTER TABLE by copying (`Engine::rebuild_table`): ALGORITHM=COPY, ROW_FORMAT and
//!   KEY_BLOCK_SIZE changes (under the same file-format and strict-mode rules as CREATE),
//!   ADD/DROP PRIMARY KEY, a null ALTER (`ENGINE=InnoDB`) and OPTIMIZE TABLE copy every row
//!   into a new tablespace built under a temporary name (committed every 10,000 rows), then
//!   swap definitions in one dictionary transaction and rename, as TRUNCATE does. `cargo test
//!   --test ddl_crash` crashes a copy into COMPRESSED 4K with a new UNIQUE index at each of its
//!   I/O operations (1317 crashes): the old table or the whole new one. ALGORITHM=INPLACE on a
//!   change that needs a copy is refused (1846). ADD/DROP/CHANGE/MODIFY COLUMN (with
//!   FIRST/AFTER) copy the same way, each row converted into the new columns
//!   (`Engine::rebuild_table_mapped`), keys moved with their columns; a rename alone changes
//!   only the server's definition, as InnoDB Plugin 1.0.6 did (MySQL bug 44571: a fast index on
//!   the new name then fails with 1034; `corpus/scenarios/alter_columns.test`).
//! - Collations in the engine, and utf8 columns: a CHAR, VARCHAR or TEXT column compares in its
//!   collation in index order, uniqueness, duplicate checks and locks, and the layer's WHERE,
//!   ORDER BY, GROUP BY and DISTINCT use the same one ([`crate::record::collation`] says what
//!   is there and how it is tested). Column prefix indexes (`KEY (c(10))`) store and compare
//!   the prefix, an off-page column's read from its chain
//!   (`corpus/scenarios/prefix_index.test`); a PRIMARY KEY on a prefix keeps the prefix as the
//!   clustered key and the column whole in the record, as InnoDB lays it out
//!   (`corpus/scenarios/primary_key_prefix.test`). Character sets: latin1, ascii, utf8 and
//!   binary.
//! - SELECT over joined tables: comma, `[INNER|CROSS] JOIN ... ON/USING`, `NATURAL JOIN` and
//!   `LEFT JOIN`, a nested loop over consistent reads of each table (locking reads of joins are
//!   refused as unsupported); table names of any character, written into file names in MySQL's
//!   filename encoding; hexadecimal literals (`0x..`, `X'..'`, numbers in numeric context) and
//!   `HEX()`; `sql_mode` with ANSI_QUOTES (`corpus/scenarios/joins.test`,
//!   `corpus/scenarios/names_and_literals.test`).
//! - REPLACE, INSERT ... ON DUPLICATE KEY UPDATE and INSERT IGNORE as MySQL 5.1 handles a
//!   collision, the row in the way X-locked by the duplicate check
//!   (`corpus/scenarios/replace_and_duplicates.test`); ANALYZE TABLE samples
//!   `innodb_stats_sample_pages` leaf pages per index by InnoDB's formula and SHOW INDEX shows
//!   the Cardinality it gives (`corpus/scenarios/analyze_table.test`). A locking SELECT with
//!   LIMIT whose WHERE is exactly the key range it reads locks only the rows the LIMIT takes
//!   (`corpus/scenarios/locking_read_limit.test`). The index benchmark's DDL figures, fast
//!   index creation against COPY and TRUNCATE against DELETE, are `sim::index_bench`'s.
//! - FOR UPDATE / LOCK IN SHARE MODE ... NOWAIT gives up a lock wait at once
//!   (`Engine::cancel_wait`, 3572, as MySQL 8.0 answers; Plugin 1.0 had no NOWAIT), and SKIP
//!   LOCKED leaves out the rows another transaction holds (`Request::SkipLocked`: a request
//!   that would wait is not made). Under READ COMMITTED an UPDATE or DELETE releases the locks
//!   it took on rows its WHERE rejects (`Engine::unlock_rows`, as `row_unlock_for_mysql`):
//!   `corpus/scenarios/nowait.test`, `read_committed_unlock.test`.
//!
//! - UPDATE's semi-consistent read (`Request::SemiConsistent`, as `row_search_for_mysql`'s
//!   `did_semi_consistent_read`): under READ COMMITTED or READ UNCOMMITTED an UPDATE that scans
//!   the clustered index reads a row another transaction holds as its last committed version,
//!   without waiting; a row that version matches is then locked (waiting if it must) and its
//!   WHERE tested again, and a row it does not match is skipped unlocked. DELETE and REPEATABLE
//!   READ still wait: `corpus/scenarios/semi_consistent_read.test`.
//!
//! - `innodb_file_per_table` (GLOBAL, dynamic, or `--restart innodb_file_per_table=0`): off, a
//!   new table's trees go into the system tablespace (`ibdata1`), no `.ibd`; DROP frees their
//!   pages (the off-page columns first) to InnoDB after the dictionary commit and TRUNCATE
//!   rebuilds the trees in place, so `ibdata1` never shrinks; a table stays where it was made,
//!   a copying ALTER follows the setting of the moment, and compression needs a file of its own
//!   (InnoDB's "requires innodb_file_per_table" warnings, or 1005 in strict mode):
//!   `corpus/scenarios/file_per_table.test`. A crash between a DROP's or TRUNCATE's commit and
//!   its last page free leaks the pages not yet freed (nothing names them). `cargo test --test
//!   ddl_crash ddl_in_the_system` crashes a TRUNCATE, a copying ALTER and a DROP of such a
//!   table at each of their I/O operations under each flush setting and crash kind (822
//!   crashes): the old table or the new one, whole, and no file.
//!
//! - Column types beyond integers and strings, as MySQL's Field classes hand them to InnoDB
//!   (`engine/src/sql/field.rs`): DATE, TIME, DATETIME, TIMESTAMP and YEAR, ENUM and SET as the
//!   integers InnoDB's DATA_INT keeps, DECIMAL(M,D) in `decimal2bin`'s bytes (a fixed-length
//!   binary field), FLOAT and DOUBLE (kept as order-preserving bits, where InnoDB keeps the
//!   machine's and compares numbers), BOOL; read back in MySQL's text; TIMESTAMP's
//!   CURRENT_TIMESTAMP defaults on the server's clock (the engine clock from 2010-01-01
//!   00:00:00 UTC, so a simulated run's times are its seed's):
//!   `corpus/scenarios/column_types.test`.
//! - `sql_mode`: MySQL 5.1's default ('') stores a value a column cannot take adjusted
//!   (clipped, cut, a date's zero) with warnings 1264, 1265, 1366 or 1292 naming the row, and a
//!   missing NOT NULL value as its type's implicit default (1364); STRICT_TRANS_TABLES or
//!   STRICT_ALL_TABLES fail the statement; INSERT IGNORE adjusts in strict mode too:
//!   `corpus/scenarios/sql_mode.test`.
//! - RENAME TABLE and ALTER TABLE ... RENAME (one dictionary transaction, then the file;
//!   startup finishes a rename a crash cut short; `cargo test --test ddl_crash rename` crashes
//!   it at every I/O, 78 crashes: the old name or the new, never both or neither); USE, FORCE
//!   and IGNORE INDEX on a single-table read; InnoDB's reserved names (DB_ROW_ID, DB_TRX_ID,
//!   DB_ROLL_PTR, DB_MIX_ID: 1166; GEN_CLUST_INDEX: 1280); auto_increment_increment,
//!   auto_increment_offset, insert_id and binlog_format; the first statement to open a
//!   Barracuda table raises innodb_file_format_check, as ha_innobase::open does
//!   (`rename_table.test`, `index_hints.test`, `reserved_names.test`,
//!   `autoinc_variables.test`).
//! - AUTO_INCREMENT as `innodb_autoinc_lock_mode = 1` hands it out: a statement reserves as
//!   many values as its VALUES list has rows, or 1, 2, 4, ... at a time for INSERT ... SELECT,
//!   and the counter moves past what it reserved, used or not (the manual's mixed-mode example
//!   gives 101, 102 and AUTO_INCREMENT=105); at a type's maximum the next insert is a duplicate
//!   (1062), a spent BIGINT UNSIGNED counter 1467 (`autoinc_lock_mode.test`).
//! - Locking reads end where InnoDB 1.0's end: a range reads on to the first record past its
//!   end and locks it (and, through a secondary index, that row's clustered record), under READ
//!   COMMITTED too; an equality on an index's leading columns ends with a gap lock only; an IN
//!   list is one lookup a member (`Request::Ranges`), locking no row between them; SET SESSION
//!   TRANSACTION ISOLATION LEVEL inside a transaction takes effect at the next statement, for
//!   its locks and its read view (`locking_range_end.test`, `isolation_per_statement.test`).
//!
//! # Also
//!
//! CHECKSUM TABLE t, ... `[QUICK | EXTENDED]` as MySQL 5.1 computes it for InnoDB
//! (`mysql_checksum_table`: a CRC-32 of each committed row in the server's record format,
//! summed; QUICK is NULL), giving the figures MySQL 5.1.45's `innodb.result` records
//! (`checksum_table.test`).
//!
//! EXPLAIN SELECT in MySQL 5.1's columns, for the access path the layer takes (const, ref,
//! range, an index read whole for ORDER BY, ALL), with key_len as MySQL's key buffer counts it
//! and `rows` from InnoDB's estimates (`stat_n_rows`, `btr_estimate_n_rows_in_range`); a read
//! in ORDER BY's order lets LIMIT stop it, and a locking read's locks with it (`explain.test`).
//!
//! # Not built yet
//!
//! Each answers 1235 "doesn't yet support": subqueries, WITH ROLLUP, ON DELETE SET DEFAULT
//! (InnoDB refuses it too), index hints on a joined table, EXPLAIN of a join or with EXTENDED,
//! and INSERT ... SELECT from a join.

pub mod ast;
pub mod errmsg;
pub mod error;
pub mod eval;
pub mod field;
pub mod format;
pub mod lex;
pub mod parse;
pub mod schema;
pub mod split;
pub mod value;

mod exec;
mod mode;
mod names;
mod show;

pub use error::{SqlError, Warning};
pub use mode::SqlMode;
pub use names::{decode_name, encode_name, engine_name, split_name};
pub use value::Datum;

use crate::handler::{Config, Engine, RecoveryReport, SessionId};
use crate::io::{Clock, Storage};
use crate::record::collation::Collation;
use crate::trx::Isolation;
use schema::TableMeta;
use std::collections::BTreeMap;

/// Identifies a connection.
pub type ConnId = u32;

/// What a finished statement gives back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Done without a result set.
    Ok {
        /// Rows affected.
        affected: u64,
        /// The info line (`Records: 5  Duplicates: 0  Warnings: 0`).
        info: Option<String>,
        /// Warnings left.
        warnings: usize,
    },
    /// A result set.
    Rows {
        /// Column names.
        columns: Vec<String>,
        /// Rows.
        rows: Vec<Vec<Datum>>,
        /// Warnings left.
        warnings: usize,
    },
    /// The statement failed.
    Error(SqlError),
}

/// The result of submitting a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Finished.
    Done(Reply),
    /// Waiting for a lock (or for the group commit's sync); call
    /// [`Server::resume`].
    Blocked,
}

/// Global settings the server keeps.
#[derive(Debug, Clone)]
struct Globals {
    barracuda: bool,
    /// innodb_file_format_check: the highest file format the tablespace
    /// is tagged with (Barracuda once set so).
    format_check: bool,
    strict_mode: bool,
    autocommit: bool,
    isolation: Isolation,
    lock_wait_timeout: u64,
    /// innodb_stats_sample_pages: leaf pages ANALYZE TABLE samples.
    stats_sample_pages: u64,
    sql_mode: SqlMode,
    autoinc_step: AutoincStep,
    binlog_format: &'static str,
    /// character_set_client, _connection and _results for new
    /// connections.
    charsets: (&'static str, Collation, Option<&'static str>),
    /// max_connections: what the protocol layer admits.
    max_connections: u64,
}

/// auto_increment_increment and auto_increment_offset: generated values
/// are `offset + k * increment` (the offset ignored when above the
/// increment), the least such above the table's counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AutoincStep {
    pub(crate) increment: u64,
    pub(crate) offset: u64,
}

impl Default for AutoincStep {
    fn default() -> Self {
        AutoincStep {
            increment: 1,
            offset: 1,
        }
    }
}

impl AutoincStep {
    /// The first value of the series at or above `at`
    /// (`innobase_next_autoinc`'s rule).
    pub(crate) fn at_or_above(self, at: u64) -> u64 {
        let inc = self.increment.max(1);
        let off = if self.offset > inc {
            1
        } else {
            self.offset.max(1)
        };
        if at <= off {
            return off;
        }
        let k = (at - off).div_ceil(inc);
        off.saturating_add(k.saturating_mul(inc))
    }
}

/// A connection.
#[derive(Debug)]
struct Conn {
    session: SessionId,
    db: Option<String>,
    strict_mode: bool,
    sql_mode: SqlMode,
    unique_checks: bool,
    foreign_key_checks: bool,
    /// auto_increment_increment and auto_increment_offset.
    autoinc_step: AutoincStep,
    /// insert_id: the value the next generated AUTO_INCREMENT takes.
    insert_id: Option<u64>,
    /// binlog_format, as the session would log (innosim writes no binary
    /// log, as a server without --log-bin).
    binlog_format: &'static str,
    warnings: Vec<Warning>,
    /// User variables (`@name`, names lowercased).
    user_vars: std::collections::BTreeMap<String, Datum>,
    /// The statement running (blocked), if any.
    running: Option<exec::Running>,
    /// Its text, for INNODB_TRX.trx_query.
    query: Option<String>,
    /// LAST_INSERT_ID(): the first AUTO_INCREMENT value the last
    /// statement that generated any generated, or what
    /// LAST_INSERT_ID(expr) set (a cell: the function sets it while
    /// the statement reads the connection).
    last_insert_id: std::cell::Cell<u64>,
    /// The first AUTO_INCREMENT value the running statement generated
    /// (the OK packet's insert id).
    stmt_insert_id: Option<u64>,
    /// SET NAMES: character_set_client, character_set_connection,
    /// character_set_results (`None`: NULL, no conversion).
    charsets: (&'static str, Collation, Option<&'static str>),
    /// The last result set's columns: each one's table column, if it is
    /// one.
    result_columns: Vec<Option<ColumnSource>>,
    /// When its statement began, or its last one ended (engine clock,
    /// for SHOW PROCESSLIST's Time).
    since_us: u64,
    /// KILL QUERY ended its blocked statement: the statement answers 1317.
    killed: bool,
    /// The user and host it logged in as (SHOW PROCESSLIST).
    client: (String, String),
    /// Savepoints set before any statement of the transaction touched a
    /// table, with the engine transaction they were set in: InnoDB was not
    /// part of the transaction then, so ROLLBACK TO one of them rolls
    /// InnoDB's transaction back whole (`ha_rollback_to_savepoint`).
    unregistered_savepoints: Vec<(String, Option<u64>)>,
}

/// Where a result column comes from, when it is a table's column: what a
/// protocol's column definition says of it (`Protocol::send_fields`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSource {
    /// The table's database.
    pub db: String,
    /// The table as the statement names it (its alias, if any).
    pub table: String,
    /// The table's own name.
    pub org_table: String,
    /// The column's definition.
    pub spec: ast::ColumnSpec,
    /// Its collation (the table's default where it names none).
    pub collation: Collation,
}

/// A prepared statement's result columns before it runs: each one's name
/// and table column, if it is one ([`Server::describe`]).
pub type Described = Vec<(String, Option<ColumnSource>)>;

/// The database every fresh server has (as MySQL's install does).
pub const DEFAULT_DB: &str = "test";

/// The server.
pub struct Server {
    engine: Engine,
    conns: BTreeMap<ConnId, Conn>,
    next_conn: ConnId,
    globals: Globals,
    /// The server definitions of the tables, by engine name.
    metas: BTreeMap<String, TableMeta>,
    /// The next AUTO_INCREMENT value of each table that has the column.
    autoinc: BTreeMap<String, u64>,
    /// A session for the server's own reads (AUTO_INCREMENT's start).
    internal: SessionId,
    /// The table cache: each table a statement has opened, by engine
    /// name, with the table id it had then (see `open_table`).
    open_tables: BTreeMap<String, u64>,
    /// Connections KILL ended, for the protocol layer to close.
    killed: Vec<ConnId>,
}

impl Server {
    /// Opens the engine (creating or recovering the database) and loads
    /// the server definitions of its tables.
    pub fn open(
        storage: Box<dyn Storage>,
        clock: Box<dyn Clock>,
        config: Config,
    ) -> Result<(Server, RecoveryReport), SqlError> {
        let (engine, report) = Engine::open(storage, clock, config)
            .map_err(|e| SqlError::from_engine(&e, DEFAULT_DB))?;
        Ok((Server::new(engine)?, report))
    }

    /// A server over an open engine.
    pub fn new(mut engine: Engine) -> Result<Server, SqlError> {
        let internal = engine.session();
        let globals = Globals {
            barracuda: false,
            format_check: false,
            strict_mode: false,
            autocommit: true,
            isolation: Isolation::RepeatableRead,
            lock_wait_timeout: engine.config().lock_wait_timeout_us / 1_000_000,
            stats_sample_pages: 8,
            sql_mode: SqlMode::default(),
            autoinc_step: AutoincStep::default(),
            binlog_format: "STATEMENT",
            charsets: ("latin1", Collation::Latin1SwedishCi, Some("latin1")),
            max_connections: 151,
        };
        let mut s = Server {
            engine,
            conns: BTreeMap::new(),
            next_conn: 1,
            globals,
            metas: BTreeMap::new(),
            autoinc: BTreeMap::new(),
            internal,
            open_tables: BTreeMap::new(),
            killed: Vec::new(),
        };
        for name in s.engine.table_names() {
            let Some((_, t)) = split_name(&name) else {
                continue;
            };
            if t.is_empty() {
                continue;
            }
            let server = s
                .engine
                .table(&name)
                .map_err(|e| SqlError::from_engine(&e, DEFAULT_DB))?
                .def
                .server
                .clone();
            if server.is_empty() {
                continue;
            }
            let meta = schema::load(&server)?;
            s.metas.insert(name.clone(), meta);
            s.init_autoinc(&name)?;
        }
        if !s.database_exists(DEFAULT_DB) {
            s.create_database_marker(DEFAULT_DB)?;
        }
        Ok(s)
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine, to drive it beside the server (checkpoints, ticks).
    pub fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// Shuts down cleanly.
    pub fn close(self) -> Result<(), SqlError> {
        self.engine
            .close()
            .map_err(|e| SqlError::from_engine(&e, DEFAULT_DB))
    }

    /// The id the next connection gets.
    pub fn next_conn_id(&self) -> ConnId {
        self.next_conn
    }

    /// Numbers the next connections from `next` on (if higher): a server
    /// started again after a crash goes on from where the one before
    /// stopped, so that no id names two connections.
    pub fn continue_conn_ids(&mut self, next: ConnId) {
        self.next_conn = self.next_conn.max(next);
    }

    /// Opens a connection, with the global settings and database `test`.
    pub fn connect(&mut self) -> ConnId {
        let session = self.engine.session();
        let id = self.next_conn;
        self.next_conn += 1;
        self.conns.insert(
            id,
            Conn {
                session,
                db: Some(DEFAULT_DB.into()),
                strict_mode: self.globals.strict_mode,
                sql_mode: self.globals.sql_mode,
                unique_checks: true,
                foreign_key_checks: true,
                autoinc_step: self.globals.autoinc_step,
                insert_id: None,
                binlog_format: self.globals.binlog_format,
                warnings: Vec::new(),
                user_vars: std::collections::BTreeMap::new(),
                running: None,
                query: None,
                last_insert_id: std::cell::Cell::new(0),
                stmt_insert_id: None,
                charsets: self.globals.charsets,
                result_columns: Vec::new(),
                since_us: self.engine.now_us(),
                killed: false,
                client: ("root".into(), "localhost".into()),
                unregistered_savepoints: Vec::new(),
            },
        );
        // The session's settings from the globals; these requests cannot
        // wait or fail on a fresh session.
        let iso = self.globals.isolation;
        let _ = self
            .engine
            .execute(session, crate::Request::SetIsolation(iso));
        if !self.globals.autocommit {
            let _ = self
                .engine
                .execute(session, crate::Request::SetAutocommit(false));
        }
        let t = self.globals.lock_wait_timeout;
        let _ = self
            .engine
            .execute(session, crate::Request::SetLockWaitTimeout(t));
        id
    }

    /// Closes a connection, rolling back its transaction.
    pub fn disconnect(&mut self, c: ConnId) -> Result<(), SqlError> {
        if let Some(conn) = self.conns.remove(&c) {
            self.engine
                .close_session(conn.session)
                .map_err(|e| SqlError::from_engine(&e, DEFAULT_DB))?;
        }
        Ok(())
    }

    /// The connection's engine session.
    pub fn session_of(&self, c: ConnId) -> Option<SessionId> {
        self.conns.get(&c).map(|x| x.session)
    }

    /// Whether the connection has a statement blocked.
    pub fn is_blocked(&self, c: ConnId) -> bool {
        self.conns.get(&c).is_some_and(|x| x.running.is_some())
    }

    /// When the blocked statement's lock wait times out, on the engine's
    /// clock.
    pub fn wait_deadline_us(&self, c: ConnId) -> Option<u64> {
        let s = self.conns.get(&c)?.session;
        self.engine.wait_deadline_us(s)
    }

    /// Whether the connection has a transaction open, and whether it
    /// autocommits: the protocol's status flags.
    pub fn transaction_state(&self, c: ConnId) -> (bool, bool) {
        match self.conns.get(&c) {
            Some(x) => (
                self.engine.in_transaction(x.session),
                self.engine.autocommit(x.session),
            ),
            None => (false, true),
        }
    }

    /// Who the connection logged in as, for SHOW PROCESSLIST.
    pub fn set_client(&mut self, c: ConnId, user: &str, host: &str) {
        if let Some(conn) = self.conns.get_mut(&c) {
            conn.client = (user.to_string(), host.to_string());
        }
    }

    /// max_connections, as the protocol layer enforces it.
    pub fn set_max_connections(&mut self, n: u64) {
        self.globals.max_connections = n;
    }

    /// `KILL [QUERY]` `target` from connection `c` (and COM_PROCESS_KILL):
    /// the target's blocked statement, if any, is given up and answers
    /// 1317 when next resumed ([`Server::resume`]); without `query`, the
    /// connection is also put on the list [`Server::take_killed`] gives
    /// the protocol layer, which closes it. 1094 for an unknown id.
    pub fn kill(&mut self, c: ConnId, target: u64, query: bool) -> Result<(), SqlError> {
        let _ = c;
        let Some(t) = ConnId::try_from(target)
            .ok()
            .filter(|t| self.conns.contains_key(t))
        else {
            return Err(SqlError::new(1094, format!("Unknown thread id: {target}")));
        };
        let conn = self.conns.get_mut(&t).expect("checked");
        if conn.running.is_some() {
            let session = conn.session;
            conn.running = None;
            conn.killed = true;
            // The statement is undone as after a lock wait timeout; the
            // transaction stays open (InnoDB's DB_INTERRUPTED).
            let _ = self.engine.cancel_wait(session);
        }
        if !query && !self.killed.contains(&t) {
            self.killed.push(t);
        }
        Ok(())
    }

    /// The connections KILL ended since the last call, for the protocol
    /// layer to close (each must then be [`Server::disconnect`]ed).
    pub fn take_killed(&mut self) -> Vec<ConnId> {
        std::mem::take(&mut self.killed)
    }

    /// The columns of table `table` (in the connection's database, or
    /// `db.table`) whose names match the LIKE pattern `wildcard` (all for
    /// an empty one): COM_FIELD_LIST. 1146 for an unknown table.
    pub fn table_columns(
        &mut self,
        c: ConnId,
        table: &str,
        wildcard: &str,
    ) -> Result<Vec<ColumnSource>, SqlError> {
        let name = match table.split_once('.') {
            Some((db, t)) => ast::TableName {
                db: Some(db.to_string()),
                name: t.to_string(),
            },
            None => ast::TableName {
                db: None,
                name: table.to_string(),
            },
        };
        let (engine_name, meta) = self.resolve(c, &name)?;
        let (db, org) = split_name(&engine_name).unwrap_or_default();
        let default = meta.options.default_collation();
        let pattern = if wildcard.is_empty() { "%" } else { wildcard };
        let mut out = Vec::new();
        for spec in &meta.columns {
            let like = eval::like(spec.name.as_bytes(), pattern.as_bytes(), |a, b| {
                a.eq_ignore_ascii_case(&b)
            });
            if like {
                out.push(ColumnSource {
                    db: db.clone(),
                    table: name.name.clone(),
                    org_table: org.clone(),
                    spec: spec.clone(),
                    collation: spec.collation.unwrap_or(default),
                });
            }
        }
        Ok(out)
    }

    /// The first AUTO_INCREMENT value the connection's last statement
    /// generated, 0 if none (the OK packet's last insert id).
    pub fn statement_insert_id(&self, c: ConnId) -> u64 {
        self.conns
            .get(&c)
            .and_then(|x| x.stmt_insert_id)
            .unwrap_or(0)
    }

    /// The columns of the connection's last result set, each its table
    /// column's source where it is one (`None`: an expression, or a
    /// statement that is not a SELECT of a table); empty when none are
    /// known.
    pub fn result_columns(&self, c: ConnId) -> &[Option<ColumnSource>] {
        self.conns
            .get(&c)
            .map_or(&[][..], |x| x.result_columns.as_slice())
    }

    /// The connection (MySQL's thread id) whose engine session is `s`, as
    /// INNODB_TRX's `trx_mysql_thread_id` and SHOW ENGINE INNODB STATUS's
    /// `MySQL thread id` name a transaction (`thd_get_thread_id`); the
    /// session's own number for a session no connection owns.
    pub(crate) fn thread_id(&self, s: SessionId) -> u64 {
        self.conns
            .iter()
            .find(|(_, x)| x.session == s)
            .map_or(u64::from(s), |(c, _)| u64::from(*c))
    }

    /// The connection's current database.
    pub fn database(&self, c: ConnId) -> Option<&str> {
        self.conns.get(&c).and_then(|x| x.db.as_deref())
    }

    /// Runs one statement.
    pub fn execute(&mut self, c: ConnId, sql: &str) -> Outcome {
        let Some(conn) = self.conns.get_mut(&c) else {
            return Outcome::Done(Reply::Error(SqlError::new(
                2013,
                "Lost connection to MySQL server during query",
            )));
        };
        if conn.running.is_some() {
            return Outcome::Done(Reply::Error(SqlError::new(
                2014,
                "Commands out of sync; you can't run this command now",
            )));
        }
        let stmt = match parse::parse_in(sql, conn.sql_mode.ansi_quotes) {
            Ok(s) => s,
            Err(e) => return self.finish(c, Reply::Error(e), false),
        };
        let keeps_warnings = matches!(
            stmt,
            ast::Stmt::Show(ast::Show::Warnings) | ast::Stmt::Show(ast::Show::Errors)
        );
        if !keeps_warnings {
            self.conns
                .get_mut(&c)
                .expect("connection exists")
                .warnings
                .clear();
        }
        let conn = self.conns.get_mut(&c).expect("connection exists");
        conn.query = Some(sql.to_string());
        conn.stmt_insert_id = None;
        conn.result_columns.clear();
        conn.since_us = self.engine.now_us();
        let out = self.run(c, stmt);
        match out {
            Outcome::Done(reply) => self.finish(c, reply, keeps_warnings),
            Outcome::Blocked => Outcome::Blocked,
        }
    }

    /// Continues a blocked statement.
    pub fn resume(&mut self, c: ConnId) -> Outcome {
        let Some(conn) = self.conns.get_mut(&c) else {
            return Outcome::Done(Reply::Error(SqlError::new(
                2013,
                "Lost connection to MySQL server during query",
            )));
        };
        if std::mem::take(&mut conn.killed) {
            return self.finish(
                c,
                Reply::Error(SqlError::new(1317, "Query execution was interrupted")),
                false,
            );
        }
        let Some(running) = conn.running.take() else {
            return Outcome::Done(Reply::Error(SqlError::new(
                2014,
                "Commands out of sync; you can't run this command now",
            )));
        };
        match self.continue_running(c, running) {
            Outcome::Done(reply) => self.finish(c, reply, false),
            Outcome::Blocked => Outcome::Blocked,
        }
    }

    /// Runs the engine's due background work.
    pub fn tick(&mut self) -> Result<(), SqlError> {
        self.engine
            .tick()
            .map_err(|e| SqlError::from_engine(&e, DEFAULT_DB))
    }

    fn finish(&mut self, c: ConnId, reply: Reply, keeps_warnings: bool) -> Outcome {
        let now = self.engine.now_us();
        let conn = self.conns.get_mut(&c).expect("connection exists");
        conn.query = None;
        conn.since_us = now;
        if let (Some(id), false) = (conn.stmt_insert_id, matches!(reply, Reply::Error(_))) {
            conn.last_insert_id.set(id);
        }
        let reply = match reply {
            Reply::Error(e) => {
                if !keeps_warnings {
                    conn.warnings.push(Warning::error(&e));
                }
                Reply::Error(e)
            }
            Reply::Ok { affected, info, .. } => Reply::Ok {
                affected,
                info: info.map(|i| i.replace("{warnings}", &conn.warnings.len().to_string())),
                warnings: conn.warnings.len(),
            },
            Reply::Rows { columns, rows, .. } => Reply::Rows {
                columns,
                rows,
                warnings: if keeps_warnings {
                    0
                } else {
                    conn.warnings.len()
                },
            },
        };
        Outcome::Done(reply)
    }

    fn conn(&self, c: ConnId) -> &Conn {
        &self.conns[&c]
    }

    fn conn_mut(&mut self, c: ConnId) -> &mut Conn {
        self.conns.get_mut(&c).expect("connection exists")
    }

    fn warn(&mut self, c: ConnId, w: Warning) {
        self.conn_mut(c).warnings.push(w);
    }

    /// Whether database `db` exists.
    pub fn database_exists(&self, db: &str) -> bool {
        self.engine
            .table_names()
            .iter()
            .any(|n| split_name(n).is_some_and(|(d, t)| t.is_empty() && d.eq_ignore_ascii_case(db)))
    }

    fn create_database_marker(&mut self, db: &str) -> Result<(), SqlError> {
        let def = crate::dict::TableDef {
            name: engine_name(db, ""),
            columns: vec![crate::dict::ColumnDef {
                name: "db".into(),
                ty: crate::record::ColumnType::INT,
                nullable: true,
                collation: Default::default(),
            }],
            primary_key: vec![],
            primary_prefixes: Vec::new(),
            indexes: vec![],
            row_format: crate::record::RowFormat::Compact,
            foreign: Vec::new(),
            server: b"DATABASE".to_vec(),
        };
        self.engine
            .create_table(def)
            .map_err(|e| SqlError::from_engine(&e, db))
    }
}
