//! Tests of the fault model beyond crashes: each fault does what
//! [`FaultConfig`] says, is counted and logged, and every decision is a pure
//! function of the seed.

use super::*;
use engine::io::{Clock, Storage};
use std::io;

const LOSE_ALL: CrashMode = CrashMode::PowerLoss(PowerLossPolicy::LoseAll);

fn read_all(storage: &SimStorage, name: &str) -> io::Result<Vec<u8>> {
    let mut file = storage.clone().open(name)?;
    let mut bytes = vec![0; file.len()? as usize];
    file.read_at(0, &mut bytes)?;
    Ok(bytes)
}

fn expect_kind<T>(result: io::Result<T>, kind: io::ErrorKind) -> io::Error {
    match result {
        Err(error) => {
            assert_eq!(error.kind(), kind, "{error}");
            error
        }
        Ok(_) => panic!("expected {kind:?}, got Ok"),
    }
}

fn page(byte: u8) -> Vec<u8> {
    vec![byte; PAGE_BYTES as usize]
}

/// A file with a synced write and an unsynced one whose sync (operation 4)
/// fails; returns the storage.
fn failed_sync() -> io::Result<SimStorage> {
    let mut storage = SimStorage::new();
    let mut file = storage.create("a")?; // 0
    file.write_at(0, b"synced")?; // 1
    file.sync()?; // 2
    file.write_at(0, b"SYNCED+more")?; // 3
    storage.set_faults(FaultConfig {
        fsync_failure_at_op: Some(4),
        ..FaultConfig::default()
    });
    let error = expect_kind(file.sync(), io::ErrorKind::Other); // 4
    assert!(error.to_string().contains("EIO"), "{error}");
    assert!(is_simulated_fsync_failure(&error));
    assert!(!is_simulated_crash(&error));
    Ok(storage)
}

#[test]
fn a_failed_fsync_makes_nothing_durable_and_drops_the_pending_writes() -> io::Result<()> {
    let storage = failed_sync()?;
    assert_eq!(
        storage.read_durable_file("a").as_deref(),
        Some(&b"synced"[..])
    );
    assert_eq!(
        storage.pending_writes().len(),
        0,
        "the write is marked clean without reaching the disk"
    );
    assert_eq!(
        storage.read_file("a").as_deref(),
        Some(&b"SYNCED+more"[..]),
        "reads still see the dropped write until a restart"
    );
    assert_eq!(storage.counters().syncs, 1, "only the first sync succeeded");
    assert_eq!(storage.fault_counters().fsync_failures, 1);
    let fault = FaultRecord {
        index: 4,
        fault: Fault::FsyncFailure {
            file: "a".to_string(),
        },
    };
    assert_eq!(storage.fault_log(), vec![fault]);
    let last = storage.trace().pop().map(|r| r.outcome);
    assert_eq!(last, Some(IoOutcome::Failed(io::ErrorKind::Other)));

    // A power loss loses the dropped write ...
    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "a")?, b"synced");
    // ... and so does a process crash: nothing holds it any more.
    let storage = failed_sync()?;
    storage.restart(CrashMode::ProcessCrash);
    assert_eq!(read_all(&storage, "a")?, b"synced");
    Ok(())
}

#[test]
fn a_retried_fsync_after_eio_succeeds_and_persists_nothing() -> io::Result<()> {
    // fsyncgate: the retry says yes, and the write it "made durable" is
    // gone at the next restart. An engine that trusts it loses data.
    let mut storage = failed_sync()?;
    let mut file = storage.open("a")?;
    file.sync()?;
    assert_eq!(
        storage.read_durable_file("a").as_deref(),
        Some(&b"synced"[..])
    );
    // A write after the failure is persisted by the next sync as usual; the
    // dropped one stays dropped (and the file keeps its durable length).
    file.write_at(20, b"late")?;
    file.sync()?;
    storage.restart(CrashMode::ProcessCrash);
    let mut want = b"synced".to_vec();
    want.resize(20, 0);
    want.extend_from_slice(b"late");
    assert_eq!(read_all(&storage, "a")?, want);
    Ok(())
}

#[test]
fn an_fsync_failure_at_an_index_fires_once_at_the_first_sync_from_there() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.set_faults(FaultConfig {
        fsync_failure_at_op: Some(1),
        ..FaultConfig::default()
    });
    let mut file = storage.create("a")?; // 0
    file.write_at(0, b"x")?; // 1: not a sync, nothing fails
    expect_kind(file.sync(), io::ErrorKind::Other); // 2: the first sync from 1
    file.sync()?; // 3: fired already
    assert_eq!(storage.fault_counters().fsync_failures, 1);
    assert_eq!(storage.fault_log()[0].index, 2);
    Ok(())
}

#[test]
fn every_sync_fails_at_probability_one() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.set_faults(FaultConfig {
        p_fsync_failure: 1.0,
        ..FaultConfig::default()
    });
    let mut file = storage.create("a")?;
    for i in 0..10u8 {
        file.write_at(u64::from(i), &[i])?;
        expect_kind(file.sync(), io::ErrorKind::Other);
    }
    assert_eq!(storage.fault_counters().fsync_failures, 10);
    assert_eq!(storage.counters().syncs, 0);
    assert_eq!(storage.read_durable_file("a").as_deref(), Some(&b""[..]));
    Ok(())
}

#[test]
fn a_lying_fsync_loses_data_at_a_power_loss() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.set_faults(FaultConfig {
        lying_fsync: true,
        ..FaultConfig::default()
    });
    let mut file = storage.create("a")?; // 0
    file.write_at(0, b"acknowledged")?; // 1
    file.sync()?; // 2: says yes
    assert_eq!(storage.read_durable_file("a").as_deref(), Some(&b""[..]));
    assert_eq!(storage.counters().syncs, 1);
    assert_eq!(storage.fault_counters().lying_syncs, 1);
    let lie = FaultRecord {
        index: 2,
        fault: Fault::LyingSync {
            file: "a".to_string(),
            pending_ops: 1,
        },
    };
    assert_eq!(storage.fault_log(), vec![lie]);

    storage.restart(LOSE_ALL);
    assert_eq!(
        read_all(&storage, "a")?,
        b"",
        "the acknowledged write is gone"
    );

    // An honest sync persists everything a lie left pending.
    let mut file = storage.open("a")?;
    file.write_at(0, b"lied")?;
    file.sync()?;
    storage.set_faults(FaultConfig::default());
    file.write_at(4, b" then told")?;
    file.sync()?;
    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "a")?, b"lied then told");
    Ok(())
}

#[test]
fn some_syncs_lie_at_a_lower_probability() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.set_faults(FaultConfig {
        seed: 3,
        lying_fsync: true,
        p_lie: 0.5,
        ..FaultConfig::default()
    });
    let mut file = storage.create("a")?;
    let mut lies = 0;
    for i in 0..64u8 {
        file.write_at(u64::from(i), &[i])?;
        file.sync()?;
        // A lie leaves this write (and any a lie before left) pending; an
        // honest sync catches up on all of them.
        lies += u64::from(!storage.pending_writes().is_empty());
    }
    let counted = storage.fault_counters().lying_syncs;
    assert!(0 < counted && counted < 64, "{counted} of 64 lied");
    assert_eq!(lies, counted);
    Ok(())
}

#[test]
fn a_full_disk_refuses_growth_and_changes_nothing() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.set_faults(FaultConfig {
        capacity_bytes: Some(10_000),
        ..FaultConfig::default()
    });
    let mut a = storage.create("a")?;
    let mut b = storage.create("b")?;
    a.write_at(0, &[1; 4000])?;
    a.sync()?;
    b.write_at(0, &[2; 6000])?; // exactly full
    let before = (
        storage.read_file("a"),
        storage.read_file("b"),
        storage.read_durable_file("b"),
        storage.pending_writes(),
    );

    expect_kind(b.write_at(6000, b"x"), io::ErrorKind::StorageFull);
    expect_kind(b.write_at(5999, b"xy"), io::ErrorKind::StorageFull);
    expect_kind(b.set_len(6001), io::ErrorKind::StorageFull);
    expect_kind(a.write_at(100_000, &[3; 10]), io::ErrorKind::StorageFull);
    let after = (
        storage.read_file("a"),
        storage.read_file("b"),
        storage.read_durable_file("b"),
        storage.pending_writes(),
    );
    assert_eq!(before, after, "refused calls changed nothing");
    assert_eq!(storage.fault_counters().full_disk_errors, 4);
    let first = FaultRecord {
        index: 5,
        fault: Fault::DiskFull {
            file: "b".to_string(),
            used_bytes: 10_000,
            growth_bytes: 1,
        },
    };
    assert_eq!(storage.fault_log()[0], first);

    // Writes in place, empty writes and shrinks need no space.
    b.write_at(0, b"in place")?;
    b.write_at(50_000, b"")?;
    a.set_len(1000)?;
    b.write_at(6000, &[4; 3000])?;
    assert_eq!(b.len()?, 9000);
    expect_kind(b.write_at(9000, b"x"), io::ErrorKind::StorageFull);
    storage.restart(CrashMode::ProcessCrash);
    assert_eq!(read_all(&storage, "b")?.len(), 9000);
    Ok(())
}

#[test]
fn the_disk_fills_at_an_operation_index() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.set_faults(FaultConfig {
        full_at_op: Some(3),
        ..FaultConfig::default()
    });
    let mut file = storage.create("a")?; // 0
    file.write_at(0, b"room")?; // 1
    file.set_len(8)?; // 2
    expect_kind(file.write_at(8, b"!"), io::ErrorKind::StorageFull); // 3
    expect_kind(file.set_len(9), io::ErrorKind::StorageFull); // 4
    file.write_at(0, b"ROOM")?; // 5: in place
    assert_eq!(read_all(&storage, "a")?, b"ROOM\0\0\0\0");
    assert_eq!(storage.fault_counters().full_disk_errors, 2);
    Ok(())
}

/// Plants four data and log files, synced, and returns their images.
fn plant_for_rot(storage: &SimStorage) -> Vec<(&'static str, Vec<u8>)> {
    let files = vec![
        ("ibdata1", vec![0x00; 4096]),
        ("t.ibd", vec![0x55; 16384]),
        ("ib_logfile0", vec![0xAA; 2048]),
        ("notes.txt", vec![0x11; 100]),
    ];
    for (name, bytes) in &files {
        storage.write_file(name, bytes.clone());
    }
    files
}

#[test]
fn bit_rot_flips_exactly_the_reported_bits_of_data_files() {
    let storage = SimStorage::new();
    let mut images = plant_for_rot(&storage);
    storage.set_faults(FaultConfig {
        seed: 5,
        bit_rot: Some(BitRot {
            per_restart_flips: 40,
            include_redo_log: false,
        }),
        ..FaultConfig::default()
    });
    let next_index = storage.counters().ops;
    let report = storage.restart(CrashMode::ProcessCrash);
    assert_eq!(report.bit_flips.len(), 40);
    for flip in &report.bit_flips {
        assert!(
            flip.file == "ibdata1" || flip.file == "t.ibd",
            "rot only in data files: {flip:?}"
        );
        let (_, image) = images
            .iter_mut()
            .find(|(name, _)| *name == flip.file)
            .expect("a planted file");
        image[flip.offset as usize] ^= 1 << flip.bit;
    }
    for (name, image) in &images {
        assert_eq!(
            storage.read_durable_file(name).as_ref(),
            Some(image),
            "{name}"
        );
        assert_eq!(storage.read_file(name).as_ref(), Some(image), "{name}");
    }
    let files: std::collections::BTreeSet<&str> =
        report.bit_flips.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(files.len(), 2, "40 flips over 20 KiB hit both data files");
    assert_eq!(storage.fault_counters().bit_flips, 40);
    let logged: Vec<FaultRecord> = report
        .bit_flips
        .iter()
        .map(|flip| FaultRecord {
            index: next_index,
            fault: Fault::BitFlip(flip.clone()),
        })
        .collect();
    assert_eq!(storage.fault_log(), logged);
}

#[test]
fn bit_rot_reaches_the_redo_log_only_when_asked() {
    for include_redo_log in [false, true] {
        let storage = SimStorage::new();
        storage.write_file("ib_logfile0", vec![0; 2048]);
        storage.write_file("ib_logfile1", vec![0; 2048]);
        storage.set_faults(FaultConfig {
            bit_rot: Some(BitRot {
                per_restart_flips: 8,
                include_redo_log,
            }),
            ..FaultConfig::default()
        });
        let report = storage.restart(LOSE_ALL);
        let flipped = report.bit_flips.len();
        assert_eq!(flipped, if include_redo_log { 8 } else { 0 });
        let ones: u32 = ["ib_logfile0", "ib_logfile1"]
            .iter()
            .flat_map(|name| storage.read_file(name).unwrap_or_default())
            .map(u8::count_ones)
            .sum();
        assert!(ones as usize <= flipped && ones as usize % 2 == flipped % 2);
    }
}

#[test]
fn a_misdirected_page_write_lands_on_another_page() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let planted: Vec<u8> = (0..4).flat_map(page).collect();
    storage.write_file("t.ibd", planted);
    storage.set_faults(FaultConfig {
        p_misdirected_write: 1.0,
        ..FaultConfig::default()
    });
    let mut file = storage.open("t.ibd")?; // 0
    file.write_at(PAGE_BYTES, &page(0xEE))?; // 1

    let log = storage.fault_log();
    assert_eq!(log.len(), 1);
    let Fault::MisdirectedWrite {
        intended_offset,
        actual_offset,
        ..
    } = log[0].fault.clone()
    else {
        panic!("not a misdirection: {log:?}");
    };
    assert_eq!(log[0].index, 1);
    assert_eq!(intended_offset, PAGE_BYTES);
    assert_ne!(actual_offset, PAGE_BYTES);
    assert!(actual_offset.is_multiple_of(PAGE_BYTES));
    let image = storage.read_file("t.ibd").unwrap_or_default();
    assert_eq!(
        image.len() as u64,
        4 * PAGE_BYTES,
        "the length is unchanged"
    );
    for p in 0..4u64 {
        let start = (p * PAGE_BYTES) as usize;
        let expected = if p * PAGE_BYTES == actual_offset {
            0xEE
        } else {
            p as u8
        };
        let bytes = &image[start..start + PAGE_BYTES as usize];
        assert!(bytes.iter().all(|b| *b == expected), "page {p}");
    }
    // The trace says what the engine asked; the pending write where it went.
    let traced = storage.trace().pop().map(|r| (r.op, r.offset));
    assert_eq!(traced, Some((IoOp::WriteAt, PAGE_BYTES)));
    assert_eq!(storage.pending_writes()[0].offset, actual_offset);
    assert_eq!(storage.fault_counters().misdirected_writes, 1);

    // Only whole, aligned pages are misdirected.
    file.write_at(0, &[9; PAGE_BYTES as usize - 1])?;
    file.write_at(100, &page(9))?;
    file.write_at(0, &[9; 2 * PAGE_BYTES as usize])?;
    file.write_at(1000, &[9; 1024])?;
    file.write_at(0, &[9; 512])?;
    assert_eq!(storage.fault_counters().misdirected_writes, 1);
    // A page of a compressed tablespace (here 1 KiB) is a page too: it
    // lands on another page of its size.
    file.write_at(3 * 1024, &[7; 1024])?;
    assert_eq!(storage.fault_counters().misdirected_writes, 2);
    let Some(Fault::MisdirectedWrite {
        intended_offset,
        actual_offset,
        ..
    }) = storage.fault_log().last().map(|r| r.fault.clone())
    else {
        panic!("not a misdirection: {:?}", storage.fault_log());
    };
    assert_eq!(intended_offset, 3 * 1024);
    assert_ne!(actual_offset, 3 * 1024);
    assert!(actual_offset.is_multiple_of(1024), "{actual_offset}");
    let image = storage.read_file("t.ibd").unwrap_or_default();
    let landed = &image[actual_offset as usize..actual_offset as usize + 1024];
    assert!(landed.iter().all(|&b| b == 7), "the page landed whole");
    Ok(())
}

#[test]
fn a_misdirected_page_write_to_a_short_file_lands_past_it() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.set_faults(FaultConfig {
        p_misdirected_write: 1.0,
        ..FaultConfig::default()
    });
    // A file with no other page: the page lands on the next one.
    let mut one = storage.create("one.ibd")?;
    one.write_at(0, &page(7))?;
    let image = storage.read_file("one.ibd").unwrap_or_default();
    assert_eq!(image, [page(0), page(7)].concat());

    // An extending write: the file grows as asked, the page lands on one of
    // the two other pages and the intended one reads as zeros.
    let mut two = storage.create("two.ibd")?;
    two.write_at(0, &page(1))?; // lands on page 1
    two.write_at(PAGE_BYTES * 2, &page(2))?; // extends to 3 pages
    let image = storage.read_file("two.ibd").unwrap_or_default();
    assert_eq!(image.len() as u64, 3 * PAGE_BYTES);
    let Some(FaultRecord {
        fault: Fault::MisdirectedWrite { actual_offset, .. },
        ..
    }) = storage.fault_log().pop()
    else {
        panic!("the last write was misdirected");
    };
    assert!(actual_offset < 2 * PAGE_BYTES);
    let third = &image[2 * PAGE_BYTES as usize..];
    assert!(third.iter().all(|b| *b == 0), "the intended page is a hole");
    assert_eq!(storage.fault_counters().misdirected_writes, 3);
    Ok(())
}

#[test]
fn latency_advances_the_clock_exactly() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    storage.set_faults(FaultConfig {
        latency_us: Latency {
            create: 10,
            open: 3,
            exists: 2,
            list: 4,
            remove: 6,
            rename: 8,
            read: 7,
            write: 20,
            sync: 1000,
            len: 1,
            set_len: 5,
            read_per_mib: 1,
            write_per_mib: 1024,
            read_jitter: 0,
            write_jitter: 0,
            sync_jitter: 0,
            rotation: 0,
        },
        ..FaultConfig::default()
    });
    let mut file = storage.create("a")?; // 10
    file.write_at(0, &[1; 4096])?; // 20 + 4096 * 1024 / 2^20 = 24
    file.sync()?; // 1000
    file.len()?; // 1
    file.set_len(8192)?; // 5
    storage.exists("a")?; // 2
    storage.list()?; // 4
    storage.rename("a", "b")?; // 8
    expect_kind(storage.open("a"), io::ErrorKind::NotFound); // 3: failed, charged
    assert_eq!(clock.now_us(), 10 + 24 + 1000 + 1 + 5 + 2 + 4 + 8 + 3);

    // 4 KiB at 1 us per MiB: 1/256 us per read, carried without drift.
    let before_us = clock.now_us();
    let mut buf = [0; 4096];
    for _ in 0..255 {
        file.read_at(0, &mut buf)?;
    }
    assert_eq!(clock.now_us(), before_us + 255 * 7);
    file.read_at(0, &mut buf)?;
    assert_eq!(clock.now_us(), before_us + 256 * 7 + 1);
    expect_kind(file.read_at(8192, &mut buf), io::ErrorKind::UnexpectedEof);
    assert_eq!(clock.now_us(), before_us + 257 * 7 + 1, "no transfer");

    storage.remove("b")?; // 6
    let total_us = clock.now_us();
    storage.crash_now();
    assert!(file.len().is_err());
    assert_eq!(clock.now_us(), total_us, "a refused call costs nothing");
    assert_eq!(storage.fault_counters().latency_us_total, total_us);
    Ok(())
}

#[test]
fn on_a_timeline_latency_goes_to_the_step_and_syncs_queue_for_the_device() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    storage.set_faults(FaultConfig {
        latency_us: Latency {
            write: 20,
            sync: 1000,
            ..Latency::default()
        },
        ..FaultConfig::default()
    });
    storage.set_timeline(true);
    let mut file = storage.create("a")?;
    // A step at time 100: a write and a sync, the device idle.
    clock.set_us(100);
    file.write_at(0, &[1; 512])?;
    file.sync()?;
    assert_eq!(clock.now_us(), 100, "the clock stays at the step's start");
    assert_eq!(storage.take_spent_us(), 1020);
    assert_eq!(storage.device_free_us(), 100 + 1020);
    // A step at 500 syncs while that sync runs: it starts at 1120.
    clock.set_us(500);
    file.write_at(0, &[2; 512])?;
    file.sync()?;
    assert_eq!(storage.take_spent_us(), 1120 + 1000 - 500);
    assert_eq!(storage.device_free_us(), 2120);
    assert_eq!(storage.fault_counters().sync_queue_us_total, 1120 - 520);
    // A write does not queue behind a sync; a step after the device is
    // free waits for nothing.
    clock.set_us(600);
    file.write_at(0, &[3; 512])?;
    assert_eq!(storage.take_spent_us(), 20);
    clock.set_us(5_000);
    file.sync()?;
    assert_eq!(storage.take_spent_us(), 1000);
    assert_eq!(storage.take_spent_us(), 0, "taken once");
    assert_eq!(storage.fault_counters().latency_us_total, 3 * 20 + 3 * 1000);
    // Off again: latency advances the clock.
    storage.set_timeline(false);
    file.sync()?;
    assert_eq!(clock.now_us(), 6_000);
    Ok(())
}

#[test]
fn on_a_platter_a_sync_ends_a_whole_number_of_turns_after_the_last() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    storage.set_faults(FaultConfig {
        latency_us: Latency {
            sync: 200,
            rotation: 6_000,
            ..Latency::default()
        },
        ..FaultConfig::default()
    });
    storage.set_timeline(true);
    let mut file = storage.create("log")?;
    // The first sync: the platter's phase starts at 0, so it ends at the
    // first turn after its own 200 us.
    clock.set_us(100);
    file.sync()?;
    assert_eq!(storage.device_free_us(), 6_000);
    assert_eq!(storage.take_spent_us(), 5_900);
    // Issued while it runs: it queues, and then the sector it rewrites
    // comes round a whole turn later.
    clock.set_us(1_000);
    file.sync()?;
    assert_eq!(storage.device_free_us(), 12_000);
    assert_eq!(storage.take_spent_us(), 11_000);
    // Issued 2.5 turns after: it waits only to the next passage.
    clock.set_us(12_000 + 15_000);
    file.sync()?;
    assert_eq!(storage.device_free_us(), 30_000);
    assert_eq!(storage.take_spent_us(), 3_000);
    // Issued 100 us before a passage: its own cost runs past it, so it
    // waits for the one after.
    clock.set_us(35_900);
    file.sync()?;
    assert_eq!(storage.device_free_us(), 42_000);
    assert_eq!(storage.take_spent_us(), 6_100);
    // Without a timeline, the clock pays the same wait.
    storage.set_timeline(false);
    clock.set_us(43_000);
    file.sync()?;
    assert_eq!(
        clock.now_us(),
        48_000,
        "the next turn after 42,000 and 43,200"
    );
    file.sync()?;
    assert_eq!(clock.now_us(), 54_000, "back to back: a whole turn");
    let preset = Latency::preset("platter").expect("a preset");
    assert_eq!(preset.mean_sync_us(), 200.0 + 3_000.0);
    Ok(())
}

#[test]
fn latency_spreads_draw_within_their_range_from_their_own_stream() -> io::Result<()> {
    // A sync costs 700 to 1,300 us under the seeds' disk preset, each draw
    // from the latency stream of the configuration's seed: two disks of
    // one seed agree, and the draws spread over the range.
    let run = |seed: u64| -> io::Result<Vec<u64>> {
        let mut storage = SimStorage::new();
        let clock = SimClock::new();
        storage.set_clock(clock.clone());
        storage.set_faults(FaultConfig {
            seed,
            latency_us: Latency::preset("seeds-disk").expect("a preset"),
            ..FaultConfig::default()
        });
        let mut file = storage.create("a")?;
        let mut costs = Vec::new();
        for _ in 0..200 {
            let before = clock.now_us();
            file.sync()?;
            costs.push(clock.now_us() - before);
        }
        Ok(costs)
    };
    let a = run(1)?;
    assert_eq!(a, run(1)?);
    assert_ne!(a, run(2)?);
    assert!(a.iter().all(|&c| (700..=1_300).contains(&c)), "{a:?}");
    let mean = a.iter().sum::<u64>() as f64 / a.len() as f64;
    assert!((900.0..1_100.0).contains(&mean), "mean {mean}");
    assert!(a.iter().any(|&c| c < 800) && a.iter().any(|&c| c > 1_200));
    assert_eq!(Latency::preset("memory"), Some(Latency::default()));
    assert!(Latency::preset("floppy").is_none());
    for name in Latency::PRESETS {
        assert!(Latency::preset(name).is_some(), "{name}");
    }
    Ok(())
}

#[test]
fn unsynced_namespace_ops_can_be_lost_when_opted_in() -> io::Result<()> {
    let setup = || -> io::Result<SimStorage> {
        let mut storage = SimStorage::new();
        storage.set_faults(FaultConfig {
            lose_unsynced_namespace_ops: true,
            ..FaultConfig::default()
        });
        let mut a = storage.create("a")?;
        a.write_at(0, b"kept")?;
        a.sync()?;
        let mut gone = storage.create("gone")?;
        gone.write_at(0, b"synced data")?;
        gone.sync()?;
        storage.sync_dir()?; // commits the creations of "a" and "gone"
        storage.remove("gone")?;
        let mut b = storage.create("b")?;
        b.write_at(0, b"b data")?;
        storage.rename("a", "c")?;
        Ok(storage)
    };
    let pending = vec![
        NamespaceChange::Remove {
            name: "gone".to_string(),
        },
        NamespaceChange::Create {
            name: "b".to_string(),
        },
        NamespaceChange::Rename {
            from: "a".to_string(),
            to: "c".to_string(),
        },
    ];

    let mut storage = setup()?;
    let report = storage.restart(LOSE_ALL);
    assert_eq!(report.namespace_ops, pending);
    assert_eq!(report.namespace_ops_kept, 0);
    assert_eq!(storage.list()?, vec!["a".to_string(), "gone".to_string()]);
    assert_eq!(read_all(&storage, "a")?, b"kept");
    assert_eq!(read_all(&storage, "gone")?, b"synced data", "revived");
    assert_eq!(storage.fault_counters().namespace_ops_lost, 3);

    let mut storage = setup()?;
    storage.restart(CrashMode::ProcessCrash);
    assert_eq!(storage.list()?, vec!["b".to_string(), "c".to_string()]);
    assert_eq!(read_all(&storage, "b")?, b"b data");

    // A file's own sync makes its bytes durable, not its name.
    let mut storage = setup()?;
    let mut b = storage.open("b")?;
    b.sync()?;
    storage.restart(LOSE_ALL);
    assert_eq!(storage.list()?, vec!["a".to_string(), "gone".to_string()]);

    // A directory sync commits every earlier namespace operation.
    let mut storage = setup()?;
    storage.sync_dir()?;
    assert_eq!(storage.counters().dir_syncs, 2);
    storage.restart(LOSE_ALL);
    assert_eq!(storage.list()?, vec!["b".to_string(), "c".to_string()]);
    assert_eq!(read_all(&storage, "b")?, b"", "its write was never synced");

    // A random power loss keeps a prefix.
    for seed in 0..8 {
        let mut storage = setup()?;
        let faults = FaultConfig {
            seed,
            ..storage.faults()
        };
        storage.set_faults(faults);
        let report = storage.restart(CrashMode::PowerLoss(PowerLossPolicy::Random {
            seed,
            sector_bytes: 512,
            p_survive: 1.0,
            p_torn: 0.0,
        }));
        let expected = match report.namespace_ops_kept {
            0 => vec!["a", "gone"],
            1 => vec!["a"],
            2 => vec!["a", "b"],
            3 => vec!["b", "c"],
            kept => panic!("kept {kept} of 3"),
        };
        assert_eq!(storage.list()?, expected, "seed {seed}");
    }
    Ok(())
}

#[test]
fn switching_losable_namespace_ops_off_makes_them_durable() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.set_faults(FaultConfig {
        lose_unsynced_namespace_ops: true,
        ..FaultConfig::default()
    });
    storage.create("a")?;
    storage.set_faults(FaultConfig::default());
    storage.restart(LOSE_ALL);
    assert_eq!(storage.list()?, vec!["a".to_string()]);
    Ok(())
}

/// Everything a run shows: trace, fault log, restart report, images,
/// counters and time.
type RunOutcome = (
    Vec<IoRecord>,
    Vec<FaultRecord>,
    RestartReport,
    Vec<Option<Vec<u8>>>,
    FaultCounters,
    u64,
);

/// A run with every fault kind on at moderate rates: page writes, log
/// writes and syncs on two files, errors tolerated, then a random power
/// loss.
fn faulty_run(seed: u64) -> RunOutcome {
    let mut storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    storage.set_faults(FaultConfig {
        seed,
        p_fsync_failure: 0.2,
        lying_fsync: true,
        p_lie: 0.3,
        capacity_bytes: Some(20 * PAGE_BYTES),
        bit_rot: Some(BitRot {
            per_restart_flips: 3,
            include_redo_log: false,
        }),
        p_misdirected_write: 0.3,
        latency_us: Latency {
            write: 50,
            sync: 2000,
            write_per_mib: 4000,
            ..Latency::default()
        },
        ..FaultConfig::default()
    });
    let (Ok(mut data), Ok(mut log)) = (storage.create("t.ibd"), storage.create("ib_logfile0"))
    else {
        panic!("creating files on an empty disk");
    };
    for i in 0..40u64 {
        // Failures are part of the outcome, which the trace records.
        let _ = data.write_at((i % 24) * PAGE_BYTES, &page(i as u8));
        let _ = log.write_at(i * 512, &[i as u8; 512]);
        if i % 3 == 0 {
            let _ = log.sync();
            let _ = data.sync();
        }
    }
    let report = storage.restart(CrashMode::PowerLoss(PowerLossPolicy::Random {
        seed,
        sector_bytes: 4096,
        p_survive: 0.5,
        p_torn: 0.25,
    }));
    (
        storage.trace(),
        storage.fault_log(),
        report,
        vec![storage.read_file("t.ibd"), storage.read_file("ib_logfile0")],
        storage.fault_counters(),
        clock.now_us(),
    )
}

#[test]
fn faults_are_deterministic_per_seed() {
    let first = faulty_run(7);
    assert_eq!(first, faulty_run(7), "same seed, same run");
    assert_ne!(first.1, faulty_run(8).1, "another seed, other faults");
    let counters = first.4;
    assert!(counters.fsync_failures > 0, "{counters:?}");
    assert!(counters.lying_syncs > 0, "{counters:?}");
    assert!(counters.full_disk_errors > 0, "{counters:?}");
    assert!(counters.misdirected_writes > 0, "{counters:?}");
    assert_eq!(counters.bit_flips, 3, "{counters:?}");
    assert_eq!(counters.latency_us_total, first.5);
}

#[test]
fn one_fault_kind_does_not_disturb_the_decisions_of_another() -> io::Result<()> {
    let misdirections = |lying_fsync: bool| -> io::Result<Vec<FaultRecord>> {
        let mut storage = SimStorage::new();
        storage.set_faults(FaultConfig {
            seed: 9,
            lying_fsync,
            p_lie: 0.5,
            p_misdirected_write: 0.5,
            ..FaultConfig::default()
        });
        let mut file = storage.create("t.ibd")?;
        for i in 0..32u64 {
            file.write_at((i % 8) * PAGE_BYTES, &page(i as u8))?;
            file.sync()?;
        }
        let log = storage.fault_log();
        Ok(log
            .into_iter()
            .filter(|r| matches!(r.fault, Fault::MisdirectedWrite { .. }))
            .collect())
    };
    let without = misdirections(false)?;
    assert!(!without.is_empty());
    assert_eq!(without, misdirections(true)?);
    Ok(())
}

#[test]
fn clear_trace_clears_the_fault_log_and_counters_carry_on() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.set_faults(FaultConfig {
        lying_fsync: true,
        ..FaultConfig::default()
    });
    let mut file = storage.create("a")?;
    file.sync()?;
    storage.clear_trace();
    assert!(storage.fault_log().is_empty());
    storage.set_tracing(false);
    file.sync()?;
    assert!(
        storage.fault_log().is_empty(),
        "no log while tracing is off"
    );
    assert_eq!(storage.fault_counters().lying_syncs, 2);
    Ok(())
}

#[test]
fn a_fault_config_is_validated_data() -> Result<(), Box<dyn std::error::Error>> {
    let default = FaultConfig::default();
    let json = serde_json::to_string(&default)?;
    assert_eq!(serde_json::from_str::<FaultConfig>(&json)?, default);

    let partial: FaultConfig = serde_json::from_str(
        r#"{"seed": 3, "lying_fsync": true, "latency_us": {"sync": 900},
            "bit_rot": {"per_restart_flips": 2}}"#,
    )?;
    assert_eq!(partial.seed, 3);
    assert_eq!(partial.p_lie, 1.0, "a lying fsync lies always by default");
    assert_eq!(partial.latency_us.sync, 900);
    assert_eq!(partial.latency_us.write, 0);
    assert_eq!(
        partial.bit_rot,
        Some(BitRot {
            per_restart_flips: 2,
            include_redo_log: false
        })
    );

    for unknown in [
        r#"{"lying_fsync": true, "p_lies": 0.5}"#,
        r#"{"latency_us": {"fsync": 900}}"#,
        r#"{"bit_rot": {"flips": 1}}"#,
    ] {
        assert!(
            serde_json::from_str::<FaultConfig>(unknown).is_err(),
            "{unknown} was accepted"
        );
    }

    let bad = FaultConfig {
        p_misdirected_write: 1.5,
        ..FaultConfig::default()
    };
    let error = bad.check().err().ok_or("1.5 was accepted")?;
    assert_eq!(error.field, "p_misdirected_write");
    assert!(error.to_string().contains("not a probability"), "{error}");
    Ok(())
}

#[test]
#[should_panic(expected = "p_fsync_failure")]
fn set_faults_refuses_an_invalid_config() {
    SimStorage::new().set_faults(FaultConfig {
        p_fsync_failure: f64::NAN,
        ..FaultConfig::default()
    });
}

/// Checks the disk's invariants: each inode's current image is its durable
/// image with its pending operations applied (unless a failed sync dropped
/// writes that reads still see until the next restart), and every name
/// (current or durable) finds its inode.
fn check_invariants(storage: &SimStorage) {
    let disk = storage.disk();
    for (id, inode) in &disk.inodes {
        if inode.writes_dropped {
            continue;
        }
        let mut image = inode.durable.clone();
        for op in &inode.pending {
            op.apply(&mut image);
        }
        assert_eq!(image, inode.current, "inode {id} ({})", inode.name);
    }
    for id in disk.names.values().chain(disk.durable_names.values()) {
        assert!(disk.inodes.contains_key(id), "inode {id} is named but gone");
    }
}

#[test]
fn a_random_workload_under_every_fault_keeps_the_disk_consistent() {
    use rand::{Rng, SeedableRng};
    let names = ["ibdata1", "a.ibd", "b.ibd", "ib_logfile0"];
    let mut reached = FaultCounters::default();
    for seed in 0..16 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut storage = SimStorage::new();
        storage.set_faults(FaultConfig {
            seed,
            p_fsync_failure: 0.1,
            lying_fsync: true,
            p_lie: 0.2,
            capacity_bytes: Some(12 * PAGE_BYTES),
            bit_rot: Some(BitRot {
                per_restart_flips: 2,
                include_redo_log: true,
            }),
            p_misdirected_write: 0.3,
            lose_unsynced_namespace_ops: true,
            ..FaultConfig::default()
        });
        let mut handles: Vec<Box<dyn engine::io::File>> = Vec::new();
        for step in 0..400 {
            let name = names[rng.gen_range(0..names.len())];
            // Errors (missing files, full disk, EIO) are expected outcomes.
            match rng.gen_range(0..10) {
                0 => {
                    if let Ok(file) = storage.create(name) {
                        handles.push(file);
                    }
                }
                1 => {
                    if let Ok(file) = storage.open(name) {
                        handles.push(file);
                    }
                }
                2 => {
                    let _ = storage.remove(name);
                }
                3 => {
                    let _ = storage.rename(name, names[rng.gen_range(0..names.len())]);
                }
                4 if !handles.is_empty() => {
                    let i = rng.gen_range(0..handles.len());
                    let _ = handles[i].set_len(rng.gen_range(0..4) * PAGE_BYTES);
                }
                5 | 6 if !handles.is_empty() => {
                    let i = rng.gen_range(0..handles.len());
                    let _ = handles[i].sync();
                    if rng.gen_bool(0.3) {
                        let _ = storage.sync_dir();
                    }
                }
                7 | 8 if !handles.is_empty() => {
                    let i = rng.gen_range(0..handles.len());
                    let page_no = rng.gen_range(0..6);
                    let _ = handles[i].write_at(page_no * PAGE_BYTES, &page(step as u8));
                }
                9 if step % 7 == 0 => {
                    let mode = match rng.gen_range(0..3) {
                        0 => CrashMode::ProcessCrash,
                        1 => LOSE_ALL,
                        _ => CrashMode::PowerLoss(PowerLossPolicy::Random {
                            seed: rng.gen(),
                            sector_bytes: 512,
                            p_survive: 0.4,
                            p_torn: 0.3,
                        }),
                    };
                    handles.clear();
                    storage.restart(mode);
                }
                _ => {}
            }
            check_invariants(&storage);
        }
        let counters = storage.fault_counters();
        reached.fsync_failures += counters.fsync_failures;
        reached.lying_syncs += counters.lying_syncs;
        reached.full_disk_errors += counters.full_disk_errors;
        reached.bit_flips += counters.bit_flips;
        reached.misdirected_writes += counters.misdirected_writes;
        reached.namespace_ops_lost += counters.namespace_ops_lost;
    }
    // The workload reaches every fault, or it proves nothing.
    assert!(reached.fsync_failures > 0, "{reached:?}");
    assert!(reached.lying_syncs > 0, "{reached:?}");
    assert!(reached.full_disk_errors > 0, "{reached:?}");
    assert!(reached.bit_flips > 0, "{reached:?}");
    assert!(reached.misdirected_writes > 0, "{reached:?}");
    assert!(reached.namespace_ops_lost > 0, "{reached:?}");
}

#[test]
fn a_misdirection_that_crashes_strikes_at_the_next_operation_and_is_reported() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let planted: Vec<u8> = (0..4).flat_map(page).collect();
    storage.write_file("ibdata1", planted.clone());
    storage.write_file("ib_logfile0", planted);
    storage.set_faults(FaultConfig {
        p_misdirected_write: 1.0,
        misdirect_data_files_only: true,
        crash_after_misdirection: true,
        ..FaultConfig::default()
    });
    // The redo log is not a data file: its page-sized writes go home.
    let mut log = storage.open("ib_logfile0")?;
    log.write_at(PAGE_BYTES, &page(0xAA))?;
    log.sync()?;
    assert_eq!(storage.fault_counters().misdirected_writes, 0);
    // A data file's page write goes astray and succeeds; the next call
    // crashes, whatever it is.
    let mut file = storage.open("ibdata1")?;
    file.write_at(2 * PAGE_BYTES, &page(0xEE))?;
    assert_eq!(storage.fault_counters().misdirected_writes, 1);
    assert!(!storage.crashed());
    let err = file.sync().unwrap_err();
    assert!(is_simulated_crash(&err), "{err}");
    assert!(storage.crashed());

    let report = storage.restart(CrashMode::ProcessCrash);
    assert_eq!(report.misdirected.len(), 1);
    let m = &report.misdirected[0];
    assert_eq!(m.file, "ibdata1");
    assert_eq!(m.intended_offset, 2 * PAGE_BYTES);
    assert_ne!(m.actual_offset, 2 * PAGE_BYTES);
    // What the landing page held before: its planted byte.
    let landed = (m.actual_offset / PAGE_BYTES) as u8;
    assert_eq!(m.displaced, vec![landed; DISPLACED_BYTES]);
    // A process crash keeps the misdirected bytes; the intended page its old ones.
    let image = storage.read_file("ibdata1").unwrap_or_default();
    let at = |p: u64| image[(p * PAGE_BYTES) as usize];
    assert_eq!(at(2), 2);
    assert_eq!(at(m.actual_offset / PAGE_BYTES), 0xEE);
    // Reported once, and the crash does not repeat after the restart.
    storage.set_faults(FaultConfig::default());
    let mut file = storage.open("ibdata1")?;
    file.sync()?;
    assert!(storage
        .restart(CrashMode::ProcessCrash)
        .misdirected
        .is_empty());
    Ok(())
}

#[test]
fn a_write_watch_crashes_after_the_nth_write_to_its_offsets() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.write_file("ib_logfile0", vec![0; 4096]);
    storage.write_file("other", vec![0; 4096]);
    storage.watch_writes(Some(WriteWatch {
        file: "ib_logfile0".into(),
        offsets: vec![512, 1536],
        nth: 2,
        after_ops: 2,
    }));
    let mut log = storage.open("ib_logfile0")?;
    let mut other = storage.open("other")?;
    // Writes elsewhere, or to another file, do not count.
    log.write_at(1024, &[1; 512])?;
    other.write_at(512, &[1; 512])?;
    log.write_at(512, &[1; 512])?;
    assert!(!storage.watch_fired());
    log.sync()?;
    log.write_at(1536, &[2; 512])?; // the second: the crash is two operations on
    assert!(storage.watch_fired());
    log.write_at(0, &[3; 512])?; // one
    let err = log.sync().unwrap_err(); // two: crashes, the slot unsynced
    assert!(is_simulated_crash(&err), "{err}");
    let report = storage.restart(CrashMode::ProcessCrash);
    assert!(report.pending.iter().any(|p| p.offset == 1536));
    // A restart disarms a watch that had not fired.
    storage.watch_writes(Some(WriteWatch {
        file: "ib_logfile0".into(),
        offsets: vec![512],
        nth: 1,
        after_ops: 1,
    }));
    storage.restart(CrashMode::ProcessCrash);
    let mut log = storage.open("ib_logfile0")?;
    log.write_at(512, &[4; 512])?;
    log.sync()?;
    assert!(!storage.crashed());
    Ok(())
}

#[test]
fn the_earliest_armed_crash_strikes_whoever_armed_it() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.write_file("f", vec![0; 4096]);
    let mut f = storage.open("f")?; // operation 0
                                    // A later index does not replace a sooner one still to come.
    storage.set_crash_at(Some(3));
    storage.set_crash_at_earliest(5);
    f.write_at(0, &[1; 512])?; // 1
    f.write_at(512, &[1; 512])?; // 2
    assert!(is_simulated_crash(&f.sync().unwrap_err()), "3 struck"); // 3
    storage.restart(CrashMode::ProcessCrash);
    // A sooner index replaces a later one.
    let mut f = storage.open("f")?; // 4
    storage.set_crash_at(Some(9));
    storage.set_crash_at_earliest(6);
    f.write_at(0, &[2; 512])?; // 5
    assert!(is_simulated_crash(&f.sync().unwrap_err()), "6 struck"); // 6
    storage.restart(CrashMode::ProcessCrash);
    // An armed index already passed counts for nothing: the new one holds.
    let mut f = storage.open("f")?; // 7
    storage.set_crash_at(Some(2));
    storage.set_crash_at_earliest(9);
    f.write_at(0, &[3; 512])?; // 8
    assert!(is_simulated_crash(&f.sync().unwrap_err()), "9 struck"); // 9
    Ok(())
}
