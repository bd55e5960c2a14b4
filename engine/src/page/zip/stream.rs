//! The zlib streams: deflate and inflate, each through one reset stream
//! per thread (InnoDB's `page_zip_compress` and `page_zip_decompress` set
//! one up per page on their memory heap), deflate with a memo of its last
//! few inputs so that a page compressed after its trial costs a comparison,
//! inflate with a memo of the streams it inflated lately (pages read again,
//! long columns scanned again), and the streams of long columns on ZBLOB pages
//! (`btr_store_big_rec_extern_fields`, `btr_copy_zblob_prefix`).

use super::*;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

thread_local! {
    /// The deflate stream of the last compression on this thread and its
    /// level, reset for the next: a stream's state is some 300 KiB that a
    /// new one allocates and zeroes, which cost a sixth of a compressed
    /// table's load (InnoDB's `page_zip_compress` sets one up per page on
    /// its memory heap, which it does not zero). A reset stream deflates
    /// exactly as a new one.
    static DEFLATE: std::cell::RefCell<Option<(u32, Compress)>> =
        const { std::cell::RefCell::new(None) };
}

/// A compression [`deflate`] remembers: level, input, stream.
type Deflated = (u32, Vec<u8>, Vec<u8>);

/// How many compressions [`deflate`] remembers, newest first.
const DEFLATE_MEMO: usize = 16;

thread_local! {
    /// The last few inputs [`deflate`] compressed on this thread, with their
    /// level and stream. A B-tree on compressed pages asks whether a page
    /// would compress before it builds it (will the merged page fit, will
    /// both halves of a split), then compresses the page it built, whose
    /// records, and so whose deflate input, are the trial's: the second
    /// compression is a comparison and a copy. Deflate is a function of its
    /// input and level, so the stream is the same either way.
    static DEFLATED: std::cell::RefCell<std::collections::VecDeque<Deflated>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// `input` deflated at `level`: a remembered stream if this thread
/// compressed the same input at the same level lately.
pub(super) fn deflate(input: &[u8], level: u32) -> Vec<u8> {
    let hit = DEFLATED.with(|memo| {
        let mut memo = memo.borrow_mut();
        let at = memo
            .iter()
            .position(|(l, i, _)| *l == level && i.as_slice() == input)?;
        let entry = memo.remove(at)?;
        let stream = entry.2.clone();
        memo.push_front(entry);
        Some(stream)
    });
    if let Some(stream) = hit {
        return stream;
    }
    let stream = deflate_afresh(input, level);
    DEFLATED.with(|memo| {
        let mut memo = memo.borrow_mut();
        if memo.len() == DEFLATE_MEMO {
            memo.pop_back();
        }
        memo.push_front((level, input.to_vec(), stream.clone()));
    });
    stream
}

/// `input` deflated at `level`, by this thread's reset stream.
pub(super) fn deflate_afresh(input: &[u8], level: u32) -> Vec<u8> {
    DEFLATE.with(|cell| {
        let mut cached = cell.borrow_mut();
        let c = match &mut *cached {
            Some((l, c)) if *l == level => {
                c.reset();
                c
            }
            slot => {
                &mut slot
                    .insert((level, Compress::new(Compression::new(level), true)))
                    .1
            }
        };
        let mut out = Vec::with_capacity(input.len() + 64);
        loop {
            let status = c
                .compress_vec(
                    &input[c.total_in() as usize..],
                    &mut out,
                    FlushCompress::Finish,
                )
                .expect("deflate on a vector with room cannot fail");
            match status {
                Status::StreamEnd => return out,
                Status::Ok | Status::BufError => out.reserve(out.capacity().max(1024)),
            }
        }
    })
}

/// Inflates a stream that must end within `stream` and hold at most what a
/// 16 KiB page's records can pack to.
pub(super) fn inflate(stream: &[u8]) -> ZipResult<Vec<u8>> {
    remembered(
        &PAGES,
        stream,
        |_| true,
        || inflate_limited(stream, 2 * PAGE_SIZE - 1, PAGE_SIZE, "any page"),
    )
}

/// Inflates a zlib stream that must end exactly at the end of `stream`
/// and give at most `limit` bytes (`what` names the limit in the error),
/// starting with room for `capacity`: a limit read from disk is not
/// trusted for an allocation, which grows as the stream gives bytes.
pub(super) fn inflate_limited(
    stream: &[u8],
    limit: usize,
    capacity: usize,
    what: &str,
) -> ZipResult<Vec<u8>> {
    // This thread's inflate stream, reset for this one (a new stream's
    // state and window are allocated afresh; a reset one inflates alike).
    let mut d = INFLATE
        .with(|cell| cell.borrow_mut().take())
        .map(|mut d| {
            d.reset(true);
            d
        })
        .unwrap_or_else(|| Decompress::new(true));
    let result = inflate_with(&mut d, stream, limit, capacity, what);
    INFLATE.with(|cell| *cell.borrow_mut() = Some(d));
    result
}

thread_local! {
    /// The inflate stream of the last decompression on this thread.
    static INFLATE: std::cell::RefCell<Option<Decompress>> =
        const { std::cell::RefCell::new(None) };
}

/// [`inflate_limited`] with the stream `d`, freshly reset.
fn inflate_with(
    d: &mut Decompress,
    stream: &[u8],
    limit: usize,
    capacity: usize,
    what: &str,
) -> ZipResult<Vec<u8>> {
    let mut out = Vec::with_capacity(capacity);
    loop {
        let before = (d.total_in(), d.total_out());
        let status = d
            .decompress_vec(
                &stream[d.total_in() as usize..],
                &mut out,
                FlushDecompress::Finish,
            )
            .map_err(|e| format!("zlib: {e}"))?;
        match status {
            Status::StreamEnd => break,
            _ if out.len() > limit => return Err(format!("the stream inflates past {what}").into()),
            _ if (d.total_in(), d.total_out()) == before && out.len() < out.capacity() => {
                return Err("the stream is truncated".into())
            }
            _ => out.reserve(
                limit
                    .saturating_add(1)
                    .saturating_sub(out.len())
                    .min(1 << 20),
            ),
        }
    }
    if d.total_in() as usize != stream.len() {
        return Err("bytes after the zlib stream's end".into());
    }
    Ok(out)
}

/// A long column of a compressed table deflated at `level`: the stream its
/// ZBLOB pages hold (`btr_store_big_rec_extern_fields`).
pub fn deflate_column(data: &[u8], level: u32) -> Vec<u8> {
    deflate_afresh(data, level)
}

/// Streams inflated lately on this thread and what they inflated to, by
/// a hash of the stream, within a budget of bytes (past it, the memo
/// forgets everything and starts again). Inflate is a function of the
/// stream, so a remembered output is the one inflating again would give;
/// a hit costs a hash and a comparison of the stream and a copy.
struct InflateMemo {
    by_hash: rustc_hash::FxHashMap<u64, (Vec<u8>, Vec<u8>)>,
    bytes: usize,
    budget: usize,
}

impl InflateMemo {
    const fn new(budget: usize) -> InflateMemo {
        InflateMemo {
            by_hash: std::collections::HashMap::with_hasher(rustc_hash::FxBuildHasher),
            bytes: 0,
            budget,
        }
    }
}

thread_local! {
    /// Long columns of compressed tables: a scan reads every long column
    /// each time it passes its row, while a column's stream changes only
    /// when the column is written.
    static COLUMNS: std::cell::RefCell<InflateMemo> =
        const { std::cell::RefCell::new(InflateMemo::new(8 << 20)) };
    /// Compressed pages' streams: a page read again after its frame was
    /// evicted, or after a crash by recovery and then by the checks, holds
    /// the stream it held.
    static PAGES: std::cell::RefCell<InflateMemo> =
        const { std::cell::RefCell::new(InflateMemo::new(4 << 20)) };
}

/// `stream` inflated: from `memo` if it remembers the stream and the
/// output passes `fits`, else by `afresh` (remembered when it succeeds).
fn remembered(
    memo: &'static std::thread::LocalKey<std::cell::RefCell<InflateMemo>>,
    stream: &[u8],
    fits: impl Fn(&[u8]) -> bool,
    afresh: impl FnOnce() -> ZipResult<Vec<u8>>,
) -> ZipResult<Vec<u8>> {
    use std::hash::BuildHasher;
    let hash = rustc_hash::FxBuildHasher.hash_one(stream);
    let hit = memo.with(|memo| {
        let memo = memo.borrow();
        let (s, out) = memo.by_hash.get(&hash)?;
        (s.as_slice() == stream && fits(out)).then(|| out.clone())
    });
    if let Some(out) = hit {
        return Ok(out);
    }
    let out = afresh()?;
    memo.with(|memo| {
        let mut memo = memo.borrow_mut();
        let size = stream.len() + out.len();
        if size > memo.budget / 4 {
            return;
        }
        if memo.bytes + size > memo.budget {
            memo.by_hash.clear();
            memo.bytes = 0;
        }
        if let Some((s, o)) = memo.by_hash.insert(hash, (stream.to_vec(), out.clone())) {
            memo.bytes -= s.len() + o.len();
        }
        memo.bytes += size;
    });
    Ok(out)
}

/// Inflates a long column's stream (`btr_copy_zblob_prefix`), which must
/// end exactly at the end of `stream` and give exactly `len` bytes.
pub fn inflate_column(stream: &[u8], len: u64) -> ZipResult<Vec<u8>> {
    remembered(
        &COLUMNS,
        stream,
        |column| column.len() as u64 == len,
        || inflate_column_afresh(stream, len),
    )
}

/// [`inflate_column`] without the memo.
fn inflate_column_afresh(stream: &[u8], len: u64) -> ZipResult<Vec<u8>> {
    let len = usize::try_from(len).map_err(|_| "a column longer than memory")?;
    let capacity = len.min(1 << 20).saturating_add(1);
    let out = inflate_limited(stream, len, capacity, &format!("the column's {len} bytes"))?;
    if out.len() != len {
        return Err(format!("the stream holds {} bytes, the reference {len}", out.len()).into());
    }
    Ok(out)
}
