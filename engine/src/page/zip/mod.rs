//! Compressed index pages (ROW_FORMAT=COMPRESSED): the codec between a
//! 16 KiB index page and its image of KEY_BLOCK_SIZE bytes. Mirrors
//! InnoDB's `page0zip.cc`: `page_zip_compress`, `page_zip_decompress`,
//! `page_zip_write_rec`, `page_zip_dir_insert` and `page_zip_dir_delete`,
//! `page_zip_rec_set_deleted`, `page_zip_write_trx_id_and_roll_ptr`,
//! `page_zip_write_node_ptr`, `page_zip_write_blob_ptr`,
//! `page_zip_write_header`, `page_zip_fields_encode` / `_decode`,
//! `page_zip_validate` and `page_zip_calc_checksum`.
//!
//! A compressed page keeps its headers uncompressed, so the B-tree can read
//! its level, links and LSN without inflating it, and keeps uncompressed
//! the bytes that change in place: the dense directory with the delete
//! marks, DB_TRX_ID and DB_ROLL_PTR of every record of a clustered leaf,
//! the child page number of every node pointer, and the 20-byte reference
//! of every column stored off page. Everything else of the records is one
//! zlib stream, written when the page is (re)compressed, followed by the
//! modification log: the records written since, uncompressed.
//!
//! ```text
//! offset                      size  field
//! --------------------------  ----  ---------------------------------------
//! 0                             38  FIL header, as the 16 KiB page's (the
//!                                   checksum is over this image)
//! INDEX_N_SLOTS ..              24  the index page header, as the 16 KiB
//!                                   page's (records, heap top, garbage,
//!                                   level, index id, max trx id)
//! ZIP_STREAM_LEN                 2  bytes of the zlib stream
//! ZIP_N_EXT                      2  off-page references stored below
//! ZIP_STORED                     2  what each record stores below: 0
//!                                   nothing, 1 the child page number,
//!                                   2 + f DB_TRX_ID (field f), DB_ROLL_PTR
//! ZIP_DATA                       s  zlib stream: the fields descriptor, the
//!                                   number of records, then for each
//!                                   record in key order its heap offset
//!                                   (as a difference, below) and its
//!                                   packed bytes
//! ZIP_DATA + s                      modification log: entries [heap offset
//!                                   varint >= 1][packed record], ended by a
//!                                   zero byte; the latest entry for an
//!                                   offset wins
//! ...                               free, all zeros
//! ext_start                  20*e   off-page references, record by record
//!                                   in key order, each record's in field
//!                                   order
//! stored_start               u*n    per record in key order: DB_TRX_ID and
//!                                   DB_ROLL_PTR (u = 13, clustered leaf),
//!                                   the child page number (u = 4, node
//!                                   pointer), or nothing (u = 0)
//! size - 2n                   2*n   dense directory: per record in key
//!                                   order its heap offset on the 16 KiB
//!                                   page, 0x8000 if delete-marked
//! ```
//!
//! A record's heap offset in the stream is the zigzag varint of its
//! difference from the end of the record before it in the stream (from 0
//! for the first): the directory below holds the offsets too, but in the
//! order of the records now on the page, not of those compressed. On a
//! page filled in key order every difference is 0, so that, as in
//! InnoDB's stream (which has no offsets), the bytes between two similar
//! records are all alike and zlib codes each record as one long match;
//! an absolute offset, different in every record, broke that match twice
//! a record and cost a 1 KiB page a fifth of its records.
//!
//! A packed record is `[length][header length][kept data length]` (three
//! varints), the header with its delete mark cleared (the directory holds
//! it), then the data without the bytes stored below. Decompression puts
//! every record back at its heap offset, so the 16 KiB page it rebuilds
//! has the same directory and the same records at the same places as the
//! one compressed; only the bytes of removed records (garbage) are zeros.
//!
//! The fields descriptor at the head of the stream describes the records
//! (InnoDB's `page_zip_fields_encode`), so a page decompresses without the
//! dictionary: recovery and CHECK TABLE need nothing but the image.

use super::index::{self, INDEX_N_SLOTS};
use super::{get_u16, get_u32, put_u16, put_u32, PageId, PageState, PageType, FIL_PAGE_DATA_END};
use super::{FIL_PAGE_CHECKSUM, FIL_PAGE_OFFSET, FIL_PAGE_SPACE_ID, FIL_PAGE_TYPE, PAGE_SIZE};
use crate::error::{Error, Result};
use crate::mach::put_varint;
pub use crate::mach::{is_zip_size, zip_size_of, ZIP_SIZES};
use crate::record::{
    FieldDef, FieldKind, RecordLayout, RecordView, RowFormat, CHILD_PAGE_NO_LEN, DATA_ROLL_PTR_LEN,
    DATA_TRX_ID_LEN, EXTERNAL_REF_LEN, INFO_DELETED_FLAG,
};
use rustc_hash::FxHashMap;

mod pack;
mod stream;
mod write;

use pack::{pack, packed_of, read_packed, unpack, unzigzag, zigzag, Packed, Reader};
use stream::{deflate, inflate};
pub use stream::{deflate_column, inflate_column};

/// The compression level when `innodb_compression_level` is not set.
pub const DEFAULT_LEVEL: u32 = 6;
/// The highest zlib level.
pub const MAX_LEVEL: u32 = 9;

/// Offset of the zlib stream's length.
pub const ZIP_STREAM_LEN: usize = index::INDEX_SLOTS;
/// Offset of the number of off-page references stored uncompressed.
pub const ZIP_N_EXT: usize = ZIP_STREAM_LEN + 2;
/// Offset of the stored-columns kind (found without inflating the stream).
pub const ZIP_STORED: usize = ZIP_N_EXT + 2;
/// Where the zlib stream starts.
pub const ZIP_DATA: usize = ZIP_STORED + 2;

/// `page_zip_empty_size` (page0zip.ic): the room an empty compressed page
/// of `zip_size` bytes has for records of an index of `n_fields` fields,
/// in InnoDB's accounting: the page less its header (PAGE_DATA, 94), the
/// uncompressed part one record needs (a 2-byte directory slot, DB_TRX_ID
/// and DB_ROLL_PTR, its heap number and the end of the modification log,
/// less the 5 header bytes a compressed record omits), and the zlib bound
/// (`compressBound`) of the encoded fields descriptor.
pub fn empty_size(n_fields: usize, zip_size: usize) -> usize {
    let compress_bound = |n: usize| n + (n >> 12) + (n >> 14) + (n >> 25) + 13;
    let fixed = 94 + 2 + 6 + 7 + 1 + 1 - 5;
    zip_size
        .saturating_sub(fixed)
        .saturating_sub(compress_bound(2 * (n_fields + 1)))
}
/// A directory entry's delete mark.
const DIR_DELETED: u16 = 0x8000;
/// A directory entry's heap offset (every offset is below 2^14).
const DIR_OFFSET: u16 = 0x3fff;
const _: () = assert!(PAGE_SIZE <= DIR_OFFSET as usize + 1);
/// DB_TRX_ID and DB_ROLL_PTR together.
pub const TRX_ROLL_LEN: usize = (DATA_TRX_ID_LEN + DATA_ROLL_PTR_LEN) as usize;

/// Checks an `innodb_compression_level`.
pub fn check_level(level: u32) -> Result<u32> {
    if level <= MAX_LEVEL {
        Ok(level)
    } else {
        Err(Error::InvalidArgument(format!(
            "Variable 'innodb_compression_level' can't be set to the value of '{level}'"
        )))
    }
}

/// What a page's records keep uncompressed besides their off-page
/// references: it depends on the index and the level, as in InnoDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// Nothing: a secondary index's leaf.
    Nothing,
    /// DB_TRX_ID and DB_ROLL_PTR, fields `trx_id_field` and the one after
    /// it: a clustered index's leaf.
    TrxRollPtr {
        /// The field number of DB_TRX_ID.
        trx_id_field: u16,
    },
    /// The child page number, the last field: a node pointer page.
    ChildPageNo,
}

impl Stored {
    /// Bytes stored per record.
    pub fn len(self) -> usize {
        match self {
            Stored::Nothing => 0,
            Stored::TrxRollPtr { .. } => TRX_ROLL_LEN,
            Stored::ChildPageNo => CHILD_PAGE_NO_LEN as usize,
        }
    }

    /// Whether nothing is stored per record.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    fn to_u16(self) -> u16 {
        match self {
            Stored::Nothing => 0,
            Stored::ChildPageNo => 1,
            Stored::TrxRollPtr { trx_id_field } => 2 + trx_id_field,
        }
    }

    fn from_u16(v: u16) -> std::result::Result<Stored, String> {
        match v {
            0 => Ok(Stored::Nothing),
            1 => Ok(Stored::ChildPageNo),
            v if usize::from(v - 2) < crate::record::REC_MAX_N_FIELDS => Ok(Stored::TrxRollPtr {
                trx_id_field: v - 2,
            }),
            v => Err(format!("stored-columns kind {v}")),
        }
    }

    /// The field that starts the stored bytes of a record of `n` fields.
    fn field(self, n: usize) -> Option<usize> {
        match self {
            Stored::Nothing => None,
            Stored::TrxRollPtr { trx_id_field } => Some(usize::from(trx_id_field)),
            Stored::ChildPageNo => n.checked_sub(1),
        }
    }
}

/// The records' layout as a compressed page describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipFields {
    layout: RecordLayout,
    stored: Stored,
}

impl ZipFields {
    /// The description of a page holding records of `layout`, keeping
    /// `stored` uncompressed; [`Error::InvalidArgument`] unless the layout
    /// is COMPACT-style (a compressed table's records are DYNAMIC) and the
    /// stored fields are where and what `stored` says.
    pub fn new(layout: RecordLayout, stored: Stored) -> Result<ZipFields> {
        let bad = |why: String| Err(Error::InvalidArgument(why));
        if !layout.format().is_compact_layout() {
            return bad(format!("{} records cannot be compressed", layout.format()));
        }
        let fields = layout.fields();
        match stored {
            Stored::Nothing => {}
            Stored::TrxRollPtr { trx_id_field } => {
                let i = usize::from(trx_id_field);
                let ok = fields.get(i) == Some(&FieldDef::not_null(FieldKind::TRX_ID))
                    && fields.get(i + 1) == Some(&FieldDef::not_null(FieldKind::ROLL_PTR));
                if !ok {
                    return bad(format!(
                        "fields {i} and {} are not DB_TRX_ID, DB_ROLL_PTR",
                        i + 1
                    ));
                }
            }
            Stored::ChildPageNo => {
                if fields.last() != Some(&FieldDef::not_null(FieldKind::CHILD_PAGE_NO)) {
                    return bad("the last field is not a child page number".into());
                }
            }
        }
        Ok(ZipFields { layout, stored })
    }

    /// The records' layout.
    pub fn layout(&self) -> &RecordLayout {
        &self.layout
    }

    /// What each record keeps uncompressed.
    pub fn stored(&self) -> Stored {
        self.stored
    }

    /// `page_zip_fields_encode`: the format, then each field's shape.
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(match self.layout.format() {
            RowFormat::Dynamic => 2,
            _ => 1,
        });
        match self.stored {
            Stored::Nothing => out.push(0),
            Stored::TrxRollPtr { trx_id_field } => {
                out.push(1);
                put_varint(out, u64::from(trx_id_field));
            }
            Stored::ChildPageNo => out.push(2),
        }
        put_varint(out, self.layout.n_fields() as u64);
        for def in self.layout.fields() {
            let nullable = u8::from(def.nullable);
            match def.kind {
                FieldKind::Fixed(n) => {
                    out.push(nullable);
                    put_varint(out, u64::from(n));
                }
                FieldKind::Variable { max_len, long } => {
                    out.push(nullable | 2 | if long { 4 } else { 0 });
                    put_varint(out, u64::from(max_len));
                }
            }
        }
    }

    /// `page_zip_fields_decode`.
    fn decode(r: &mut Reader<'_>) -> std::result::Result<ZipFields, String> {
        let format = match r.byte()? {
            1 => RowFormat::Compact,
            2 => RowFormat::Dynamic,
            f => {
                return Err(format!(
                    "unknown record format {f} in the fields descriptor"
                ))
            }
        };
        let stored = match r.byte()? {
            0 => Stored::Nothing,
            1 => Stored::TrxRollPtr {
                trx_id_field: u16::try_from(r.varint()?).map_err(|_| "DB_TRX_ID field number")?,
            },
            2 => Stored::ChildPageNo,
            s => return Err(format!("unknown stored-columns kind {s}")),
        };
        let n = r.varint()?;
        if n > crate::record::REC_MAX_N_FIELDS as u64 {
            return Err(format!("{n} fields in the descriptor"));
        }
        let mut fields = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let flags = r.byte()?;
            let len = r.varint()?;
            if flags & !7 != 0 {
                return Err(format!("field flags {flags:#x}"));
            }
            let kind = if flags & 2 == 0 {
                FieldKind::Fixed(u16::try_from(len).map_err(|_| "fixed length")?)
            } else {
                FieldKind::Variable {
                    max_len: u32::try_from(len).map_err(|_| "maximum length")?,
                    long: flags & 4 != 0,
                }
            };
            fields.push(FieldDef::new(kind, flags & 1 != 0));
        }
        let layout = RecordLayout::try_new(format, fields).map_err(|e| e.to_string())?;
        ZipFields::new(layout, stored).map_err(|e| e.to_string())
    }

    /// The byte ranges of `view` kept uncompressed below the stream, in
    /// order: the stored fields (one range, marked `true`) and each
    /// off-page reference.
    fn elided(&self, view: &RecordView<'_>, out: &mut Vec<(std::ops::Range<usize>, bool)>) {
        out.clear();
        let stored = self.stored.field(view.n_fields());
        for i in 0..view.n_fields() {
            if Some(i) == stored {
                let r = view.field_range(i);
                out.push((r.start..r.start + self.stored.len(), true));
            }
            if view.is_external(i) {
                let r = view.field_range(i);
                out.push((r.end - EXTERNAL_REF_LEN..r.end, false));
            }
        }
    }
}

/// A compressed page that does not decompress, or a compressed image that
/// is not one: the reason, for the caller to name its file and page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipCorrupt(pub String);

impl ZipCorrupt {
    /// The engine's corruption error for the page `page_no` of `file`.
    pub fn at(self, file: &str, page_no: u32) -> Error {
        Error::CorruptPage {
            file: file.to_string(),
            page_no,
            reason: format!("compressed page: {}", self.0),
        }
    }
}

impl From<String> for ZipCorrupt {
    fn from(s: String) -> Self {
        ZipCorrupt(s)
    }
}

impl From<&str> for ZipCorrupt {
    fn from(s: &str) -> Self {
        ZipCorrupt(s.to_string())
    }
}

/// A result whose error is a reason the page is corrupt.
pub type ZipResult<T> = std::result::Result<T, ZipCorrupt>;

/// The number of off-page references of a record of `fields`.
pub fn ext_count(fields: &ZipFields, rec: &[u8]) -> Result<usize> {
    let view = RecordView::parse(&fields.layout, rec)?;
    Ok((0..view.n_fields())
        .filter(|&i| view.is_external(i))
        .count())
}

/// A compressed page image and what InnoDB keeps beside it in memory
/// (`page_zip_des_t`): where its modification log ends.
///
/// The image is owned (`Vec<u8>`: a page just compressed, read or taken
/// from the log) or borrowed from the buffer pool's buddy allocator
/// (`&mut [u8]`, `ZipMut` of the buffer pool), where compressed pages live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipPage<D = Vec<u8>> {
    data: D,
    /// The first byte after the modification log (its terminating zero).
    m_end: usize,
}

/// A compressed page and the records' layout its descriptor gave when it
/// was compressed or decompressed, owned (the buffer pool keeps the image
/// in its buddy allocator and the layout in the page's descriptor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipFrame {
    /// The image.
    pub page: ZipPage,
    /// The layout of its records.
    pub fields: ZipFields,
}

/// The three arrays below the free space, as read from an image.
struct Tail {
    refs: Vec<u8>,
    stored: Vec<u8>,
    dir: Vec<u16>,
}

impl ZipPage {
    /// `page_zip_compress`: compresses the index page `frame`, whose
    /// records are of `fields`, into an image of `size` bytes at zlib
    /// `level`; `None` when the result does not fit (the caller then
    /// reorganizes or splits the page).
    pub fn compress(
        frame: &[u8],
        fields: &ZipFields,
        size: usize,
        level: u32,
    ) -> Result<Option<ZipPage>> {
        Self::compress_inner(frame, fields, size, level, false)
    }

    /// The `zip-count-failed-compression` canary's compression: a stream
    /// too long for the page is cut to fit (`None` only when the
    /// uncompressed columns alone do not fit).
    pub fn compress_cut_to_fit(
        frame: &[u8],
        fields: &ZipFields,
        size: usize,
        level: u32,
    ) -> Result<Option<ZipPage>> {
        Self::compress_inner(frame, fields, size, level, true)
    }

    fn compress_inner(
        frame: &[u8],
        fields: &ZipFields,
        size: usize,
        level: u32,
        cut: bool,
    ) -> Result<Option<ZipPage>> {
        if !is_zip_size(size) {
            return Err(Error::InvalidArgument(format!(
                "compressed page size {size}"
            )));
        }
        check_level(level)?;
        assert_eq!(frame.len(), PAGE_SIZE, "an uncompressed frame");
        let n = index::n_recs(frame);
        let mut input = Vec::with_capacity(PAGE_SIZE);
        fields.encode(&mut input);
        put_varint(&mut input, n as u64);
        let mut refs = Vec::new();
        let mut stored = Vec::with_capacity(n * fields.stored.len());
        let mut dir = Vec::with_capacity(n);
        let mut elided = Vec::new();
        let mut expected = 0;
        for slot in 0..n {
            let rec = index::rec(frame, slot);
            let view = RecordView::parse(&fields.layout, rec)?;
            let off = index::rec_offset(frame, slot);
            dir.push(off as u16 | if view.is_deleted() { DIR_DELETED } else { 0 });
            put_varint(&mut input, zigzag(off as i64 - expected as i64));
            expected = off + 2 + rec.len();
            fields.elided(&view, &mut elided);
            pack(rec, &view, &elided, &mut input, &mut stored, &mut refs);
        }
        let mut stream = deflate(&input, level);
        let tail_len = refs.len() + stored.len() + 2 * n;
        if cut {
            let room = size.saturating_sub(ZIP_DATA + 1 + tail_len);
            stream.truncate(room.min(usize::from(u16::MAX)));
        }
        if ZIP_DATA + stream.len() + 1 + tail_len > size || stream.len() > usize::from(u16::MAX) {
            return Ok(None);
        }
        let mut data = vec![0u8; size];
        data[..ZIP_STREAM_LEN].copy_from_slice(&frame[..ZIP_STREAM_LEN]);
        put_u16(&mut data, ZIP_STREAM_LEN, stream.len() as u16);
        put_u16(&mut data, ZIP_N_EXT, (refs.len() / EXTERNAL_REF_LEN) as u16);
        put_u16(&mut data, ZIP_STORED, fields.stored.to_u16());
        data[ZIP_DATA..ZIP_DATA + stream.len()].copy_from_slice(&stream);
        let mut page = ZipPage {
            data,
            m_end: ZIP_DATA + stream.len(),
        };
        page.put_tail(&Tail { refs, stored, dir });
        Ok(Some(page))
    }

    /// An image read from disk or from the redo log, checked enough to
    /// find its modification log's end (decompressing it checks the rest).
    pub fn from_image(data: Vec<u8>) -> ZipResult<ZipPage> {
        if !is_zip_size(data.len()) {
            return Err(format!("image of {} bytes", data.len()).into());
        }
        if get_u16(&data, FIL_PAGE_TYPE) != PageType::Index as u16 {
            return Err("not an index page".into());
        }
        let mut page = ZipPage { data, m_end: 0 };
        let stream_end = ZIP_DATA + usize::from(get_u16(&page.data, ZIP_STREAM_LEN));
        let ext_start = page.ext_start()?;
        if stream_end >= ext_start {
            return Err(format!(
                "stream of {} bytes overlaps the columns below",
                stream_end - ZIP_DATA
            )
            .into());
        }
        let mut r = Reader {
            bytes: &page.data[..ext_start],
            pos: stream_end,
        };
        loop {
            let at = r.pos;
            if page.data.get(at) == Some(&0) {
                page.m_end = at;
                break;
            }
            if r.varint()? == 0 {
                return Err(format!("a non-canonical log terminator at {at}").into());
            }
            read_packed(&mut r)?;
        }
        // The free space is zeros, so that the log's next entry and its new
        // terminator are all that a write changes.
        if page.data[page.m_end..ext_start].iter().any(|&b| b != 0) {
            return Err("bytes in the free space after the log".into());
        }
        Ok(page)
    }
}

impl<D: AsRef<[u8]>> ZipPage<D> {
    /// A page whose image and log end the buffer pool kept, trusted as
    /// they were when first built or read.
    pub(crate) fn from_parts(data: D, m_end: usize) -> ZipPage<D> {
        ZipPage { data, m_end }
    }

    /// Where the modification log ends (its terminator).
    pub(crate) fn m_end(&self) -> usize {
        self.m_end
    }

    fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// The `zip-skip-mod-log` canary: `image` (a copy of this page's)
    /// without the modification log.
    pub fn clear_mod_log(&self, image: &mut [u8]) {
        let stream_end = ZIP_DATA + usize::from(get_u16(self.bytes(), ZIP_STREAM_LEN));
        image[stream_end..self.m_end].fill(0);
    }

    /// The image.
    pub fn image(&self) -> &[u8] {
        self.bytes()
    }

    /// The physical page size.
    pub fn size(&self) -> usize {
        self.bytes().len()
    }

    /// Records on the page.
    pub fn n_recs(&self) -> usize {
        usize::from(get_u16(self.bytes(), INDEX_N_SLOTS))
    }

    /// Bytes of the modification log, its terminator excluded.
    pub fn log_len(&self) -> usize {
        self.m_end - ZIP_DATA - usize::from(get_u16(self.bytes(), ZIP_STREAM_LEN))
    }

    /// Free bytes between the modification log and the columns below.
    pub fn free(&self) -> usize {
        // ext_start was checked when the page was built or read.
        self.ext_start()
            .map_or(0, |e| e.saturating_sub(self.m_end + 1))
    }

    /// Where the references start, from the header's counts.
    fn ext_start(&self) -> ZipResult<usize> {
        let n = self.n_recs();
        let n_ext = usize::from(get_u16(self.bytes(), ZIP_N_EXT));
        let u = self.stored_len()?;
        let below = 2 * n + u * n + EXTERNAL_REF_LEN * n_ext;
        self.bytes()
            .len()
            .checked_sub(below)
            .filter(|&s| s > ZIP_DATA)
            .ok_or_else(|| format!("{n} records and {n_ext} references do not fit the page").into())
    }

    /// Bytes stored per record.
    fn stored_len(&self) -> ZipResult<usize> {
        Ok(self.stored_kind()?.len())
    }

    /// What each record stores below the free space.
    fn stored_kind(&self) -> ZipResult<Stored> {
        Ok(Stored::from_u16(get_u16(self.bytes(), ZIP_STORED))?)
    }

    fn tail(&self) -> ZipResult<Tail> {
        let n = self.n_recs();
        let u = self.stored_len()?;
        let ext_start = self.ext_start()?;
        let stored_start =
            ext_start + EXTERNAL_REF_LEN * usize::from(get_u16(self.bytes(), ZIP_N_EXT));
        let dir_start = stored_start + u * n;
        Ok(Tail {
            refs: self.bytes()[ext_start..stored_start].to_vec(),
            stored: self.bytes()[stored_start..dir_start].to_vec(),
            dir: (0..n)
                .map(|k| get_u16(self.bytes(), dir_start + 2 * k))
                .collect(),
        })
    }

    /// [`ZipPage::tail`] for a change: a page that cannot give its tail
    /// is corruption.
    fn tail_checked(&self) -> Result<Tail> {
        self.tail().map_err(|c| Error::Corrupt {
            file: "zip".into(),
            reason: c.0,
        })
    }

    /// `page_zip_decompress`: rebuilds the 16 KiB page into `frame` and
    /// gives the records' layout. On an error `frame` holds a partly
    /// rebuilt page, which the caller must not use.
    pub fn decompress(&self, frame: &mut [u8]) -> ZipResult<ZipFields> {
        assert_eq!(frame.len(), PAGE_SIZE, "an uncompressed frame");
        let stream_len = usize::from(get_u16(self.bytes(), ZIP_STREAM_LEN));
        let stream = self
            .bytes()
            .get(ZIP_DATA..ZIP_DATA + stream_len)
            .ok_or("the stream runs past the page")?;
        let input = inflate(stream)?;
        let mut r = Reader {
            bytes: &input,
            pos: 0,
        };
        let fields = ZipFields::decode(&mut r)?;
        if fields.stored != self.stored_kind()? {
            return Err("the descriptor and the header disagree on the stored columns".into());
        }
        // The latest packed bytes of each heap offset: the stream's, then
        // the log's over them.
        let mut latest: FxHashMap<u16, Packed<'_>> = FxHashMap::default();
        let n_stream = r.varint()?;
        let mut expected = 0i64;
        for _ in 0..n_stream {
            let off = expected + unzigzag(r.varint()?);
            let off = u16::try_from(off).map_err(|_| format!("heap offset {off}"))?;
            let p = read_packed(&mut r)?;
            expected = i64::from(off) + 2 + p.len as i64;
            latest.insert(off, p);
        }
        if r.pos != input.len() {
            return Err("bytes after the stream's last record".into());
        }
        let ext_start = self.ext_start()?;
        let mut log = Reader {
            bytes: &self.bytes()[..ext_start],
            pos: ZIP_DATA + stream_len,
        };
        loop {
            if self.bytes().get(log.pos) == Some(&0) {
                break;
            }
            let off = log.varint()?;
            if off == 0 {
                return Err("a non-canonical log terminator".into());
            }
            let off = u16::try_from(off).map_err(|_| "heap offset in the log")?;
            latest.insert(off, read_packed(&mut log)?);
        }
        let tail = self.tail()?;
        frame.fill(0);
        frame[..ZIP_STREAM_LEN].copy_from_slice(&self.bytes()[..ZIP_STREAM_LEN]);
        let u = fields.stored.len();
        let mut refs: &[u8] = &tail.refs;
        let top = get_u16(frame, index::INDEX_HEAP_TOP) as usize;
        for (k, &e) in tail.dir.iter().enumerate() {
            if e & !(DIR_OFFSET | DIR_DELETED) != 0 {
                return Err(format!("directory entry {k} is {e:#06x}").into());
            }
            let off = e & DIR_OFFSET;
            let p = latest
                .get(&off)
                .ok_or_else(|| format!("no record for heap offset {off}"))?;
            let rec = unpack(
                &fields,
                p,
                e & DIR_DELETED != 0,
                &tail.stored[u * k..u * (k + 1)],
                &mut refs,
            )?;
            let off = usize::from(off);
            if off < top.max(index::INDEX_SLOTS + 2 * tail.dir.len())
                || off + 2 + rec.len() > FIL_PAGE_DATA_END
            {
                return Err(format!("record at {off} lies outside the heap").into());
            }
            put_u16(frame, off, rec.len() as u16);
            frame[off + 2..off + 2 + rec.len()].copy_from_slice(&rec);
            put_u16(frame, index::INDEX_SLOTS + 2 * k, off as u16);
        }
        if !refs.is_empty() {
            return Err(format!("{} bytes of references belong to no record", refs.len()).into());
        }
        index::check_structure(frame).map_err(|why| format!("rebuilt page: {why}"))?;
        Ok(fields)
    }

    /// Bytes of references held by the records before `slot` in `frame`.
    fn refs_before(&self, fields: &ZipFields, frame: &[u8], slot: usize) -> Result<usize> {
        self.refs_in(fields, frame, 0..slot)
    }

    /// Bytes of references held by the records from `slot` on in `frame`.
    fn refs_from(&self, fields: &ZipFields, frame: &[u8], slot: usize) -> Result<usize> {
        self.refs_in(fields, frame, slot..index::n_recs(frame))
    }

    fn refs_in(
        &self,
        fields: &ZipFields,
        frame: &[u8],
        slots: std::ops::Range<usize>,
    ) -> Result<usize> {
        let long = |d: &FieldDef| matches!(d.kind, FieldKind::Variable { long: true, .. });
        if !fields.layout.fields().iter().any(long) {
            return Ok(0);
        }
        let mut n = 0;
        for s in slots {
            n += ext_count(fields, index::rec(frame, s))?;
        }
        Ok(n * EXTERNAL_REF_LEN)
    }
}

/// `page_zip_calc_checksum`: crc32 of the image after the checksum field.
pub fn checksum(zip: &[u8]) -> u32 {
    crc32fast::hash(&zip[FIL_PAGE_OFFSET..])
}

/// Completes a compressed image for writing: its checksum.
pub fn seal(zip: &mut [u8]) {
    let sum = checksum(zip);
    put_u32(zip, FIL_PAGE_CHECKSUM, sum);
}

/// Checks a compressed image read from `file` at the position of `id`:
/// checksum, page number, space id and type, as [`super::validate`] does
/// for a 16 KiB page. A torn or bit-rotted image fails the checksum.
pub fn validate(zip: &[u8], id: PageId, file: &str) -> Result<PageState> {
    let corrupt = |reason: String| Error::CorruptPage {
        file: file.to_string(),
        page_no: id.page_no,
        reason,
    };
    if !is_zip_size(zip.len()) {
        return Err(corrupt(format!("compressed page of {} bytes", zip.len())));
    }
    if super::is_all_zero(zip) {
        return Ok(PageState::Zero);
    }
    let (stored, computed) = (get_u32(zip, FIL_PAGE_CHECKSUM), checksum(zip));
    if stored != computed {
        return Err(corrupt(format!(
            "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"
        )));
    }
    let page_no = get_u32(zip, FIL_PAGE_OFFSET);
    if page_no != id.page_no {
        return Err(corrupt(format!(
            "page holds page number {page_no}: a misdirected write"
        )));
    }
    let space = get_u32(zip, FIL_PAGE_SPACE_ID);
    if space != id.space {
        return Err(corrupt(format!(
            "page belongs to space {space}, not {}: a misdirected write",
            id.space
        )));
    }
    if PageType::from_u16(super::page_type_raw(zip)).is_none() {
        return Err(corrupt(format!(
            "unknown page type {}",
            super::page_type_raw(zip)
        )));
    }
    Ok(PageState::Valid)
}

/// `page_zip_validate`: whether `zip` decompresses to what `frame` holds:
/// the same headers, directory and records (garbage bytes aside).
pub fn validate_against<D: AsRef<[u8]>>(
    zip: &ZipPage<D>,
    frame: &[u8],
) -> std::result::Result<(), String> {
    let mut rebuilt = vec![0u8; PAGE_SIZE];
    zip.decompress(&mut rebuilt).map_err(|c| c.0)?;
    if rebuilt[FIL_PAGE_OFFSET..ZIP_STREAM_LEN] != frame[FIL_PAGE_OFFSET..ZIP_STREAM_LEN] {
        return Err("headers differ".into());
    }
    for slot in 0..index::n_recs(frame) {
        if index::rec_offset(&rebuilt, slot) != index::rec_offset(frame, slot) {
            return Err(format!("slot {slot} points elsewhere"));
        }
        if index::rec(&rebuilt, slot) != index::rec(frame, slot) {
            return Err(format!("record in slot {slot} differs"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
