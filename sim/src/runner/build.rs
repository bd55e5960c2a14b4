//! Building a run from its plan: the engine's configuration, the simulated
//! disk and clock with the plan's faults, the model, the engine opened with
//! its tables and preloaded rows, the workload's faults and crashes armed,
//! and the sessions.

use super::*;

/// With misdirected writes on, one page write of a data file in this many
/// goes astray.
const MISDIRECTION_ODDS: f64 = 400.0;

/// Builds a plan's world: the engine's configuration, the simulated disk
/// and clock with the plan's faults, the model, the engine opened with its
/// tables and preloaded rows, the workload's faults and crashes armed, and
/// the sessions.
pub(super) fn build(plan: &Plan, keep_trace: bool) -> Result<Built, RunError> {
    let (canaries, lying) = match &plan.canary {
        Some(n) => parse_canary(n)?,
        None => (Canaries::NONE, false),
    };
    let seed = plan.seed;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5C4E_D01E_0000_0001);
    let flush =
        FlushAtCommit::from_setting(plan.flush).map_err(|e| RunError::BadProfile(e.to_string()))?;
    let faults = plan.faults.clone();
    let config = Config {
        buffer_pool_pages: plan.pool_pages,
        log: LogConfig {
            files: 2,
            file_size_bytes: plan.log_file_kib * 1024,
            buffer_size_bytes: 64 * 1024,
        },
        flush_at_commit: flush,
        lock_wait_timeout_us: plan.lock_wait_timeout_s * 1_000_000,
        group_commit: plan.group_commit,
        // A time-driven run's grouped commits keep their locks until their
        // sync, as a server with the binary log does: the time a commit
        // waits for its sync is then time others wait for its rows.
        locks_until_durable: plan.timed && plan.group_commit,
        commit_mutex: plan.timed && plan.commit_mutex,
        canaries,
        file_per_table: !plan.system_tables,
        sort_buffer_bytes: plan
            .sort_buffer_bytes
            .unwrap_or(Config::default().sort_buffer_bytes),
        ..Config::default()
    };
    let storage = SimStorage::new();
    storage.set_tracing(keep_trace);
    let clock = SimClock::new();
    let mut fc = workload_faults(seed, lying, &faults);
    if plan.sync_latency_us > 0 {
        // Simulated time passes at every sync, so throughput can be told
        // in simulated seconds.
        fc.latency_us.sync = plan.sync_latency_us;
        storage.set_clock(clock.clone());
    }
    if let Some(l) = &plan.latency {
        // The profile's whole model: every operation costs.
        fc.latency_us = l.clone();
        storage.set_clock(clock.clone());
    }
    if plan.timed {
        // Latency goes to each step instead (set once setup is done).
        storage.set_clock(clock.clone());
    }
    let disk_headroom = plan.disk_headroom_kib.map(|k| k * 1024);
    let formats = [
        format_of(&plan.row_formats[0]).unwrap_or(RowFormat::Compact),
        format_of(&plan.row_formats[1]).unwrap_or(RowFormat::Compact),
    ];
    let mut definitions = vec![
        crate::tables::sbtest("sb", formats[0]),
        crate::tables::docs("docs", formats[1]),
    ];
    for t in &plan.tables {
        t.validate().map_err(RunError::BadProfile)?;
        definitions.push(t.definition());
    }
    let preloaded = preloaded_db(plan);
    let mut schema = crate::schema::Schema::of(&definitions);
    for (t, i) in plan.online_indexes() {
        schema.add_online(&t, &i);
    }
    let mut world = World {
        step_events: Vec::new(),
        locks: LockOracle::new(config.lock_wait_timeout_us, config.deadlock_detect),
        transfer_total: (plan.shape == crate::profile::Shape::Transfer)
            .then(|| balance_total(&preloaded)),
        storage: storage.clone(),
        clock: clock.clone(),
        config: config.clone(),
        engine: None,
        history: CommitHistory::new(preloaded.clone()).ordinal(schema.hidden_key_tables()),
        committed: Rc::new(preloaded),
        durability: DurabilityJudge::default(),
        log_fsync_failures: 0,
        call_start_us: 0,
        recovery_rng: ChaCha8Rng::seed_from_u64(seed ^ 0x7EC0_7E11_0000_0003),
        damaged_pages: std::collections::BTreeMap::new(),
        schema,
        uncommitted_reads: Vec::new(),
        row_seq: 0,
        insert_seq_override: None,
        anchors: plan.crash_at_statements.clone(),
        anchors_armed: vec![false; plan.crash_at_statements.len()],
        last_issued: None,
        final_crash: false,
        armed_at: None,
        observed_anchors: Vec::new(),
        observed_unarmed_anchors: Vec::new(),
        replay: Replay {
            turns: plan
                .schedule
                .iter()
                .flat_map(|s| s.turns.iter().copied())
                .collect(),
            crashes: plan
                .schedule
                .iter()
                .flat_map(|s| s.crashes.iter().copied())
                .collect(),
        },
        recorded: Default::default(),
        recovery_fsync_anchors: plan.fsync_failures_in_recovery.clone(),
        opens: 0,
        last_open: None,
        observed_recovery_fsync_anchors: Vec::new(),
        fsync_anchors: plan.fsync_failures_at_statements.clone(),
        fsync_anchors_armed: vec![false; plan.fsync_failures_at_statements.len()],
        observed_fsync_anchors: Vec::new(),
        fsync_failures_seen: 0,
        trace: Trace {
            hash: crate::storage::FNV_BASIS,
            lines: keep_trace.then(Vec::new),
        },
        violations: Vec::new(),
        stats: RunStats::default(),
        faults: faults.clone(),
        crash_plan: plan.crash_after_ios.clone(),
        crashes_armed: 0,
        checkpoint_crashes: plan.crash_after_checkpoints.clone(),
        checkpoint_crashes_armed: 0,
        checkpoint_watch_armed: false,
        scratch: ddl::initial(),
        online: plan
            .online_indexes()
            .into_iter()
            .map(|(t, i)| ((t, i.name), ddl::IndexState::Absent))
            .collect(),
        index_epoch: 0,
        conversions: Vec::new(),
        step_writes: None,
        unplaced_insert: None,
        other_row_wait: None,
        allowed_releases: None,
        rebuilt: BTreeMap::new(),
        timed: plan.timed,
        trx_sessions: BTreeMap::new(),
    };
    world.event(
        "run",
        json!({"seed": seed, "profile": plan.profile, "flush": flush.setting(), "pool_pages": config.buffer_pool_pages,
               "faults": format!("{faults:?}"), "canary": plan.canary, "transactions": plan.transactions.len()}),
    );
    let setup = (|| -> engine::Result<Engine> {
        let (mut e, _) = Engine::open(
            Box::new(storage.clone()),
            Box::new(clock.clone()),
            config.clone(),
        )?;
        for def in &definitions {
            e.create_table(def.clone())?;
        }
        if plan.preload > 0 {
            let s = e.session();
            e.execute(s, Request::Begin)?;
            for id in 1..=plan.preload {
                e.execute(
                    s,
                    Request::Insert {
                        table: "sb".into(),
                        row: crate::plan::preload_row(plan.shape, id),
                    },
                )?;
            }
            e.execute(s, Request::Commit)?;
            if e.is_commit_queued(s) {
                // Queued for the binary log's mutex, which nobody holds.
                e.resume(s)?;
            }
            e.close_session(s)?;
        }
        e.checkpoint()?;
        Ok(e)
    })();
    match setup {
        Ok(mut e) => {
            e.set_lock_event_log(true);
            world.engine = Some(e);
        }
        Err(e) => {
            // Setup runs before any fault is switched on.
            world.violations.push(format!("setup failed: {e}"));
            return Ok(Built::SetupFailed(Box::new(world)));
        }
    }
    // The disk's faults start with the workload; a full disk leaves some
    // room above what setup used.
    if let Some(room) = disk_headroom {
        let used: u64 = world
            .engine()
            .file_sizes()
            .map(|v| v.iter().map(|(_, n)| n).sum())
            .unwrap_or(0);
        fc.capacity_bytes = Some(used + room);
    }
    storage.set_faults(fc);
    world.reset_durability();
    arm_crash(&mut world);
    let mut sessions: Vec<Sess> = Vec::new();
    for _ in 0..plan.sessions {
        let id = world.engine().session();
        sessions.push(Sess {
            isolation: engine::Isolation::default(),
            trx: None,
            id,
            txn: None,
            waiting: false,
            last: None,
            scan_states: Vec::new(),
            kept_seq: None,
            in_flight: Vec::new(),
            insert_judged: 0,
            ready_us: plan.timed.then(|| rng.gen_range(0..plan.think_us.max(1))),
        });
    }
    Ok(Built::Ready(Box::new(Run {
        world,
        rng,
        sessions,
    })))
}

/// The disk's faults for a workload that switched on `faults` (the kinds
/// that act while it runs: failed fsyncs, misdirected writes, lost
/// namespace operations, bit rot), seeded with `seed`.
pub fn workload_faults(seed: u64, lying: bool, faults: &[FaultKind]) -> FaultConfig {
    let mut fc = FaultConfig {
        seed,
        lying_fsync: lying,
        ..FaultConfig::default()
    };
    if faults.contains(&FaultKind::FsyncFailure) {
        fc.p_fsync_failure = 0.02;
    }
    if faults.contains(&FaultKind::MisdirectedWrite) {
        // A page write of a data file lands on another page as the power
        // fails (see FaultConfig::crash_after_misdirection): about one in
        // MISDIRECTION_ODDS page writes.
        fc.p_misdirected_write = 1.0 / MISDIRECTION_ODDS;
        fc.misdirect_data_files_only = true;
        fc.crash_after_misdirection = true;
    }
    if faults.contains(&FaultKind::LostNamespaceOps) {
        // A create or remove is durable once the directory is synced.
        fc.lose_unsynced_namespace_ops = true;
    }
    if faults.contains(&FaultKind::BitRot) {
        fc.bit_rot = Some(crate::storage::BitRot {
            per_restart_flips: 1 + (seed % 3) as u32,
            include_redo_log: false,
        });
    }
    fc
}
