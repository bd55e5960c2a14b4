//! The lock judge's input: the engine's lock events restated in the lock
//! oracle's terms ([`models::lock`]), timed by the runner's clock.

use models::lock::{OEvent, OKind, OMode, OTarget, RKind, TMode};

/// The engine's lock event as the oracle states it, timed by the runner:
/// the call that produced it began at `since_us` and returned at `now_us`
/// (the engine's own stamps are not passed on).
pub(crate) fn to_oracle(e: engine::lock::LockEvent, since_us: u64, now_us: u64) -> OEvent {
    use engine::lock::{EventKind, Mode, RecKey, RecKind, RecMode, TableMode, Target};
    let kind = match e.kind {
        EventKind::Granted => OKind::Granted,
        EventKind::Wait => OKind::Wait,
        EventKind::GrantedAfterWait => OKind::GrantedAfterWait,
        EventKind::Released => OKind::Released,
        EventKind::TimedOut => OKind::TimedOut,
        EventKind::Victim => OKind::Victim,
        EventKind::Cancelled => OKind::Cancelled,
        EventKind::Inherited => OKind::Inherited,
        EventKind::Weight => OKind::Weight,
    };
    let target = match e.lock.target {
        Target::Table(t) => OTarget::Table(t),
        Target::Record { table, index, key } => OTarget::Record(
            table,
            index,
            match key {
                RecKey::Key(k) => Some(k),
                RecKey::Supremum => None,
            },
        ),
    };
    let mode = match e.lock.mode {
        Mode::Table(m) => OMode::Table(match m {
            TableMode::IS => TMode::IS,
            TableMode::IX => TMode::IX,
            TableMode::S => TMode::S,
            TableMode::X => TMode::X,
            TableMode::AutoInc => TMode::AutoInc,
        }),
        Mode::Record(m, k) => OMode::Record(
            m == RecMode::X,
            match k {
                RecKind::NextKey => RKind::NextKey,
                RecKind::RecNotGap => RKind::Record,
                RecKind::Gap => RKind::Gap,
                RecKind::InsertIntention => RKind::InsertIntention,
            },
        ),
    };
    OEvent {
        t_us: now_us,
        kind,
        lock: e.lock.id,
        trx: e.lock.trx,
        target,
        mode,
        since_us,
        undo_records: e.undo_records,
    }
}
