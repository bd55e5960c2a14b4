//! Rules of later InnoDB versions: where a newer server (MariaDB 10.11's
//! InnoDB) does by design what InnoDB Plugin 1.0.6 did not, the newer rule
//! is a switch here, off unless [`Config::later`](crate::Config) turns it
//! on. The engine is 1.0.6's; the switches exist for `innosim diff`, which
//! runs a scenario that parted from a newer server again with that
//! server's rules on: a difference the rules explain (the run gets past
//! the step where it parted) is the version's, counted by rule, and
//! anything else is a mismatch. Each rule carries its entry of the
//! reviewed list of version differences ([`LaterRule::difference`]): the
//! statements it concerns, what each version does, why, and where the
//! sources say so.
//!
//! # The list
//!
//! Each rule by its name (`LaterRule::name`), with what sets 1.0.6 (innosim) and MariaDB 10.11
//! apart and where it was seen; [`LaterRule::difference`] holds each entry in full, with the
//! sources' lines.
//!
//! - `fk-check-no-gaps-under-read-committed`: a constraint check under READ COMMITTED or READ
//!   UNCOMMITTED finds no parent, then another transaction inserts into that gap. 1.0.6's S gap
//!   lock (next-key on the supremum) makes the insert wait; MariaDB takes no gap lock
//!   (`row_ins_check_foreign_constraint`: `skip_gap_lock`).
//! - `order-by-extended-key`: ORDER BY a secondary index's columns, then primary key columns,
//!   the index unique (`ORDER BY u, p0, p1`) or holding a key column already (`KEY (c1, p0)`,
//!   `ORDER BY c1, p0, p1`). 1.0.6 takes the index's order with the whole primary key after its
//!   columns; MariaDB only with the key columns the index lacks, none after a unique index
//!   (EXPLAIN: `Using filesort` for one, `index` for the other; `test_if_order_by_key`,
//!   `on_pk_suffix` against `ext_key_parts`).
//! - `duplicate-index-note`: an index of the same kind, columns and lengths as an earlier one.
//!   1.0.6 makes it without a word; MariaDB adds Note 1831 (`check_duplicate_key`).
//! - `read-uncommitted-x-locks-not-inherited`: a READ UNCOMMITTED transaction's X lock on a
//!   record that leaves the index (an insert rolled back, a row purged), then an insert into
//!   that gap. 1.0.6 inherits it as a gap lock (only READ COMMITTED's are left out) and the
//!   insert waits; MariaDB leaves it out too (`lock_rec_inherit_to_gap`).
//! - `past-end-row-unlocked-under-read-committed`: a forward locking range read under READ
//!   COMMITTED or READ UNCOMMITTED, then a lock on the first row past the range's end. 1.0.6
//!   keeps it locked (InnoDB read and locked it before the server saw the range was over) and
//!   the other waits; MariaDB gives it back (`unlock_row` in `read_range_next`) and the other
//!   goes ahead. Under REPEATABLE READ both keep it, and a descending read
//!   (`QUICK_SELECT_DESC`) gives nothing back on either (compressed seed 1211).
//! - `deadlock-search-one-blocker`: a wait behind two transactions, the first not waiting, and
//!   the second then waiting for it. 1.0.6's search walks every lock ahead of each wait and
//!   finds the cycle; in MariaDB each wait points at one transaction (`wait_trx`), the cycle
//!   through the other is missed and both wait, and on a cycle it finds the lightest
//!   transaction is the victim (`lock_deadlock_recursive` against `Deadlock::find_cycle`,
//!   `Deadlock::report`).
//! - `waiter-bypassed-by-its-blocker`: a transaction holds a lock on a record (its own insert's
//!   implicit lock made explicit counts), another waits for it there, and the first asks for
//!   another lock on that record no stronger than one it holds (a next-key lock of a range
//!   read, a duplicate check's S lock; S or X after X, S after S). In 1.0.6 the request waits
//!   behind the waiting one (`lock_rec_other_has_conflicting` counts waiting requests): a
//!   deadlock. MariaDB 10.6.17+ (MDEV-27025) grants it ahead of the waiter; an insert intention
//!   still waits, and so does X after S alone, a deadlock as in 1.0.6 (checked by hand:
//!   `corpus/diff/default-91`, `default-163`; seeds 264 and 503 for the insert intention;
//!   `compressed-1110` and nine variants for X after S).
//! - `secondary-index-on-one-row-tie`: a single-table UPDATE or DELETE by the whole primary
//!   key, with a secondary index whose columns, or leading columns, the WHERE also fixes and
//!   which holds at most one entry for them. 5.1 reads the primary key
//!   (`ha_innobase::read_time` makes one or two clustered rows cost their count); MariaDB reads
//!   the secondary index (EXPLAIN: range on it, 1 row; PRIMARY once two entries match), so its
//!   locks fall on that index first (`default-91-tie`, `compressed-44`; a prefix of `KEY (p0,
//!   c2)` fixed: `default-1085`).
//! - `read-committed-skips-committed-deletes`: under READ COMMITTED or READ UNCOMMITTED, an
//!   UPDATE, DELETE or locking read of a row deleted and committed but not purged (its
//!   clustered record, or its entry in a secondary index the read goes through), which a
//!   REPEATABLE READ reader has locked. 1.0.6 locks the delete-marked record before it looks at
//!   the mark, and the statement waits (`row_search_for_mysql`, `sel_set_rec_lock` before the
//!   delete-mark test); MariaDB passes it over without a lock and finds nothing at once
//!   (checked by hand; `default-2-rc-delete`).
//! - `own-implicit-lock-suffices`: a transaction locks a row it inserted or changed itself (a
//!   locking read, a change, a duplicate check). 1.0.6's `lock_rec_convert_impl_to_expl` makes
//!   its own implicit lock explicit, one lock struct more of weight; MariaDB makes no struct
//!   for it, and a record-only request takes none (`default-1782`).
//! - `pessimistic-insert-tries-no-optimistic-first`: an insert into a compressed table whose
//!   leaf has room uncompressed but cannot take the row compressed, so the page splits. 1.0.6
//!   writes three undo records for the row (`btr_cur_optimistic_insert` one before it tries the
//!   page, `btr_cur_pessimistic_insert` a second as it tries again first, then the split's: the
//!   weight grows by 3); MariaDB two (INNODB_TRX `undo log entries 4` for two rows, one split;
//!   compressed seed 1648).
//! - `index-condition-pushdown`: a SELECT's locking read (or a SERIALIZABLE plain one) of an
//!   ascending secondary index range, for columns outside the index, while another transaction
//!   locks the clustered record of the row past the range's end. 1.0.6 locks the entry past the
//!   end and its row's clustered record before the server sees the range is over, and the read
//!   waits; MariaDB's pushed index condition checks the range's end on the entry (`Using index
//!   condition`), so the clustered record is not locked and the read goes on. UPDATE, DELETE,
//!   descending and index-only reads (`Using where`, `Using index`) still wait (checked by
//!   hand; `compressed-1287`; `read_range_next` and `row_sel_get_clust_rec_for_mysql` against
//!   `row_search_idx_cond_check` and `handler_index_cond_check`).
//! - `isolation-set-for-next-transaction`: `SET SESSION TRANSACTION ISOLATION LEVEL` after
//!   BEGIN, then statements in the same transaction. They run at the new level in 5.1 (InnoDB
//!   reads the session's `tx_isolation` at each statement, `thd_tx_isolation`); MariaDB keeps
//!   the transaction's level to its end and applies the new one from the next (`@@tx_isolation`
//!   shows it at once, INNODB_TRX does not; `compressed-1805`;
//!   `Sys_var_tx_isolation::session_update`).
//! - `unlock-row-clustered-only`: under READ COMMITTED, an UPDATE or DELETE reads a secondary
//!   index and finds a row its WHERE does not match (or a range read through a secondary index
//!   reads the row past its end), then another transaction locks that row. 1.0.6's
//!   `row_unlock_for_mysql` lets go of the entry and the clustered record (both locked,
//!   `new_rec_locks` 2) unless the row is the transaction's own, and the other goes ahead;
//!   MariaDB lets go of nothing when the read went through a secondary index, and the other
//!   waits (`compressed-1959`, with `secondary-index-on-one-row-tie`; SHOW ENGINE INNODB STATUS
//!   shows both locks kept).
//! - `unlock-row-keeps-a-lock-it-waited-for`: under READ COMMITTED, an UPDATE's, DELETE's or
//!   FOR UPDATE read waits for a row's lock, is granted it, and its WHERE then rejects the row;
//!   another transaction locks the row. After the wait 1.0.6's `row_search_for_mysql` sets the
//!   lock again (DB_SUCCESS, `new_rec_locks` 1), so `unlock_row` lets it go and the other goes
//!   ahead; in MariaDB the lock stays (only DB_SUCCESS_LOCKED_REC, a lock the call created,
//!   marks the record; MySQL bug 53674) and the other waits (`compressed-2693`; checked by hand
//!   for DELETE, UPDATE and SELECT ... FOR UPDATE).
//!
//! What each rule explained in the campaigns is in `sim::diff::findings`.

use std::fmt;

/// One rule of a later version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LaterRule {
    /// A FOREIGN KEY check under READ COMMITTED or READ UNCOMMITTED takes
    /// no gap lock: nothing on the supremum or on the record past the
    /// matches, and a record-only lock on a delete-marked match.
    FkCheckNoGapsUnderReadCommitted,
    /// ORDER BY may go on past a secondary index's columns only through
    /// the primary key's columns the index lacks, and not at all past a
    /// unique index's.
    OrderByExtendedKey,
    /// CREATE TABLE, CREATE INDEX and ALTER TABLE note an index with the
    /// same kind, columns and lengths as one before it (Note 1831).
    DuplicateIndexNote,
    /// The deadlock search follows one transaction per wait (the first
    /// one found in the way, `wait_trx`), and the lightest transaction on
    /// the cycle is the victim.
    DeadlockSearchOneBlocker,
    /// The X locks of a READ UNCOMMITTED transaction are not inherited as
    /// gap locks when their record leaves the index, as READ COMMITTED's.
    ReadUncommittedXLocksNotInherited,
    /// A locking range read under READ COMMITTED or READ UNCOMMITTED gives
    /// back its lock on the row past the range's end.
    PastEndRowUnlockedUnderReadCommitted,
    /// A new lock request (not an insert intention) passes a waiting
    /// request of another transaction that waits for a lock the requester
    /// holds on the same record, and goes into the queue ahead of it.
    WaiterBypassedByItsBlocker,
    /// A single-table UPDATE or DELETE by the whole primary key reads a
    /// secondary index instead when the WHERE fixes its columns (all, or
    /// its leading ones) and its range is estimated at one row too.
    SecondaryIndexOnOneRowTie,
    /// A locking read under READ COMMITTED or READ UNCOMMITTED passes a
    /// clustered record a committed transaction delete-marked without
    /// locking it.
    ReadCommittedSkipsCommittedDeletes,
    /// A transaction's own implicit lock on a record (it inserted or
    /// changed the record) is not made explicit when it locks the record
    /// again, and stands for a record-only lock it asks for there.
    OwnImplicitLockSuffices,
    /// An insert its compressed leaf page refuses writes one undo record
    /// before the split rather than two.
    PessimisticInsertTriesNoOptimisticFirst,
    /// A SELECT's locking read of a range of a secondary index, forward,
    /// does not lock the clustered record of the entry past the range's
    /// end.
    IndexConditionPushdown,
    /// READ COMMITTED's `unlock_row` (a row an UPDATE or DELETE read and
    /// found not matching, a row past a range's end) lets go of nothing
    /// when the read went through a secondary index.
    UnlockRowClusteredOnly,
    /// READ COMMITTED's release of a row the statement does not want keeps
    /// the lock the statement got on it by waiting.
    UnlockRowKeepsWaitedLock,
    /// SET SESSION TRANSACTION ISOLATION LEVEL inside a transaction begun
    /// by BEGIN (or by a statement with autocommit off) applies from the
    /// next transaction.
    IsolationSetForNextTransaction,
}

/// An entry of the list of version differences.
#[derive(Debug, Clone, Copy)]
pub struct Difference {
    /// The statements it concerns.
    pub pattern: &'static str,
    /// What InnoDB Plugin 1.0.6 (and innosim) does.
    pub innodb_1_0: &'static str,
    /// What the later version does.
    pub later: &'static str,
    /// Why they differ.
    pub why: &'static str,
    /// Where the sources say so.
    pub source: &'static str,
}

impl LaterRule {
    /// Every rule.
    pub const ALL: [LaterRule; 15] = [
        LaterRule::FkCheckNoGapsUnderReadCommitted,
        LaterRule::OrderByExtendedKey,
        LaterRule::DuplicateIndexNote,
        LaterRule::DeadlockSearchOneBlocker,
        LaterRule::ReadUncommittedXLocksNotInherited,
        LaterRule::PastEndRowUnlockedUnderReadCommitted,
        LaterRule::WaiterBypassedByItsBlocker,
        LaterRule::SecondaryIndexOnOneRowTie,
        LaterRule::ReadCommittedSkipsCommittedDeletes,
        LaterRule::OwnImplicitLockSuffices,
        LaterRule::PessimisticInsertTriesNoOptimisticFirst,
        LaterRule::IndexConditionPushdown,
        LaterRule::IsolationSetForNextTransaction,
        LaterRule::UnlockRowClusteredOnly,
        LaterRule::UnlockRowKeepsWaitedLock,
    ];

    /// The rule's name.
    pub fn name(self) -> &'static str {
        match self {
            LaterRule::FkCheckNoGapsUnderReadCommitted => "fk-check-no-gaps-under-read-committed",
            LaterRule::OrderByExtendedKey => "order-by-extended-key",
            LaterRule::DuplicateIndexNote => "duplicate-index-note",
            LaterRule::DeadlockSearchOneBlocker => "deadlock-search-one-blocker",
            LaterRule::ReadUncommittedXLocksNotInherited => {
                "read-uncommitted-x-locks-not-inherited"
            }
            LaterRule::PastEndRowUnlockedUnderReadCommitted => {
                "past-end-row-unlocked-under-read-committed"
            }
            LaterRule::WaiterBypassedByItsBlocker => "waiter-bypassed-by-its-blocker",
            LaterRule::SecondaryIndexOnOneRowTie => "secondary-index-on-one-row-tie",
            LaterRule::ReadCommittedSkipsCommittedDeletes => {
                "read-committed-skips-committed-deletes"
            }
            LaterRule::OwnImplicitLockSuffices => "own-implicit-lock-suffices",
            LaterRule::PessimisticInsertTriesNoOptimisticFirst => {
                "pessimistic-insert-tries-no-optimistic-first"
            }
            LaterRule::IndexConditionPushdown => "index-condition-pushdown",
            LaterRule::IsolationSetForNextTransaction => "isolation-set-for-next-transaction",
            LaterRule::UnlockRowClusteredOnly => "unlock-row-clustered-only",
            LaterRule::UnlockRowKeepsWaitedLock => "unlock-row-keeps-a-lock-it-waited-for",
        }
    }

    /// A rule by name.
    pub fn from_name(name: &str) -> Option<LaterRule> {
        LaterRule::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Its entry of the list of version differences.
    pub fn difference(self) -> Difference {
        match self {
            LaterRule::FkCheckNoGapsUnderReadCommitted => Difference {
                pattern: "a transaction at READ COMMITTED or READ UNCOMMITTED inserts a child row \
                          whose parent is missing (1452), or changes a row a constraint \
                          references; another transaction then inserts into the gap the check \
                          passed",
                innodb_1_0: "the check leaves an S lock on the gap after the missing parent (a \
                             next-key lock on the supremum at the end of the index), and the \
                             other insert waits for it until the first transaction ends",
                later: "the check locks no gap under READ COMMITTED or READ UNCOMMITTED, and the \
                        other insert goes ahead",
                why: "InnoDB later took gap locking out of constraint checks under READ \
                      COMMITTED, as it had out of reads; 1.0.6 keeps it at every isolation level \
                      so that a missing parent stays missing",
                source: "InnoDB Plugin 1.0.6 row/row0ins.c row_ins_check_foreign_constraint: \
                         LOCK_ORDINARY on the supremum and LOCK_GAP on the record past the \
                         matches, whatever trx->isolation_level; MariaDB 10.11 \
                         storage/innobase/row/row0ins.cc row_ins_check_foreign_constraint: \
                         skip_gap_lock = (trx->isolation_level <= TRX_ISO_READ_COMMITTED), then \
                         no lock on the supremum or the gap and LOCK_REC_NOT_GAP on a \
                         delete-marked match",
            },
            LaterRule::OrderByExtendedKey => Difference {
                pattern: "SELECT ... FORCE INDEX (i) ORDER BY the columns of secondary index i, \
                          then primary key columns: i unique (ORDER BY u, p0), or i holding a \
                          primary key column already (KEY (c1, p0) with PRIMARY KEY (p0, p1), \
                          ORDER BY c1, p0, p1)",
                innodb_1_0: "the index gives the order when ORDER BY goes on with the whole \
                             primary key from its first column, for a unique index too: ORDER BY \
                             u, p0, p1 reads the index; ORDER BY c1, p0, p1 on KEY (c1, p0) sorts \
                             (after c1, p0 the suffix starts again at p0)",
                later: "the order goes on only through the primary key columns the index lacks, \
                        and a unique index has none: ORDER BY u, p0, p1 sorts (a locking read \
                        then locks every row), ORDER BY c1, p0, p1 reads KEY (c1, p0)",
                why: "MySQL 5.1's test_if_order_by_key appends the primary key to every \
                      secondary key of an engine with HA_PRIMARY_KEY_IN_READ_INDEX; MariaDB \
                      orders by the extended key (ext_key_parts: the key's columns and the \
                      primary key's columns it lacks), which a unique key does not extend, even \
                      with optimizer_switch extended_keys=off; EXPLAIN on MariaDB 10.11.14 shows \
                      index for one and Using filesort for the other",
                source: "MySQL 5.1.45 sql/sql_select.cc test_if_order_by_key (on_pk_suffix: \
                         key_part= table->key_info[table->s->primary_key].key_part, whatever the \
                         secondary key holds); MariaDB 10.11 sql/sql_select.cc \
                         test_if_order_by_key (key_part_end= key_part + ext_key_parts, the PK \
                         suffix only when ext_key_part_map is set); EXPLAIN checked by hand",
            },
            LaterRule::DuplicateIndexNote => Difference {
                pattern: "CREATE INDEX, ALTER TABLE ... ADD INDEX or CREATE TABLE with an index \
                          of the same kind (KEY or UNIQUE), columns and prefix lengths as an \
                          earlier one",
                innodb_1_0: "the index is made without a word: no warning",
                later: "the index is made and Note 1831 says so: Duplicate index `name`. This \
                        is deprecated and will be disallowed in a future release",
                why: "MySQL 5.6 began to note duplicate indexes (WL#5915), and MariaDB followed; \
                      5.1 has no such check and no error 1831",
                source: "MariaDB 10.11 sql/sql_table.cc check_duplicate_key (same type, same \
                         columns and lengths in order, then push_warning ER_DUP_INDEX); MySQL \
                         5.1.45 sql/share/errmsg.txt ends before 1831; checked by hand on \
                         MariaDB 10.11.14",
            },
            LaterRule::DeadlockSearchOneBlocker => Difference {
                pattern: "a transaction waits for two others at once (an insert into a gap two \
                          transactions lock, the first of them not waiting), and one of those \
                          then waits for it",
                innodb_1_0: "the search walks every lock ahead of each wait, finds the cycle \
                             through the second blocker and rolls back the lighter of the \
                             requester and the transaction waiting for it",
                later: "each wait points at one transaction (the first lock in the way when it \
                        began, moved on as locks go); the search follows those pointers only, \
                        misses a cycle through another blocker, and both wait (until a lock wait \
                        timeout, or until the pointer moves onto the cycle); on a cycle it \
                        finds, the lightest transaction on it is the victim, the requester on a \
                        tie",
                why: "MariaDB 10.6 rewrote the deadlock detector (MDEV-24738) to follow \
                      trx->lock.wait_trx with Brent's cycle detection instead of 5.1's \
                      depth-first search of the lock queues",
                source: "InnoDB Plugin 1.0.6 lock/lock0lock.c lock_deadlock_recursive (every \
                         lock ahead in the queue, trx_weight_cmp of requester and waiter); \
                         MariaDB 10.11 storage/innobase/lock/lock0lock.cc Deadlock::find_cycle \
                         (hare= hare->lock.wait_trx), Deadlock::report (minimum of \
                         calc_victim_weight over the cycle), lock_rec_enqueue_waiting and \
                         lock_rec_grant_by_heap_no (wait_trx= the conflicting lock's trx)",
            },
            LaterRule::ReadUncommittedXLocksNotInherited => Difference {
                pattern: "a READ UNCOMMITTED transaction X-locks a record (UPDATE, DELETE, \
                          SELECT ... FOR UPDATE, or a wait for one) that then leaves the index \
                          (an insert rolled back, a row purged); another transaction inserts \
                          into the gap it leaves",
                innodb_1_0: "the X lock becomes a gap lock on the next record (only READ \
                             COMMITTED's X locks are left out) and the insert waits; the lock \
                             counts as a struct in the transaction's deadlock weight",
                later: "READ UNCOMMITTED's X locks are left out as READ COMMITTED's: no gap \
                        lock, the insert goes ahead",
                why: "1.0.6 tests isolation_level == TRX_ISO_READ_COMMITTED; MariaDB tests \
                      isolation_level > TRX_ISO_READ_COMMITTED to inherit, so READ UNCOMMITTED \
                      joined READ COMMITTED",
                source: "InnoDB Plugin 1.0.6 lock/lock0lock.c lock_rec_inherit_to_gap \
                         (lock->trx->isolation_level == TRX_ISO_READ_COMMITTED && LOCK_X: not \
                         inherited); MariaDB 10.11 storage/innobase/lock/lock0lock.cc \
                         lock_rec_inherit_to_gap (isolation_level > TRX_ISO_READ_COMMITTED || \
                         mode != (duplicates ? LOCK_S : LOCK_X))",
            },
            LaterRule::PastEndRowUnlockedUnderReadCommitted => Difference {
                pattern: "SELECT ... FOR UPDATE (or LOCK IN SHARE MODE) over a range read \
                          forward under READ COMMITTED or READ UNCOMMITTED, then another \
                          transaction locks the first row past the range's end",
                innodb_1_0: "InnoDB reads and locks the row past the end before the server \
                             sees the range is over, and the lock stays to the transaction's \
                             end: the other transaction waits",
                later: "the server gives the lock back as soon as it sees the row is past the \
                        end (unlock_row, which InnoDB honours under READ COMMITTED and READ \
                        UNCOMMITTED): the other transaction goes ahead; under REPEATABLE READ \
                        both keep it, and a descending read keeps it on both \
                        (QUICK_SELECT_DESC::get_next finds the end with cmp_prev and unlocks \
                        nothing; compressed seed 1211)",
                why: "MySQL 5.6 made handler::read_range_next and read_range_first call \
                      unlock_row() for a row outside the range; 5.1 returns end of file without \
                      it. Checked on MariaDB 10.11.14 by hand: the row past the end is locked \
                      under REPEATABLE READ only",
                source: "MySQL 5.1.45 sql/handler.cc handler::read_range_next (compare_key(\
                         end_range) <= 0 ? 0 : HA_ERR_END_OF_FILE); MariaDB 10.11 \
                         sql/handler.cc handler::read_range_next (unlock_row() before \
                         HA_ERR_END_OF_FILE); ha_innobase::unlock_row releases under \
                         isolation <= READ COMMITTED",
            },
            LaterRule::WaiterBypassedByItsBlocker => Difference {
                pattern: "a transaction holds a lock on a record (or an implicit one, made \
                          explicit when another transaction asked for the record: its own \
                          insert, its own change), another transaction waits for it there, \
                          and the first then asks for another lock on the same record, of a \
                          mode no stronger than one it holds there (a next-key lock of a range \
                          read, the S lock of a duplicate check; S or X after X, S after S)",
                innodb_1_0: "the new request conflicts with the waiting one \
                             (lock_rec_other_has_conflicting counts waiting requests), so it \
                             waits behind it: the two wait for each other and the deadlock \
                             search rolls one back",
                later: "the new request is granted ahead of the waiting one, which goes on \
                        waiting: no deadlock. An insert intention does not pass: an insert \
                        into the gap of such a waiting next-key request still deadlocks \
                        (default seeds 264 and 503), and neither does a request stronger \
                        than every lock the transaction holds there: FOR UPDATE over a row \
                        it holds S on waits, and the two deadlock (compressed seed 1110)",
                why: "MDEV-27025 (MariaDB 10.6.17, 10.11.7) lets a request bypass a waiting \
                      lock that waits for a lock the requester already holds, since waiting \
                      behind it can only end in a deadlock. Checked on MariaDB 10.11.14 by \
                      hand: T1 holds S (or X) on a row, T2 waits for X on it, T1's LOCK IN \
                      SHARE MODE range read over the row returns at once and T2 still waits; \
                      T1 holding X, its FOR UPDATE range read returns at once too; T1 holding \
                      S, its FOR UPDATE (point, range or through a secondary index) or UPDATE \
                      of the row deadlocks with T2",
                source: "InnoDB Plugin 1.0.6 lock/lock0lock.c lock_rec_other_has_conflicting \
                         and lock_rec_has_to_wait (a waiting lock2 counts); MariaDB 10.11.7+ \
                         storage/innobase/lock/lock0lock.cc lock_rec_other_has_conflicting \
                         (bypasses a waiting lock whose wait the requester's granted lock \
                         causes, and lock_rec_lock inserts the new lock after it)",
            },
            LaterRule::SecondaryIndexOnOneRowTie => Difference {
                pattern: "UPDATE or DELETE of one table WHERE every primary key column = a \
                          constant, with a secondary index whose columns, or leading columns, \
                          the WHERE also fixes by equality and which holds at most one entry \
                          for those values",
                innodb_1_0: "MySQL 5.1 reads the primary key: ha_innobase::read_time makes a \
                             clustered range of one or two rows cost its rows, less than any \
                             secondary range and its row lookups; the locks fall on the \
                             clustered record (or the gap where it would be)",
                later: "MariaDB reads the secondary index (EXPLAIN: range on it, 1 row), \
                        so the locks fall on its entry and gap first: the statement waits \
                        where a secondary-index reader holds locks, and passes where only \
                        the clustered record's gap is locked",
                why: "MariaDB's range optimizer costs the two one-row ranges afresh (its \
                      cost model of 10.x, not 5.1's read_time) and keeps the secondary. \
                      Checked on MariaDB 10.11.14 with EXPLAIN: `DELETE FROM t WHERE p0 = 7 \
                      AND p1 = 8` with KEY (p1) reads that key while at most one row has p1 = \
                      8 and PRIMARY once two do; `UPDATE t2 SET c = 3 WHERE p0 = 'a'` with KEY \
                      ox (p0) beside PRIMARY KEY (p0) reads ox; `DELETE FROM t5 WHERE p0 = 1 AND \
                      p1 = 'z'` with KEY kx (p1, c0) beside PRIMARY KEY (p0, p1) reads kx (a \
                      prefix of it fixed; default seed 1085)",
                source: "MySQL 5.1.45 storage/innobase ha_innobase::read_time (rows <= 2: \
                         return rows) and sql/opt_range.cc get_key_scans_params; MariaDB 10.11 \
                         sql/opt_range.cc get_key_scans_params with handler::multi_range_read_\
                         info_const's cost; observed with EXPLAIN as above",
            },
            LaterRule::ReadCommittedSkipsCommittedDeletes => Difference {
                pattern: "a row deleted and committed but not yet purged (an older read view \
                          holds purge back), locked by a REPEATABLE READ or SERIALIZABLE \
                          reader; then a READ COMMITTED or READ UNCOMMITTED transaction \
                          UPDATEs, DELETEs or locking-reads that key",
                innodb_1_0: "row_search_for_mysql locks the delete-marked record before it \
                             looks at the mark (the record alone under READ COMMITTED), so the \
                             statement waits for the reader's lock; READ COMMITTED then lets go \
                             of a clustered record's lock (row_unlock_for_mysql) and keeps a \
                             secondary entry's",
                later: "the delete-marked record of a committed transaction, a clustered \
                        record or a secondary entry no active transaction holds an implicit \
                        lock on, is passed over without a lock: the statement finds nothing \
                        at once",
                why: "later InnoDBs skip, under READ COMMITTED and READ UNCOMMITTED, a clustered \
                      record whose delete mark a committed transaction set, since no row can \
                      come back there (semi-consistent reasoning applied to deletes). Checked \
                      on MariaDB 10.11.14 by hand: T1 (REPEATABLE READ) SELECT ... WHERE p = '' \
                      FOR UPDATE on a committed, unpurged delete; T2 at READ COMMITTED: SELECT \
                      ... FOR UPDATE and DELETE of p = '' return at once with nothing; at \
                      REPEATABLE READ both wait. A secondary entry alike: T3 (REPEATABLE READ) \
                      SELECT ... FORCE INDEX (k) WHERE k = 20 FOR UPDATE on a committed delete; \
                      T1 at READ COMMITTED reads k from 15 to 25 FOR UPDATE at once (compressed \
                      seed 1105's neighbourhood)",
                source: "InnoDB Plugin 1.0.6 row/row0sel.c row_search_for_mysql \
                         (sel_set_rec_lock before the rec_get_deleted_flag test); MariaDB 10.11 \
                         storage/innobase/row/row0sel.cc row_search_mvcc (observed as above)",
            },
            LaterRule::OwnImplicitLockSuffices => Difference {
                pattern: "a transaction inserts or changes a row, then locks it again while the \
                          row's implicit lock is its own: a locking read (SELECT ... FOR UPDATE \
                          or LOCK IN SHARE MODE, an UPDATE's or DELETE's search, a duplicate \
                          check) or a change of the row; the deadlock victim is then chosen by \
                          weight",
                innodb_1_0: "lock_rec_convert_impl_to_expl makes the implicit lock explicit \
                             whoever holds it, the locking transaction too: it gets an X \
                             record-only lock struct before the lock it asked for, and each \
                             struct adds 1 to the weight (TRX_WEIGHT) the deadlock victim is \
                             chosen by",
                later: "lock_rec_convert_impl_to_expl returns early when the implicit lock \
                        is the caller's: no struct is made for it. A record-only request \
                        (a unique search's, a change's) then takes no lock at all; a next-key \
                        or gap request takes its lock as asked, so the gap stays locked",
                why: "MariaDB takes the caller's own implicit exclusive lock as enough for the \
                      record and saves the lock objects. Checked on MariaDB 10.11.14 with \
                      INNODB_TRX.trx_lock_structs (read 100 ms apart, past the table's cache): \
                      a transaction that inserted a row and reads it back FOR UPDATE by its \
                      primary key gains no struct, by a range one (its next-key lock, the \
                      supremum's in the same struct); a descending scan's gap lock on the \
                      transaction's own insert still makes another transaction's insert wait \
                      (compressed seed 2); innosim diff default seed 1782 chose the other \
                      deadlock victim by the weight",
                source: "InnoDB Plugin 1.0.6 lock/lock0lock.c lock_rec_convert_impl_to_expl (\
                         impl_trx from lock_clust_rec_some_has_impl or \
                         lock_sec_rec_some_has_impl_off_kernel, the caller included); \
                         MariaDB 10.11 storage/innobase/lock/lock0lock.cc \
                         lock_rec_convert_impl_to_expl ('This may also be called by the same \
                         transaction that is already holding an implicit exclusive lock on the \
                         record. In this case, no explicit lock should be created.'), and \
                         lock_clust_rec_read_check_and_lock, lock_sec_rec_read_check_and_lock, \
                         lock_clust_rec_modify_check_and_lock ('We already hold an implicit \
                         exclusive lock.', for a LOCK_REC_NOT_GAP request)",
            },
            LaterRule::PessimisticInsertTriesNoOptimisticFirst => Difference {
                pattern: "a transaction inserts a row (or changes a row's primary key) into a \
                          compressed table whose leaf page has room for it uncompressed but \
                          cannot take it compressed, even reorganized, so that the page splits; \
                          the deadlock victim is then chosen by weight",
                innodb_1_0: "btr_cur_optimistic_insert writes the insert's undo record before it \
                             tries the page and gives up when the compressed page refuses; \
                             btr_cur_pessimistic_insert tries btr_cur_optimistic_insert again \
                             first, which writes a second, and then writes a third for the \
                             split: the transaction's undo number, and its weight (TRX_WEIGHT), \
                             grows by 3 for the row",
                later: "btr_cur_pessimistic_insert goes straight to its own undo record and the \
                        split: 2 undo records for the row",
                why: "MariaDB dropped the optimistic retry from the pessimistic insert, which its \
                      caller makes only after an optimistic one failed. Checked on MariaDB \
                      10.11.14: INNODB_TRX shows 'undo log entries 4' for a transaction that \
                      inserted two rows into KEY_BLOCK_SIZE=1 tables, one of them a split \
                      (innosim diff compressed seed 1648 chose the other deadlock victim by the \
                      weight)",
                source: "InnoDB Plugin 1.0.6 btr/btr0cur.c btr_cur_optimistic_insert \
                         (btr_cur_ins_lock_and_undo, then page_cur_tuple_insert, 'goto fail' on \
                         a compressed page) and btr_cur_pessimistic_insert ('Try first an \
                         optimistic insert'), called by row_ins_index_entry's BTR_MODIFY_TREE \
                         retry; MariaDB 10.11 storage/innobase/btr/btr0cur.cc \
                         btr_cur_pessimistic_insert ('Check locks and write to undo log, if \
                         specified' first)",
            },
            LaterRule::IndexConditionPushdown => Difference {
                pattern: "SELECT ... FOR UPDATE or LOCK IN SHARE MODE (or a plain SELECT under \
                          SERIALIZABLE) reading a range of a secondary index in ascending \
                          order, for columns outside the index, while another transaction \
                          holds a lock on the clustered record of the first row past the \
                          range's end",
                innodb_1_0: "InnoDB hands the server the row past the end before the server \
                             sees it is past: it locks the entry and the row's clustered \
                             record, and waits for the other transaction",
                later: "the server has pushed its index condition and the range's end down \
                        to InnoDB, which checks the entry before it looks up the row: the \
                        entry is locked, the clustered record is not, and the read does not \
                        wait. UPDATE and DELETE (no pushed condition in MariaDB's \
                        single-table UPDATE and DELETE), descending reads and reads of the \
                        index's columns alone still lock it",
                why: "index condition pushdown came with MySQL 5.6 and MariaDB 5.3; MySQL \
                      5.1 has no handler::idx_cond_push. Checked on MariaDB 10.11.14 by hand: \
                      'Using index condition' reads returned without waiting for the row past \
                      the end, 'Using where' reads (UPDATE, DELETE, ORDER BY ... DESC) and \
                      'Using index' reads waited for it (innosim diff compressed seed 1287)",
                source: "MySQL 5.1.45 sql/handler.cc handler::read_range_next (compare_key \
                         after the row is fetched) and storage/innodb_plugin/row/row0sel.c \
                         row_search_for_mysql (row_sel_get_clust_rec_for_mysql locks the \
                         clustered record of every secondary entry it hands over); MariaDB \
                         10.11 storage/innobase/row/row0sel.cc row_search_mvcc \
                         (row_search_idx_cond_check before row_sel_get_clust_rec_for_mysql) and \
                         sql/handler.cc handler_index_cond_check (end_range: \
                         CHECK_OUT_OF_RANGE)",
            },
            LaterRule::IsolationSetForNextTransaction => Difference {
                pattern: "SET SESSION TRANSACTION ISOLATION LEVEL after BEGIN, before the \
                          transaction ends, then a read or a change in it",
                innodb_1_0: "the statements after it run at the new level: InnoDB reads the \
                             session's tx_isolation at each statement's start (a plain SELECT \
                             under SERIALIZABLE locks and reads the newest rows, one under \
                             READ COMMITTED takes a view of its own)",
                later: "the transaction keeps the level it began with; the new one applies \
                        from the next transaction (@@tx_isolation shows it at once)",
                why: "MySQL 5.5 split the session's level from the transaction's \
                      (thd->tx_isolation, set from the session's only outside an active \
                      multi-statement transaction and when one ends). Checked on MariaDB \
                      10.11.14 by hand: after BEGIN and a SELECT, SET SESSION ... SERIALIZABLE \
                      left INNODB_TRX.trx_isolation_level at REPEATABLE READ and the next \
                      SELECT read the old snapshot; the next transaction was SERIALIZABLE \
                      (innosim diff compressed seed 1805)",
                source: "MySQL 5.1.45 sql/sql_class.cc thd_tx_isolation (returns \
                         thd->variables.tx_isolation) and storage/innodb_plugin/handler/\
                         ha_innodb.cc ha_innobase::store_lock (trx->isolation_level from it at \
                         each statement); MariaDB 10.11 sql/sys_vars.cc \
                         Sys_var_tx_isolation::session_update (thd->tx_isolation changed only \
                         when !thd->in_active_multi_stmt_transaction()) and sql/sql_class.cc \
                         thd_tx_isolation (returns thd->tx_isolation)",
            },
            LaterRule::UnlockRowClusteredOnly => Difference {
                pattern: "under READ COMMITTED (or READ UNCOMMITTED), an UPDATE or DELETE that \
                          reads a secondary index finds a row its WHERE does not match (or a \
                          range read through a secondary index reads the row past its end), \
                          then another transaction locks that row",
                innodb_1_0: "ha_innobase::unlock_row calls row_unlock_for_mysql, which with \
                             both records locked (new_rec_locks 2) unlocks the secondary entry \
                             and the clustered record unless the row's DB_TRX_ID is the \
                             transaction's: the other transaction goes ahead",
                later: "nothing is let go when the read went through a secondary index: the \
                        entry and the clustered record stay locked, and the other transaction \
                        waits; read through the clustered index the row is let go as before",
                why: "MariaDB's row_unlock_for_mysql unlocks a record only when the read's \
                      index is the clustered one. Checked on MariaDB 10.11.14 by hand, READ \
                      COMMITTED: `UPDATE ru SET c0 = 'DDc' WHERE p0 = '' AND p1 = -10` read \
                      through KEY ox (p0) keeps X locks on the entry and on the row ('', 24) \
                      (SHOW ENGINE INNODB STATUS lists both) and a FOR UPDATE of the row waits; \
                      read through PRIMARY it does not (compressed seed 1959, with \
                      secondary-index-on-one-row-tie)",
                source: "InnoDB Plugin 1.0.6 row/row0mysql.c row_unlock_for_mysql (new_rec_locks \
                         >= 2: both records unlocked); MariaDB 10.11 \
                         storage/innobase/row/row0mysql.cc row_unlock_for_mysql (observed as \
                         above)",
            },
            LaterRule::UnlockRowKeepsWaitedLock => Difference {
                pattern: "under READ COMMITTED (or READ UNCOMMITTED), a locking read (an \
                          UPDATE's or DELETE's, or SELECT ... FOR UPDATE) waits for a row's \
                          lock, is granted it, and then finds the row does not match its WHERE; \
                          another transaction then locks the row",
                innodb_1_0: "after the wait row_search_for_mysql goes back to rec_loop and \
                             sets the lock again (DB_SUCCESS, new_rec_locks = 1), so \
                             unlock_row lets it go: the other transaction goes ahead",
                later: "the lock stays: the other transaction waits",
                why: "InnoDB after 1.0.6 (DB_SUCCESS_LOCKED_REC, MySQL bug 53674) marks a \
                      record as newly locked only when the call created its lock; once a wait \
                      is granted, the call finds the lock already there and unlock_row leaves \
                      it. Checked on MariaDB 10.11.14 by hand, READ COMMITTED: a DELETE, an \
                      UPDATE and a SELECT ... FOR UPDATE of `id BETWEEN 50 AND 300 AND k + 0 < \
                      18` that waited for a row another transaction then committed with k = 34 \
                      all keep their X lock on it (SHOW ENGINE INNODB STATUS), where a row they \
                      reject without waiting is let go (compressed seed 2693)",
                source: "InnoDB Plugin 1.0.6 row/row0sel.c row_search_for_mysql (DB_SUCCESS \
                         after sel_set_rec_lock sets new_rec_locks under READ COMMITTED); \
                         MariaDB 10.11 storage/innobase/row/row0sel.cc row_search_mvcc (only \
                         DB_SUCCESS_LOCKED_REC sets it)",
            },
        }
    }

    fn bit(self) -> u64 {
        1 << (self as u64)
    }
}

impl fmt::Display for LaterRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of later rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct LaterRules(u64);

impl LaterRules {
    /// None: InnoDB Plugin 1.0.6's rules.
    pub const NONE: LaterRules = LaterRules(0);

    /// The rules of MariaDB 10.11's InnoDB that differ from 1.0.6's where
    /// innosim knows them.
    pub fn mariadb_10_11() -> LaterRules {
        LaterRule::ALL
            .into_iter()
            .fold(LaterRules::NONE, LaterRules::with)
    }

    /// This set plus `r`.
    pub fn with(self, r: LaterRule) -> LaterRules {
        LaterRules(self.0 | r.bit())
    }

    /// This set less those in `other`.
    pub fn without(self, other: LaterRules) -> LaterRules {
        LaterRules(self.0 & !other.0)
    }

    /// Whether `r` is in the set.
    pub fn has(self, r: LaterRule) -> bool {
        self.0 & r.bit() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The rules in the set.
    pub fn iter(self) -> impl Iterator<Item = LaterRule> {
        LaterRule::ALL.into_iter().filter(move |&r| self.has(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_a_name_and_a_complete_entry() {
        for r in LaterRule::ALL {
            assert_eq!(LaterRule::from_name(r.name()), Some(r));
            let d = r.difference();
            for field in [d.pattern, d.innodb_1_0, d.later, d.why, d.source] {
                assert!(field.len() > 20, "{r}: {field:?}");
            }
            assert!(LaterRules::mariadb_10_11().has(r));
        }
        assert!(LaterRules::NONE.is_empty());
        let one = LaterRules::NONE.with(LaterRule::DuplicateIndexNote);
        let rest = LaterRules::mariadb_10_11().without(one);
        assert!(!rest.has(LaterRule::DuplicateIndexNote));
        assert_eq!(rest.iter().count(), LaterRule::ALL.len() - 1);
        assert_eq!(
            LaterRules::mariadb_10_11().iter().count(),
            LaterRule::ALL.len()
        );
    }
}
