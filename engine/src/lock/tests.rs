use super::*;

fn rec(k: u8) -> Target {
    Target::Record {
        table: 1,
        index: 10,
        key: RecKey::Key(vec![Some(vec![k])]),
    }
}

fn sup() -> Target {
    Target::Record {
        table: 1,
        index: 10,
        key: RecKey::Supremum,
    }
}

const X_REC: Mode = Mode::Record(RecMode::X, RecKind::RecNotGap);
const S_REC: Mode = Mode::Record(RecMode::S, RecKind::RecNotGap);
const X_NEXT: Mode = Mode::Record(RecMode::X, RecKind::NextKey);
const S_NEXT: Mode = Mode::Record(RecMode::S, RecKind::NextKey);
const X_GAP: Mode = Mode::Record(RecMode::X, RecKind::Gap);
const S_GAP: Mode = Mode::Record(RecMode::S, RecKind::Gap);
const II: Mode = Mode::Record(RecMode::X, RecKind::InsertIntention);

#[test]
fn table_matrix_is_innodbs() {
    use TableMode::*;
    let all = [IS, IX, S, X, AutoInc];
    // Rows and columns in the order IS, IX, S, X, AUTO-INC (lock0lock.cc).
    let expected = [
        [true, true, true, false, true],
        [true, true, false, false, true],
        [true, false, true, false, false],
        [false, false, false, false, false],
        [true, true, false, false, false],
    ];
    for (i, a) in all.iter().enumerate() {
        for (j, b) in all.iter().enumerate() {
            assert_eq!(a.compatible(*b), expected[i][j], "{a:?} vs {b:?}");
            assert_eq!(a.compatible(*b), b.compatible(*a), "symmetric");
        }
    }
}

#[test]
fn record_conflict_rules() {
    // S and S never conflict.
    assert!(!has_to_wait(S_NEXT, S_NEXT));
    assert!(!has_to_wait(S_REC, S_NEXT));
    // X against a record lock conflicts.
    assert!(has_to_wait(X_REC, S_REC));
    assert!(has_to_wait(X_NEXT, X_REC));
    // A gap request never waits.
    assert!(!has_to_wait(X_GAP, X_NEXT));
    assert!(!has_to_wait(S_GAP, X_REC));
    // Ordinary requests ignore gap locks.
    assert!(!has_to_wait(X_NEXT, X_GAP));
    assert!(!has_to_wait(X_REC, S_GAP));
    // Insert intention waits for gap and next-key locks...
    assert!(has_to_wait(II, S_GAP));
    assert!(has_to_wait(II, S_NEXT));
    assert!(has_to_wait(II, X_NEXT));
    // ...not for record-only locks or other insert intentions.
    assert!(!has_to_wait(II, X_REC));
    assert!(!has_to_wait(II, II));
    // Nobody waits for an insert intention.
    assert!(!has_to_wait(X_NEXT, II));
    assert!(!has_to_wait(X_REC, II));
}

#[test]
fn a_conflicting_request_waits_and_release_grants_in_queue_order() {
    let mut ls = LockSys::new();
    assert_eq!(ls.request(1, rec(5), S_REC, 0), Request::Granted);
    assert_eq!(ls.request(2, rec(5), S_REC, 0), Request::Granted);
    let Request::Waiting(w3) = ls.request(3, rec(5), X_REC, 0) else {
        panic!("X waits for the S locks")
    };
    // A later S request conflicts with the waiting X ahead of it.
    let Request::Waiting(w4) = ls.request(4, rec(5), S_REC, 0) else {
        panic!("S waits behind the waiting X")
    };
    assert_eq!(ls.blockers(w3).len(), 2);
    assert_eq!(ls.blockers(w4), vec![w3]);
    assert!(ls.release_all(1, 1).is_empty(), "T2's S still blocks T3");
    assert_eq!(ls.release_all(2, 2), vec![3], "T3 is next in the queue");
    assert!(ls.waiting_for(4).is_some(), "T4 waits for T3's X");
    assert_eq!(ls.release_all(3, 3), vec![4]);
    assert!(ls.waiting_for(4).is_none());
}

#[test]
fn already_held_locks_are_not_requested_again() {
    let mut ls = LockSys::new();
    assert_eq!(ls.request(1, rec(5), X_NEXT, 0), Request::Granted);
    assert_eq!(ls.request(1, rec(5), S_REC, 0), Request::Granted);
    assert_eq!(ls.request(1, rec(5), X_GAP, 0), Request::Granted);
    assert_eq!(ls.locks_of(1), 1, "the next-key lock covers the others");
    assert_eq!(
        ls.request(1, Target::Table(1), Mode::Table(TableMode::IX), 0),
        Request::Granted
    );
    assert_eq!(
        ls.request(1, Target::Table(1), Mode::Table(TableMode::IS), 0),
        Request::Granted
    );
    assert_eq!(ls.locks_of(1), 2);
}

#[test]
fn gap_locks_do_not_block_each_other_but_block_inserts() {
    let mut ls = LockSys::new();
    assert_eq!(ls.request(1, rec(5), X_GAP, 0), Request::Granted);
    assert_eq!(ls.request(2, rec(5), X_GAP, 0), Request::Granted);
    assert_eq!(
        ls.request(3, rec(5), S_NEXT, 0),
        Request::Granted,
        "gap locks are ignored"
    );
    // An insert into the gap waits for both gap holders (and the next-key).
    let Request::Waiting(w) = ls.request(4, rec(5), II, 0) else {
        panic!("insert intention waits")
    };
    assert_eq!(ls.blockers(w).len(), 3);
    // The holder's own insert into its gap does not wait... for its own
    // lock, but does for the others'.
    assert!(matches!(ls.request(1, rec(5), II, 0), Request::Waiting(_)));
    let mut ls = LockSys::new();
    assert_eq!(ls.request(1, rec(5), X_GAP, 0), Request::Granted);
    assert_eq!(ls.request(1, rec(5), II, 0), Request::Granted);
    assert_eq!(
        ls.locks_of(1),
        1,
        "an insert intention that need not wait is not kept"
    );
}

#[test]
fn supremum_locks_are_gap_locks() {
    let mut ls = LockSys::new();
    assert_eq!(ls.request(1, sup(), X_NEXT, 0), Request::Granted);
    assert_eq!(
        ls.request(2, sup(), X_NEXT, 0),
        Request::Granted,
        "no record to conflict on"
    );
    assert!(matches!(ls.request(3, sup(), II, 0), Request::Waiting(_)));
    assert_eq!(
        ls.locks().next().map(|l| l.mode),
        Some(X_GAP),
        "stored as a gap lock"
    );
}

#[test]
fn the_lighter_transaction_is_the_deadlock_victim_and_ties_pick_the_requester() {
    let undo = |t: TrxId| if t == 1 { 5 } else { 0 };
    // T1 (heavy) holds A, T2 holds B; T1 waits for B; T2 requests A.
    let mut ls = LockSys::new();
    ls.request(1, rec(1), X_REC, 0);
    ls.request(2, rec(2), X_REC, 0);
    assert!(matches!(
        ls.request(1, rec(2), X_REC, 0),
        Request::Waiting(_)
    ));
    assert_eq!(ls.deadlock_check(1, &undo), Deadlock::None);
    assert!(matches!(
        ls.request(2, rec(1), X_REC, 0),
        Request::Waiting(_)
    ));
    assert_eq!(
        ls.deadlock_check(2, &undo),
        Deadlock::Requester,
        "T2 is lighter"
    );
    // The heavy one closes the cycle: the lighter waiter is the victim.
    let mut ls = LockSys::new();
    ls.request(1, rec(1), X_REC, 0);
    ls.request(2, rec(2), X_REC, 0);
    ls.request(2, rec(1), X_REC, 0);
    ls.request(1, rec(2), X_REC, 0);
    assert_eq!(ls.deadlock_check(1, &undo), Deadlock::Other(2));
    // Equal weights: the requester.
    let none = |_: TrxId| 0;
    assert_eq!(ls.deadlock_check(1, &none), Deadlock::Requester);
    // After the victim's wait is withdrawn and its locks released, T1 goes.
    ls.cancel_wait(2, EventKind::Victim, 1);
    assert_eq!(ls.release_all(2, 1), vec![1]);
}

#[test]
fn a_three_way_cycle_is_found_and_a_chain_is_not_a_cycle() {
    let none = |_: TrxId| 0;
    let mut ls = LockSys::new();
    for t in 1..=3 {
        ls.request(t, rec(t as u8), X_REC, 0);
    }
    ls.request(1, rec(2), X_REC, 0);
    ls.request(2, rec(3), X_REC, 0);
    assert_eq!(ls.deadlock_check(2, &none), Deadlock::None, "a chain");
    ls.request(3, rec(1), X_REC, 0);
    assert_eq!(ls.deadlock_check(3, &none), Deadlock::Requester);
    assert_eq!(ls.wait_edges().len(), 3);
}

#[test]
fn inheritance_keeps_gaps_locked() {
    let mut ls = LockSys::new();
    // T1 holds a next-key lock on 9; 5 is inserted before 9 by T1.
    ls.request(1, rec(9), X_NEXT, 0);
    ls.inherit_gap_on_insert(
        1,
        10,
        &vec![Some(vec![5])],
        &RecKey::Key(vec![Some(vec![9])]),
        0,
    );
    assert!(ls.holds(1, &rec(5), X_GAP));
    assert!(
        matches!(ls.request(2, rec(5), II, 0), Request::Waiting(_)),
        "the gap before 5 is T1's"
    );
    // 9 is purged: its locks go to the supremum as gap locks.
    let woken = ls.inherit_to_gap(1, 10, &vec![Some(vec![9])], RecKey::Supremum, 1);
    assert!(woken.is_empty());
    assert!(ls.holds(1, &sup(), X_GAP));
    assert!(!ls.holds(1, &rec(9), X_NEXT));
}

#[test]
fn a_granted_insert_intention_wakes_the_insert_and_is_not_kept() {
    let mut ls = LockSys::new();
    ls.request(1, rec(5), X_GAP, 0);
    let Request::Waiting(_) = ls.request(2, rec(5), II, 0) else {
        panic!("the insert waits for the gap lock")
    };
    // A gap lock granted while the insert waits (gap requests never wait).
    assert_eq!(ls.request(3, rec(5), S_GAP, 0), Request::Granted);
    assert_eq!(ls.release_all(1, 1), vec![2], "the insert is woken");
    assert_eq!(ls.locks_of(2), 0, "nothing is kept for it");
    // Its retry checks the gap again and now waits for trx 3.
    assert!(matches!(ls.request(2, rec(5), II, 2), Request::Waiting(_)));
}

#[test]
fn lock_structs_are_counted_per_index_and_mode_as_innodb_keeps_them() {
    let mut ls = LockSys::new();
    ls.request(1, Target::Table(1), Mode::Table(TableMode::IX), 0);
    for k in 1..=5 {
        ls.request(1, rec(k), X_NEXT, 0);
    }
    assert_eq!(ls.locks_of(1), 6, "a lock per record");
    assert_eq!(
        ls.lock_structs(1),
        2,
        "the table's, and one bitmap for five records"
    );
    // The supremum's next-key lock is its gap lock, in the same struct.
    ls.request(1, sup(), X_NEXT, 0);
    assert_eq!(ls.lock_structs(1), 2);
    // Another mode is another struct; so is another index.
    ls.request(1, rec(6), X_REC, 0);
    assert_eq!(ls.lock_structs(1), 3);
    let other_index = Target::Record {
        table: 1,
        index: 11,
        key: RecKey::Key(vec![Some(vec![1])]),
    };
    ls.request(1, other_index, X_REC, 0);
    assert_eq!(ls.lock_structs(1), 4);
    // A wait has a struct of its own, kept when granted; a second IS after
    // IX is none (IX covers it).
    ls.request(2, Target::Table(1), Mode::Table(TableMode::IX), 0);
    assert!(matches!(
        ls.request(2, rec(1), X_REC, 0),
        Request::Waiting(_)
    ));
    ls.request(2, rec(7), X_REC, 0);
    assert_eq!(
        ls.lock_structs(2),
        3,
        "IX, the waiting request, and the granted lock on record 7"
    );
    // Trx 3 locks record 9 while trx 2 waits on record 1: a struct of its
    // own; then on record 1, where trx 2 waits: the granted S gap lock
    // cannot set a bit in its struct, another is made.
    ls.request(3, rec(9), S_GAP, 0);
    ls.request(3, rec(1), S_GAP, 0);
    assert_eq!(ls.lock_structs(3), 2);
    ls.release_all(1, 0);
    assert_eq!(ls.lock_structs(1), 0);
    assert_eq!(ls.lock_structs(2), 3, "granted, the wait's struct stays");
    // A withdrawn wait takes its struct away.
    ls.request(4, rec(7), X_REC, 0);
    ls.cancel_wait(4, EventKind::TimedOut, 0);
    assert_eq!(ls.lock_structs(4), 0);
}

#[test]
fn a_wait_ended_by_its_records_removal_leaves_a_struct_later_locks_share() {
    // Trx 1 holds record 3 (as its inserter would, made explicit); trx 2's
    // next-key request waits there. The record leaves (its insert rolled
    // back): trx 2's wait ends, its request inherited as a gap lock on
    // record 5, and its struct stays, no longer waiting (`lock_rec_cancel`
    // clears LOCK_WAIT). A next-key lock trx 2 then takes on record 5 sets
    // a bit in that struct: the gap lock's struct and the old wait's, no
    // third (innosim diff default seed 1462, where innosim made one).
    let mut ls = LockSys::new();
    ls.request(1, rec(3), X_REC, 0);
    assert!(matches!(
        ls.request(2, rec(3), X_NEXT, 0),
        Request::Waiting(_)
    ));
    assert_eq!(ls.lock_structs(2), 1);
    let woken = ls.inherit_to_gap(
        1,
        10,
        &vec![Some(vec![3])],
        RecKey::Key(vec![Some(vec![5])]),
        1,
    );
    assert_eq!(woken, vec![2]);
    assert_eq!(
        ls.lock_structs(2),
        2,
        "the old wait's and the inherited gap's"
    );
    assert_eq!(ls.request(2, rec(5), X_NEXT, 2), Request::Granted);
    assert_eq!(
        ls.lock_structs(2),
        2,
        "the next-key lock shares the old wait's struct"
    );
    assert!(ls.struct_list(2).iter().all(|d| !d.waiting));
}

#[test]
fn the_deadlock_weight_counts_structs_not_locked_records() {
    // T1 locks ten records in one mode (2 structs with its table lock);
    // T2 has one undo record, its table lock and one record lock (3).
    let undo = |t: TrxId| if t == 2 { 1 } else { 0 };
    let mut ls = LockSys::new();
    ls.request(1, Target::Table(1), Mode::Table(TableMode::IX), 0);
    for k in 1..=10 {
        ls.request(1, rec(k), X_REC, 0);
    }
    ls.request(2, Target::Table(1), Mode::Table(TableMode::IX), 0);
    ls.request(2, rec(20), X_REC, 0);
    assert!(matches!(
        ls.request(2, rec(1), X_REC, 0),
        Request::Waiting(_)
    ));
    assert_eq!(ls.deadlock_check(2, &undo), Deadlock::None);
    assert!(matches!(
        ls.request(1, rec(20), X_REC, 0),
        Request::Waiting(_)
    ));
    // T1: 2 structs and its waiting request's, 3; T2: 1 + 3 = 4. By
    // locked records T1 would weigh 12 and T2 would be the victim.
    assert_eq!(ls.deadlock_check(1, &undo), Deadlock::Requester);
}

#[test]
fn the_later_search_follows_one_blocker_per_wait_and_misses_a_cycle_through_another() {
    // T1 and T2 lock the gap before record 5 (T1 first); T3's insert there
    // waits for both; then T2 waits for T3's record 9.
    let setup = |one_blocker: bool| {
        let mut ls = LockSys::new().with_one_blocker(one_blocker);
        ls.request(1, rec(5), S_GAP, 0);
        ls.request(2, rec(5), X_GAP, 0);
        ls.request(3, rec(9), X_REC, 0);
        assert!(matches!(ls.request(3, rec(5), II, 0), Request::Waiting(_)));
        assert!(matches!(
            ls.request(2, rec(9), X_REC, 0),
            Request::Waiting(_)
        ));
        ls
    };
    let none = |_: TrxId| 0;
    // 1.0.6 walks every lock ahead of T3's wait and finds T2 -> T3 -> T2.
    assert_eq!(setup(false).deadlock_check(2, &none), Deadlock::Requester);
    // The later search: T3 points at T1, which waits for nothing.
    let mut ls = setup(true);
    assert_eq!(ls.deadlock_check(2, &none), Deadlock::None);
    // Once T1 ends, T3's wait points at T2: the cycle is there to find.
    ls.release_all(1, 0);
    assert_eq!(ls.deadlock_check(2, &none), Deadlock::Requester);
}

#[test]
fn the_later_search_picks_the_lightest_on_the_cycle() {
    // A three-way cycle 1 -> 2 -> 3 -> 1 closed by 1; trx 2 is the
    // lightest, though not next to the requester.
    let mut ls = LockSys::new().with_one_blocker(true);
    for t in 1..=3 {
        ls.request(t, rec(t as u8), X_REC, 0);
    }
    ls.request(2, rec(3), X_REC, 0);
    ls.request(3, rec(1), X_REC, 0);
    ls.request(1, rec(2), X_REC, 0);
    let undo = |t: TrxId| match t {
        2 => 0,
        _ => 5,
    };
    assert_eq!(ls.deadlock_check(1, &undo), Deadlock::Other(2));
    // All equal: the requester.
    assert_eq!(ls.deadlock_check(1, &|_| 0), Deadlock::Requester);
}

#[test]
fn the_later_bypass_passes_a_waiter_only_for_a_request_no_stronger_than_a_held_lock() {
    // Without the rule, the holder's new request waits behind the request
    // that waits for it (lock_rec_other_has_conflicting counts waiters).
    let mut ls = LockSys::new();
    assert_eq!(ls.request(1, rec(5), X_REC, 0), Request::Granted);
    assert!(matches!(
        ls.request(2, rec(5), X_REC, 0),
        Request::Waiting(_)
    ));
    assert!(matches!(
        ls.request(1, rec(5), S_NEXT, 0),
        Request::Waiting(_)
    ));

    // With it: holding X, a next-key S or X request passes the waiter.
    for next in [S_NEXT, X_NEXT] {
        let mut ls = LockSys::new().with_bypass_waiters(true);
        assert_eq!(ls.request(1, rec(5), X_REC, 0), Request::Granted);
        assert!(matches!(
            ls.request(2, rec(5), X_REC, 0),
            Request::Waiting(_)
        ));
        assert_eq!(ls.request(1, rec(5), next, 0), Request::Granted, "{next:?}");
        assert!(ls.waiting_for(2).is_some(), "T2 still waits");
    }
    // Holding S only, an X request does not: it waits, and the two
    // transactions wait for each other (MariaDB 10.11.14 deadlocks them).
    for held in [S_REC, S_NEXT] {
        let mut ls = LockSys::new().with_bypass_waiters(true);
        assert_eq!(ls.request(1, rec(5), held, 0), Request::Granted);
        assert!(matches!(
            ls.request(2, rec(5), X_REC, 0),
            Request::Waiting(_)
        ));
        assert!(
            matches!(ls.request(1, rec(5), X_REC, 0), Request::Waiting(_)),
            "X after {held:?}"
        );
    }
    // Holding S, an S next-key request passes.
    let mut ls = LockSys::new().with_bypass_waiters(true);
    assert_eq!(ls.request(1, rec(5), S_REC, 0), Request::Granted);
    assert!(matches!(
        ls.request(2, rec(5), X_REC, 0),
        Request::Waiting(_)
    ));
    assert_eq!(ls.request(1, rec(5), S_NEXT, 0), Request::Granted);
}

#[test]
fn the_later_rule_keeps_a_lock_granted_after_a_wait_through_a_rows_release() {
    for keep in [false, true] {
        let mut ls = LockSys::new().with_keep_waited(keep);
        assert_eq!(ls.request(1, rec(5), X_REC, 0), Request::Granted);
        let mark = ls.next_lock_id();
        assert!(matches!(
            ls.request(2, rec(5), X_REC, 0),
            Request::Waiting(_)
        ));
        assert_eq!(
            ls.release_all(1, 1),
            vec![2],
            "T2 is granted after its wait"
        );
        // A lock taken without a wait, in the same statement.
        assert_eq!(ls.request(2, rec(6), X_REC, 0), Request::Granted);
        ls.release_records(2, &[rec(5), rec(6)], RecMode::X, mark, 2);
        // 1.0.6 lets both go; the later rule keeps the one it waited for.
        assert_eq!(ls.locks_of(2), usize::from(keep), "keep {keep}");
    }
}
