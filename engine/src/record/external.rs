//! Off-page ("external") columns: the reference a record keeps to a long
//! column stored in overflow pages, and the rule that picks which columns go
//! there. Mirrors InnoDB's `BTR_EXTERN_*` field reference (`btr0cur.h`) and
//! `dtuple_convert_big_rec` (`data0data.cc`).
//!
//! A record must fit in half a page so that every B-tree page holds at least
//! two records. When a row is too big for that, long fields move off page,
//! the longest first, until the record fits:
//!
//! ```text
//! format               stays in the record               candidates
//! ------               -------------------               ----------
//! REDUNDANT, COMPACT   768-byte prefix + 20-byte ref     long, > 768 + 20 bytes
//! DYNAMIC              20-byte ref only                  long, > 40 bytes
//! ```
//!
//! COMPACT keeps the prefix so that a prefix index on the column can be
//! served from the clustered record; DYNAMIC gives that up for rows that
//! stay small however long their columns are. DYNAMIC never moves a field of
//! 40 bytes or less: its reference alone would be half that size.
//!
//! This module never reads or writes the overflow pages themselves.

use crate::error::{Error, Result};

use super::format::{shaped_len, Shape};
use super::{corrupt, FieldKind, RecordLayout, RowFormat, MAX_IN_RECORD_LEN};

/// Bytes of a stored [`ExternalRef`] (InnoDB's `BTR_EXTERN_FIELD_REF_SIZE`).
pub const EXTERNAL_REF_LEN: usize = 20;
/// Bytes of a long column kept in a REDUNDANT or COMPACT record when the rest
/// goes off page (InnoDB's `DICT_ANTELOPE_MAX_INDEX_COL_LEN`).
pub const COMPACT_PREFIX_LEN: usize = 768;
/// DYNAMIC keeps fields of at most this many bytes inline: twice the
/// reference that would replace them.
pub const DYNAMIC_INLINE_MAX: usize = 2 * EXTERNAL_REF_LEN;

/// Where the rest of an off-page column is.
///
/// ```text
/// offset  size  field
/// ------  ----  ---------------------------------------------------
///      0     4  space id of the first overflow page, u32 LE
///      4     4  page number of the first overflow page, u32 LE
///      8     4  offset of the data in that page, u32 LE
///     12     8  bytes stored off page (the local prefix excluded), u64 LE
///     20        EXTERNAL_REF_LEN
/// ```
///
/// InnoDB stores these big-endian and keeps ownership flags in the top bits
/// of the length; here they are little-endian like all layout, and the
/// length is a plain count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExternalRef {
    /// Tablespace of the first overflow page.
    pub space: u32,
    /// The first overflow page.
    pub page_no: u32,
    /// Offset of the data within that page.
    pub offset: u32,
    /// Bytes stored off page.
    pub len: u64,
}

const REF_SPACE: usize = 0;
const REF_PAGE_NO: usize = REF_SPACE + 4;
const REF_OFFSET: usize = REF_PAGE_NO + 4;
const REF_LEN: usize = REF_OFFSET + 4;
const _: () = assert!(REF_LEN + 8 == EXTERNAL_REF_LEN);

impl ExternalRef {
    /// The stored form.
    pub fn encode(&self) -> [u8; EXTERNAL_REF_LEN] {
        let mut b = [0u8; EXTERNAL_REF_LEN];
        b[REF_SPACE..REF_PAGE_NO].copy_from_slice(&self.space.to_le_bytes());
        b[REF_PAGE_NO..REF_OFFSET].copy_from_slice(&self.page_no.to_le_bytes());
        b[REF_OFFSET..REF_LEN].copy_from_slice(&self.offset.to_le_bytes());
        b[REF_LEN..].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Decodes a stored reference, which must be exactly
    /// [`EXTERNAL_REF_LEN`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self> {
        let b: &[u8; EXTERNAL_REF_LEN] = b.try_into().map_err(|_| {
            corrupt(format!(
                "an external reference is {EXTERNAL_REF_LEN} bytes, not {}",
                b.len()
            ))
        })?;
        Ok(Self::from_array(b))
    }

    /// Decodes a reference whose length the type guarantees.
    pub(super) fn from_array(b: &[u8; EXTERNAL_REF_LEN]) -> Self {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let mut len = [0u8; 8];
        len.copy_from_slice(&b[REF_LEN..]);
        ExternalRef {
            space: u32_at(REF_SPACE),
            page_no: u32_at(REF_PAGE_NO),
            offset: u32_at(REF_OFFSET),
            len: u64::from_le_bytes(len),
        }
    }
}

/// Where one field of a record to be built goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placement {
    /// Wholly in the record.
    Inline,
    /// The first `local_prefix` bytes in the record, followed by an
    /// [`ExternalRef`] to the rest.
    External {
        /// Bytes kept in the record.
        local_prefix: usize,
    },
}

/// The length of the record [`encode`](super::encode) would build from
/// fields of these full lengths (`None` = NULL) placed like this, where an
/// external field takes its local prefix plus [`EXTERNAL_REF_LEN`].
pub fn record_len_with(
    layout: &RecordLayout,
    lens: &[Option<usize>],
    placements: &[Placement],
) -> usize {
    debug_assert_eq!(lens.len(), layout.n_fields());
    debug_assert_eq!(placements.len(), layout.n_fields());
    shaped_len(
        layout,
        lens.iter().zip(placements).map(|(len, p)| shape(*len, *p)),
    )
}

fn shape(len: Option<usize>, placement: Placement) -> Shape {
    match (len, placement) {
        (None, _) => Shape::Null,
        (Some(len), Placement::Inline) => Shape::Inline(len),
        (Some(len), Placement::External { local_prefix }) => {
            debug_assert!(
                local_prefix <= len,
                "an external field keeps at most all of itself"
            );
            Shape::External(local_prefix.min(len) + EXTERNAL_REF_LEN)
        }
    }
}

/// Decides which fields of a record go off page so that it is at most
/// `max_rec_len` bytes long. `lens` are the full stored lengths of the
/// fields, `None` for NULL.
///
/// InnoDB's rule: if everything fits inline, everything stays inline.
/// Otherwise the longest still-inline `long` field moves off page (keeping
/// [`COMPACT_PREFIX_LEN`] bytes in REDUNDANT and COMPACT, nothing in
/// DYNAMIC), and so on until the record fits. Only fields longer than what
/// stays behind plus the reference ([`DYNAMIC_INLINE_MAX`] in DYNAMIC) are
/// candidates; ties go to the first field. If none is left,
/// [`Error::RowTooBig`] (MySQL 1118).
///
/// A record must also be encodable: no inline Variable field, and in
/// REDUNDANT no record's data, may exceed [`MAX_IN_RECORD_LEN`]. That only
/// matters when `max_rec_len` is larger than any page allows, and is treated
/// like size.
pub fn place_long_fields(
    layout: &RecordLayout,
    lens: &[Option<usize>],
    max_rec_len: usize,
) -> Result<Vec<Placement>> {
    if lens.len() != layout.n_fields() {
        return Err(Error::InvalidArgument(format!(
            "{} field lengths given for a record of {} fields",
            lens.len(),
            layout.n_fields()
        )));
    }
    let (local_prefix, candidate_min_len) = match layout.format() {
        RowFormat::Dynamic => (0, DYNAMIC_INLINE_MAX + 1),
        _ => (
            COMPACT_PREFIX_LEN,
            COMPACT_PREFIX_LEN + EXTERNAL_REF_LEN + 1,
        ),
    };
    let mut placements = vec![Placement::Inline; lens.len()];
    loop {
        let size = record_len_with(layout, lens, &placements);
        let encodable = is_encodable(layout, lens, &placements);
        if size <= max_rec_len && encodable {
            return Ok(placements);
        }
        let mut longest: Option<(usize, usize)> = None;
        for (i, (def, len)) in layout.fields().iter().zip(lens).enumerate() {
            let (FieldKind::Variable { long: true, .. }, Some(len), Placement::Inline) =
                (def.kind, *len, placements[i])
            else {
                continue;
            };
            if len >= candidate_min_len && longest.is_none_or(|(_, l)| len > l) {
                longest = Some((i, len));
            }
        }
        let Some((i, _)) = longest else {
            // Unencodable records are longer than MAX_IN_RECORD_LEN, so
            // capping the reported limit keeps "size > max" true.
            let max = if encodable {
                max_rec_len
            } else {
                max_rec_len.min(MAX_IN_RECORD_LEN)
            };
            return Err(Error::RowTooBig { size, max });
        };
        placements[i] = Placement::External { local_prefix };
    }
}

/// Whether every length fits the 14 bits the format stores it in.
fn is_encodable(layout: &RecordLayout, lens: &[Option<usize>], placements: &[Placement]) -> bool {
    let shapes = lens.iter().zip(placements).map(|(len, p)| shape(*len, *p));
    match layout.format() {
        RowFormat::Redundant => {
            let data_len: usize = layout
                .fields()
                .iter()
                .zip(shapes)
                .map(|(def, s)| match s {
                    Shape::Null => def.kind.fixed_len().unwrap_or(0),
                    Shape::Inline(l) | Shape::External(l) => l,
                })
                .sum();
            data_len <= MAX_IN_RECORD_LEN
        }
        _ => layout
            .fields()
            .iter()
            .zip(shapes)
            .all(|(def, s)| match (def.kind, s) {
                (FieldKind::Variable { .. }, Shape::Inline(l) | Shape::External(l)) => {
                    l <= MAX_IN_RECORD_LEN
                }
                _ => true,
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ColumnType, FieldDef};

    /// A clustered-index row: INT primary key, DB_TRX_ID, DB_ROLL_PTR, then
    /// `n_text` nullable TEXT columns.
    fn row_layout(format: RowFormat, n_text: usize) -> RecordLayout {
        let mut fields = vec![
            FieldDef::of(&ColumnType::INT, false),
            FieldDef::not_null(FieldKind::TRX_ID),
            FieldDef::not_null(FieldKind::ROLL_PTR),
        ];
        fields.extend((0..n_text).map(|_| FieldDef::of(&ColumnType::TEXT, true)));
        RecordLayout::new(format, fields)
    }

    /// Half of an empty page's free space, as InnoDB allows a record.
    const MAX_REC: usize = 8126;

    #[test]
    fn reference_round_trips() {
        let r = ExternalRef {
            space: 7,
            page_no: 0xdead_beef,
            offset: 38,
            len: 5 << 33,
        };
        assert_eq!(ExternalRef::decode(&r.encode()).unwrap(), r);
        assert_eq!(r.encode()[..4], [7, 0, 0, 0]);
        assert!(ExternalRef::decode(&[0; 19]).unwrap_err().is_corruption());
    }

    #[test]
    fn small_rows_stay_inline() {
        for format in [RowFormat::Redundant, RowFormat::Compact, RowFormat::Dynamic] {
            let layout = row_layout(format, 2);
            let lens = [Some(4), Some(6), Some(7), Some(3000), None];
            let p = place_long_fields(&layout, &lens, MAX_REC).unwrap();
            assert!(p.iter().all(|p| *p == Placement::Inline), "{format}");
        }
    }

    #[test]
    fn dynamic_moves_whole_columns_and_compact_keeps_prefixes() {
        let lens = [Some(4), Some(6), Some(7), Some(100_000)];
        let compact = row_layout(RowFormat::Compact, 1);
        let p = place_long_fields(&compact, &lens, MAX_REC).unwrap();
        assert_eq!(
            p[3],
            Placement::External {
                local_prefix: COMPACT_PREFIX_LEN
            }
        );
        let compact_len = record_len_with(&compact, &lens, &p);
        assert_eq!(
            compact_len,
            1 + 1 + 2 + 4 + 6 + 7 + COMPACT_PREFIX_LEN + EXTERNAL_REF_LEN
        );

        let dynamic = row_layout(RowFormat::Dynamic, 1);
        let p = place_long_fields(&dynamic, &lens, MAX_REC).unwrap();
        assert_eq!(p[3], Placement::External { local_prefix: 0 });
        let dynamic_len = record_len_with(&dynamic, &lens, &p);
        assert_eq!(dynamic_len, 1 + 1 + 2 + 4 + 6 + 7 + EXTERNAL_REF_LEN);
        assert!(
            dynamic_len * 10 < compact_len,
            "{dynamic_len} vs {compact_len}"
        );
    }

    #[test]
    fn longest_goes_first_and_only_as_many_as_needed() {
        let layout = row_layout(RowFormat::Dynamic, 4);
        let lens = [
            Some(4),
            Some(6),
            Some(7),
            Some(3000),
            Some(5000),
            Some(3000),
            Some(30),
        ];
        let p = place_long_fields(&layout, &lens, MAX_REC).unwrap();
        assert_eq!(
            p[3..],
            [
                Placement::Inline,
                Placement::External { local_prefix: 0 },
                Placement::Inline,
                Placement::Inline,
            ]
        );
        // A tighter limit takes the first of the equally long ones next,
        // and never the 30-byte field.
        let p = place_long_fields(&layout, &lens, 3200).unwrap();
        assert_eq!(p[3], Placement::External { local_prefix: 0 });
        assert_eq!(p[5], Placement::Inline);
        let p = place_long_fields(&layout, &lens, 200).unwrap();
        assert_eq!(p[6], Placement::Inline);
        assert!(record_len_with(&layout, &lens, &p) <= 200);
    }

    /// Twelve 1000-byte TEXT columns: too big for COMPACT, whose 788 local
    /// bytes per column still add up past the limit (MySQL's classic 1118),
    /// but fine for DYNAMIC.
    #[test]
    fn many_long_columns_are_too_big_for_compact_only() {
        let mut lens = vec![Some(4), Some(6), Some(7)];
        lens.extend([Some(1000); 12]);
        let compact = row_layout(RowFormat::Compact, 12);
        let err = place_long_fields(&compact, &lens, MAX_REC).unwrap_err();
        assert_eq!(err.mysql_code(), Some(1118));
        assert!(matches!(err, Error::RowTooBig { size, max: MAX_REC } if size > MAX_REC));
        let redundant = row_layout(RowFormat::Redundant, 12);
        assert!(place_long_fields(&redundant, &lens, MAX_REC).is_err());
        let dynamic = row_layout(RowFormat::Dynamic, 12);
        let p = place_long_fields(&dynamic, &lens, MAX_REC).unwrap();
        assert!(record_len_with(&dynamic, &lens, &p) <= MAX_REC);
    }

    #[test]
    fn short_fixed_fields_cannot_be_moved() {
        let fields = (0..40)
            .map(|_| FieldDef::of(&ColumnType::Char(255), false))
            .collect();
        let layout = RecordLayout::new(RowFormat::Dynamic, fields);
        let lens = vec![Some(255); 40];
        let err = place_long_fields(&layout, &lens, MAX_REC).unwrap_err();
        assert!(
            matches!(
                err,
                Error::RowTooBig {
                    size: 10_201,
                    max: MAX_REC
                }
            ),
            "{err}"
        );
        assert!(place_long_fields(&layout, &lens[..3], MAX_REC).is_err());
    }

    /// With a limit beyond any page, a REDUNDANT record must still keep its
    /// data within the 14-bit end offsets.
    #[test]
    fn unencodable_records_are_split_or_refused() {
        let layout = row_layout(RowFormat::Redundant, 1);
        let lens = [Some(4), Some(6), Some(7), Some(20_000)];
        let p = place_long_fields(&layout, &lens, 1 << 20).unwrap();
        assert!(matches!(p[3], Placement::External { .. }));
        let fixed = RecordLayout::new(
            RowFormat::Redundant,
            (0..70)
                .map(|_| FieldDef::not_null(FieldKind::Fixed(255)))
                .collect(),
        );
        let err = place_long_fields(&fixed, &[Some(255); 70], 1 << 20).unwrap_err();
        assert!(
            matches!(
                err,
                Error::RowTooBig {
                    max: MAX_IN_RECORD_LEN,
                    ..
                }
            ),
            "{err}"
        );
    }
}
