//! A run's counters: what it did, which faults it injected and which rare
//! paths it reached (a campaign sums them to show what it exercised).

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Statements submitted.
    pub statements: u64,
    /// Commits acknowledged.
    pub commits: u64,
    /// Transactions rolled back (by ROLLBACK or by the engine).
    pub rollbacks: u64,
    /// Statements that waited.
    pub waits: u64,
    /// Commits that waited for a group commit's sync.
    pub commit_waits: u64,
    /// Commits that waited, uncommitted, for the binary log's mutex
    /// (`Plan::commit_mutex`).
    pub commit_queue_waits: u64,
    /// Transactions chosen as deadlock victims (error 1213).
    pub deadlocks: u64,
    /// Statements that timed out waiting for a lock (error 1205).
    pub lock_timeouts: u64,
    /// Simulated microseconds when the workload ended (before the final
    /// crash and its recovery): the denominator of transaction rates.
    pub workload_us: u64,
    /// Syncs of the redo log during the workload (setup's and the final
    /// recovery's left out): commits per log sync tell group commit.
    pub workload_log_syncs: u64,
    /// Page compressions during the workload (setup's left out), by the
    /// engine's INNODB_CMP: for runs whose workload does not crash (the
    /// benches'), where the engine's counters run through it.
    pub workload_zip_compress_ops: u64,
    /// Crash-and-recover cycles.
    pub crashes: u64,
    /// Simulated microseconds.
    pub sim_us: u64,
    /// Simulated I/O operations.
    pub io_ops: u64,
    /// Injected fsync failures.
    pub fsync_failures: u64,
    /// Writes refused by a full disk.
    pub full_disk_errors: u64,
    /// Pages recovery restored from the doublewrite buffer (torn or
    /// damaged home pages repaired).
    pub pages_repaired: u64,
    /// Redo records recovery applied.
    pub redo_records_applied: u64,
    /// Transactions recovery rolled back (they never committed).
    pub recovery_rollbacks: u64,
    /// Gap locks inherited by a successor when a record went away.
    pub locks_inherited: u64,
    /// Implicit locks (an uncommitted change's DB_TRX_ID) made explicit
    /// because another transaction asked to lock the record.
    pub locks_converted: u64,
    /// Of those, the ones on secondary entries (the row's last changer
    /// made the entry, as `row_vers_impl_x_locked` decides).
    pub secondary_locks_converted: u64,
    /// Deadlock victims that were not the requester: the weight rule
    /// picked the lighter transaction waiting for it.
    pub victims_by_weight: u64,
    /// Statements that waited again after a wait of theirs was granted.
    pub rewaits: u64,
    /// Crashes inside recovery.
    pub recovery_crashes: u64,
    /// Rollbacks that failed (a full disk met while undoing) and stopped
    /// the engine, leaving the transaction to recovery.
    pub failed_rollbacks: u64,
    /// Bits bit rot flipped in data files.
    pub bit_flips: u64,
    /// Runs ended because the engine reported a page that bit rot had
    /// damaged (caught by page validation; InnoDB too refuses to go on).
    pub bit_rot_caught: u64,
    /// Page writes of data files misdirected (each just before a crash).
    pub misdirected_writes: u64,
    /// Runs ended because the engine reported a page a misdirected write
    /// had landed on.
    pub misdirection_caught: u64,
    /// Crashes that struck just after a checkpoint was written (within
    /// the plan's few operations of the write to its slot).
    pub checkpoint_crashes: u64,
    /// Tablespace files recovery grew back to the size their header
    /// records (a power loss had lost the extension).
    pub files_extended: u64,
    /// CREATE TABLE and DROP TABLE statements acknowledged.
    pub ddl_done: u64,
    /// Indexes built by CREATE INDEX beside the workload.
    pub indexes_built: u64,
    /// DDL statements that waited for their table lock (an open
    /// transaction held a conflicting lock on the table).
    pub ddl_lock_waits: u64,
    /// Of those, the waits that ended in 1205 or as a deadlock's victim.
    pub ddl_lock_failures: u64,
    /// Indexes dropped by DROP INDEX.
    pub indexes_dropped: u64,
    /// Reads by views older than an index through it, refused with 1412.
    pub old_views_refused: u64,
    /// Creates and removes of files a power loss undid (they had not been
    /// followed by a directory sync).
    pub namespace_ops_lost: u64,
    /// Inserts into tables without a primary key (clustered on the hidden
    /// row id) that the model expected to succeed.
    pub keyless_inserts: u64,
    /// Reads of tables without a primary key the runner saw done (each
    /// judged against the model, its rows matched by order, where the
    /// model has an answer for its isolation level).
    pub keyless_reads: u64,
    /// Locking scans that waited and read on from the entry they waited
    /// for, leaving out rows inserted behind them meanwhile (judged by the
    /// model's states at each wait).
    pub scans_kept_place: u64,
    /// Inserts into tables without a primary key that waited for a record
    /// lock, keeping the row id they took for when they run again.
    pub keyless_kept_row_ids: u64,
    /// Inserts that waited with their clustered record in place (a wait
    /// in a secondary index, or in a FOREIGN KEY check of one).
    pub inserts_kept_in_place: u64,
    /// Updates in place and deletes that waited in a secondary index with
    /// their clustered change kept (the lock oracle's `UpdateShape`).
    pub changes_kept_in_place: u64,
    /// Unique secondary duplicate checks that waited for an uncommitted
    /// insert over a delete-marked row at that row's clustered record.
    pub unique_checks_at_another_row: u64,
    /// Sorted runs index builds spilled to their merge files.
    pub merge_runs_spilled: u64,
    /// Tables rebuilt by a copying ALTER TABLE.
    pub tables_rebuilt: u64,
    /// Consistent reads of a rebuilt table by a view older than the
    /// rebuild (which find it empty).
    pub rebuilt_old_view_reads: u64,
    /// Rows filtered UPDATEs read semi-consistently (unlocked, in their
    /// last committed version).
    pub semi_consistent_rows: u64,
    /// Rows read semi-consistently that matched and were read again with
    /// their lock.
    pub semi_consistent_relocks: u64,
    /// Rows filtered changes' reads handed over to be changed before a
    /// lock the read then waited for (MySQL changes each row as it reads
    /// it).
    pub rows_handed_before_waits: u64,
    /// Rows filtered changes read and rejected, let go under READ
    /// COMMITTED and READ UNCOMMITTED (`row_unlock_for_mysql`).
    pub rows_let_go: u64,
    /// Child rows the model refused for a missing parent (1452).
    pub fk_child_refused: u64,
    /// Parent changes the model refused for their child rows (1451).
    pub fk_parent_refused: u64,
    /// Rows changed by referential actions (CASCADE, SET NULL) in
    /// statements the model expected to succeed.
    pub fk_cascaded: u64,
    /// Page compressions (INNODB_CMP's compress_ops, all sizes).
    pub zip_compress_ops: u64,
    /// Of those, the ones that fit (compress_ops_ok).
    pub zip_compress_ok: u64,
    /// Page decompressions (uncompress_ops).
    pub zip_uncompress_ops: u64,
    /// Changes to compressed pages written to their modification log or
    /// their uncompressed columns, without recompressing.
    pub zip_logged: u64,
    /// Changes that recompressed their page.
    pub zip_recompressions: u64,
    /// Pages reorganized and compressed again after a compression that
    /// did not fit.
    pub zip_reorganizations: u64,
    /// Of those, the ones that then fit.
    pub zip_reorganizations_ok: u64,
    /// Changes refused because their page no longer compressed: the page
    /// was split instead.
    pub zip_refused: u64,
    /// Splits of compressed pages whose 16 KiB frame had room: forced by
    /// the compressed size.
    pub zip_splits_after_failure: u64,
    /// Uncompressed frames evicted alone, their compressed pages kept in
    /// the pool (the unzip LRU).
    pub zip_unzip_evictions: u64,
    /// Compressed-only pages decompressed again when next used.
    pub zip_unzips: u64,
    /// Compressed blocks relocated by the buddy allocator (INNODB_CMPMEM's
    /// relocation_ops, all sizes).
    pub zip_relocations: u64,
}

impl RunStats {
    /// Adds another run's counters (a campaign's totals).
    pub fn add(&mut self, o: &RunStats) {
        let RunStats {
            statements,
            commits,
            rollbacks,
            waits,
            commit_waits,
            commit_queue_waits,
            deadlocks,
            lock_timeouts,
            workload_us,
            workload_log_syncs,
            workload_zip_compress_ops,
            crashes,
            sim_us,
            io_ops,
            fsync_failures,
            full_disk_errors,
            pages_repaired,
            redo_records_applied,
            recovery_rollbacks,
            locks_inherited,
            locks_converted,
            secondary_locks_converted,
            victims_by_weight,
            rewaits,
            recovery_crashes,
            failed_rollbacks,
            bit_flips,
            bit_rot_caught,
            misdirected_writes,
            misdirection_caught,
            checkpoint_crashes,
            files_extended,
            ddl_done,
            indexes_built,
            ddl_lock_waits,
            ddl_lock_failures,
            indexes_dropped,
            old_views_refused,
            namespace_ops_lost,
            keyless_inserts,
            keyless_reads,
            scans_kept_place,
            keyless_kept_row_ids,
            inserts_kept_in_place,
            changes_kept_in_place,
            unique_checks_at_another_row,
            merge_runs_spilled,
            tables_rebuilt,
            rebuilt_old_view_reads,
            semi_consistent_rows,
            semi_consistent_relocks,
            rows_handed_before_waits,
            rows_let_go,
            fk_child_refused,
            fk_parent_refused,
            fk_cascaded,
            zip_compress_ops,
            zip_compress_ok,
            zip_uncompress_ops,
            zip_logged,
            zip_recompressions,
            zip_reorganizations,
            zip_reorganizations_ok,
            zip_refused,
            zip_splits_after_failure,
            zip_unzip_evictions,
            zip_unzips,
            zip_relocations,
        } = o;
        self.statements += statements;
        self.commits += commits;
        self.rollbacks += rollbacks;
        self.waits += waits;
        self.commit_waits += commit_waits;
        self.commit_queue_waits += commit_queue_waits;
        self.deadlocks += deadlocks;
        self.lock_timeouts += lock_timeouts;
        self.workload_us += workload_us;
        self.workload_log_syncs += workload_log_syncs;
        self.workload_zip_compress_ops += workload_zip_compress_ops;
        self.crashes += crashes;
        self.sim_us += sim_us;
        self.io_ops += io_ops;
        self.fsync_failures += fsync_failures;
        self.full_disk_errors += full_disk_errors;
        self.pages_repaired += pages_repaired;
        self.redo_records_applied += redo_records_applied;
        self.recovery_rollbacks += recovery_rollbacks;
        self.locks_inherited += locks_inherited;
        self.locks_converted += locks_converted;
        self.secondary_locks_converted += secondary_locks_converted;
        self.victims_by_weight += victims_by_weight;
        self.rewaits += rewaits;
        self.recovery_crashes += recovery_crashes;
        self.failed_rollbacks += failed_rollbacks;
        self.bit_flips += bit_flips;
        self.bit_rot_caught += bit_rot_caught;
        self.misdirected_writes += misdirected_writes;
        self.misdirection_caught += misdirection_caught;
        self.checkpoint_crashes += checkpoint_crashes;
        self.files_extended += files_extended;
        self.ddl_done += ddl_done;
        self.indexes_built += indexes_built;
        self.ddl_lock_waits += ddl_lock_waits;
        self.ddl_lock_failures += ddl_lock_failures;
        self.indexes_dropped += indexes_dropped;
        self.old_views_refused += old_views_refused;
        self.namespace_ops_lost += namespace_ops_lost;
        self.keyless_inserts += keyless_inserts;
        self.keyless_reads += keyless_reads;
        self.scans_kept_place += scans_kept_place;
        self.keyless_kept_row_ids += keyless_kept_row_ids;
        self.inserts_kept_in_place += inserts_kept_in_place;
        self.changes_kept_in_place += changes_kept_in_place;
        self.unique_checks_at_another_row += unique_checks_at_another_row;
        self.merge_runs_spilled += merge_runs_spilled;
        self.tables_rebuilt += tables_rebuilt;
        self.rebuilt_old_view_reads += rebuilt_old_view_reads;
        self.semi_consistent_rows += semi_consistent_rows;
        self.semi_consistent_relocks += semi_consistent_relocks;
        self.rows_handed_before_waits += rows_handed_before_waits;
        self.rows_let_go += rows_let_go;
        self.fk_child_refused += fk_child_refused;
        self.fk_parent_refused += fk_parent_refused;
        self.fk_cascaded += fk_cascaded;
        self.zip_compress_ops += zip_compress_ops;
        self.zip_compress_ok += zip_compress_ok;
        self.zip_uncompress_ops += zip_uncompress_ops;
        self.zip_logged += zip_logged;
        self.zip_recompressions += zip_recompressions;
        self.zip_reorganizations += zip_reorganizations;
        self.zip_reorganizations_ok += zip_reorganizations_ok;
        self.zip_refused += zip_refused;
        self.zip_splits_after_failure += zip_splits_after_failure;
        self.zip_unzip_evictions += zip_unzip_evictions;
        self.zip_unzips += zip_unzips;
        self.zip_relocations += zip_relocations;
    }

    /// The faults injected and the rare paths reached, by name: what a
    /// campaign shows it exercised.
    pub fn reached(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("crashes", self.crashes),
            ("crashes during recovery", self.recovery_crashes),
            ("rollbacks that stopped the engine", self.failed_rollbacks),
            ("crashes just after a checkpoint", self.checkpoint_crashes),
            ("fsync failures", self.fsync_failures),
            ("full-disk errors", self.full_disk_errors),
            ("bits flipped by bit rot", self.bit_flips),
            ("bit rot caught", self.bit_rot_caught),
            ("misdirected writes", self.misdirected_writes),
            ("misdirected writes caught", self.misdirection_caught),
            ("torn pages repaired", self.pages_repaired),
            ("files grown back at recovery", self.files_extended),
            ("tables created, dropped or truncated", self.ddl_done),
            ("indexes built beside the workload", self.indexes_built),
            ("DDL waits for a table lock", self.ddl_lock_waits),
            (
                "DDL table lock waits ended by 1205 or 1213",
                self.ddl_lock_failures,
            ),
            ("indexes dropped", self.indexes_dropped),
            (
                "old views refused a new index (1412)",
                self.old_views_refused,
            ),
            ("namespace ops lost", self.namespace_ops_lost),
            ("redo records applied", self.redo_records_applied),
            (
                "transactions rolled back at recovery",
                self.recovery_rollbacks,
            ),
            ("lock waits", self.waits),
            ("waits again after a grant", self.rewaits),
            ("lock wait timeouts", self.lock_timeouts),
            ("deadlocks", self.deadlocks),
            ("victims chosen by weight", self.victims_by_weight),
            ("locks inherited", self.locks_inherited),
            ("implicit locks converted", self.locks_converted),
            (
                "implicit locks converted on secondary entries",
                self.secondary_locks_converted,
            ),
            ("group commit waits", self.commit_waits),
            (
                "commits queued for the binary log's mutex",
                self.commit_queue_waits,
            ),
            ("inserts without a primary key", self.keyless_inserts),
            ("reads of tables without a primary key", self.keyless_reads),
            (
                "locking scans that kept their place through a wait",
                self.scans_kept_place,
            ),
            (
                "inserts without a primary key that kept their row id through a wait",
                self.keyless_kept_row_ids,
            ),
            (
                "inserts that waited with their clustered record in place",
                self.inserts_kept_in_place,
            ),
            (
                "updates and deletes that waited in a secondary index with their row changed",
                self.changes_kept_in_place,
            ),
            (
                "unique checks that waited at another row's record for its inserter",
                self.unique_checks_at_another_row,
            ),
            (
                "sorted runs index builds spilled to their merge files",
                self.merge_runs_spilled,
            ),
            ("tables rebuilt by a copying ALTER", self.tables_rebuilt),
            (
                "reads of a rebuilt table by an older view (empty)",
                self.rebuilt_old_view_reads,
            ),
            (
                "rows UPDATEs read semi-consistently",
                self.semi_consistent_rows,
            ),
            (
                "semi-consistent rows that matched, read again locked",
                self.semi_consistent_relocks,
            ),
            (
                "rows changes read and changed before their read waited",
                self.rows_handed_before_waits,
            ),
            (
                "rejected rows READ COMMITTED let go (row_unlock_for_mysql)",
                self.rows_let_go,
            ),
            (
                "child rows refused for a missing parent",
                self.fk_child_refused,
            ),
            (
                "parent changes refused for their children",
                self.fk_parent_refused,
            ),
            ("rows changed by cascades", self.fk_cascaded),
            ("pages compressed", self.zip_compress_ops),
            (
                "compressions that did not fit",
                self.zip_compress_ops - self.zip_compress_ok,
            ),
            ("pages decompressed", self.zip_uncompress_ops),
            ("changes in the modification log", self.zip_logged),
            ("pages recompressed by a change", self.zip_recompressions),
            ("pages reorganized to compress", self.zip_reorganizations),
            (
                "reorganized pages that then fit",
                self.zip_reorganizations_ok,
            ),
            ("changes refused by the compressed size", self.zip_refused),
            (
                "splits forced by the compressed size",
                self.zip_splits_after_failure,
            ),
            (
                "uncompressed frames evicted alone",
                self.zip_unzip_evictions,
            ),
            ("compressed-only pages decompressed", self.zip_unzips),
            ("compressed blocks relocated", self.zip_relocations),
        ]
    }
}
