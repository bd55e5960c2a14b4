//! B-trees in compressed spaces: inserts, updates and deletes that log,
//! recompress, refuse and split after a failed compression, merges that
//! must compress too; the tree checked against a model, every page
//! decompressing to its frame, and the tree read back from disk.

use super::zip::{compresses, fresh_page};
use super::*;
use crate::check;
use crate::fil::{Fil, SYSTEM_SPACE};
use crate::io::MemStorage;
use crate::record::encode;
use crate::redo::{Log, LogConfig};
use std::collections::BTreeMap;

const SPACE: u32 = 3;

fn pager_with(zip_size: usize, pool_pages: usize) -> Pager {
    let mut fil = Fil::new(Box::new(MemStorage::new()));
    fil.create(SYSTEM_SPACE, "ibdata1").unwrap();
    fil.extend(SYSTEM_SPACE, 200).unwrap();
    fil.create_sized(SPACE, "c.ibd", Some(zip_size)).unwrap();
    let log = Log::create(fil.storage(), &LogConfig::default()).unwrap();
    let mut pager = Pager::new(
        fil,
        log,
        pool_pages,
        true,
        Box::new(crate::io::ManualClock::new()),
    );
    fsp::create_space(&mut pager, SPACE, 4, 1, fsp::flags_for(Some(zip_size))).unwrap();
    pager
}

/// A clustered index as the dictionary builds one: an INT key, DB_TRX_ID,
/// DB_ROLL_PTR, a nullable VARCHAR(1000).
fn clustered(pager: &mut Pager) -> Index {
    let leaf = RecordLayout::new(
        record::RowFormat::Dynamic,
        vec![
            FieldDef::not_null(FieldKind::Fixed(4)),
            FieldDef::not_null(FieldKind::TRX_ID),
            FieldDef::not_null(FieldKind::ROLL_PTR),
            FieldDef::new(
                FieldKind::Variable {
                    max_len: 1000,
                    long: false,
                },
                true,
            ),
        ],
    );
    let mut index = Index::new(11, "PRIMARY", SPACE, 0, leaf, 1);
    assert!(index.is_clustered());
    index.root = create(pager, SPACE, index.id, Some(&index.zip_fields(0).unwrap())).unwrap();
    index
}

/// A row: compressible text, or, for every fourth key, bytes that do not
/// compress.
fn row(index: &Index, key: u32, version: u32, len: usize) -> Vec<u8> {
    let mut x = (key.wrapping_mul(2_654_435_761) ^ version) | 1;
    let payload: Vec<u8> = (0..len)
        .map(|i| {
            if key.is_multiple_of(4) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            } else {
                b"lorem ipsum dolor sit amet "[(i + version as usize) % 27]
            }
        })
        .collect();
    let (k, t, r) = (
        key.to_be_bytes(),
        u64::from(version).to_le_bytes(),
        [1u8; 7],
    );
    let mut out = Vec::new();
    encode(
        &index.leaf,
        &[
            FieldValue::Inline(&k),
            FieldValue::Inline(&t[..6]),
            FieldValue::Inline(&r),
            FieldValue::Inline(&payload),
        ],
        false,
        &mut out,
    );
    out
}

fn run(zip_size: usize, pool_pages: usize, steps: u32) {
    let mut pager = pager_with(zip_size, pool_pages);
    let index = clustered(&mut pager);
    let mut model: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15 ^ zip_size as u64;
    for step in 0..steps {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let key = (rng % 3000) as u32;
        let len = ((rng >> 20) % 500) as usize;
        let kb = key.to_be_bytes();
        let k = [Some(&kb[..])];
        match (rng >> 40) % 10 {
            0..=5 if !model.contains_key(&key) => {
                let rec = row(&index, key, step, len);
                insert(&mut pager, &index, &rec).unwrap();
                model.insert(key, rec);
            }
            6 | 7 if model.contains_key(&key) => {
                let rec = row(&index, key, step, len);
                update(&mut pager, &index, &rec).unwrap();
                model.insert(key, rec);
            }
            8 | 9 => {
                let existed = delete(&mut pager, &index, &k).unwrap();
                assert_eq!(existed, model.remove(&key).is_some(), "step {step}");
            }
            _ => {}
        }
    }
    let mut problems = Vec::new();
    let stats = check::check_tree(&mut pager, &index, &mut problems).unwrap();
    assert!(problems.is_empty(), "{zip_size}: {problems:?}");
    assert!(stats.height >= 2, "{zip_size}: the tree grew ({stats:?})");
    let p = pager.stats;
    let (_, cmp) = pager.compression.cmp()[zip_size.trailing_zeros() as usize - 10];
    assert!(
        p.zip_logged > 100 && p.zip_recompressions > 50 && cmp.compress_ops_ok > 50,
        "{zip_size}: {p:?} {cmp:?}"
    );
    assert!(cmp.compress_ops_ok <= cmp.compress_ops, "{cmp:?}");
    if zip_size <= 4096 {
        assert!(
            p.zip_refused > 10 && p.zip_splits_after_failure > 10,
            "{zip_size}: splits after a failed compression: {p:?}"
        );
        // Every refusal rebuilt the frame from its compressed page.
        assert!(cmp.uncompress_ops >= p.zip_refused, "{p:?} {cmp:?}");
        assert!(
            cmp.compress_ops - cmp.compress_ops_ok >= p.zip_refused,
            "{p:?} {cmp:?}"
        );
    }
    // Written out, dropped, read back: every row as the model has it.
    pager.flush_all().unwrap();
    pager.discard_space(SPACE);
    for (key, rec) in &model {
        let kb = key.to_be_bytes();
        let found = get(&mut pager, &index, &[Some(&kb[..])]).unwrap();
        assert_eq!(found.map(|f| f.rec).as_ref(), Some(rec), "key {key}");
    }
    let mut problems = Vec::new();
    check::check_tree(&mut pager, &index, &mut problems).unwrap();
    assert!(
        problems.is_empty(),
        "{zip_size} after reading back: {problems:?}"
    );
}

#[test]
fn a_tree_on_1k_pages_follows_its_model() {
    run(1024, 64, 3000);
}

#[test]
fn a_tree_on_4k_pages_with_a_small_pool_follows_its_model() {
    run(4096, 12, 3000);
}

#[test]
fn a_tree_on_16k_compressed_pages_follows_its_model() {
    run(16384, 32, 3000);
}

/// A row that compresses into no 1 KiB page is ERROR 1118, and the tree is
/// left as it was.
#[test]
fn a_row_too_big_for_a_compressed_page_is_refused() {
    let mut pager = pager_with(1024, 32);
    let index = clustered(&mut pager);
    for key in 0..20 {
        insert(&mut pager, &index, &row(&index, key * 4 + 1, 0, 40)).unwrap();
    }
    // 990 bytes of noise cannot compress into 1 KiB with a page's headers.
    let err = insert(&mut pager, &index, &row(&index, 4, 0, 990)).unwrap_err();
    assert_eq!(err.mysql_code(), Some(1118), "{err}");
    let kb = 4u32.to_be_bytes();
    assert!(get(&mut pager, &index, &[Some(&kb[..])]).unwrap().is_none());
    let mut problems = Vec::new();
    check::check_tree(&mut pager, &index, &mut problems).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
}

/// A record that compresses alone on a page but with neither of its
/// neighbours: the page splits between them first and the record goes in
/// by a second split, onto a page of its own (btr_page_split_and_insert's
/// retry), where one split point per insert would find no way.
#[test]
fn a_record_that_compresses_with_neither_neighbour_splits_in_three() {
    let mut pager = pager_with(1024, 32);
    let index = clustered(&mut pager);
    // Compressible neighbours on one page: keys 1..=3 and 5..=7.
    for key in [1, 2, 3, 5, 6, 7] {
        insert(&mut pager, &index, &row(&index, key, 0, 60)).unwrap();
    }
    // Noise (key % 4 == 0) that fills a 1 KiB page nearly alone.
    let big = row(&index, 4, 0, 860);
    insert(&mut pager, &index, &big).unwrap();
    assert!(pager.stats.zip_splits_in_three >= 1, "{:?}", pager.stats);
    let mut problems = Vec::new();
    check::check_tree(&mut pager, &index, &mut problems).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    for key in [1u32, 2, 3, 4, 5, 6, 7] {
        let kb = key.to_be_bytes();
        let found = get(&mut pager, &index, &[Some(&kb[..])]).unwrap();
        assert!(found.is_some(), "key {key}");
    }
    let kb = 4u32.to_be_bytes();
    assert_eq!(
        get(&mut pager, &index, &[Some(&kb[..])])
            .unwrap()
            .unwrap()
            .rec,
        big
    );
}

/// sysbench 0.4's table as its clustered index stores it: id, DB_TRX_ID,
/// DB_ROLL_PTR, k INT, c CHAR(120), pad CHAR(60), every row alike but for
/// its id.
fn sbtest_04(pager: &mut Pager) -> (Index, impl Fn(u32) -> Vec<u8>) {
    let leaf = RecordLayout::new(
        record::RowFormat::Compact,
        vec![
            FieldDef::not_null(FieldKind::Fixed(4)),
            FieldDef::not_null(FieldKind::TRX_ID),
            FieldDef::not_null(FieldKind::ROLL_PTR),
            FieldDef::not_null(FieldKind::Fixed(4)),
            FieldDef::not_null(FieldKind::Fixed(120)),
            FieldDef::not_null(FieldKind::Fixed(60)),
        ],
    );
    let mut index = Index::new(12, "PRIMARY", SPACE, 0, leaf, 1);
    index.root = create(pager, SPACE, index.id, Some(&index.zip_fields(0).unwrap())).unwrap();
    let layout = index.leaf.clone();
    let row = move |id: u32| {
        let mut pad = b"qqqqqqqqqqwwwwwwwwwweeeeeeeeeerrrrrrrrrrtttttttttt".to_vec();
        pad.resize(60, b' ');
        let mut out = Vec::new();
        encode(
            &layout,
            &[
                FieldValue::Inline(&id.to_be_bytes()),
                FieldValue::Inline(&[0, 0, 0, 0, 0, 7]),
                FieldValue::Inline(&[1u8; 7]),
                FieldValue::Inline(&0u32.to_be_bytes()),
                FieldValue::Inline(&[b' '; 120]),
                FieldValue::Inline(&pad),
            ],
            false,
            &mut out,
        );
        out
    };
    (index, row)
}

/// A compressed leaf filled in key order splits only when page0zip says it
/// must: every leaf but the last, with the next leaf's first record added,
/// either overflows the 16 KiB frame or does not compress into its size
/// (btr_page_split_and_insert splits at the insert point, after
/// page_cur_insert_rec_zip failed). And a 1 KiB page holds the seeds'
/// repeated rows more densely than a 2 KiB one, as InnoDB's stream, which
/// carries no record headers or offsets, lets it.
#[test]
fn compressed_leaves_filled_in_order_are_full_by_page0zips_rules() {
    let mut leaf_bytes = Vec::new();
    for zip_size in page::zip::ZIP_SIZES {
        let mut pager = pager_with(zip_size, 4096);
        let (index, row) = sbtest_04(&mut pager);
        let rows = 3000u32;
        for id in 1..=rows {
            insert(&mut pager, &index, &row(id)).unwrap();
        }
        let levels = stats::level_pages(&mut pager, &index).unwrap();
        let leaves = levels.last().unwrap().clone();
        assert!(leaves.len() > 2, "{zip_size}: {} leaves", leaves.len());
        let recs_of = |pager: &mut Pager, no: u32| -> Vec<Vec<u8>> {
            let f = pager.fix(PageId::new(SPACE, no)).unwrap();
            let p = pager.page(f);
            let recs = (0..index::n_recs(p))
                .map(|s| index::rec(p, s).to_vec())
                .collect();
            pager.unfix(f);
            recs
        };
        let mut counts = Vec::new();
        for pair in leaves.windows(2) {
            let mut recs = recs_of(&mut pager, pair[0]);
            counts.push(recs.len());
            recs.push(recs_of(&mut pager, pair[1])[0].clone());
            let refs: Vec<&[u8]> = recs.iter().map(|r| r.as_slice()).collect();
            let space_needed: usize = recs
                .iter()
                .map(|r| r.len() + index::PER_RECORD_OVERHEAD)
                .sum();
            let full = space_needed > index::EMPTY_PAGE_SPACE
                || !compresses(&mut pager, &index, 0, &fresh_page(&index, 0, &refs)).unwrap();
            assert!(
                full,
                "{zip_size}: leaf {} split with room for {} more",
                pair[0],
                recs.len()
            );
        }
        let mut problems = Vec::new();
        check::check_tree(&mut pager, &index, &mut problems).unwrap();
        assert!(problems.is_empty(), "{zip_size}: {problems:?}");
        leaf_bytes.push((zip_size, leaves.len() * zip_size, counts));
    }
    let bytes_at = |size| leaf_bytes.iter().find(|(z, ..)| *z == size).unwrap().1;
    // A 2 KiB leaf holds what its 16 KiB frame holds (79 of these rows);
    // a 1 KiB leaf holds what compresses into it: about 49, with 15
    // bytes of each row (DB_TRX_ID, DB_ROLL_PTR, its directory slot)
    // uncompressed. The leaves at 1 KiB take a tenth less room or better
    // (a stream with every record's absolute heap offset in it held 40 a
    // page, as dense as at 2 KiB).
    assert!(bytes_at(1024) * 10 < bytes_at(2048) * 9, "{leaf_bytes:?}");
    assert!(bytes_at(2048) < bytes_at(4096), "{leaf_bytes:?}");
}
