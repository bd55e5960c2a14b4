//! Engine configuration: the `innodb_*` settings this engine honours.

use crate::buf::MIN_POOL_PAGES;
use crate::error::{Error, Result};
use crate::redo::LogConfig;

/// When the redo of a commit is written and synced
/// (`innodb_flush_log_at_trx_commit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlushAtCommit {
    /// 0: neither at commit; the log is written and synced once a second.
    Lazy,
    /// 1: written and synced at every commit (the default: ACID).
    #[default]
    Sync,
    /// 2: written at commit, synced once a second.
    Write,
}

impl FlushAtCommit {
    /// From the MySQL setting's number.
    pub fn from_setting(v: u8) -> Result<FlushAtCommit> {
        match v {
            0 => Ok(FlushAtCommit::Lazy),
            1 => Ok(FlushAtCommit::Sync),
            2 => Ok(FlushAtCommit::Write),
            _ => Err(Error::InvalidArgument(format!(
                "Variable 'innodb_flush_log_at_trx_commit' can't be set to the value of '{v}'"
            ))),
        }
    }
    /// The MySQL setting's number.
    pub fn setting(self) -> u8 {
        match self {
            FlushAtCommit::Lazy => 0,
            FlushAtCommit::Sync => 1,
            FlushAtCommit::Write => 2,
        }
    }
}

/// Engine settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Buffer pool size in pages (`innodb_buffer_pool_size` / 16 KiB).
    pub buffer_pool_pages: usize,
    /// Redo log files and buffer.
    pub log: LogConfig,
    /// `innodb_doublewrite`.
    pub doublewrite: bool,
    /// `innodb_flush_log_at_trx_commit`.
    pub flush_at_commit: FlushAtCommit,
    /// `innodb_lock_wait_timeout`, in microseconds of the engine's clock.
    pub lock_wait_timeout_us: u64,
    /// `innodb_rollback_on_timeout`.
    pub rollback_on_timeout: bool,
    /// `innodb_deadlock_detect`: search for deadlocks whenever a lock
    /// request must wait; off, deadlocks end by the lock wait timeout.
    pub deadlock_detect: bool,
    /// `innodb_io_capacity`: pages the page cleaner may write per second.
    pub io_capacity: usize,
    /// `innodb_max_dirty_pages_pct`.
    pub max_dirty_pages_pct: usize,
    /// Undo logs purge may consume per background round.
    pub purge_batch_logs: usize,
    /// Group commit: under flush 1, a commit answers [`crate::Step::Waiting`]
    /// (crate::Step) until one sync, made by the first waiting session to
    /// resume, covers it and every other commit written by then.
    pub group_commit: bool,
    /// With [`group_commit`](Self::group_commit): a commit waiting for its
    /// group's sync keeps its locks until the sync, as a server with the
    /// binary log does. 5.1 commits such a transaction in two phases:
    /// `trx_prepare_off_kernel` syncs the log (flush 1) with every lock
    /// still held, and only `trx_commit_off_kernel` after the binary log
    /// releases them (`lock_release_off_kernel`); without the binary log
    /// the commit releases its locks before `log_write_up_to` syncs.
    pub locks_until_durable: bool,
    /// The binary log's `prepare_commit_mutex`, as MySQL 5.0 and 5.1 with
    /// the built-in InnoDB hold it (`innobase_xa_prepare` takes it,
    /// `innobase_commit` releases it after the commit's log flush; the
    /// plugin from 1.0.4 flushes after releasing it, which lets commits
    /// group again). Under flush 1 a commit of a transaction with changes
    /// answers [`crate::Step::Waiting`](crate::Step) still uncommitted, its locks
    /// held; the resume that takes the mutex commits it and syncs the log
    /// for it alone. Commits thus take the log's sync one at a time, and a
    /// transaction's locks wait out the queue before it. Not modelled: the
    /// prepare's own log sync (a group sync before the queue) and the
    /// binary log's write.
    pub commit_mutex: bool,
    /// `innodb_compression_level`: the zlib level compressed pages are
    /// compressed at, 0 to 9.
    pub compression_level: u32,
    /// The sort buffer of fast index creation, in bytes: entries beyond
    /// it go to sorted runs in a temporary file (InnoDB Plugin 1.0 sorts
    /// in 1 MiB blocks).
    pub sort_buffer_bytes: usize,
    /// `innodb_file_per_table`: a new table gets a tablespace file of its
    /// own; off, its trees go into the system tablespace (`ibdata1`),
    /// whose file never shrinks. Tables already created stay where they
    /// are (TRUNCATE keeps a table's place; a rebuild follows the setting).
    pub file_per_table: bool,
    /// Planted bugs (for the simulator's negative controls); none by default.
    pub canaries: crate::canary::Canaries,
    /// Rules of later InnoDB versions, for `innosim diff` against a newer
    /// server; none by default ([`crate::later`]).
    pub later: crate::later::LaterRules,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            buffer_pool_pages: 512,
            log: LogConfig::default(),
            doublewrite: true,
            flush_at_commit: FlushAtCommit::Sync,
            lock_wait_timeout_us: 50_000_000,
            rollback_on_timeout: false,
            deadlock_detect: true,
            io_capacity: 200,
            max_dirty_pages_pct: 75,
            purge_batch_logs: 300,
            group_commit: false,
            locks_until_durable: false,
            commit_mutex: false,
            compression_level: crate::page::zip::DEFAULT_LEVEL,
            sort_buffer_bytes: 1 << 20,
            file_per_table: true,
            canaries: crate::canary::Canaries::NONE,
            later: crate::later::LaterRules::NONE,
        }
    }
}

impl Config {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.buffer_pool_pages < MIN_POOL_PAGES {
            return Err(Error::InvalidArgument(format!(
                "buffer pool of {} pages is below the minimum of {MIN_POOL_PAGES}",
                self.buffer_pool_pages
            )));
        }
        if self.io_capacity == 0 || self.max_dirty_pages_pct == 0 || self.max_dirty_pages_pct > 100
        {
            return Err(Error::InvalidArgument(
                "io_capacity must be positive and max_dirty_pages_pct in 1..=100".into(),
            ));
        }
        crate::page::zip::check_level(self.compression_level)?;
        self.log.validate()?;
        // Validated just above: the files are larger than their headers.
        let capacity = self.log.capacity_bytes().unwrap_or(0);
        if capacity < LOG_CAPACITY_MIN_BYTES {
            return Err(Error::InvalidArgument(format!(
                "the log files hold {capacity} bytes of redo, below the {LOG_CAPACITY_MIN_BYTES} \
                 the engine needs (its checkpoint margin, a quarter of the log, must hold the \
                 redo of one index operation between two free checks)"
            )));
        }
        Ok(())
    }
}

/// The redo the engine allows for between two log free checks: one index
/// operation and its undo record. An assumed bound, not a derived one: a
/// split logs the pages it writes whole, and one that cascades up to the
/// root logs more than four pages; such a split on a log at this minimum
/// would still overflow it (a panic in `Log::append`). The fuzzer's
/// smallest log sits at this minimum and has not met one. Operations on
/// compressed tables log whole compressed images besides: the free check
/// reserves room for `pager::ZIP_IMAGES_BETWEEN_FREE_CHECKS` of them.
pub const REDO_BETWEEN_FREE_CHECKS_MAX_BYTES: u64 = 4 * crate::page::PAGE_SIZE as u64;

/// The smallest log the engine runs on: its checkpoint margin (a quarter
/// of the log) must hold [`REDO_BETWEEN_FREE_CHECKS_MAX_BYTES`]. InnoDB
/// refuses log files too small for its margin likewise ("ib_logfiles are
/// too small"), at a larger size since its threads run concurrently.
pub const LOG_CAPACITY_MIN_BYTES: u64 =
    REDO_BETWEEN_FREE_CHECKS_MAX_BYTES * crate::redo::CHECKPOINT_MARGIN_DIVISOR;
