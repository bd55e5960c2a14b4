//! What survives a crash: the crash modes, the power-loss policies, and the
//! rebuilding of each file's durable image from the operations that survive.
//!
//! A process crash loses nothing that reached the OS: the page cache outlives
//! the process, so every file's durable image becomes its current image.
//!
//! A power loss keeps each file's durable image and decides, independently
//! for each pending (unsynced) operation, whether it survives:
//!
//! - a write is kept, lost, or torn: split at absolute sector boundaries
//!   (file offsets that are multiples of the sector size), each piece keeps
//!   either the new bytes or the bytes that were there before it;
//! - a `set_len` is kept or lost, never torn.
//!
//! The survivors of one file are applied to its durable image in the order
//! they were issued. Nothing else is ordered: a later write may survive
//! while an earlier one (in the same file, or another file, before or after
//! a sync of another file) is lost, which is exactly what a disk with a
//! volatile cache and no barriers is allowed to do.
//!
//! The pending operations of all files form one global list, ordered by
//! file name, then by issue order within the file. [`PendingWrite`]s are
//! listed, and [`Survival`]s given or reported, in that order, so an
//! exhaustive test can enumerate every outcome and a random one can be
//! replayed exactly:
//!
//! ```text
//!   "a.ibd":  w0 w1 set_len      "b.log": w0
//!   global:   [a.w0, a.w1, a.set_len, b.w0]
//!   survival: [Keep, Torn{[true,false]}, Lose, Keep]
//! ```
//!
//! A torn write that extends a file extends it only as far as its last kept
//! piece; a lost piece before a kept one reads as zeros (a hole).
//!
//! Pending operations of a file that is open but no longer named are not
//! listed and are lost even by a process crash: the file dies with the
//! process. With `lose_unsynced_namespace_ops`, the namespace is settled
//! after the files (see [`FaultConfig`](super::FaultConfig)); a file whose
//! creation is lost goes with its contents, and a file whose removal is
//! lost comes back with its durable image.

use super::disk::{Disk, PendingOp};
use super::faults::{BitFlip, Fault, NamespaceChange};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How the simulated machine went down, which decides what survived.
#[derive(Debug, Clone, PartialEq)]
pub enum CrashMode {
    /// The process died but the OS did not: everything written survives,
    /// synced or not.
    ProcessCrash,
    /// The power went: what was synced survives, and each unsynced
    /// operation survives or not as the policy says.
    PowerLoss(PowerLossPolicy),
}

impl CrashMode {
    /// The three ways a crash sweep takes the machine down at each crash
    /// point `k`, named: a process crash, a power loss that loses every
    /// unsynced operation, and one that keeps, loses and tears them by a
    /// mix seeded with `k` (512-byte sectors).
    pub fn sweep(k: u64) -> [(&'static str, CrashMode); 3] {
        [
            ("process crash", CrashMode::ProcessCrash),
            (
                "power loss, all unsynced lost",
                CrashMode::PowerLoss(PowerLossPolicy::LoseAll),
            ),
            (
                "power loss, seeded mix",
                CrashMode::PowerLoss(PowerLossPolicy::Random {
                    seed: k,
                    sector_bytes: 512,
                    p_survive: 0.5,
                    p_torn: 0.25,
                }),
            ),
        ]
    }
}

/// How a power loss treats each pending (unsynced) operation.
///
/// Each pending operation survives, is lost, or (a write only) is torn,
/// independently of the others. A torn write is split at absolute sector
/// boundaries (file offsets that are multiples of the sector size) and each
/// piece holds either the new bytes or what was there before the write; a
/// torn write extends a file only as far as its last kept piece, and a lost
/// piece before a kept one reads as zeros. The survivors of each file are
/// applied to its durable image in issue order; no order holds between
/// files, nor across the syncs of other files.
#[derive(Debug, Clone, PartialEq)]
pub enum PowerLossPolicy {
    /// Every pending operation is lost: only the durable images survive.
    LoseAll,
    /// Each pending operation independently survives with probability
    /// `p_survive`; a write is torn with probability `p_torn` (each of its
    /// sectors then kept with probability one half) and lost otherwise; a
    /// `set_len` is lost otherwise. Drawn from a ChaCha8 generator seeded
    /// with `seed`, in the global order, so the same seed and the same
    /// pending operations always give the same outcome.
    Random {
        /// Seeds the generator.
        seed: u64,
        /// The unit of tearing: 512 or 4096 (any power of two is accepted).
        sector_bytes: u32,
        /// Probability that an operation survives whole.
        p_survive: f64,
        /// Probability that a write is torn; `p_survive + p_torn <= 1`.
        p_torn: f64,
    },
    /// The outcome of every pending operation, in the global order (see
    /// [`SimStorage::pending_writes`](super::SimStorage::pending_writes)).
    /// There must be exactly one survival per pending operation, `Torn`
    /// only for writes, with one flag per sector the write touches.
    Explicit {
        /// The unit of tearing for `Torn` survivals.
        sector_bytes: u32,
        /// One survival per pending operation.
        survivals: Vec<Survival>,
    },
}

/// What became of one pending operation at a power loss.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Survival {
    /// It reached the disk whole.
    Keep,
    /// It never reached the disk.
    Lose,
    /// A write reached the disk in part: `sectors_kept[i]` says whether the
    /// `i`-th sector-aligned piece of the write (see
    /// [`PendingWrite::sectors`]) holds the new bytes (`true`) or the old
    /// ones (`false`).
    Torn {
        /// One flag per sector-aligned piece, in offset order.
        sectors_kept: Vec<bool>,
    },
}

/// What a pending operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PendingKind {
    /// `write_at`: `len` bytes at `offset`.
    Write,
    /// `set_len`: the file becomes `len` bytes long (`offset` is 0).
    SetLen,
}

/// A pending (unsynced) operation, as listed for enumeration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PendingWrite {
    /// The file's name.
    pub file: String,
    /// A write or a length change.
    pub kind: PendingKind,
    /// For a write, its offset; 0 for a length change.
    pub offset: u64,
    /// For a write, its byte count; for a length change, the new length.
    pub len: u64,
}

impl PendingWrite {
    /// How many sector-aligned pieces a write touches (the length a `Torn`
    /// survival's `sectors_kept` must have); 0 for a length change or an
    /// empty write.
    pub fn sectors(&self, sector_bytes: u32) -> usize {
        match self.kind {
            PendingKind::Write => sector_pieces(self.offset, self.len, sector_bytes).len(),
            PendingKind::SetLen => 0,
        }
    }
}

/// What a restart did: the pending operations the crash found, what became
/// of each, and the faults injected at the restart. Replaying `survivals` as
/// [`PowerLossPolicy::Explicit`] on the same pending operations, with the
/// same fault configuration, gives the same disk.
#[derive(Debug, Clone, PartialEq)]
pub struct RestartReport {
    /// The pending operations at the crash, in the global order.
    pub pending: Vec<PendingWrite>,
    /// What became of each, in the same order.
    pub survivals: Vec<Survival>,
    /// The sector size the survivals were decided with (0 for a process
    /// crash or [`PowerLossPolicy::LoseAll`], which tear nothing).
    pub sector_bytes: u32,
    /// The unsynced namespace operations at the crash, oldest first; always
    /// empty unless `lose_unsynced_namespace_ops` is on.
    pub namespace_ops: Vec<NamespaceChange>,
    /// How many of them, from the first, survived.
    pub namespace_ops_kept: usize,
    /// The bits bit rot flipped once the survivors were on disk, in the
    /// order flipped; empty unless `bit_rot` is on.
    pub bit_flips: Vec<BitFlip>,
    /// The page writes misdirected since the last restart, in the order
    /// made.
    pub misdirected: Vec<MisdirectedPage>,
}

/// A page write that landed elsewhere (see
/// [`FaultConfig::p_misdirected_write`](super::FaultConfig::p_misdirected_write)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MisdirectedPage {
    /// The file written.
    pub file: String,
    /// Where the page was meant to go; that page keeps its old bytes.
    pub intended_offset: u64,
    /// Where it landed.
    pub actual_offset: u64,
    /// The page's size: the length of the write.
    pub page_bytes: u64,
    /// The first [`DISPLACED_BYTES`] bytes the page it landed on held
    /// before (its header: whose copy a doublewrite slot held, say).
    pub displaced: Vec<u8>,
    /// FNV-1a of the whole page it landed on, as it was before: a landing
    /// page whose durable bytes still hash to it after the restart kept
    /// its old contents (the write was lost) and is not damaged.
    pub displaced_hash: u64,
}

/// FNV-1a's offset basis.
pub(crate) const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// One step of the simulator's word-at-a-time FNV-1a: the word mixed in,
/// then the product's high half folded down. A bare multiply carries a
/// change only upwards, so flips of bit 63 in two words would cancel
/// exactly; folded, the next multiply spreads them.
#[inline]
pub(crate) fn fnv_word(h: u64, w: u64) -> u64 {
    let h = (h ^ w).wrapping_mul(0x0000_0100_0000_01b3);
    h ^ (h >> 32)
}

/// A stable fingerprint of a page image (FNV-1a eight bytes a step, see
/// `fnv_word`), compared only within one run. A byte a step cost 2% of
/// a campaign: damaged pages are fingerprinted at every recovery.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv_bytes(FNV_BASIS, bytes)
}

/// Continues a fingerprint from `h` over `bytes`: whole words, then the
/// last bytes one a step.
pub(crate) fn fnv_bytes(h: u64, bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    let h = (&mut words).fold(h, |h, w| {
        fnv_word(h, u64::from_le_bytes(w.try_into().expect("eight bytes")))
    });
    words
        .remainder()
        .iter()
        .fold(h, |h, &b| fnv_word(h, u64::from(b)))
}

/// How many leading bytes of an overwritten page a misdirection reports.
pub const DISPLACED_BYTES: usize = 64;

/// Splits `len` bytes at `offset` at absolute multiples of `sector_bytes`,
/// returning each piece as (offset, length).
fn sector_pieces(offset: u64, len: u64, sector_bytes: u32) -> Vec<(u64, u64)> {
    assert!(
        sector_bytes.is_power_of_two(),
        "sector size {sector_bytes} is not a power of two"
    );
    let sector = u64::from(sector_bytes);
    let end = offset + len;
    let mut pieces = Vec::new();
    let mut start = offset;
    while start < end {
        let boundary = (start / sector + 1) * sector;
        let piece_end = boundary.min(end);
        pieces.push((start, piece_end - start));
        start = piece_end;
    }
    pieces
}

/// Lists every pending operation of every linked file, in the global order.
pub(super) fn pending_writes(disk: &Disk) -> Vec<PendingWrite> {
    let mut list = Vec::new();
    for (name, id) in &disk.names {
        let Some(inode) = disk.inodes.get(id) else {
            continue;
        };
        for op in &inode.pending {
            list.push(match op {
                PendingOp::Write { offset, bytes } => PendingWrite {
                    file: name.clone(),
                    kind: PendingKind::Write,
                    offset: *offset,
                    len: bytes.len() as u64,
                },
                PendingOp::SetLen { len } => PendingWrite {
                    file: name.clone(),
                    kind: PendingKind::SetLen,
                    offset: 0,
                    len: *len,
                },
            });
        }
    }
    list
}

/// Decides the fate of each pending operation under `mode`, checking an
/// explicit list against the pending operations before anything changes.
fn decide(mode: &CrashMode, pending: &[PendingWrite]) -> (Vec<Survival>, u32) {
    match mode {
        CrashMode::ProcessCrash => (vec![Survival::Keep; pending.len()], 0),
        CrashMode::PowerLoss(PowerLossPolicy::LoseAll) => (vec![Survival::Lose; pending.len()], 0),
        CrashMode::PowerLoss(PowerLossPolicy::Random {
            seed,
            sector_bytes,
            p_survive,
            p_torn,
        }) => {
            assert!(
                sector_bytes.is_power_of_two(),
                "sector size {sector_bytes} is not a power of two"
            );
            assert!(
                (0.0..=1.0).contains(p_survive),
                "p_survive {p_survive} is not a probability"
            );
            assert!(
                (0.0..=1.0).contains(p_torn),
                "p_torn {p_torn} is not a probability"
            );
            assert!(
                p_survive + p_torn <= 1.0,
                "p_survive {p_survive} + p_torn {p_torn} exceeds 1"
            );
            let mut rng = ChaCha8Rng::seed_from_u64(*seed);
            let survivals = pending
                .iter()
                .map(|write| {
                    let draw: f64 = rng.gen();
                    if draw < *p_survive {
                        Survival::Keep
                    } else if write.kind == PendingKind::Write && draw < p_survive + p_torn {
                        let sectors_kept = (0..write.sectors(*sector_bytes))
                            .map(|_| rng.gen_bool(0.5))
                            .collect();
                        Survival::Torn { sectors_kept }
                    } else {
                        Survival::Lose
                    }
                })
                .collect();
            (survivals, *sector_bytes)
        }
        CrashMode::PowerLoss(PowerLossPolicy::Explicit {
            sector_bytes,
            survivals,
        }) => {
            assert_eq!(
                survivals.len(),
                pending.len(),
                "an explicit power loss needs one survival per pending operation"
            );
            for (i, (write, survival)) in pending.iter().zip(survivals).enumerate() {
                if let Survival::Torn { sectors_kept } = survival {
                    assert_eq!(
                        write.kind,
                        PendingKind::Write,
                        "pending operation {i} ({write:?}) is a set_len and cannot be torn"
                    );
                    assert_eq!(
                        sectors_kept.len(),
                        write.sectors(*sector_bytes),
                        "pending write {i} ({write:?}) touches a different number of \
                         {sector_bytes}-byte sectors"
                    );
                }
            }
            (survivals.clone(), *sector_bytes)
        }
    }
}

/// Rebuilds every linked file's durable image from its survivors; the
/// current image becomes the durable one and nothing is pending any more.
pub(super) fn settle(disk: &mut Disk, mode: &CrashMode) -> RestartReport {
    let pending = pending_writes(disk);
    let namespace_ops: Vec<NamespaceChange> = disk
        .pending_namespace
        .iter()
        .map(|op| op.describe())
        .collect();
    let (survivals, sector_bytes) = decide(mode, &pending);
    let mut fates = survivals.iter();
    for id in disk.names.values() {
        let Some(inode) = disk.inodes.get_mut(id) else {
            continue;
        };
        if inode.pending.is_empty() && !inode.writes_dropped {
            // Current already equals durable (the inode's invariant):
            // nothing to rebuild, so a restart costs what was unsynced,
            // not the size of the disk.
            continue;
        }
        let mut image = std::mem::take(&mut inode.durable);
        for op in &inode.pending {
            // `decide` returned exactly one survival per pending operation.
            let fate = fates.next().expect("one survival per pending operation");
            match (fate, op) {
                (Survival::Keep, op) => op.apply(&mut image),
                (Survival::Lose, _) => {}
                (Survival::Torn { sectors_kept }, PendingOp::Write { offset, bytes }) => {
                    let bytes = bytes.to_bytes();
                    let pieces = sector_pieces(*offset, bytes.len() as u64, sector_bytes);
                    for ((piece_offset, piece_len), kept) in pieces.into_iter().zip(sectors_kept) {
                        if *kept {
                            let start = (piece_offset - offset) as usize;
                            let end = start + piece_len as usize;
                            image.write(piece_offset, &bytes[start..end]);
                        }
                    }
                }
                (Survival::Torn { .. }, PendingOp::SetLen { .. }) => {
                    unreachable!("decide refuses a torn set_len")
                }
            }
        }
        inode.reset(image);
    }
    assert!(fates.next().is_none(), "every survival was used");
    // Unnamed inodes: dropped with their handles, unless a lost removal
    // revives one below, with the image it had at its last sync.
    for (id, inode) in disk.inodes.iter_mut() {
        if (!inode.pending.is_empty() || inode.writes_dropped)
            && !disk.names.values().any(|named| named == id)
        {
            let image = std::mem::take(&mut inode.durable);
            inode.reset(image);
        }
    }
    let namespace_ops_kept = match mode {
        CrashMode::ProcessCrash => namespace_ops.len(),
        CrashMode::PowerLoss(PowerLossPolicy::LoseAll) => 0,
        CrashMode::PowerLoss(_) => disk.faults.namespace_ops_kept(namespace_ops.len()),
    };
    disk.settle_namespace(namespace_ops_kept);
    let lost = namespace_ops.len() - namespace_ops_kept;
    if lost > 0 {
        let index = disk.next_index();
        disk.record_fault_at(index, Fault::NamespaceOpsLost { count: lost });
    }
    RestartReport {
        pending,
        survivals,
        sector_bytes,
        namespace_ops,
        namespace_ops_kept,
        bit_flips: Vec::new(),
        misdirected: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_pieces_split_at_absolute_boundaries() {
        assert_eq!(
            sector_pieces(500, 600, 512),
            vec![(500, 12), (512, 512), (1024, 76)]
        );
        assert_eq!(sector_pieces(4096, 4096, 4096), vec![(4096, 4096)]);
        assert_eq!(sector_pieces(10, 0, 512), vec![]);
        assert_eq!(sector_pieces(0, 1, 4096), vec![(0, 1)]);
    }
}
