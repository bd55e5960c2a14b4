//! The durability judge: which commits must a recovered database still
//! hold, derived from what the client and the disk saw, never from what the
//! engine says of itself.
//!
//! The client's record is one [`CommitRecord`] per COMMIT that may have
//! reached the log since the last recovery, in log order: whether it
//! promises anything and, if it was acknowledged, the simulated instant
//! the acknowledgement came back (every COMMIT issued counts toward the
//! upper bound, acknowledged or not). The disk's record is its own count of
//! successful syncs of the redo log files and of failed ones (each of which
//! dropped log writes). From those, at a crash at instant `crash_us`:
//!
//! | innodb_flush_log_at_trx_commit | process crash | power loss |
//! | --- | --- | --- |
//! | 1 | every acknowledged commit | every acknowledged commit |
//! | 2 | every acknowledged commit | every commit acknowledged at or before `crash_us - WINDOW` |
//! | 0 | every commit acknowledged at or before `crash_us - WINDOW` | the same |
//!
//! where [`DURABILITY_WINDOW_US`] is the log flush period plus the slack
//! InnoDB's master thread allows. A failed fsync of a log file drops the
//! log writes it was to persist (as Linux does), so after one a process
//! crash is judged like a power loss. Only commits with writes promise
//! anything (a read-only commit writes no redo), and because the log is
//! sequential a promised commit promises every commit logged before it:
//! the bound is a prefix length.
//!
//! The engine's counters (its written and flushed LSN, the LSN it reports
//! for each commit) are *claims*, and claims are checked, not trusted:
//!
//! - a claim can only raise what must survive: a commit the engine said
//!   was synced (its LSN at or below the flushed LSN) must survive a power
//!   loss, one it said was written must survive a process crash; a claim
//!   that the disk does not honour is reported as the engine's own lie;
//! - the flushed LSN may advance only across a sync of a log file that the
//!   disk acknowledged ([`DurabilityJudge::observe`]).
//!
//! An engine that silently stops its once-a-second sync reports a flushed
//! LSN that stays behind: under the old, engine-derived bound the promise
//! shrank to match and nothing failed. Here the promise is about time, so
//! the commits acknowledged seconds before the power loss are still owed.
//!
//! Worked example, flush 2, power loss at 5.0 s, window 2 s:
//!
//! ```text
//! commit   acknowledged   writes   promised by time   engine's claim (flushed LSN 300)
//! c0       1.2 s          yes      yes (<= 3.0 s)     lsn 100: claimed synced
//! c1       2.9 s          no       (read-only)        lsn 100: claimed synced
//! c2       3.4 s          yes      no                 lsn 300: claimed synced
//! c3       4.8 s          yes      no                 lsn 420: not claimed
//! ```
//!
//! The time bound is 2 (c0 and the read-only c1 before it); the claim
//! raises it to 3. Recovering to the state after c0 and c1 only is the
//! engine's lie ("claimed synced, lost"); recovering c0..c3 is allowed (the
//! upper bound is every commit that reached the log).

use engine::FlushAtCommit;

/// How long InnoDB lets the log go unsynced: `srv_master_thread` flushes
/// and syncs the log buffer once a second (`log_buffer_sync_in_background`).
pub const LOG_FLUSH_PERIOD_US: u64 = 1_000_000;

/// How late that once-a-second flush may run: the master thread runs its
/// round when it gets to it, after whatever work the last second left. In
/// this simulator the engine runs background work at the first call after
/// its deadline; the scheduler lets at most 0.5 s pass between calls (when
/// every session waits) plus the I/O latency of the round itself, so one
/// second covers it with room to spare.
pub const MASTER_THREAD_SLACK_US: u64 = 1_000_000;

/// A commit acknowledged at least this long before a crash must survive it
/// under every flush setting.
pub const DURABILITY_WINDOW_US: u64 = LOG_FLUSH_PERIOD_US + MASTER_THREAD_SLACK_US;

/// One COMMIT as the client saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitRecord {
    /// When its acknowledgement came back (`None`: never, the crash or an
    /// error cut it off, or it still waits for a group commit's sync).
    pub acked_us: Option<u64>,
    /// Whether its acknowledgement promises anything: it had writes (in
    /// the model, or it waited for a group commit's sync, which only a
    /// commit with redo does).
    pub promises: bool,
    /// The end LSN the engine reported for it (a claim, cross-checked).
    pub claimed_lsn: u64,
}

/// What a crash must keep: recovery must reach the state after `k`
/// commits, `min_k <= k <= max_k`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    /// Commits that must survive.
    pub min_k: usize,
    /// Commits that may survive (every one that may have reached the log).
    pub max_k: usize,
    /// What the client and the disk alone promised (at most `min_k`).
    pub promised_k: usize,
    /// Acknowledged commits with writes (for the trace).
    pub acknowledged_k: usize,
    /// Why `min_k` exceeds `promised_k`, if it does: the engine's claim
    /// that raised it.
    pub claim: Option<String>,
}

/// The judge's record since the last recovery.
#[derive(Debug, Clone, Default)]
pub struct DurabilityJudge {
    commits: Vec<CommitRecord>,
    /// A commit whose outcome the crash cut off after it was issued and
    /// before it joined `commits` (it may survive).
    in_flight: bool,
    /// The engine's written and flushed LSN at the last observation.
    claimed_written_lsn: u64,
    claimed_flushed_lsn: u64,
    /// The disk's count of acknowledged log syncs at the last observation.
    log_syncs: u64,
    /// The most the flushed LSN may claim: the written LSN seen at the
    /// latest observation whose window held a log sync the disk
    /// acknowledged (a sync covers at most what was written by then).
    backed_lsn: u64,
}

impl DurabilityJudge {
    /// Starts a fresh record (after a recovery): the engine's current
    /// claims and the disk's current count are the baseline.
    pub fn reset(&mut self, written_lsn: u64, flushed_lsn: u64, log_syncs: u64) {
        *self = DurabilityJudge {
            claimed_written_lsn: written_lsn,
            claimed_flushed_lsn: flushed_lsn,
            log_syncs,
            backed_lsn: flushed_lsn,
            ..DurabilityJudge::default()
        };
    }

    /// A commit reached the log (in log order). Returns its index.
    pub fn logged(&mut self, record: CommitRecord) -> usize {
        self.commits.push(record);
        self.commits.len() - 1
    }

    /// The commit at `index` was acknowledged at `now_us`, and the
    /// acknowledgement promises it durable (the caller knows it wrote).
    pub fn acknowledged(&mut self, index: usize, now_us: u64) {
        if let Some(c) = self.commits.get_mut(index) {
            c.acked_us = Some(now_us);
            c.promises = true;
        }
    }

    /// A commit was cut off by the crash before it joined the record.
    pub fn cut_off(&mut self) {
        self.in_flight = true;
    }

    /// Commits recorded since the last reset.
    pub fn len(&self) -> usize {
        self.commits.len()
    }

    /// Whether none is recorded.
    pub fn is_empty(&self) -> bool {
        self.commits.is_empty()
    }

    /// Takes the engine's current claims, cross-checking them against the
    /// disk: the flushed LSN may claim no more than was written by the
    /// latest observation whose window held a log sync the disk
    /// acknowledged (a checkpoint's sync of a log file counts, so a flushed
    /// LSN that catches up on it later is no lie). Returns the violation,
    /// if any.
    pub fn observe(
        &mut self,
        written_lsn: u64,
        flushed_lsn: u64,
        log_syncs: u64,
    ) -> Option<String> {
        if log_syncs > self.log_syncs {
            self.backed_lsn = self.backed_lsn.max(written_lsn);
        }
        let lie = (flushed_lsn > self.claimed_flushed_lsn && flushed_lsn > self.backed_lsn)
            .then(|| {
                format!(
                    "durability: the engine's flushed LSN advanced from {} to {flushed_lsn}, past the {} written when the disk last synced a log file",
                    self.claimed_flushed_lsn, self.backed_lsn
                )
            });
        self.claimed_written_lsn = written_lsn;
        self.claimed_flushed_lsn = flushed_lsn;
        self.log_syncs = log_syncs;
        lie
    }

    /// The bounds for a crash at `crash_us`. `power` says whether the
    /// disk lost unsynced writes (a power loss); `log_writes_dropped`
    /// whether, by the disk's fault log, a failed fsync dropped writes of a
    /// log file since the last restart.
    pub fn bounds(
        &self,
        flush: FlushAtCommit,
        power: bool,
        log_writes_dropped: bool,
        crash_us: u64,
    ) -> Bounds {
        // The longest prefix ending in a promising commit that `owed` says
        // is owed.
        let prefix = |owed: &dyn Fn(&CommitRecord) -> bool| {
            self.commits
                .iter()
                .rposition(|c| c.promises && owed(c))
                .map_or(0, |i| i + 1)
        };
        let acknowledged = prefix(&|c| c.acked_us.is_some());
        let deadline_us = crash_us.saturating_sub(DURABILITY_WINDOW_US);
        let by_time = prefix(&|c| c.acked_us.is_some_and(|t| t <= deadline_us));
        let lost_unsynced = power || log_writes_dropped;
        let promised_k = match (flush, lost_unsynced) {
            (FlushAtCommit::Sync, _) => acknowledged,
            (FlushAtCommit::Write, false) => acknowledged,
            (FlushAtCommit::Write, true) | (FlushAtCommit::Lazy, _) => by_time,
        };
        // The engine's claims, to be honoured: what it said was synced
        // survives anything; what it said was written survives a process
        // crash (unless a failed fsync dropped it, which the engine knows:
        // it stopped).
        let (claimed_lsn, what) = if lost_unsynced {
            (self.claimed_flushed_lsn, "synced (its flushed LSN)")
        } else {
            (self.claimed_written_lsn, "written (its written LSN)")
        };
        let claimed_k = self
            .commits
            .iter()
            .take_while(|c| c.claimed_lsn <= claimed_lsn)
            .count();
        let (min_k, claim) = if claimed_k > promised_k {
            (
                claimed_k,
                Some(format!(
                    "the engine claimed {claimed_k} commits {what} = {claimed_lsn}"
                )),
            )
        } else {
            (promised_k, None)
        };
        Bounds {
            min_k,
            max_k: self.commits.len() + usize::from(self.in_flight),
            promised_k,
            acknowledged_k: acknowledged,
            claim,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(acked_s: Option<f64>, promises: bool, lsn: u64) -> CommitRecord {
        CommitRecord {
            acked_us: acked_s.map(|s| (s * 1e6) as u64),
            promises,
            claimed_lsn: lsn,
        }
    }

    fn judge(commits: &[CommitRecord], written: u64, flushed: u64) -> DurabilityJudge {
        let mut j = DurabilityJudge::default();
        j.reset(0, 0, 0);
        for c in commits {
            j.logged(*c);
        }
        assert_eq!(j.observe(written, flushed, 1), None);
        j
    }

    /// The module comment's example.
    #[test]
    fn time_promises_and_claims_combine_as_the_example_says() {
        let j = judge(
            &[
                commit(Some(1.2), true, 100),
                commit(Some(2.9), false, 100),
                commit(Some(3.4), true, 300),
                commit(Some(4.8), true, 420),
            ],
            420,
            300,
        );
        let b = j.bounds(FlushAtCommit::Write, true, false, 5_000_000);
        assert_eq!(b.promised_k, 1, "c0 alone was acknowledged 2 s before");
        assert_eq!(b.min_k, 3, "the engine claimed c0..c2 synced");
        assert!(b.claim.is_some());
        assert_eq!(b.max_k, 4);
        // A process crash keeps every acknowledged commit under flush 2 ...
        let b = j.bounds(FlushAtCommit::Write, false, false, 5_000_000);
        assert_eq!((b.promised_k, b.min_k), (4, 4));
        // ... but not after a failed fsync dropped log writes.
        let b = j.bounds(FlushAtCommit::Write, false, true, 5_000_000);
        assert_eq!(b.promised_k, 1);
        // Flush 1 owes every acknowledged commit whatever happens.
        let b = j.bounds(FlushAtCommit::Sync, true, true, 5_000_000);
        assert_eq!(b.promised_k, 4);
    }

    /// An engine that stops syncing and says so still owes the commits
    /// acknowledged long before the power loss.
    #[test]
    fn a_low_flushed_lsn_does_not_lower_the_promise() {
        let j = judge(
            &[commit(Some(0.5), true, 100), commit(Some(9.0), true, 200)],
            200,
            0,
        );
        let b = j.bounds(FlushAtCommit::Lazy, true, false, 10_000_000);
        assert_eq!((b.promised_k, b.min_k, b.claim), (1, 1, None));
    }

    #[test]
    fn a_flushed_lsn_that_advances_without_a_log_sync_is_reported() {
        let mut j = DurabilityJudge::default();
        j.reset(0, 0, 3);
        assert_eq!(j.observe(100, 0, 3), None, "writing needs no sync");
        assert!(j.observe(100, 100, 3).is_some(), "no log sync happened");
        assert_eq!(j.observe(200, 200, 4), None);
        // A sync (a checkpoint's, say) backs what was written by then; the
        // flushed LSN may catch up on it later, but not claim more.
        assert_eq!(j.observe(300, 200, 5), None);
        assert_eq!(j.observe(300, 300, 5), None, "backed by the sync at 300");
        assert!(j.observe(400, 400, 5).is_some(), "nothing synced past 300");
    }

    #[test]
    fn unacknowledged_and_cut_off_commits_only_raise_the_upper_bound() {
        let mut j = judge(
            &[commit(Some(0.1), true, 10), commit(None, false, 20)],
            0,
            0,
        );
        j.cut_off();
        let b = j.bounds(FlushAtCommit::Sync, false, false, 1_000_000);
        assert_eq!((b.min_k, b.max_k), (1, 3));
    }
}
