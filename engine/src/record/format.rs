//! Encoding and parsing records in the REDUNDANT, COMPACT and DYNAMIC
//! formats. Mirrors InnoDB's `rem0rec.cc` (`rec_convert_dtuple_to_rec`,
//! `rec_get_offsets`). The byte layouts are drawn in the [module
//! documentation](super).
//!
//! Parsing is built on one forward walk over the header, [`HeaderWalk`],
//! which yields for each field in turn whether it is NULL or external and
//! how many data bytes it occupies, checking each entry against the layout
//! as it goes. Everything that reads records uses it, so there is one place
//! that decides what a well-formed header is.
//!
//! Comparisons, which read the header the same way, are in `compare.rs`.

use crate::error::Result;

use super::external::{ExternalRef, EXTERNAL_REF_LEN};
use super::{corrupt, FieldDef, FieldKind, FieldValue, RecordLayout, RowFormat, MAX_IN_RECORD_LEN};

/// The delete-mark bit of the info byte (InnoDB's `REC_INFO_DELETED_FLAG`).
pub const INFO_DELETED_FLAG: u8 = 0x20;

/// Offset of the info byte, in every format.
const INFO_BYTE: usize = 0;
/// COMPACT: offset of the null bitmap.
const COMPACT_NULL_BITMAP: usize = INFO_BYTE + 1;
/// REDUNDANT: offset of n_fields (u16 LE).
const REDUNDANT_N_FIELDS: usize = INFO_BYTE + 1;
/// REDUNDANT: offset of the first end offset.
const REDUNDANT_OFFSETS: usize = REDUNDANT_N_FIELDS + 2;
/// REDUNDANT n_fields flag: end offsets are 1 byte each.
const REDUNDANT_1BYTE_OFFS: u16 = 0x8000;
/// REDUNDANT: 1-byte end offset flag for NULL.
const REDUNDANT_NULL_1: u8 = 0x80;
/// REDUNDANT: 2-byte end offset flags.
const REDUNDANT_NULL_2: u16 = 0x8000;
const REDUNDANT_EXTERN_2: u16 = 0x4000;
/// REDUNDANT: data shorter than this (and nothing external) gets 1-byte
/// end offsets; COMPACT: a big field shorter than this gets a 1-byte length.
const ONE_BYTE_LIMIT: usize = 128;
/// COMPACT two-byte length: first-byte flags.
const COMPACT_LEN_2BYTE: u8 = 0x80;
const COMPACT_LEN_EXTERN: u8 = 0x40;

const _: () = assert!(COMPACT_NULL_BITMAP == 1 && REDUNDANT_OFFSETS == 3);
const _: () = assert!(MAX_IN_RECORD_LEN == (REDUNDANT_EXTERN_2 - 1) as usize);

/// A field's in-record shape, for computing lengths without the bytes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Shape {
    /// NULL.
    Null,
    /// Inline, this many bytes.
    Inline(usize),
    /// External, this many bytes in the record (prefix plus reference).
    External(usize),
}

impl Shape {
    fn of(v: &FieldValue<'_>) -> Shape {
        match v {
            FieldValue::Null => Shape::Null,
            FieldValue::Inline(b) => Shape::Inline(b.len()),
            FieldValue::External { .. } => Shape::External(v.in_record_len()),
        }
    }
}

/// The length of a record with fields of these shapes.
pub(super) fn shaped_len(layout: &RecordLayout, shapes: impl Iterator<Item = Shape>) -> usize {
    let fields = layout.fields().iter().zip(shapes);
    match layout.format() {
        RowFormat::Redundant => {
            let (mut data_len, mut any_external) = (0, false);
            for (def, shape) in fields {
                data_len += match shape {
                    Shape::Null => def.kind.fixed_len().unwrap_or(0),
                    Shape::Inline(l) => l,
                    Shape::External(l) => {
                        any_external = true;
                        l
                    }
                };
            }
            let width = redundant_offset_width(data_len, any_external);
            REDUNDANT_OFFSETS + layout.n_fields() * width + data_len
        }
        _ => {
            let mut len = COMPACT_NULL_BITMAP + layout.null_bitmap_len();
            for (def, shape) in fields {
                len += match (def.kind, shape) {
                    (_, Shape::Null) => 0,
                    (FieldKind::Fixed(_), Shape::Inline(l) | Shape::External(l)) => l,
                    (FieldKind::Variable { .. }, Shape::Inline(l)) => {
                        l + compact_len_width(def.kind, l, false)
                    }
                    (FieldKind::Variable { .. }, Shape::External(l)) => l + 2,
                };
            }
            len
        }
    }
}

/// Bytes of each REDUNDANT end offset.
#[inline]
fn redundant_offset_width(data_len: usize, any_external: bool) -> usize {
    if data_len < ONE_BYTE_LIMIT && !any_external {
        1
    } else {
        2
    }
}

/// Bytes of a COMPACT length.
#[inline]
fn compact_len_width(kind: FieldKind, len: usize, external: bool) -> usize {
    if kind.is_big() && (len >= ONE_BYTE_LIMIT || external) {
        2
    } else {
        1
    }
}

/// The length of the record [`encode`] builds from `values`.
pub fn encoded_len(layout: &RecordLayout, values: &[FieldValue<'_>]) -> usize {
    debug_assert_eq!(values.len(), layout.n_fields());
    shaped_len(layout, values.iter().map(Shape::of))
}

/// Appends the record of `values` to `out`.
///
/// # Panics
///
/// If a value does not suit its field: the wrong number of values, NULL in a
/// NOT NULL field, a Fixed field of the wrong length, a Variable field
/// longer than its `max_len` or than [`MAX_IN_RECORD_LEN`], an external
/// value in a field that is not `long`, or REDUNDANT data longer than
/// [`MAX_IN_RECORD_LEN`]. These checks stay on: the alternative to a panic
/// here is a record that cannot be read back.
pub fn encode(layout: &RecordLayout, values: &[FieldValue<'_>], deleted: bool, out: &mut Vec<u8>) {
    assert_eq!(values.len(), layout.n_fields(), "one value per field");
    for (i, (def, v)) in layout.fields().iter().zip(values).enumerate() {
        assert_suits(i, def, v);
    }
    let start = out.len();
    out.push(if deleted { INFO_DELETED_FLAG } else { 0 });
    match layout.format() {
        RowFormat::Redundant => encode_redundant_header(layout, values, out),
        _ => encode_compact_header(layout, values, out),
    }
    for (def, v) in layout.fields().iter().zip(values) {
        match v {
            FieldValue::Null => {
                if layout.format() == RowFormat::Redundant {
                    let reserved = def.kind.fixed_len().unwrap_or(0);
                    out.resize(out.len() + reserved, 0);
                }
            }
            FieldValue::Inline(b) => out.extend_from_slice(b),
            FieldValue::External { prefix, reference } => {
                out.extend_from_slice(prefix);
                out.extend_from_slice(&reference.encode());
            }
        }
    }
    debug_assert_eq!(out.len() - start, encoded_len(layout, values));
}

fn assert_suits(i: usize, def: &FieldDef, v: &FieldValue<'_>) {
    match (def.kind, v) {
        (_, FieldValue::Null) => assert!(def.nullable, "field {i}: NULL in a NOT NULL field"),
        (FieldKind::Fixed(n), FieldValue::Inline(b)) => {
            assert_eq!(b.len(), usize::from(n), "field {i}: fixed length");
        }
        (FieldKind::Fixed(_), FieldValue::External { .. }) => {
            panic!("field {i}: a fixed-length field cannot be external")
        }
        (FieldKind::Variable { max_len, .. }, FieldValue::Inline(b)) => {
            assert!(
                b.len() as u64 <= u64::from(max_len),
                "field {i}: longer than max_len"
            );
            assert!(
                b.len() <= MAX_IN_RECORD_LEN,
                "field {i}: too long to store inline"
            );
        }
        (FieldKind::Variable { max_len, long }, FieldValue::External { prefix, reference }) => {
            assert!(long, "field {i}: only long fields can be external");
            let total = prefix.len() as u64 + reference.len;
            assert!(
                total <= u64::from(max_len),
                "field {i}: longer than max_len"
            );
            assert!(
                v.in_record_len() <= MAX_IN_RECORD_LEN,
                "field {i}: prefix too long"
            );
        }
    }
}

fn encode_compact_header(layout: &RecordLayout, values: &[FieldValue<'_>], out: &mut Vec<u8>) {
    let bitmap = out.len();
    out.resize(bitmap + layout.null_bitmap_len(), 0);
    let nullable_values = layout
        .fields()
        .iter()
        .zip(values)
        .filter(|(def, _)| def.nullable);
    for (k, (_, v)) in nullable_values.enumerate() {
        if v.is_null() {
            out[bitmap + k / 8] |= 1 << (k % 8);
        }
    }
    for (def, v) in layout.fields().iter().zip(values) {
        if matches!(def.kind, FieldKind::Fixed(_)) || v.is_null() {
            continue;
        }
        let len = v.in_record_len();
        if compact_len_width(def.kind, len, v.is_external()) == 1 {
            debug_assert!(len <= 0xff);
            out.push(len as u8);
        } else {
            let flags = COMPACT_LEN_2BYTE
                | if v.is_external() {
                    COMPACT_LEN_EXTERN
                } else {
                    0
                };
            out.push(flags | (len >> 8) as u8);
            out.push(len as u8);
        }
    }
}

fn encode_redundant_header(layout: &RecordLayout, values: &[FieldValue<'_>], out: &mut Vec<u8>) {
    let occupied = |def: &FieldDef, v: &FieldValue<'_>| match v {
        FieldValue::Null => def.kind.fixed_len().unwrap_or(0),
        _ => v.in_record_len(),
    };
    let fields = || layout.fields().iter().zip(values);
    let data_len: usize = fields().map(|(def, v)| occupied(def, v)).sum();
    let any_external = values.iter().any(FieldValue::is_external);
    assert!(
        data_len <= MAX_IN_RECORD_LEN,
        "REDUNDANT data of {data_len} bytes"
    );
    let one_byte = redundant_offset_width(data_len, any_external) == 1;
    // n_fields <= REC_MAX_N_FIELDS, so it leaves the flag bit free.
    let n_fields = layout.n_fields() as u16 | if one_byte { REDUNDANT_1BYTE_OFFS } else { 0 };
    out.extend_from_slice(&n_fields.to_le_bytes());
    let mut end = 0;
    for (def, v) in fields() {
        end += occupied(def, v);
        if one_byte {
            out.push(end as u8 | if v.is_null() { REDUNDANT_NULL_1 } else { 0 });
        } else {
            let flags = match v {
                FieldValue::Null => REDUNDANT_NULL_2,
                FieldValue::Inline(_) => 0,
                FieldValue::External { .. } => REDUNDANT_EXTERN_2,
            };
            out.extend_from_slice(&(end as u16 | flags).to_le_bytes());
        }
    }
}

/// Whether a record is delete-marked. Byte 0 is the info byte in every
/// format; an empty slice is not a record and reads as not deleted.
#[inline]
pub fn is_deleted(rec: &[u8]) -> bool {
    rec.first().is_some_and(|b| b & INFO_DELETED_FLAG != 0)
}

/// Sets or clears a record's delete mark in place.
#[inline]
pub fn set_deleted(rec: &mut [u8], deleted: bool) {
    debug_assert!(!rec.is_empty(), "a record has an info byte");
    if let Some(info) = rec.first_mut() {
        if deleted {
            *info |= INFO_DELETED_FLAG;
        } else {
            *info &= !INFO_DELETED_FLAG;
        }
    }
}

/// What the header says about one field.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub(super) null: bool,
    pub(super) external: bool,
    /// Bytes the field occupies in the data area (a REDUNDANT NULL Fixed
    /// field occupies its length).
    pub(super) len: usize,
}

/// A forward walk over a record's header, one field per [`HeaderWalk::next`]
/// call, checking each entry against the layout and the record's length.
#[derive(Clone)]
pub(super) struct HeaderWalk<'l, 'r> {
    layout: &'l RecordLayout,
    pub(super) rec: &'r [u8],
    /// The field the next call describes.
    pub(super) field: usize,
    /// The next header byte: a COMPACT length or a REDUNDANT end offset.
    pos: usize,
    /// COMPACT: nullable fields passed so far (the next one's bitmap bit).
    nullable_seen: usize,
    /// Data bytes of the fields passed so far.
    data_len: usize,
    /// Whether a field passed so far is external.
    any_external: bool,
    /// REDUNDANT: whether end offsets are 2 bytes.
    two_byte_offsets: bool,
    /// REDUNDANT: where data starts, which the header's size fixes.
    pub(super) redundant_data_start: usize,
}

impl<'l, 'r> HeaderWalk<'l, 'r> {
    /// Checks the parts of the header before the per-field entries.
    pub(super) fn start(layout: &'l RecordLayout, rec: &'r [u8]) -> Result<Self> {
        let Some(&info) = rec.get(INFO_BYTE) else {
            return Err(corrupt("empty record".to_string()));
        };
        if info & !INFO_DELETED_FLAG != 0 {
            return Err(corrupt(format!(
                "info byte {info:#04x} has reserved bits set"
            )));
        }
        let mut walk = HeaderWalk {
            layout,
            rec,
            field: 0,
            pos: 0,
            nullable_seen: 0,
            data_len: 0,
            any_external: false,
            two_byte_offsets: false,
            redundant_data_start: 0,
        };
        match layout.format() {
            RowFormat::Redundant => walk.start_redundant()?,
            _ => walk.start_compact()?,
        }
        Ok(walk)
    }

    fn start_compact(&mut self) -> Result<()> {
        let bitmap_len = self.layout.null_bitmap_len();
        let header_min = COMPACT_NULL_BITMAP + bitmap_len;
        if self.rec.len() < header_min {
            return Err(corrupt(format!(
                "record of {} bytes ends inside its {bitmap_len}-byte null bitmap",
                self.rec.len()
            )));
        }
        let used_bits = self.layout.n_nullable() % 8;
        if used_bits != 0 {
            let last = self.rec[header_min - 1];
            if last >> used_bits != 0 {
                return Err(corrupt(format!(
                    "null bitmap byte {last:#04x} has unused bits set"
                )));
            }
        }
        self.pos = header_min;
        Ok(())
    }

    fn start_redundant(&mut self) -> Result<()> {
        let Some(raw) = self.u16_at(REDUNDANT_N_FIELDS) else {
            return Err(corrupt("record ends inside its n_fields".to_string()));
        };
        let n_fields = usize::from(raw & !REDUNDANT_1BYTE_OFFS);
        if n_fields != self.layout.n_fields() {
            return Err(corrupt(format!(
                "record has {n_fields} fields, its index {}",
                self.layout.n_fields()
            )));
        }
        self.two_byte_offsets = raw & REDUNDANT_1BYTE_OFFS == 0;
        let width = if self.two_byte_offsets { 2 } else { 1 };
        let data_start = REDUNDANT_OFFSETS + n_fields * width;
        let Some(data_len) = self.rec.len().checked_sub(data_start) else {
            return Err(corrupt(format!(
                "record of {} bytes ends inside its {data_start}-byte header",
                self.rec.len()
            )));
        };
        // The last end offset is the data's length; checking it here lets a
        // walk that stops early trust that the record is as long as it says.
        let last_end = match n_fields {
            0 => 0,
            n => self.redundant_offset(REDUNDANT_OFFSETS + (n - 1) * width).0,
        };
        if last_end != data_len {
            return Err(corrupt(format!(
                "last end offset {last_end} but {data_len} data bytes"
            )));
        }
        self.pos = REDUNDANT_OFFSETS;
        self.redundant_data_start = data_start;
        Ok(())
    }

    fn u16_at(&self, off: usize) -> Option<u16> {
        let b = self.rec.get(off..off + 2)?;
        Some(u16::from_le_bytes([b[0], b[1]]))
    }

    /// Decodes the REDUNDANT end offset at `off`, which [`Self::start`] has
    /// checked lies within the header: (end, null, external).
    fn redundant_offset(&self, off: usize) -> (usize, bool, bool) {
        if self.two_byte_offsets {
            let v = u16::from_le_bytes([self.rec[off], self.rec[off + 1]]);
            (
                usize::from(v & MAX_IN_RECORD_LEN as u16),
                v & REDUNDANT_NULL_2 != 0,
                v & REDUNDANT_EXTERN_2 != 0,
            )
        } else {
            let b = self.rec[off];
            (
                usize::from(b & !REDUNDANT_NULL_1),
                b & REDUNDANT_NULL_1 != 0,
                false,
            )
        }
    }

    /// Describes the next field. Must be called at most n_fields times.
    /// Inlined: it runs for every field of every record a search compares
    /// or a read decodes, and a call cost a third of its work.
    #[inline(always)]
    pub(super) fn next(&mut self) -> Result<Entry> {
        let i = self.field;
        let def = self.layout.fields()[i];
        self.field += 1;
        let entry = match self.layout.format() {
            RowFormat::Redundant => self.next_redundant(i, def)?,
            _ => self.next_compact(i, def)?,
        };
        self.data_len += entry.len;
        self.any_external |= entry.external;
        Ok(entry)
    }

    #[inline(always)]
    fn next_compact(&mut self, i: usize, def: FieldDef) -> Result<Entry> {
        if def.nullable {
            let k = self.nullable_seen;
            self.nullable_seen += 1;
            // In bounds: start_compact checked the whole bitmap is there.
            let bits = self.rec[COMPACT_NULL_BITMAP + k / 8];
            if bits >> (k % 8) & 1 != 0 {
                return Ok(Entry {
                    null: true,
                    external: false,
                    len: 0,
                });
            }
        }
        let FieldKind::Variable { max_len, long } = def.kind else {
            let len = def.kind.fixed_len().unwrap_or(0);
            return Ok(Entry {
                null: false,
                external: false,
                len,
            });
        };
        let Some(&first) = self.rec.get(self.pos) else {
            return Err(corrupt(format!(
                "record ends inside the length of field {i}"
            )));
        };
        self.pos += 1;
        let (len, external) = if !def.kind.is_big() || first & COMPACT_LEN_2BYTE == 0 {
            (usize::from(first), false)
        } else {
            let Some(&second) = self.rec.get(self.pos) else {
                return Err(corrupt(format!(
                    "record ends inside the length of field {i}"
                )));
            };
            self.pos += 1;
            let high = usize::from(first & !(COMPACT_LEN_2BYTE | COMPACT_LEN_EXTERN));
            let external = first & COMPACT_LEN_EXTERN != 0;
            let len = high << 8 | usize::from(second);
            if !external && len < ONE_BYTE_LIMIT {
                return Err(corrupt(format!(
                    "field {i}: 2-byte length {len} where 1 byte would do"
                )));
            }
            (len, external)
        };
        check_variable(i, max_len, long, len, external)?;
        Ok(Entry {
            null: false,
            external,
            len,
        })
    }

    fn next_redundant(&mut self, i: usize, def: FieldDef) -> Result<Entry> {
        let (end, null, external) = self.redundant_offset(self.pos);
        self.pos += if self.two_byte_offsets { 2 } else { 1 };
        let prev_end = self.data_len;
        let data_len = self.rec.len() - self.redundant_data_start;
        if end < prev_end || end > data_len {
            return Err(corrupt(format!(
                "field {i} ends at {end}, outside {prev_end}..={data_len}"
            )));
        }
        let len = end - prev_end;
        if null {
            let reserved = def.kind.fixed_len().unwrap_or(0);
            if !def.nullable || external || len != reserved {
                return Err(corrupt(format!(
                    "field {i}: NULL (external {external}, {len} bytes) where the \
                     index allows {}",
                    if def.nullable { "NULL" } else { "no NULL" }
                )));
            }
            return Ok(Entry {
                null,
                external,
                len,
            });
        }
        match def.kind {
            FieldKind::Fixed(n) if usize::from(n) == len && !external => {}
            FieldKind::Fixed(n) => {
                return Err(corrupt(format!(
                    "fixed field {i} of {n} bytes has {len} (external {external})"
                )));
            }
            FieldKind::Variable { max_len, long } => {
                check_variable(i, max_len, long, len, external)?
            }
        }
        Ok(Entry {
            null,
            external,
            len,
        })
    }

    /// After every field has been walked, checks the header against the
    /// record's length and returns where the data starts.
    pub(super) fn finish(&self) -> Result<usize> {
        debug_assert_eq!(self.field, self.layout.n_fields());
        if self.layout.format() == RowFormat::Redundant {
            let width = redundant_offset_width(self.data_len, self.any_external);
            if self.two_byte_offsets != (width == 2) {
                return Err(corrupt(format!(
                    "{}-byte end offsets for {} data bytes (external {})",
                    if self.two_byte_offsets { 2 } else { 1 },
                    self.data_len,
                    self.any_external
                )));
            }
            return Ok(self.redundant_data_start);
        }
        if self.pos + self.data_len != self.rec.len() {
            return Err(corrupt(format!(
                "header of {} bytes and {} data bytes in a record of {}",
                self.pos,
                self.data_len,
                self.rec.len()
            )));
        }
        Ok(self.pos)
    }
}

/// Checks a non-NULL Variable field's in-record length.
#[inline]
fn check_variable(i: usize, max_len: u32, long: bool, len: usize, external: bool) -> Result<()> {
    if external {
        if !long {
            return Err(corrupt(format!("field {i} is external but cannot be")));
        }
        if len < EXTERNAL_REF_LEN {
            return Err(corrupt(format!("external field {i} has only {len} bytes")));
        }
    } else if len as u64 > u64::from(max_len) {
        return Err(corrupt(format!(
            "field {i} has {len} bytes, at most {max_len} allowed"
        )));
    }
    Ok(())
}

/// Where one field is in a parsed record.
#[derive(Debug, Clone, Copy)]
struct Span {
    /// Offset from the start of data.
    start: u32,
    len: u32,
    kind: SpanKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SpanKind {
    Null,
    Inline,
    External,
}

/// A parsed, validated record: the fields of a byte slice.
#[derive(Debug, Clone)]
pub struct RecordView<'a> {
    rec: &'a [u8],
    data_start: usize,
    spans: Vec<Span>,
}

impl<'a> RecordView<'a> {
    /// Parses `rec`, which must be exactly one record of `layout`.
    ///
    /// Checks everything: reserved bits, every length and end offset against
    /// the layout and the record's length, canonical encodings, external
    /// references (at least [`EXTERNAL_REF_LEN`] bytes, only in long fields,
    /// total length within `max_len`). Anything wrong is
    /// [`Error::Corrupt`](crate::Error::Corrupt); nothing panics.
    pub fn parse(layout: &RecordLayout, rec: &'a [u8]) -> Result<RecordView<'a>> {
        let mut walk = HeaderWalk::start(layout, rec)?;
        let mut spans = Vec::with_capacity(layout.n_fields());
        let mut start = 0usize;
        for _ in 0..layout.n_fields() {
            let e = walk.next()?;
            let kind = match (e.null, e.external) {
                (true, _) => SpanKind::Null,
                (false, false) => SpanKind::Inline,
                (false, true) => SpanKind::External,
            };
            // Fields are under 2^14 bytes and records under 2^32: the
            // header walk bounds both by the record's length.
            spans.push(Span {
                start: start as u32,
                len: e.len as u32,
                kind,
            });
            start += e.len;
        }
        let data_start = walk.finish()?;
        let view = RecordView {
            rec,
            data_start,
            spans,
        };
        for (i, (def, span)) in layout.fields().iter().zip(&view.spans).enumerate() {
            let problem = match (view.field(i), def.kind) {
                (
                    FieldValue::External { prefix, reference },
                    FieldKind::Variable { max_len, .. },
                ) if prefix.len() as u64 + reference.len > u64::from(max_len) => Some(format!(
                    "external field {i} of {} + {} bytes, at most {max_len} allowed",
                    prefix.len(),
                    reference.len
                )),
                // REDUNDANT's room for a NULL Fixed field is zeros, as
                // encode writes it; anything else would not round-trip.
                (FieldValue::Null, FieldKind::Fixed(_))
                    if view.span_bytes(*span).iter().any(|&b| b != 0) =>
                {
                    Some(format!("NULL field {i} has non-zero bytes"))
                }
                _ => None,
            };
            if let Some(reason) = problem {
                return Err(corrupt(reason));
            }
        }
        Ok(view)
    }

    /// Field `i`.
    ///
    /// # Panics
    ///
    /// If `i >= self.n_fields()`.
    pub fn field(&self, i: usize) -> FieldValue<'a> {
        let span = self.spans[i];
        let bytes = self.span_bytes(span);
        match span.kind {
            SpanKind::Null => FieldValue::Null,
            SpanKind::Inline => FieldValue::Inline(bytes),
            SpanKind::External => match bytes.split_last_chunk::<EXTERNAL_REF_LEN>() {
                Some((prefix, reference)) => FieldValue::External {
                    prefix,
                    reference: ExternalRef::from_array(reference),
                },
                None => unreachable!("parse checked external fields hold a reference"),
            },
        }
    }

    /// The bytes a field occupies in the data area.
    fn span_bytes(&self, span: Span) -> &'a [u8] {
        let start = self.data_start + span.start as usize;
        // Within the record: parse checked every span against its length.
        &self.rec[start..start + span.len as usize]
    }

    /// The fields, in order.
    pub fn fields(&self) -> impl Iterator<Item = FieldValue<'a>> + '_ {
        (0..self.spans.len()).map(|i| self.field(i))
    }

    /// The number of fields.
    pub fn n_fields(&self) -> usize {
        self.spans.len()
    }

    /// Where field `i`'s data bytes sit in the record (an external field's
    /// include its 20-byte reference, at their end; a NULL field's are
    /// empty, except REDUNDANT's NULL Fixed fields, which keep their room).
    ///
    /// # Panics
    ///
    /// If `i >= self.n_fields()`.
    pub fn field_range(&self, i: usize) -> std::ops::Range<usize> {
        let span = self.spans[i];
        let start = self.data_start + span.start as usize;
        start..start + span.len as usize
    }

    /// Whether field `i` is stored off page.
    ///
    /// # Panics
    ///
    /// If `i >= self.n_fields()`.
    pub fn is_external(&self, i: usize) -> bool {
        self.spans[i].kind == SpanKind::External
    }

    /// Whether the record is delete-marked.
    pub fn is_deleted(&self) -> bool {
        is_deleted(self.rec)
    }

    /// Whether any field is stored off page.
    pub fn has_external(&self) -> bool {
        self.spans.iter().any(|s| s.kind == SpanKind::External)
    }

    /// The record's length in bytes: the whole slice it was parsed from.
    #[allow(clippy::len_without_is_empty)] // a record always has its info byte
    pub fn len(&self) -> usize {
        self.rec.len()
    }

    /// Bytes of the header (everything before the data).
    pub fn header_len(&self) -> usize {
        self.data_start
    }

    /// Bytes of the data (everything after the header).
    pub fn data_len(&self) -> usize {
        self.rec.len() - self.data_start
    }

    /// The record's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.rec
    }
}
