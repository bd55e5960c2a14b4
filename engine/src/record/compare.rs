//! Comparing records with search keys and with each other, the hot path of
//! every B-tree search. Mirrors InnoDB's `rem0cmp.cc` (`cmp_dtuple_rec`,
//! `cmp_rec_rec`).
//!
//! Fields compare field by field, with NULL before every value and equal to
//! NULL. A field of a binary collation compares as bytes (stored forms are
//! memcomparable, see `types.rs`): exactly the order of `Option<&[u8]>`. A
//! string field of a character set compares in its collation, as
//! `cmp_data_data` hands such fields to MySQL's `strnncollsp`: under
//! latin1_swedish_ci 'a' equals 'A' and 'a ' in index order and in
//! uniqueness alike. The fast paths (fixed offsets, integer compares) are
//! taken only while the compared fields are binary.
//!
//! Where a field's data starts is known only once the header has ended. In
//! REDUNDANT the header's size follows from n_fields; in COMPACT it depends
//! on how many lengths take two bytes, so a comparison reads the length
//! bytes once to find the data, then reads the entries of the fields it
//! compares again ([`compare_records`]); [`compare_key`], the search's hot
//! path, keeps them from the one walk instead (up to [`KEPT`] fields).
//! Both are short loops over a few bytes and allocate nothing; storing
//! lengths before the data is the price of not keeping InnoDB's
//! backward-growing header.

use std::cmp::Ordering;

use crate::error::{Error, Result};

use super::format::{Entry, HeaderWalk};

/// How many leading fields' header entries a COMPACT comparison keeps
/// from its one walk of the header.
const KEPT: usize = 8;
use super::{corrupt, Collation, RecordLayout, RowFormat};

/// Reads the first fields of a record as key fields, for comparisons.
struct KeyReader<'l, 'r> {
    walk: HeaderWalk<'l, 'r>,
    data_pos: usize,
}

impl<'l, 'r> KeyReader<'l, 'r> {
    fn new(layout: &'l RecordLayout, rec: &'r [u8]) -> Result<Self> {
        let walk = HeaderWalk::start(layout, rec)?;
        let data_pos = if layout.format() == RowFormat::Redundant {
            walk.redundant_data_start
        } else {
            let mut probe = walk.clone();
            for _ in 0..layout.n_fields() {
                probe.next()?;
            }
            probe.finish()?
        };
        Ok(KeyReader { walk, data_pos })
    }

    /// The next field: `None` for NULL. Key fields are never external; one
    /// that is means the record is not what its index says.
    fn next(&mut self) -> Result<Option<&'r [u8]>> {
        let i = self.walk.field;
        let e = self.walk.next()?;
        key_field(self.walk.rec, i, e, &mut self.data_pos)
    }
}

/// Key field `i` of `rec`, described by header entry `e`, its data at
/// `*data_pos` (moved past it): `None` for NULL. Key fields are never
/// external; one that is means the record is not what its index says.
fn key_field<'r>(
    rec: &'r [u8],
    i: usize,
    e: Entry,
    data_pos: &mut usize,
) -> Result<Option<&'r [u8]>> {
    let end = *data_pos + e.len;
    let Some(bytes) = rec.get(*data_pos..end) else {
        return Err(corrupt(format!(
            "field {i} runs past the end of the record"
        )));
    };
    *data_pos = end;
    if e.external {
        return Err(corrupt(format!("key field {i} is stored off page")));
    }
    Ok(if e.null { None } else { Some(bytes) })
}

/// Compares the first `key.len()` fields of `rec` with a key tuple, field by
/// field: NULL (`None`) sorts before every value and equals NULL; values
/// compare in the field's collation (as bytes, a proper prefix first, for
/// a binary one). Equal when those fields are
/// equal, whatever follows them in the record.
///
/// The hot path of every B-tree search: it allocates nothing and reads only
/// the header and the compared fields. It checks what it reads, returning
/// [`Error::Corrupt`], but is not a full validation;
/// that is [`RecordView::parse`](super::RecordView::parse).
pub fn compare_key(layout: &RecordLayout, rec: &[u8], key: &[Option<&[u8]>]) -> Result<Ordering> {
    check_prefix_len(layout, key.len())?;
    if let Some(start) = layout.const_data_start {
        if key.len() <= layout.fixed_prefix.len().min(layout.binary_prefix)
            && rec.len() == layout.const_len
        {
            // Fast path: the compared fields sit at fixed offsets.
            for (k, &(off, len)) in key.iter().zip(&layout.fixed_prefix) {
                let field = fixed_field(rec, start + off, len)?;
                let ord = match k {
                    None => Ordering::Greater,
                    Some(k) => cmp_bytes(field, k),
                };
                if ord != Ordering::Equal {
                    return Ok(ord);
                }
            }
            return Ok(Ordering::Equal);
        }
    }
    if layout.format() != RowFormat::Redundant && key.len() <= KEPT {
        return compare_compact(layout, rec, key);
    }
    let mut fields = KeyReader::new(layout, rec)?;
    for (k, def) in key.iter().zip(layout.fields()) {
        let ord = cmp_field(def.collation, fields.next()?, *k);
        if ord != Ordering::Equal {
            return Ok(ord);
        }
    }
    Ok(Ordering::Equal)
}

/// [`compare_key`] on a COMPACT or DYNAMIC record with at most [`KEPT`]
/// key fields: the header walked once, as [`KeyReader`] walks it (every
/// entry checked), with the compared fields' entries kept for the
/// comparison. Its errors are [`KeyReader`]'s.
fn compare_compact(layout: &RecordLayout, rec: &[u8], key: &[Option<&[u8]>]) -> Result<Ordering> {
    let mut walk = HeaderWalk::start(layout, rec)?;
    let mut kept = [Entry {
        null: false,
        external: false,
        len: 0,
    }; KEPT];
    for i in 0..layout.n_fields() {
        let e = walk.next()?;
        if let Some(slot) = kept.get_mut(i) {
            *slot = e;
        }
    }
    let mut data_pos = walk.finish()?;
    for (i, ((k, &e), def)) in key.iter().zip(&kept).zip(layout.fields()).enumerate() {
        let ord = cmp_field(def.collation, key_field(rec, i, e, &mut data_pos)?, *k);
        if ord != Ordering::Equal {
            return Ok(ord);
        }
    }
    Ok(Ordering::Equal)
}

/// Compares the first `n_fields` fields of two records of `layout`, as
/// [`compare_key`] does.
pub fn compare_records(
    layout: &RecordLayout,
    a: &[u8],
    b: &[u8],
    n_fields: usize,
) -> Result<Ordering> {
    check_prefix_len(layout, n_fields)?;
    if let Some(start) = layout.const_data_start {
        if n_fields <= layout.fixed_prefix.len().min(layout.binary_prefix)
            && a.len() == layout.const_len
            && b.len() == layout.const_len
        {
            for &(off, len) in &layout.fixed_prefix[..n_fields] {
                let ord = cmp_bytes(
                    fixed_field(a, start + off, len)?,
                    fixed_field(b, start + off, len)?,
                );
                if ord != Ordering::Equal {
                    return Ok(ord);
                }
            }
            return Ok(Ordering::Equal);
        }
    }
    let mut fa = KeyReader::new(layout, a)?;
    let mut fb = KeyReader::new(layout, b)?;
    for def in &layout.fields()[..n_fields] {
        let ord = cmp_field(def.collation, fa.next()?, fb.next()?);
        if ord != Ordering::Equal {
            return Ok(ord);
        }
    }
    Ok(Ordering::Equal)
}

/// Field `i` of a record whose layout puts it at a fixed offset (a COMPACT
/// or DYNAMIC layout of Fixed, NOT NULL fields, of the record's expected
/// length), without parsing the header; `None` when that does not hold (the
/// caller then parses).
#[inline]
pub fn fixed_field_fast<'r>(layout: &RecordLayout, rec: &'r [u8], i: usize) -> Option<&'r [u8]> {
    let start = layout.const_data_start?;
    let &(off, len) = layout.fixed_prefix.get(i)?;
    if rec.len() != layout.const_len {
        return None;
    }
    rec.get(start + off..start + off + len)
}

/// Two values of a field (`None` for NULL, first), in its collation.
#[inline]
fn cmp_field(collation: Collation, a: Option<&[u8]>, b: Option<&[u8]>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) if collation != Collation::Binary => collation.compare(a, b),
        _ => a.cmp(&b),
    }
}

/// Byte-wise comparison, with the common 4- and 8-byte keys (INT, BIGINT:
/// big-endian stored forms) compared as integers rather than through a
/// memcmp call. Same order as `a.cmp(b)`.
#[inline]
fn cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    match (a.len(), b.len()) {
        (4, 4) => u32::from_be_bytes([a[0], a[1], a[2], a[3]])
            .cmp(&u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
        (8, 8) => u64::from_be_bytes(a.try_into().expect("8 bytes"))
            .cmp(&u64::from_be_bytes(b.try_into().expect("8 bytes"))),
        _ => a.cmp(b),
    }
}

#[inline]
fn fixed_field(rec: &[u8], start: usize, len: usize) -> Result<&[u8]> {
    rec.get(start..start + len).ok_or_else(|| {
        corrupt(format!(
            "record of {} bytes is too short for its fixed fields",
            rec.len()
        ))
    })
}

fn check_prefix_len(layout: &RecordLayout, n: usize) -> Result<()> {
    if n > layout.n_fields() {
        return Err(Error::InvalidArgument(format!(
            "cannot compare {n} fields of records with {}",
            layout.n_fields()
        )));
    }
    Ok(())
}
