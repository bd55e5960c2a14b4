//! Scans and searches over a leaf chain that corruption broke: a sibling
//! link that does not link back (a page linked to itself is one), and a
//! chain that leads back to smaller keys with its links consistent. Each
//! must end with a corruption error; a scan that went on would return the same
//! rows forever (a fuzz campaign's shrinker once grew a result set to 24 GB
//! that way, on a tree a planted bug had corrupted).

use super::*;
use crate::fil::{Fil, SYSTEM_SPACE};
use crate::io::MemStorage;
use crate::mtr::Mtr;
use crate::record::encode;
use crate::redo::{Log, LogConfig};

const SPACE: u32 = 3;
const ROWS: u32 = 400;

fn pager() -> Pager {
    let mut fil = Fil::new(Box::new(MemStorage::new()));
    fil.create(SYSTEM_SPACE, "ibdata1").unwrap();
    fil.extend(SYSTEM_SPACE, 200).unwrap();
    fil.create_sized(SPACE, "t.ibd", None).unwrap();
    let log = Log::create(fil.storage(), &LogConfig::default()).unwrap();
    let mut pager = Pager::new(fil, log, 64, true, Box::new(crate::io::ManualClock::new()));
    fsp::create_space(&mut pager, SPACE, 4, 1, fsp::flags_for(None)).unwrap();
    pager
}

/// An INT key and a VARCHAR(300), filled with `ROWS` rows of 200 bytes:
/// several leaves.
fn filled(pager: &mut Pager) -> Index {
    let leaf = RecordLayout::new(
        record::RowFormat::Compact,
        vec![
            FieldDef::not_null(FieldKind::Fixed(4)),
            FieldDef::new(
                FieldKind::Variable {
                    max_len: 300,
                    long: false,
                },
                true,
            ),
        ],
    );
    let mut index = Index::new(11, "PRIMARY", SPACE, 0, leaf, 1);
    index.root = create(pager, SPACE, index.id, None).unwrap();
    for key in 0..ROWS {
        let (k, v) = (key.to_be_bytes(), [b'a' + (key % 26) as u8; 200]);
        let mut rec = Vec::new();
        encode(
            &index.leaf,
            &[FieldValue::Inline(&k), FieldValue::Inline(&v)],
            false,
            &mut rec,
        );
        insert(pager, &index, &rec).unwrap();
    }
    index
}

/// The leaves, left to right, by their sibling links.
fn leaves(pager: &mut Pager, index: &Index) -> Vec<u32> {
    let (mut page_no, _) = super::cursor::edge_leaf(pager, index, Direction::Forward).unwrap();
    let mut out = Vec::new();
    while page_no != FIL_NULL {
        out.push(page_no);
        let f = pager.fix(PageId::new(SPACE, page_no)).unwrap();
        page_no = page::next(pager.page(f));
        pager.unfix(f);
    }
    out
}

fn relink(pager: &mut Pager, page_no: u32, prev: Option<u32>, next: Option<u32>) {
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, PageId::new(SPACE, page_no)).unwrap();
    if let Some(p) = prev {
        mtr.set_prev(pager, f, p).unwrap();
    }
    if let Some(n) = next {
        mtr.set_next(pager, f, n).unwrap();
    }
    mtr.commit(pager).unwrap();
}

/// Scans the whole index in `dir`; the keys read, or the error that ended
/// the scan (bounded, so a scan that does not end fails the test).
fn scan(pager: &mut Pager, index: &Index, dir: Direction) -> Result<Vec<u32>> {
    let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, dir);
    let mut keys = Vec::new();
    while let Some(rec) = cur.next(pager, index)? {
        let view = RecordView::parse(&index.leaf, &rec)?;
        let FieldValue::Inline(k) = view.field(0) else {
            panic!("an INT key is inline");
        };
        keys.push(u32::from_be_bytes(k.try_into().unwrap()));
        assert!(keys.len() <= 2 * ROWS as usize, "the scan does not end");
    }
    Ok(keys)
}

fn corruption<T: std::fmt::Debug>(r: Result<T>) -> String {
    match r {
        Err(Error::CorruptPage { reason, .. }) => reason,
        other => panic!("expected a corrupt page, got {other:?}"),
    }
}

#[test]
fn an_intact_chain_scans_every_row_both_ways() {
    let mut pager = pager();
    let index = filled(&mut pager);
    assert!(leaves(&mut pager, &index).len() >= 4, "several leaves");
    let forward = scan(&mut pager, &index, Direction::Forward).unwrap();
    assert_eq!(forward, (0..ROWS).collect::<Vec<_>>());
    let backward = scan(&mut pager, &index, Direction::Backward).unwrap();
    assert_eq!(backward, (0..ROWS).rev().collect::<Vec<_>>());
}

#[test]
fn a_link_that_does_not_link_back_ends_the_scan() {
    let mut pager = pager();
    let index = filled(&mut pager);
    let l = leaves(&mut pager, &index);
    // The third leaf's next leads back to the first, whose prev is FIL_NULL.
    relink(&mut pager, l[2], None, Some(l[0]));
    let reason = corruption(scan(&mut pager, &index, Direction::Forward));
    assert!(reason.contains("leaf chain broken"), "{reason}");
    // A leaf linked to itself: reached from the first, it links back to
    // itself.
    let mut pager1 = self::pager();
    let index1 = filled(&mut pager1);
    let l1 = leaves(&mut pager1, &index1);
    relink(&mut pager1, l1[1], Some(l1[1]), Some(l1[1]));
    let reason = corruption(scan(&mut pager1, &index1, Direction::Forward));
    assert!(reason.contains("leaf chain broken"), "{reason}");
    // Backward: the second leaf's prev leads to the fourth.
    let mut pager2 = self::pager();
    let index2 = filled(&mut pager2);
    let l2 = leaves(&mut pager2, &index2);
    relink(&mut pager2, l2[1], Some(l2[3]), None);
    let reason = corruption(scan(&mut pager2, &index2, Direction::Backward));
    assert!(reason.contains("leaf chain broken"), "{reason}");
}

/// A filled index whose last leaf leads on to the first, and the first
/// links back: the links agree, but the keys start over.
fn looped() -> (Pager, Index) {
    let mut pager = pager();
    let index = filled(&mut pager);
    let l = leaves(&mut pager, &index);
    let last = *l.last().unwrap();
    relink(&mut pager, last, None, Some(l[0]));
    relink(&mut pager, l[0], Some(last), None);
    (pager, index)
}

#[test]
fn a_consistent_chain_back_to_smaller_keys_ends_the_scan() {
    let (mut pager, index) = looped();
    let reason = corruption(scan(&mut pager, &index, Direction::Forward));
    assert!(reason.contains("out of key order"), "{reason}");
    // And backward, from the first leaf on to the last.
    let reason = corruption(scan(&mut pager, &index, Direction::Backward));
    assert!(reason.contains("out of key order"), "{reason}");
}

#[test]
fn a_search_that_walks_a_looping_chain_ends_with_corruption() {
    // A key past every row lands on the last leaf and looks on to the next:
    // the chain leads from there back to the first leaf, and every leaf on
    // it holds only smaller keys.
    let (mut pager, index) = looped();
    let past = ROWS.to_be_bytes();
    let reason = corruption(get(&mut pager, &index, &[Some(&past[..])]));
    assert!(reason.contains("leaf chain loops back"), "{reason}");
    // Intact, the same search finds nothing, and a key that is there is found.
    let mut pager = self::pager();
    let index = filled(&mut pager);
    assert!(get(&mut pager, &index, &[Some(&past[..])])
        .unwrap()
        .is_none());
    let key = (ROWS / 2).to_be_bytes();
    assert!(get(&mut pager, &index, &[Some(&key[..])])
        .unwrap()
        .is_some());
}
