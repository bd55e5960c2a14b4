//! Packed records, the form a record takes in the zlib stream and in the
//! modification log (see the layout in the module above): its lengths,
//! its header without the delete mark, and its data without the bytes kept
//! uncompressed below the free space. With the bounded reader that takes
//! them apart again, every read checked, and the zigzag coding of the heap
//! offsets in the stream.

use super::*;

/// A bounded reader over bytes that may be corrupt: every read is checked.
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn byte(&mut self) -> std::result::Result<u8, String> {
        let b = *self.bytes.get(self.pos).ok_or("truncated")?;
        self.pos += 1;
        Ok(b)
    }

    pub(super) fn varint(&mut self) -> std::result::Result<u64, String> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }

    pub(super) fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("{n} bytes run past the end"))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
}

/// Packs `rec`: its lengths, its header without the delete mark, and its
/// data without the `elided` ranges, whose bytes go to `stored` and `refs`.
pub(super) fn pack(
    rec: &[u8],
    view: &RecordView<'_>,
    elided: &[(std::ops::Range<usize>, bool)],
    out: &mut Vec<u8>,
    stored: &mut Vec<u8>,
    refs: &mut Vec<u8>,
) {
    let h = view.header_len();
    let elided_len: usize = elided.iter().map(|(r, _)| r.len()).sum();
    put_varint(out, rec.len() as u64);
    put_varint(out, h as u64);
    put_varint(out, (rec.len() - h - elided_len) as u64);
    out.push(rec[0] & !INFO_DELETED_FLAG);
    out.extend_from_slice(&rec[1..h]);
    let mut at = h;
    for (r, is_stored) in elided {
        out.extend_from_slice(&rec[at..r.start]);
        let below = if *is_stored { &mut *stored } else { &mut *refs };
        below.extend_from_slice(&rec[r.clone()]);
        at = r.end;
    }
    out.extend_from_slice(&rec[at..]);
}

/// The parts of a packed record, not yet checked against a layout.
pub(super) struct Packed<'a> {
    pub(super) len: usize,
    header: &'a [u8],
    kept: &'a [u8],
}

pub(super) fn read_packed<'a>(r: &mut Reader<'a>) -> std::result::Result<Packed<'a>, String> {
    let len = r.varint()? as usize;
    let h = r.varint()? as usize;
    let kept = r.varint()? as usize;
    if len > index::MAX_REC_LEN || h == 0 || h.checked_add(kept).is_none_or(|hk| hk > len) {
        return Err(format!(
            "packed record of {len} bytes, header {h}, data {kept}"
        ));
    }
    Ok(Packed {
        len,
        header: r.take(h)?,
        kept: r.take(kept)?,
    })
}

/// Rebuilds a record from its packed parts, its stored bytes and the
/// references `refs` holds for it (consumed from the front).
pub(super) fn unpack(
    fields: &ZipFields,
    p: &Packed<'_>,
    deleted: bool,
    stored: &[u8],
    refs: &mut &[u8],
) -> ZipResult<Vec<u8>> {
    let mut rec = vec![0u8; p.len];
    rec[..p.header.len()].copy_from_slice(p.header);
    if deleted {
        rec[0] |= INFO_DELETED_FLAG;
    }
    let mut elided = Vec::new();
    {
        // The header alone decides where every field lies.
        let view =
            RecordView::parse(&fields.layout, &rec).map_err(|e| format!("record header: {e}"))?;
        if view.header_len() != p.header.len() {
            return Err(format!(
                "header of {} bytes recorded as {}",
                view.header_len(),
                p.header.len()
            )
            .into());
        }
        fields.elided(&view, &mut elided);
    }
    let elided_len: usize = elided.iter().map(|(r, _)| r.len()).sum();
    if p.header.len() + p.kept.len() + elided_len != p.len {
        return Err(format!("record of {} bytes does not add up", p.len).into());
    }
    let mut at = p.header.len();
    let mut kept = p.kept;
    for (r, is_stored) in &elided {
        let n = r.start - at;
        rec[at..r.start].copy_from_slice(&kept[..n]);
        kept = &kept[n..];
        let src = if *is_stored {
            stored
        } else {
            let Some((mine, rest)) = refs.split_at_checked(r.len()) else {
                return Err("the off-page references run out".into());
            };
            *refs = rest;
            mine
        };
        rec[r.clone()].copy_from_slice(src);
        at = r.end;
    }
    rec[at..].copy_from_slice(kept);
    // The whole record, references and all, must be one of the layout.
    RecordView::parse(&fields.layout, &rec).map_err(|e| format!("record: {e}"))?;
    Ok(rec)
}

/// What of a record goes into the stream or the log: its packed bytes.
pub(super) fn packed_of(fields: &ZipFields, rec: &[u8]) -> Result<Vec<u8>> {
    let view = RecordView::parse(&fields.layout, rec)?;
    let mut elided = Vec::new();
    fields.elided(&view, &mut elided);
    let mut out = Vec::with_capacity(rec.len());
    pack(
        rec,
        &view,
        &elided,
        &mut out,
        &mut Vec::new(),
        &mut Vec::new(),
    );
    Ok(out)
}

/// A signed difference as an unsigned varint's value: 0, -1, 1, -2, ...
/// become 0, 1, 2, 3, ..., so that small differences of either sign take
/// one byte.
pub(super) fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub(super) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}
