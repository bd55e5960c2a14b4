//! Tests of the simulated disk: durability, crash indexing, handle epochs,
//! tearing, the random policy's determinism and length changes.

use super::*;
use engine::io::Storage;
use std::io;

const LOSE_ALL: CrashMode = CrashMode::PowerLoss(PowerLossPolicy::LoseAll);

fn explicit(sector_bytes: u32, survivals: Vec<Survival>) -> CrashMode {
    CrashMode::PowerLoss(PowerLossPolicy::Explicit {
        sector_bytes,
        survivals,
    })
}

fn random(seed: u64) -> CrashMode {
    CrashMode::PowerLoss(PowerLossPolicy::Random {
        seed,
        sector_bytes: 512,
        p_survive: 0.4,
        p_torn: 0.3,
    })
}

/// One synced write, then two unsynced ones.
fn write_half_synced(storage: &SimStorage) -> io::Result<()> {
    let mut file = storage.clone().create("a")?;
    file.write_at(0, b"durable")?;
    file.sync()?;
    file.write_at(0, b"DUR")?;
    file.write_at(7, b"+tail")
}

fn read_all(storage: &SimStorage, name: &str) -> io::Result<Vec<u8>> {
    let mut file = storage.clone().open(name)?;
    let mut bytes = vec![0; file.len()? as usize];
    file.read_at(0, &mut bytes)?;
    Ok(bytes)
}

fn expect_crash<T>(result: io::Result<T>) {
    match result {
        Err(error) => assert!(is_simulated_crash(&error), "not a crash: {error}"),
        Ok(_) => panic!("expected a simulated crash, got Ok"),
    }
}

fn expect_kind<T>(result: io::Result<T>, kind: io::ErrorKind) {
    match result {
        Err(error) => assert_eq!(error.kind(), kind, "{error}"),
        Ok(_) => panic!("expected {kind:?}, got Ok"),
    }
}

#[test]
fn unsynced_writes_are_lost_on_lose_all() -> io::Result<()> {
    let storage = SimStorage::new();
    write_half_synced(&storage)?;
    assert_eq!(read_all(&storage, "a")?, b"DURable+tail");
    assert_eq!(storage.pending_writes().len(), 2);

    storage.restart(LOSE_ALL);
    assert!(!storage.crashed());
    assert_eq!(read_all(&storage, "a")?, b"durable");
    assert!(storage.pending_writes().is_empty());
    Ok(())
}

#[test]
fn unsynced_writes_are_kept_on_process_crash() -> io::Result<()> {
    let storage = SimStorage::new();
    write_half_synced(&storage)?;
    let report = storage.restart(CrashMode::ProcessCrash);
    assert_eq!(report.survivals, vec![Survival::Keep, Survival::Keep]);
    assert_eq!(read_all(&storage, "a")?, b"DURable+tail");
    // What survived a process crash is durable now.
    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "a")?, b"DURable+tail");
    Ok(())
}

#[test]
fn sync_makes_writes_durable_for_that_file_only() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut synced = storage.create("synced")?;
    let mut unsynced = storage.create("unsynced")?;
    synced.write_at(0, b"kept")?;
    unsynced.write_at(0, b"lost")?;
    synced.sync()?;
    assert_eq!(
        storage.read_durable_file("synced").as_deref(),
        Some(&b"kept"[..])
    );
    assert_eq!(
        storage.read_durable_file("unsynced").as_deref(),
        Some(&b""[..])
    );

    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "synced")?, b"kept");
    assert_eq!(read_all(&storage, "unsynced")?, b"");
    assert_eq!(storage.counters().syncs, 1);
    Ok(())
}

/// Creates a file, then writes byte `i` at offset `i` for `i` in 0..8: the
/// create is operation 0 and the write of byte `i` is operation `i + 1`.
fn byte_per_op(storage: &SimStorage) -> io::Result<()> {
    let mut file = storage.clone().create("bytes")?;
    for i in 0..8u8 {
        file.write_at(u64::from(i), &[i])?;
    }
    Ok(())
}

#[test]
fn crash_at_n_means_ops_before_n_happened_and_n_did_not() -> io::Result<()> {
    let counting = SimStorage::new();
    byte_per_op(&counting)?;
    let ops = counting.counters().ops;
    assert_eq!(ops, 9);
    let full_trace = counting.trace();
    assert_eq!(full_trace.len() as u64, ops);

    for crash_at in 0..ops {
        let storage = SimStorage::new();
        storage.set_crash_at(Some(crash_at));
        expect_crash(byte_per_op(&storage));
        assert!(storage.crashed());

        let trace = storage.trace();
        let n = crash_at as usize;
        assert_eq!(trace[..n], full_trace[..n], "ops before the crash ran");
        assert_eq!(trace[n].index, crash_at);
        assert_eq!(trace[n].outcome, IoOutcome::Crashed);

        storage.restart(CrashMode::ProcessCrash);
        if crash_at == 0 {
            assert!(!storage.clone().exists("bytes")?, "the create never ran");
        } else {
            let expected: Vec<u8> = (0..crash_at as u8 - 1).collect();
            assert_eq!(read_all(&storage, "bytes")?, expected);
        }
    }
    Ok(())
}

#[test]
fn every_op_after_the_crash_fails() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut file = storage.create("a")?; // op 0
    file.write_at(0, b"x")?; // op 1
    storage.set_crash_at(Some(3));
    file.sync()?; // op 2
    expect_crash(file.len()); // op 3: the crash
    assert!(storage.crashed());
    expect_crash(file.read_at(0, &mut [0]));
    expect_crash(file.write_at(0, b"y"));
    expect_crash(file.sync());
    expect_crash(file.set_len(0));
    expect_crash(storage.create("b"));
    expect_crash(storage.open("a"));
    expect_crash(storage.exists("a"));
    expect_crash(storage.list());
    expect_crash(storage.remove("a"));
    expect_crash(storage.rename("a", "b"));

    let trace = storage.trace();
    assert_eq!(trace.len(), 14, "refused calls are traced too");
    assert!(trace[3..].iter().all(|r| r.outcome == IoOutcome::Crashed));
    assert_eq!(storage.counters().crashes, 1);
    Ok(())
}

#[test]
fn crash_now_crashes_between_ops() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut file = storage.create("a")?;
    file.write_at(0, b"x")?;
    storage.crash_now();
    assert!(storage.crashed());
    expect_crash(file.sync());
    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "a")?, b"");
    Ok(())
}

#[test]
fn handles_opened_before_a_crash_stay_dead_after_restart() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut old = storage.create("a")?;
    old.write_at(0, b"before")?;
    old.sync()?;
    storage.crash_now();
    storage.restart(CrashMode::ProcessCrash);
    assert_eq!(storage.epoch(), 1);

    expect_crash(old.read_at(0, &mut [0; 6]));
    expect_crash(old.write_at(0, b"stale!"));
    expect_crash(old.sync());
    expect_crash(old.len());
    let stale = storage.trace().pop().map(|r| r.outcome);
    assert_eq!(stale, Some(IoOutcome::Crashed));
    assert!(!storage.crashed(), "a stale handle does not crash the disk");

    let mut new = storage.open("a")?;
    let mut bytes = [0; 6];
    new.read_at(0, &mut bytes)?;
    assert_eq!(&bytes, b"before");
    // Dropping a stale handle must not disturb the new epoch's handles.
    drop(old);
    storage.remove("a")?;
    new.write_at(0, b"unlinked but open")?;
    assert_eq!(new.len()?, 17);
    Ok(())
}

/// Writes `0xBB` over sectors half-way through one sector to half-way
/// through the third, on a file of four sectors of `0xAA`, and tears it.
fn tear_three_pieces(sector_bytes: u32, kept: [bool; 3]) -> io::Result<()> {
    let sector = sector_bytes as usize;
    let mut storage = SimStorage::new();
    let mut file = storage.create("t")?;
    file.write_at(0, &vec![0xAA; 4 * sector])?;
    file.sync()?;
    file.write_at(sector as u64 / 2, &vec![0xBB; 2 * sector])?;

    let pending = storage.pending_writes();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].sectors(sector_bytes), 3);
    let torn = Survival::Torn {
        sectors_kept: kept.to_vec(),
    };
    let report = storage.restart(explicit(sector_bytes, vec![torn.clone()]));
    assert_eq!(report.survivals, vec![torn]);

    let image = storage.read_durable_file("t").unwrap_or_default();
    assert_eq!(image.len(), 4 * sector);
    for (i, byte) in image.iter().enumerate() {
        let piece = match i {
            i if i < sector / 2 => None,
            i if i < sector => Some(0),
            i if i < 2 * sector => Some(1),
            i if i < 2 * sector + sector / 2 => Some(2),
            _ => None,
        };
        let new = piece.is_some_and(|p| kept[p]);
        let expected = if new { 0xBB } else { 0xAA };
        assert_eq!(*byte, expected, "byte {i} with {kept:?} at {sector_bytes}");
    }
    Ok(())
}

#[test]
fn torn_writes_keep_exactly_the_chosen_sectors_at_512() -> io::Result<()> {
    for mask in 0..8u8 {
        tear_three_pieces(512, [mask & 1 != 0, mask & 2 != 0, mask & 4 != 0])?;
    }
    Ok(())
}

#[test]
fn torn_writes_keep_exactly_the_chosen_sectors_at_4096() -> io::Result<()> {
    for mask in 0..8u8 {
        tear_three_pieces(4096, [mask & 1 != 0, mask & 2 != 0, mask & 4 != 0])?;
    }
    Ok(())
}

#[test]
fn torn_extension_stops_at_its_last_kept_piece() -> io::Result<()> {
    for (kept, expected) in [
        ([true, false], vec![1u8; 512]),
        ([false, true], [vec![0u8; 512], vec![1u8; 100]].concat()),
    ] {
        let mut storage = SimStorage::new();
        let mut file = storage.create("t")?;
        file.write_at(0, &[1; 612])?;
        let torn = Survival::Torn {
            sectors_kept: kept.to_vec(),
        };
        storage.restart(explicit(512, vec![torn]));
        assert_eq!(read_all(&storage, "t")?, expected, "{kept:?}");
    }
    Ok(())
}

#[test]
fn a_torn_write_reveals_the_surviving_write_beneath_it() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut file = storage.create("t")?;
    file.write_at(0, &[1; 1024])?;
    file.write_at(0, &[2; 1024])?;
    let torn = Survival::Torn {
        sectors_kept: vec![false, true],
    };
    storage.restart(explicit(512, vec![Survival::Keep, torn]));
    let expected = [vec![1u8; 512], vec![2u8; 512]].concat();
    assert_eq!(read_all(&storage, "t")?, expected);
    Ok(())
}

/// Many unsynced writes over two files, some unaligned.
fn scatter(storage: &SimStorage) -> io::Result<()> {
    let mut names = storage.clone();
    let mut a = names.create("a")?;
    let mut b = names.create("b")?;
    for i in 0..32u64 {
        a.write_at(i * 300, &[i as u8 + 1; 700])?;
        b.write_at(i * 512, &[i as u8 + 1; 512])?;
    }
    b.set_len(4000)
}

fn images(storage: &SimStorage) -> Vec<Option<Vec<u8>>> {
    vec![storage.read_file("a"), storage.read_file("b")]
}

#[test]
fn random_power_loss_is_deterministic_per_seed() -> io::Result<()> {
    let mut outcomes = Vec::new();
    for seed in 0..4 {
        let first = SimStorage::new();
        scatter(&first)?;
        let first_report = first.restart(random(seed));
        let second = SimStorage::new();
        scatter(&second)?;
        let second_report = second.restart(random(seed));
        assert_eq!(first_report, second_report, "seed {seed}");
        assert_eq!(images(&first), images(&second), "seed {seed}");

        // The report replays exactly as an explicit policy.
        let replay = SimStorage::new();
        scatter(&replay)?;
        replay.restart(explicit(
            first_report.sector_bytes,
            first_report.survivals.clone(),
        ));
        assert_eq!(images(&first), images(&replay), "seed {seed}");
        outcomes.push(first_report.survivals);
    }
    outcomes.dedup();
    assert!(
        outcomes.len() > 1,
        "different seeds give different outcomes"
    );
    let all: Vec<&Survival> = outcomes.iter().flatten().collect();
    assert!(all.iter().any(|s| matches!(s, Survival::Keep)));
    assert!(all.iter().any(|s| matches!(s, Survival::Lose)));
    assert!(all.iter().any(|s| matches!(s, Survival::Torn { .. })));
    Ok(())
}

#[test]
fn sync_folds_pending_operations_into_the_current_image() -> io::Result<()> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut storage = SimStorage::new();
    let mut file = storage.create("f")?;
    for _ in 0..200 {
        match rng.gen_range(0..4) {
            0 => file.set_len(rng.gen_range(0..3000))?,
            1 => file.sync()?,
            _ => {
                let bytes = vec![rng.gen(); rng.gen_range(0..700)];
                file.write_at(rng.gen_range(0..3000), &bytes)?;
            }
        }
        if storage.pending_writes().is_empty() {
            assert_eq!(storage.read_durable_file("f"), storage.read_file("f"));
        }
    }
    file.sync()?;
    assert_eq!(storage.read_durable_file("f"), storage.read_file("f"));
    Ok(())
}

#[test]
fn set_len_is_durable_only_after_sync() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut file = storage.create("f")?;
    file.write_at(0, b"0123456789")?;
    file.sync()?;
    file.set_len(4)?;
    assert_eq!(read_all(&storage, "f")?, b"0123");
    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "f")?, b"0123456789", "a lost shrink");

    let mut file = storage.open("f")?;
    file.set_len(12)?;
    storage.restart(CrashMode::ProcessCrash);
    assert_eq!(read_all(&storage, "f")?, b"0123456789\0\0");

    let mut file = storage.open("f")?;
    file.set_len(2)?;
    file.sync()?;
    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "f")?, b"01", "a synced shrink");
    Ok(())
}

#[test]
fn set_len_survives_independently_in_issue_order() -> io::Result<()> {
    for (survivals, expected) in [
        ([Survival::Keep, Survival::Lose], &b"abcd"[..]),
        ([Survival::Lose, Survival::Keep], &b"\0\0"[..]),
        ([Survival::Keep, Survival::Keep], &b"ab"[..]),
        ([Survival::Lose, Survival::Lose], &b""[..]),
    ] {
        let mut storage = SimStorage::new();
        let mut file = storage.create("f")?;
        file.write_at(0, b"abcd")?;
        file.set_len(2)?;
        let pending = storage.pending_writes();
        assert_eq!(pending[1].kind, PendingKind::SetLen);
        assert_eq!(pending[1].len, 2);
        storage.restart(explicit(512, survivals.to_vec()));
        assert_eq!(read_all(&storage, "f")?, expected, "{survivals:?}");
    }
    Ok(())
}

#[test]
#[should_panic(expected = "cannot be torn")]
fn a_set_len_cannot_be_torn() {
    let storage = SimStorage::new();
    let mut file = storage.clone().create("f").unwrap();
    file.set_len(2).unwrap();
    let torn = Survival::Torn {
        sectors_kept: vec![],
    };
    storage.restart(explicit(512, vec![torn]));
}

#[test]
#[should_panic(expected = "one survival per pending operation")]
fn an_explicit_policy_must_cover_every_pending_write() {
    let storage = SimStorage::new();
    let mut file = storage.clone().create("f").unwrap();
    file.write_at(0, b"x").unwrap();
    storage.restart(explicit(512, vec![]));
}

#[test]
fn pending_writes_are_ordered_by_file_then_issue() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut b = storage.create("b")?;
    let mut a = storage.create("a")?;
    b.write_at(10, b"b1")?;
    a.write_at(20, b"a1")?;
    b.set_len(5)?;
    a.write_at(0, b"a2")?;
    a.write_at(1, b"")?; // An empty write has nothing to lose.
    let pending = storage.pending_writes();
    let write = |file: &str, offset, len| PendingWrite {
        file: file.to_string(),
        kind: PendingKind::Write,
        offset,
        len,
    };
    let set_len = PendingWrite {
        file: "b".to_string(),
        kind: PendingKind::SetLen,
        offset: 0,
        len: 5,
    };
    let expected = vec![
        write("a", 20, 2),
        write("a", 0, 2),
        write("b", 10, 2),
        set_len,
    ];
    assert_eq!(pending, expected);
    Ok(())
}

#[test]
fn misuse_is_an_error_not_a_panic() -> io::Result<()> {
    use io::ErrorKind::*;
    let mut storage = SimStorage::new();
    let mut file = storage.create("a")?;
    file.write_at(0, b"abc")?;
    expect_kind(file.read_at(1, &mut [0; 3]), UnexpectedEof);
    expect_kind(file.read_at(u64::MAX, &mut [0; 2]), UnexpectedEof);
    expect_kind(file.write_at(u64::MAX, b"x"), FileTooLarge);
    expect_kind(file.write_at(MAX_FILE_BYTES, b"x"), FileTooLarge);
    expect_kind(file.set_len(MAX_FILE_BYTES + 1), FileTooLarge);
    expect_kind(storage.open("missing"), NotFound);
    expect_kind(storage.create("a"), AlreadyExists);
    expect_kind(storage.remove("missing"), NotFound);
    expect_kind(storage.rename("missing", "b"), NotFound);
    expect_kind(storage.create(""), InvalidInput);
    expect_kind(storage.create("dir/a"), InvalidInput);
    expect_kind(storage.rename("a", ".."), InvalidInput);
    let last = storage.trace().pop().map(|r| r.outcome);
    assert_eq!(last, Some(IoOutcome::Failed(InvalidInput)));
    assert!(!storage.crashed());
    assert_eq!(
        read_all(&storage, "a")?,
        b"abc",
        "failed calls changed nothing"
    );
    Ok(())
}

#[test]
fn namespace_changes_are_durable_at_once() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.create("gone")?;
    storage.create("old")?;
    storage.create("replaced")?;
    storage.remove("gone")?;
    storage.rename("old", "new")?;
    storage.rename("new", "replaced")?;
    storage.restart(LOSE_ALL);
    assert_eq!(storage.list()?, vec!["replaced".to_string()]);
    Ok(())
}

#[test]
fn a_handle_follows_its_file_through_a_rename() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut file = storage.create("tmp")?;
    storage.rename("tmp", "final")?;
    file.write_at(0, b"data")?;
    assert_eq!(storage.pending_writes()[0].file, "final");
    file.sync()?;
    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "final")?, b"data");
    Ok(())
}

#[test]
fn a_removed_file_open_at_the_crash_is_gone() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut file = storage.create("a")?;
    storage.remove("a")?;
    let mut successor = storage.create("a")?;
    file.write_at(0, b"orphan")?;
    file.sync()?;
    assert_eq!(
        successor.len()?,
        0,
        "the orphan's writes stay in the orphan"
    );
    storage.restart(CrashMode::ProcessCrash);
    assert_eq!(storage.list()?, vec!["a".to_string()]);
    assert_eq!(read_all(&storage, "a")?, b"");
    Ok(())
}

#[test]
fn the_trace_names_each_call() -> io::Result<()> {
    let mut storage = SimStorage::new();
    let mut file = storage.create("a")?;
    file.write_at(512, &[7; 100])?;
    file.set_len(4096)?;
    storage.rename("a", "b")?;
    file.sync()?;
    let trace = storage.trace();
    let record = |index, op, file: &str, to: Option<&str>, offset, len| IoRecord {
        index,
        op,
        file: file.to_string(),
        to: to.map(str::to_string),
        offset,
        len,
        outcome: IoOutcome::Done,
    };
    let expected = vec![
        record(0, IoOp::Create, "a", None, 0, 0),
        record(1, IoOp::WriteAt, "a", None, 512, 100),
        record(2, IoOp::SetLen, "a", None, 0, 4096),
        record(3, IoOp::Rename, "a", Some("b"), 0, 0),
        record(4, IoOp::Sync, "b", None, 0, 0),
    ];
    assert_eq!(trace, expected);
    let counters = storage.counters();
    assert_eq!(counters.ops, 5);
    assert_eq!(counters.writes, 1);
    assert_eq!(counters.bytes_written, 100);
    assert_eq!(counters.syncs, 1);

    storage.clear_trace();
    storage.set_tracing(false);
    storage.exists("b")?;
    assert!(storage.trace().is_empty());
    assert_eq!(storage.counters().ops, 6, "indexes carry on untraced");
    Ok(())
}

#[test]
fn clones_share_one_disk_and_can_cross_threads() -> io::Result<()> {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SimStorage>();

    let storage = SimStorage::new();
    let mut engine_side: Box<dyn Storage> = Box::new(storage.clone());
    let handle = std::thread::spawn(move || -> io::Result<()> {
        let mut file = engine_side.create("a")?;
        file.write_at(0, b"shared")
    });
    handle
        .join()
        .map_err(|_| io::Error::other("thread panicked"))??;
    assert_eq!(storage.read_file("a").as_deref(), Some(&b"shared"[..]));
    Ok(())
}

#[test]
fn write_file_plants_durable_contents() -> io::Result<()> {
    let mut storage = SimStorage::new();
    storage.write_file("planted", b"at rest".to_vec());
    let mut file = storage.open("planted")?;
    file.write_at(0, b"AT")?;
    storage.write_file("planted", b"rotten!".to_vec());
    assert!(storage.pending_writes().is_empty());
    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "planted")?, b"rotten!");
    Ok(())
}

/// A file and a page written into it, shared.
type WrittenPage = (Box<dyn engine::io::File>, std::sync::Arc<[u8]>);

/// File "a" with a patterned page written, shared, at its second chunk.
fn page_written_shared(storage: &SimStorage) -> io::Result<WrittenPage> {
    let mut file = storage.clone().create("a")?;
    let page: std::sync::Arc<[u8]> = (0..image::CHUNK).map(|i| (i % 251) as u8).collect();
    file.write_shared(image::CHUNK as u64, &page)?;
    Ok((file, page))
}

/// A shared page write reads back like a copied one, is durable once
/// synced, and a later partial write to the page changes the disk's copy,
/// not the caller's buffer (and is lost, unsynced, in a power loss).
#[test]
fn a_shared_page_write_is_a_write_of_its_bytes() -> io::Result<()> {
    let storage = SimStorage::new();
    let (mut file, page) = page_written_shared(&storage)?;
    file.sync()?;
    file.write_at(image::CHUNK as u64 + 10, b"xyz")?;
    let mut want = vec![0u8; 2 * image::CHUNK];
    want[image::CHUNK..].copy_from_slice(&page);
    let durable = want.clone();
    want[image::CHUNK + 10..image::CHUNK + 13].copy_from_slice(b"xyz");
    assert_eq!(read_all(&storage, "a")?, want);
    assert_eq!(
        page[10..13],
        [10, 11, 12],
        "the caller's buffer is untouched"
    );
    storage.restart(LOSE_ALL);
    assert_eq!(read_all(&storage, "a")?, durable);
    Ok(())
}

/// A shared read of a written page is the disk's image itself, which a
/// later write to the page does not change under the reader; any other
/// read is a copy of the same bytes; each is one read operation, traced
/// as `read_at` is, and past the end it fails as `read_at` does.
#[test]
fn a_shared_page_read_is_the_image_until_the_page_is_written() -> io::Result<()> {
    use std::sync::Arc;
    let storage = SimStorage::new();
    let (mut file, page) = page_written_shared(&storage)?;
    let ops = storage.counters().ops;

    let read = file
        .read_shared(image::CHUNK as u64, image::CHUNK)?
        .expect("shared");
    assert!(Arc::ptr_eq(&read, &page), "the written buffer itself");
    file.write_at(image::CHUNK as u64 + 10, b"xyz")?;
    assert_eq!(
        read[10..13],
        [10, 11, 12],
        "the reader's image is unchanged"
    );
    let again = file
        .read_shared(image::CHUNK as u64, image::CHUNK)?
        .expect("shared");
    assert_eq!(&again[10..13], b"xyz");
    assert_eq!(again[..10], page[..10]);

    // A part of a page, and a page never written: copies of the bytes.
    let part = file
        .read_shared(image::CHUNK as u64 + 8, 8)?
        .expect("copied");
    assert_eq!(&part[..], &[8, 9, b'x', b'y', b'z', 13, 14, 15]);
    let zeros = file.read_shared(0, image::CHUNK)?.expect("copied");
    assert!(zeros.iter().all(|&b| b == 0));
    expect_kind(
        file.read_shared(2 * image::CHUNK as u64, image::CHUNK),
        io::ErrorKind::UnexpectedEof,
    );
    assert_eq!(storage.counters().ops - ops, 6);
    let reads: Vec<(IoOp, u64, u64)> = storage
        .trace()
        .iter()
        .filter(|r| r.op == IoOp::ReadAt)
        .map(|r| (r.op, r.offset, r.len))
        .collect();
    let chunk = image::CHUNK as u64;
    assert_eq!(
        reads,
        [
            (IoOp::ReadAt, chunk, chunk),
            (IoOp::ReadAt, chunk, chunk),
            (IoOp::ReadAt, chunk + 8, 8),
            (IoOp::ReadAt, 0, chunk),
            (IoOp::ReadAt, 2 * chunk, chunk),
        ]
    );
    Ok(())
}
