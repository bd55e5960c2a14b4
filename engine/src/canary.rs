//! Canaries: planted bugs, selectable at run time, that the simulator's
//! checkers must report. A checker that cannot fail is a defect; each
//! canary proves that some checker can.
//!
//! Every canary is off unless [`Config::canaries`](crate::Config) turns it
//! on, and each is one small, named deviation at the place the real
//! safeguard lives, so that it breaks exactly one guarantee.

use std::fmt;

/// One planted bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Canary {
    /// Pages are written in place without the doublewrite copy, even with
    /// `innodb_doublewrite` on: a torn page can no longer be repaired.
    SkipDoublewrite,
    /// Under `innodb_flush_log_at_trx_commit = 1` a commit is acknowledged
    /// when its redo is written, before it is synced.
    AckBeforeSync,
    /// Recovery applies redo records without comparing the page LSN, so
    /// changes already on a page are applied twice.
    IgnorePageLsn,
    /// Recovery does not roll back transactions that never committed.
    SkipRecoveryRollback,
    /// The log scan accepts a torn last block (and a frame failing its
    /// checksum) instead of ending the log there.
    AcceptTornLogTail,
    /// A failed fsync is treated as a success and the engine carries on.
    IgnoreFsyncFailure,
    /// A checkpoint is taken at the end of the log even while older
    /// changes are still only in dirty pages, so recovery starts past redo
    /// those pages need (InnoDB takes the oldest modification of the flush
    /// list).
    EarlyCheckpoint,
    /// The lock manager grants a record lock without checking the queue.
    GrantConflictingLock,
    /// A release forgets to grant the first waiter that could go.
    LoseWakeup,
    /// No deadlock search: cycles end only by the lock wait timeout.
    SkipDeadlockDetection,
    /// The deadlock search picks the heavier transaction as the victim.
    WrongDeadlockVictim,
    /// The lock wait timeout fires a second late.
    LateLockTimeout,
    /// REPEATABLE READ takes a fresh snapshot for every statement (READ
    /// COMMITTED's behaviour), so a transaction's reads disagree.
    SnapshotPerStatement,
    /// Group commit acknowledges a waiting commit without the sync that
    /// should cover it.
    SkipGroupSync,
    /// The once-a-second log flush writes the log but no longer syncs it,
    /// and says so honestly (the flushed LSN stays behind): under
    /// `innodb_flush_log_at_trx_commit` 0 and 2 a power loss then loses far
    /// more than the last second of commits.
    StalledLogSync,
    /// A failed fsync is retried once, and the engine carries on if the
    /// retry succeeds. On Linux the retry succeeds because the failed sync
    /// dropped the dirty pages: what it was to persist is gone.
    RetryFsyncAfterEio,
    /// A statement that waits again after a grant keeps the start of its
    /// first wait, so its second wait times out early.
    DeadlineFromFirstWait,
    /// Purge removes the delete-marked secondary entries of a log that an
    /// open read view still needs, asking only the current version: a
    /// consistent read through the secondary index misses the row.
    PurgeSecondaryAheadOfViews,
    /// A locking range read locks its records but not the gaps between
    /// them, even under REPEATABLE READ: another transaction's insert
    /// into the range goes ahead, a phantom the next locking read sees.
    LockingScanSkipsGaps,
    /// ROLLBACK TO SAVEPOINT releases the record locks taken after the
    /// savepoint. InnoDB keeps them to the end of the transaction: the
    /// rows it restored are open to other writers before it commits.
    SavepointRollbackReleasesLocks,
    /// An insert skips its insert intention check unless the index holds
    /// many gap locks (a fast path with the wrong threshold): inserts go
    /// into gaps other transactions locked.
    InsertSkipsGapCheck,
    /// A record that leaves the index hands its locks to the supremum
    /// instead of the record after it: the gap it guarded is open.
    InheritToSupremum,
    /// Page validation checks a page against the page number and space id
    /// its own header claims rather than the ones it was read for: the
    /// page a misdirected write landed on reads back as a valid page, the
    /// wrong one.
    TrustPageId,
    /// The duplicate check of a unique secondary index compares only the
    /// index's first column: a row that differs from another only in a
    /// later column of a composite unique index is refused with 1062.
    UniqueCheckFirstColumn,
    /// The duplicate check of a unique secondary index compares bytes, not
    /// the column's collation: under latin1_swedish_ci a unique index takes
    /// both 'ab' and 'AB ', which InnoDB refuses with 1062
    /// (`row_ins_dupl_error_with_rec` compares with `cmp_dtuple_rec`).
    UniqueCheckBinary,
    /// A tablespace file is created without syncing the directory: once a
    /// checkpoint passes the table's FILE_CREATE record, a power loss that
    /// drops the unsynced name loses a committed table.
    SkipDirectorySync,
    /// A secondary entry is taken as implicitly locked by the active
    /// transaction that last changed its row, even where that change left
    /// the entry as it was: a conversion then gives it a lock on an entry
    /// another transaction has locked already.
    ImplicitLockOfRowChanger,
    /// At recovery, the hidden row id of a table without a primary key
    /// resumes past the smallest row id in the table instead of the
    /// largest (a cursor opened the wrong way): new rows then take ids
    /// older rows hold, or sort before rows inserted earlier.
    RowIdFromSmallest,
    /// An insert into a table without a primary key that waited for a lock
    /// takes a new row id when it runs again instead of the one it took
    /// before the wait: its row then sorts after rows inserted while it
    /// waited, where InnoDB's sorts before them.
    RowIdRetakenAfterWait,
    /// A compressed page is written to disk without its modification log:
    /// the changes logged since its last compression never reach the file
    /// (the image's directory then names records its stream lacks).
    ZipSkipModLog,
    /// A compression whose result does not fit its page counts as a
    /// success and stores its zlib stream cut to fit, as if it had.
    ZipCountFailedCompression,
    /// A change that recompresses its page logs the change but not the
    /// compressed image it made (InnoDB's MLOG_ZIP_PAGE_COMPRESS): recovery
    /// cannot rebuild the page.
    ZipSkipImageRedo,
    /// An in-place update of a compressed page's record writes the new
    /// DB_TRX_ID and DB_ROLL_PTR into the uncompressed frame but leaves
    /// the compressed page's stored copies as they were: once the frame is
    /// evicted, the record names its previous writer.
    ZipTrxIdFrameOnly,
    /// When the buffer pool evicts a compressed page's uncompressed frame
    /// alone, it frees the page's compressed block too, which the page
    /// still uses: the next page given that block overwrites the image.
    BuddyFreeInUse,
    /// TRUNCATE TABLE deletes the old file first and builds the new one
    /// under the old space id and name, before its dictionary commit: a
    /// crash in between leaves a committed definition whose tablespace is
    /// gone or empty (the old rows lost), and the redo of the old file's
    /// pages names the new file's space.
    TruncateReusesSpaceId,
    /// Startup leaves an index a crash cut short in the middle of its fast
    /// creation in the dictionary (`row_merge_drop_temp_indexes` skipped):
    /// a half-built index that CHECK TABLE finds short of the table's
    /// rows.
    SkipIndexBuildRollback,
    /// A read view older than a new index reads through it instead of
    /// getting 1412 (`row_merge_is_index_usable` skipped). The index was
    /// built from the rows' newest versions, without the entries of the
    /// older values (and of the deleted rows) those views still see, so
    /// they miss rows.
    OldViewsReadNewIndex,
    /// Fast index creation builds without its S table lock
    /// (`row_merge_lock_table` skipped): the build runs at once beside a
    /// transaction that holds IX on the table, reading rows that
    /// transaction has changed and may still roll back.
    IndexBuildSkipsTableLock,
    /// A referential action changes the child rows but not theirs: a
    /// cascade stops after its first level (row0ins.c's recursion through
    /// `row_update_cascade_for_mysql` skipped), leaving grandchildren that
    /// name a row that is gone.
    CascadeSkipsSecondLevel,
    /// A child row's FOREIGN KEY check reads the parent index without
    /// locking what it finds (`row_ins_set_shared_rec_lock` skipped): a
    /// parent row another transaction has delete-marked but not committed
    /// counts as gone, and a parent found can be deleted before the child
    /// commits.
    ChildCheckSkipsParentLock,
}

impl Canary {
    /// Every canary.
    pub const ALL: [Canary; 40] = [
        Canary::SkipDoublewrite,
        Canary::AckBeforeSync,
        Canary::IgnorePageLsn,
        Canary::SkipRecoveryRollback,
        Canary::AcceptTornLogTail,
        Canary::IgnoreFsyncFailure,
        Canary::EarlyCheckpoint,
        Canary::GrantConflictingLock,
        Canary::LoseWakeup,
        Canary::SkipDeadlockDetection,
        Canary::WrongDeadlockVictim,
        Canary::LateLockTimeout,
        Canary::SnapshotPerStatement,
        Canary::SkipGroupSync,
        Canary::StalledLogSync,
        Canary::RetryFsyncAfterEio,
        Canary::DeadlineFromFirstWait,
        Canary::PurgeSecondaryAheadOfViews,
        Canary::LockingScanSkipsGaps,
        Canary::SavepointRollbackReleasesLocks,
        Canary::InsertSkipsGapCheck,
        Canary::InheritToSupremum,
        Canary::TrustPageId,
        Canary::UniqueCheckFirstColumn,
        Canary::UniqueCheckBinary,
        Canary::SkipDirectorySync,
        Canary::ImplicitLockOfRowChanger,
        Canary::RowIdFromSmallest,
        Canary::RowIdRetakenAfterWait,
        Canary::ZipSkipModLog,
        Canary::ZipCountFailedCompression,
        Canary::ZipSkipImageRedo,
        Canary::ZipTrxIdFrameOnly,
        Canary::BuddyFreeInUse,
        Canary::TruncateReusesSpaceId,
        Canary::SkipIndexBuildRollback,
        Canary::OldViewsReadNewIndex,
        Canary::IndexBuildSkipsTableLock,
        Canary::CascadeSkipsSecondLevel,
        Canary::ChildCheckSkipsParentLock,
    ];

    /// The canaries of the lock manager, caught by the lock oracle under
    /// the lock profiles (the others break recovery).
    pub const LOCKS: [Canary; 6] = [
        Canary::GrantConflictingLock,
        Canary::LoseWakeup,
        Canary::SkipDeadlockDetection,
        Canary::WrongDeadlockVictim,
        Canary::LateLockTimeout,
        Canary::DeadlineFromFirstWait,
    ];

    /// The canary's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Canary::SkipDoublewrite => "skip-doublewrite",
            Canary::AckBeforeSync => "ack-before-sync",
            Canary::IgnorePageLsn => "ignore-page-lsn",
            Canary::SkipRecoveryRollback => "skip-recovery-rollback",
            Canary::AcceptTornLogTail => "accept-torn-log-tail",
            Canary::IgnoreFsyncFailure => "ignore-fsync-failure",
            Canary::EarlyCheckpoint => "early-checkpoint",
            Canary::GrantConflictingLock => "grant-conflicting-lock",
            Canary::LoseWakeup => "lose-wakeup",
            Canary::SkipDeadlockDetection => "skip-deadlock-detection",
            Canary::WrongDeadlockVictim => "wrong-deadlock-victim",
            Canary::LateLockTimeout => "late-lock-timeout",
            Canary::SnapshotPerStatement => "snapshot-per-statement",
            Canary::SkipGroupSync => "skip-group-sync",
            Canary::StalledLogSync => "stalled-log-sync",
            Canary::RetryFsyncAfterEio => "retry-fsync-after-eio",
            Canary::DeadlineFromFirstWait => "deadline-from-first-wait",
            Canary::PurgeSecondaryAheadOfViews => "purge-secondary-ahead-of-views",
            Canary::LockingScanSkipsGaps => "locking-scan-skips-gaps",
            Canary::SavepointRollbackReleasesLocks => "savepoint-rollback-releases-locks",
            Canary::InsertSkipsGapCheck => "insert-skips-gap-check",
            Canary::InheritToSupremum => "inherit-to-supremum",
            Canary::TrustPageId => "trust-page-id",
            Canary::UniqueCheckFirstColumn => "unique-check-first-column",
            Canary::UniqueCheckBinary => "unique-check-binary",
            Canary::SkipDirectorySync => "skip-directory-sync",
            Canary::ImplicitLockOfRowChanger => "implicit-lock-of-row-changer",
            Canary::RowIdFromSmallest => "row-id-from-smallest",
            Canary::RowIdRetakenAfterWait => "row-id-retaken-after-wait",
            Canary::ZipSkipModLog => "zip-skip-mod-log",
            Canary::ZipCountFailedCompression => "zip-count-failed-compression",
            Canary::ZipSkipImageRedo => "zip-skip-image-redo",
            Canary::ZipTrxIdFrameOnly => "zip-trx-id-frame-only",
            Canary::BuddyFreeInUse => "buddy-free-in-use",
            Canary::TruncateReusesSpaceId => "truncate-reuses-space-id",
            Canary::SkipIndexBuildRollback => "skip-index-build-rollback",
            Canary::OldViewsReadNewIndex => "old-views-read-new-index",
            Canary::IndexBuildSkipsTableLock => "index-build-skips-table-lock",
            Canary::CascadeSkipsSecondLevel => "cascade-skips-second-level",
            Canary::ChildCheckSkipsParentLock => "child-check-skips-parent-lock",
        }
    }

    /// A canary by name.
    pub fn from_name(name: &str) -> Option<Canary> {
        Canary::ALL.into_iter().find(|c| c.name() == name)
    }

    fn bit(self) -> u64 {
        1 << (self as u64)
    }
}

impl fmt::Display for Canary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of canaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Canaries(u64);

impl Canaries {
    /// No canary: the engine as it should be.
    pub const NONE: Canaries = Canaries(0);

    /// This set plus `c`.
    pub fn with(self, c: Canary) -> Canaries {
        Canaries(self.0 | c.bit())
    }

    /// Whether `c` is planted.
    #[inline]
    pub fn has(self, c: Canary) -> bool {
        self.0 & c.bit() != 0
    }

    /// Whether any canary is planted.
    pub fn any(self) -> bool {
        self.0 != 0
    }

    /// The planted canaries.
    pub fn list(self) -> Vec<Canary> {
        Canary::ALL.into_iter().filter(|&c| self.has(c)).collect()
    }
}
