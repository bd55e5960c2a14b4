//! Keeping a compressed page in step with its frame. Every change a
//! mini-transaction (or recovery) makes to the frame of a compressed
//! space's index page is made to its compressed image too, as InnoDB's
//! `page_cur_insert_rec_zip`, `page_cur_delete_rec`, `btr_cur_update_in_place`
//! and `page_zip_write_header` do: through the modification log and the
//! uncompressed columns when they can, by recompressing the whole page
//! (`page_zip_compress`, logged as the image it made) when they cannot.

use super::PageOp;
use crate::error::{Error, Result};
use crate::page::zip::{self, ZipFrame};
use crate::page::{index, FIL_PAGE_DATA_END};

/// What a change needs known about the frame before it is applied.
pub(crate) struct Before {
    /// The frame reorganizes its heap to make room: every record moves.
    reorganizes: bool,
    /// The record in the slot the change rewrites or removes.
    old: Option<(usize, Vec<u8>)>,
}

/// The slot whose record holds the bytes `[offset, end)`, if any.
fn slot_holding(frame: &[u8], offset: usize, end: usize) -> Option<usize> {
    (0..index::n_recs(frame)).find(|&s| {
        let at = index::rec_offset(frame, s) + 2;
        at <= offset && end <= at + index::rec(frame, s).len()
    })
}

/// Looks at the frame before `op` changes it.
pub(crate) fn before(op: &PageOp<'_>, frame: &[u8]) -> Before {
    let room = |len: usize| index::contiguous_free(frame) < len + index::PER_RECORD_OVERHEAD;
    let old = |slot: usize| {
        (slot < index::n_recs(frame)).then(|| (slot, index::rec(frame, slot).to_vec()))
    };
    match *op {
        PageOp::IndexInsert { rec, .. } => Before {
            reorganizes: room(rec.len()),
            old: None,
        },
        PageOp::IndexUpdate { slot, rec } => Before {
            reorganizes: room(rec.len()),
            old: old(usize::from(slot)),
        },
        PageOp::IndexDelete { slot } => Before {
            reorganizes: false,
            old: old(usize::from(slot)),
        },
        PageOp::Write { offset, bytes } => {
            let (offset, end) = (usize::from(offset), usize::from(offset) + bytes.len());
            Before {
                reorganizes: false,
                old: (end <= FIL_PAGE_DATA_END)
                    .then(|| slot_holding(frame, offset, end))
                    .flatten()
                    .and_then(old),
            }
        }
        _ => Before {
            reorganizes: false,
            old: None,
        },
    }
}

/// What the compressed page needs after a change was mirrored.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Mirrored {
    /// Nothing more: the image follows the frame.
    Done,
    /// The image cannot follow this change: compress the frame again.
    Recompress,
}

/// Makes `op`, just applied to `frame`, on its compressed page.
///
/// `stale_trx` is the `zip-trx-id-frame-only` canary: an in-place rewrite
/// keeps the compressed page's DB_TRX_ID and DB_ROLL_PTR of the record as
/// they were.
pub(crate) fn mirror<D: AsRef<[u8]> + AsMut<[u8]>>(
    page: &mut zip::ZipPage<D>,
    fields: &zip::ZipFields,
    op: &PageOp<'_>,
    frame: &[u8],
    before: &Before,
    stale_trx: bool,
) -> Result<Mirrored> {
    let done = |logged: bool| {
        if logged {
            Mirrored::Done
        } else {
            Mirrored::Recompress
        }
    };
    Ok(match *op {
        PageOp::Write { offset, bytes } => {
            let end = usize::from(offset) + bytes.len();
            if end <= index::INDEX_SLOTS {
                // Headers only (links, max trx id): copied as they are. The
                // record count and heap fields are never written this way.
                page.write_header(frame);
                Mirrored::Done
            } else if let Some((slot, old)) = &before.old {
                let new = index::rec(frame, *slot);
                if zip::ext_count(fields, old)? != zip::ext_count(fields, new)? {
                    Mirrored::Recompress
                } else {
                    done(page.rewrite_rec(fields, frame, *slot, old)?)
                }
            } else {
                Mirrored::Recompress
            }
        }
        PageOp::IndexInsert { slot, .. } if !before.reorganizes => {
            done(page.write_rec(fields, frame, usize::from(slot), true)?)
        }
        PageOp::IndexDelete { slot } => {
            let (_, old) = before
                .old
                .as_ref()
                .ok_or_else(|| corrupt("delete of no record"))?;
            let refs = zip::ext_count(fields, old)?;
            page.delete_rec(fields, frame, usize::from(slot), refs)?;
            Mirrored::Done
        }
        PageOp::IndexUpdate { slot, rec } => {
            let (_, old) = before
                .old
                .as_ref()
                .ok_or_else(|| corrupt("update of no record"))?;
            let slot = usize::from(slot);
            if old.len() == rec.len() {
                // In place; a record that gained or lost an off-page column
                // moves references the tail cannot shift in place.
                if zip::ext_count(fields, old)? != zip::ext_count(fields, rec)? {
                    Mirrored::Recompress
                } else if stale_trx {
                    let stale = stale_trx_frame(fields, frame, slot, old)?;
                    done(page.rewrite_rec(fields, &stale, slot, old)?)
                } else {
                    done(page.rewrite_rec(fields, frame, slot, old)?)
                }
            } else if before.reorganizes {
                Mirrored::Recompress
            } else {
                // The frame deleted the record and inserted the new one.
                let refs = zip::ext_count(fields, old)?;
                done(page.replace_rec(fields, frame, slot, refs)?)
            }
        }
        // Reorganizations, truncations, a new page: only a new image.
        _ => Mirrored::Recompress,
    })
}

/// The `zip-trx-id-frame-only` canary: a copy of `frame` whose record in
/// `slot` has the DB_TRX_ID and DB_ROLL_PTR of `old`.
fn stale_trx_frame(
    fields: &zip::ZipFields,
    frame: &[u8],
    slot: usize,
    old: &[u8],
) -> Result<Vec<u8>> {
    let mut stale = frame.to_vec();
    if let zip::Stored::TrxRollPtr { trx_id_field } = fields.stored() {
        let view = crate::record::RecordView::parse(fields.layout(), old)?;
        let at = view.field_range(usize::from(trx_id_field)).start;
        let range = at..at + zip::TRX_ROLL_LEN;
        index::rec_mut(&mut stale, slot)[range.clone()].copy_from_slice(&old[range]);
    }
    Ok(stale)
}

fn corrupt(what: &str) -> Error {
    Error::Corrupt {
        file: "zip".into(),
        reason: what.to_string(),
    }
}

/// What a replayed change did to the page's compressed image.
#[derive(Debug)]
pub(crate) enum Replayed {
    /// The image (if any) followed the change, or was not concerned.
    Kept,
    /// The image could not follow: the page has none until the next
    /// ZIP_IMAGE record.
    Lost,
    /// The record was a new image.
    Image(ZipFrame),
}

/// Recovery's replay of `op` on `data` (of a compressed space's page when
/// `zip_size` is given), with the page's compressed image `zip` if it has
/// one: applied to the frame and, on an index page, mirrored onto the
/// compressed page as the original execution did. A change the image could
/// not follow leaves the page without one until the ZIP_IMAGE record that
/// the original wrote right after it.
pub(crate) fn replay<D: AsRef<[u8]> + AsMut<[u8]>>(
    data: &mut [u8],
    zip: Option<(&mut zip::ZipPage<D>, &zip::ZipFields)>,
    zip_size: Option<usize>,
    id: crate::page::PageId,
    op: &PageOp<'_>,
) -> Result<Replayed> {
    let bad = |why: String| Error::Corrupt {
        file: "redo".into(),
        reason: format!("record for compressed page {id}: {why}"),
    };
    if let PageOp::ZipImage { image } = *op {
        // Only an image of this page, at its space's size, replaces it.
        let offset = crate::page::get_u32(image, crate::page::FIL_PAGE_OFFSET);
        let space = crate::page::get_u32(image, crate::page::FIL_PAGE_SPACE_ID);
        if zip_size != Some(image.len()) || offset != id.page_no || space != id.space {
            return Err(bad(format!(
                "an image of {} bytes for page {space}:{offset}",
                image.len()
            )));
        }
        let page = zip::ZipPage::from_image(image.to_vec()).map_err(|c| bad(c.0))?;
        let fields = page.decompress(data).map_err(|c| bad(c.0))?;
        return Ok(Replayed::Image(ZipFrame { page, fields }));
    }
    if let (Some(size), PageOp::Write { offset, bytes }) = (zip_size, op) {
        if zip.is_none() && usize::from(*offset) + bytes.len() > size {
            return Err(bad(format!("a write past the page's {size} bytes")));
        }
    }
    let zf = if zip_size.is_some() { zip } else { None };
    let Some((page, fields)) = zf else {
        return op.apply(id, data).map(|()| Replayed::Kept);
    };
    if matches!(op, PageOp::Init(_) | PageOp::IndexInit { .. }) {
        return op.apply(id, data).map(|()| Replayed::Lost);
    }
    // The directory is read to find the record a change touches: it must
    // be sound, whatever the log says (a header write may have changed it).
    index::check_structure(data).map_err(&bad)?;
    let before = before(op, data);
    op.apply(id, data)?;
    if crate::page::page_type_raw(data) != crate::page::PageType::Index as u16 {
        return Ok(Replayed::Lost);
    }
    match mirror(page, fields, op, data, &before, false) {
        Ok(Mirrored::Done) => Ok(Replayed::Kept),
        Ok(Mirrored::Recompress) => Ok(Replayed::Lost),
        Err(e) => Err(bad(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fil::{Fil, SYSTEM_SPACE};
    use crate::io::MemStorage;
    use crate::mtr::{ops::Reader, LogRecord, Mtr};
    use crate::page::zip::{Stored, ZipFields};
    use crate::page::{self, PageId, PageType, PAGE_SIZE};
    use crate::pager::Pager;
    use crate::record::{encode, FieldDef, FieldKind, FieldValue, RecordLayout, RowFormat};
    use crate::redo::{Log, LogConfig};
    use std::collections::BTreeMap;

    fn fields() -> ZipFields {
        let layout = RecordLayout::new(
            RowFormat::Dynamic,
            vec![
                FieldDef::not_null(FieldKind::Fixed(4)),
                FieldDef::not_null(FieldKind::TRX_ID),
                FieldDef::not_null(FieldKind::ROLL_PTR),
                FieldDef::new(
                    FieldKind::Variable {
                        max_len: 400,
                        long: false,
                    },
                    true,
                ),
            ],
        );
        ZipFields::new(layout, Stored::TrxRollPtr { trx_id_field: 1 }).unwrap()
    }

    /// A row: its key, a transaction id, and a payload that compresses
    /// well or, every fifth row, not at all.
    fn row(key: u32, trx: u64, len: usize) -> Vec<u8> {
        let mut x = key.wrapping_mul(2_654_435_761) | 1;
        let payload: Vec<u8> = (0..len)
            .map(|i| {
                if key.is_multiple_of(5) {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                } else {
                    b"abcdefgh"[(i + key as usize) % 8]
                }
            })
            .collect();
        let (k, t, r) = (key.to_be_bytes(), trx.to_le_bytes(), [7u8; 7]);
        let mut out = Vec::new();
        encode(
            fields().layout(),
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

    fn key_of(rec: &[u8]) -> u32 {
        let view = crate::record::RecordView::parse(fields().layout(), rec).unwrap();
        u32::from_be_bytes(rec[view.field_range(0)].try_into().unwrap())
    }

    /// Where a record's DB_TRX_ID lies in it.
    fn trx_at(rec: &[u8]) -> usize {
        let view = crate::record::RecordView::parse(fields().layout(), rec).unwrap();
        view.field_range(1).start
    }

    /// Changes a compressed page through mini-transactions (inserts,
    /// deletes, rewrites at the same and at other lengths, raw writes of
    /// DB_TRX_ID and of a header field) and checks after each one that the
    /// compressed page decompresses to the frame, that replaying the
    /// mini-transaction's redo onto the page as it was rebuilds the same
    /// compressed image byte for byte, and, at the end, that the page read
    /// back from disk holds what a model of it holds.
    #[test]
    fn mini_transactions_keep_a_compressed_page_and_its_redo_in_step() {
        let f = fields();
        let storage = MemStorage::new();
        let mut fil = Fil::new(Box::new(storage));
        fil.create(SYSTEM_SPACE, "ibdata1").unwrap();
        fil.extend(SYSTEM_SPACE, 200).unwrap();
        fil.create_sized(3, "c.ibd", Some(2048)).unwrap();
        fil.extend(3, 8).unwrap();
        let log = Log::create(fil.storage(), &LogConfig::default()).unwrap();
        let mut pager = Pager::new(fil, log, 16, true, Box::new(crate::io::ManualClock::new()));
        let id = PageId::new(3, 1);
        // What recovery would hold: the page rebuilt from redo alone.
        let mut rdata = vec![0u8; PAGE_SIZE];
        let mut rzip: Option<Box<ZipFrame>> = None;
        let replay_mtr = |mtr: &Mtr, rdata: &mut Vec<u8>, rzip: &mut Option<Box<ZipFrame>>| {
            for rec in Reader::new(&mtr.log) {
                match rec.unwrap() {
                    LogRecord::Page(pid, op) => {
                        assert_eq!(pid, id);
                        let zip = rzip.as_mut().map(|z| (&mut z.page, &z.fields));
                        match replay(rdata, zip, Some(2048), pid, &op).unwrap() {
                            Replayed::Kept => {}
                            Replayed::Lost => *rzip = None,
                            Replayed::Image(z) => *rzip = Some(Box::new(z)),
                        }
                    }
                    LogRecord::File(_) => unreachable!(),
                }
            }
        };
        let mut mtr = Mtr::new();
        let fr = mtr.create(&mut pager, id, PageType::Index).unwrap();
        mtr.page_op(
            &mut pager,
            fr,
            PageOp::IndexInit {
                index_id: 4,
                level: 0,
            },
        )
        .unwrap();
        assert!(mtr.zip_compress(&mut pager, fr, &f).unwrap());
        replay_mtr(&mtr, &mut rdata, &mut rzip);
        mtr.commit(&mut pager).unwrap();

        let mut model: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        let mut refused = 0;
        let mut rng: u64 = 0x2545_f491_4f6c_dd1d;
        for round in 0..400u32 {
            let mut mtr = Mtr::new();
            let fr = mtr.fix(&mut pager, id).unwrap();
            for step in 0..3u32 {
                let i = round * 3 + step;
                let n = index::n_recs(pager.page(fr));
                // Key and kind of change from one xorshift draw, so that
                // neither follows the other.
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let key = (rng % 100) as u32;
                let slot = (0..n)
                    .find(|&s| key_of(index::rec(pager.page(fr), s)) >= key)
                    .unwrap_or(n);
                let found = slot < n && key_of(index::rec(pager.page(fr), slot)) == key;
                let op_kind = (rng >> 32) % 6;
                let ok = match (op_kind, found) {
                    (0 | 1, false) => {
                        let rec = row(key, u64::from(i), (i as usize * 37) % 120);
                        if !index::fits(pager.page(fr), rec.len()) {
                            continue;
                        }
                        let ok = mtr
                            .try_page_op(
                                &mut pager,
                                fr,
                                PageOp::IndexInsert {
                                    slot: slot as u16,
                                    rec: &rec,
                                },
                            )
                            .unwrap();
                        if ok {
                            model.insert(key, rec);
                        }
                        ok
                    }
                    (2 | 3, true) => {
                        mtr.try_page_op(&mut pager, fr, PageOp::IndexDelete { slot: slot as u16 })
                            .unwrap();
                        model.remove(&key);
                        true
                    }
                    (4, true) => {
                        let len = if i % 2 == 0 {
                            index::rec(pager.page(fr), slot).len() - 19
                        } else {
                            (i as usize * 13) % 120
                        };
                        let rec = row(key, u64::from(i) + 1, len);
                        let page = pager.page(fr);
                        if index::free_space(page) + index::rec(page, slot).len() < rec.len() {
                            continue;
                        }
                        let ok = mtr
                            .try_page_op(
                                &mut pager,
                                fr,
                                PageOp::IndexUpdate {
                                    slot: slot as u16,
                                    rec: &rec,
                                },
                            )
                            .unwrap();
                        if ok {
                            model.insert(key, rec);
                        }
                        ok
                    }
                    (5, true) => {
                        // A new DB_TRX_ID written in place, then the page's
                        // max trx id in its header.
                        let rec = index::rec(pager.page(fr), slot);
                        let in_rec = trx_at(rec);
                        let at = index::rec_offset(pager.page(fr), slot) + 2 + in_rec;
                        let trx = (u64::from(i) << 8).to_le_bytes();
                        mtr.try_page_op(
                            &mut pager,
                            fr,
                            PageOp::Write {
                                offset: at as u16,
                                bytes: &trx[..6],
                            },
                        )
                        .unwrap();
                        let mut rec = model[&key].clone();
                        rec[in_rec..in_rec + 6].copy_from_slice(&trx[..6]);
                        model.insert(key, rec);
                        let max = u64::from(i).to_le_bytes();
                        mtr.page_op(
                            &mut pager,
                            fr,
                            PageOp::Write {
                                offset: index::INDEX_MAX_TRX_ID as u16,
                                bytes: &max,
                            },
                        )
                        .unwrap();
                        true
                    }
                    _ => true,
                };
                if !ok {
                    refused += 1;
                }
            }
            replay_mtr(&mtr, &mut rdata, &mut rzip);
            let lsn = mtr.commit(&mut pager).unwrap();
            let frame = pager.pool.frame(fr);
            let zip = pager.pool.zip(fr).expect("a compressed page");
            zip::validate_against(&zip.page, &frame.data).unwrap();
            if lsn != 0 {
                page::set_page_lsn(&mut rdata, lsn);
                let rz = rzip.as_mut().expect("replay kept a compressed page");
                rz.page.write_header(&rdata);
                assert_eq!(rz.page.image(), zip.page.image(), "round {round}");
            }
        }
        let stats = pager.stats;
        assert!(
            stats.zip_logged > 300 && stats.zip_recompressions > 20 && refused > 5,
            "{stats:?}, {refused} refused"
        );
        // Written out, dropped from the pool, read back and decompressed.
        pager.flush_all().unwrap();
        pager.discard_space(3);
        let fr = pager.fix(id).unwrap();
        let page = pager.page(fr);
        let got: Vec<Vec<u8>> = (0..index::n_recs(page))
            .map(|s| index::rec(page, s).to_vec())
            .collect();
        let want: Vec<Vec<u8>> = model.into_values().collect();
        assert_eq!(got, want);
        pager.unfix(fr);
    }

    /// Recovery takes a logged image only for its own page at its space's
    /// size, and a change to a compressed space's other pages only within
    /// the bytes such a page keeps.
    #[test]
    fn replay_refuses_images_and_writes_that_are_not_the_pages() {
        let f = fields();
        let mut frame = vec![0u8; PAGE_SIZE];
        let id = PageId::new(3, 1);
        page::init(&mut frame, id, PageType::Index);
        index::init(&mut frame, 4, 0);
        let image = zip::ZipPage::compress(&frame, &f, 2048, 6)
            .unwrap()
            .unwrap();
        let op = PageOp::ZipImage {
            image: image.image(),
        };
        let mut data = vec![0u8; PAGE_SIZE];
        let none = || None::<(&mut zip::ZipPage, &zip::ZipFields)>;
        assert!(
            replay(&mut data, none(), Some(1024), id, &op).is_err(),
            "another size"
        );
        assert!(
            replay(&mut data, none(), None, id, &op).is_err(),
            "not compressed"
        );
        assert!(replay(&mut data, none(), Some(2048), PageId::new(3, 2), &op).is_err());
        let got = replay(&mut data, none(), Some(2048), id, &op).unwrap();
        assert!(matches!(got, Replayed::Image(z) if z.page == image));
        let mut other = vec![0u8; PAGE_SIZE];
        let write = PageOp::Write {
            offset: 3000,
            bytes: &[1],
        };
        assert!(replay(&mut other, none(), Some(2048), PageId::new(3, 5), &write).is_err());
    }

    #[test]
    fn a_write_past_what_a_compressed_spaces_page_keeps_is_refused() {
        let mut fil = Fil::new(Box::new(MemStorage::new()));
        fil.create(SYSTEM_SPACE, "ibdata1").unwrap();
        fil.create_sized(3, "c.ibd", Some(1024)).unwrap();
        fil.extend(3, 4).unwrap();
        let log = Log::create(fil.storage(), &LogConfig::default()).unwrap();
        let mut pager = Pager::new(fil, log, 16, false, Box::new(crate::io::ManualClock::new()));
        let mut mtr = Mtr::new();
        let fr = mtr
            .create(&mut pager, PageId::new(3, 2), PageType::Blob)
            .unwrap();
        mtr.write(&mut pager, fr, 1000, &[7; 24]).unwrap();
        assert!(mtr.write(&mut pager, fr, 1001, &[7; 24]).is_err());
        mtr.commit(&mut pager).unwrap();
    }
}
