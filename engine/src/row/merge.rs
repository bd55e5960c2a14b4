//! The external merge sort of fast index creation. Mirrors
//! `row0merge.cc`: entries gather in a sort buffer of bounded size
//! (`row_merge_buf_add`); a full buffer is sorted and written to a
//! temporary file as a run (`row_merge_buf_write`); at the end the runs are
//! merged two by two, pass after pass, until one is left
//! (`row_merge_sort` calling `row_merge` for each doubling of the block
//! size, a lone run copied as `row_merge_blocks_copy` does), each pass
//! reading the whole file and writing it again, and the last run is read
//! once more into the index (`row_merge_insert_index_tuples`). InnoDB's
//! passes alternate between its file and a second one (`tmpfd`); here
//! they alternate between the file's first half and a second half after
//! it.
//!
//! A run is a sequence of records, each a 4-byte big-endian length and the
//! record's bytes. The temporary file is not part of the database: the
//! caller removes it when the sort ends, and startup removes any a crash
//! left ([`TEMP_PREFIX`]).

use crate::error::{Error, Result};
use crate::io::{File, Storage};
use crate::record::{self, RecordLayout};
use std::cmp::Ordering;

/// Names of merge sort files start with this.
pub const TEMP_PREFIX: &str = "#sql-merge-";

/// What a sort did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SortStats {
    /// Entries sorted.
    pub entries: u64,
    /// Runs written to the temporary file.
    pub runs: u64,
    /// Bytes written to it (the runs, and each merge pass's output).
    pub bytes_spilled: u64,
    /// Two-way merge passes over the runs.
    pub passes: u64,
}

/// Sorts index entries in a buffer of at most `buffer_bytes`, spilling
/// sorted runs to a temporary file when it fills.
pub struct Sorter<'a> {
    layout: &'a RecordLayout,
    n_key: usize,
    buffer_bytes: usize,
    buf: Vec<Vec<u8>>,
    buf_len: usize,
    file: Option<(String, Box<dyn File>)>,
    /// Each run's (offset, length) in the file.
    runs: Vec<(u64, u64)>,
    file_len: u64,
    name: String,
    stats: SortStats,
}

fn cmp(layout: &RecordLayout, n_key: usize, a: &[u8], b: &[u8]) -> Ordering {
    // Entries were built by the engine from records it validated; a
    // comparison that cannot read one is a broken invariant, and sorts
    // need a total order: such a pair compares equal (never reached).
    record::compare_records(layout, a, b, n_key).unwrap_or(Ordering::Equal)
}

impl<'a> Sorter<'a> {
    /// A sorter of entries of `layout`, ordered by their first `n_key`
    /// fields; `name` names its temporary file if it needs one.
    pub fn new(layout: &'a RecordLayout, n_key: usize, buffer_bytes: usize, name: String) -> Self {
        Sorter {
            layout,
            n_key,
            buffer_bytes: buffer_bytes.max(1),
            buf: Vec::new(),
            buf_len: 0,
            file: None,
            runs: Vec::new(),
            file_len: 0,
            name,
            stats: SortStats::default(),
        }
    }

    /// Adds an entry; a full buffer becomes a run.
    pub fn add(&mut self, storage: &mut dyn Storage, entry: Vec<u8>) -> Result<()> {
        self.stats.entries += 1;
        self.buf_len += entry.len() + 4;
        self.buf.push(entry);
        if self.buf_len >= self.buffer_bytes {
            self.spill(storage)?;
        }
        Ok(())
    }

    fn spill(&mut self, storage: &mut dyn Storage) -> Result<()> {
        if self.file.is_none() {
            let f = storage
                .create(&self.name)
                .map_err(|e| Error::io("create", &self.name, e))?;
            self.file = Some((self.name.clone(), f));
        }
        self.write_run()
    }

    /// The buffer, sorted, as one more run at the end of the file.
    fn write_run(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let (layout, n_key) = (self.layout, self.n_key);
        self.buf.sort_by(|a, b| cmp(layout, n_key, a, b));
        let mut bytes = Vec::with_capacity(self.buf_len);
        for e in self.buf.drain(..) {
            bytes.extend_from_slice(&(e.len() as u32).to_be_bytes());
            bytes.extend_from_slice(&e);
        }
        self.buf_len = 0;
        let (name, f) = self.file.as_mut().expect("the run file is open");
        f.write_at(self.file_len, &bytes)
            .map_err(|e| Error::io("write", name, e))?;
        self.runs.push((self.file_len, bytes.len() as u64));
        self.file_len += bytes.len() as u64;
        self.stats.runs += 1;
        self.stats.bytes_spilled += bytes.len() as u64;
        Ok(())
    }

    /// Every entry, in order, to `sink`. Returns what the sort did and
    /// the name of its temporary file, if it made one, for the caller to
    /// remove (whether or not the sort succeeded).
    pub fn finish(
        mut self,
        mut sink: impl FnMut(&[u8]) -> Result<()>,
    ) -> (Result<SortStats>, Option<String>) {
        let result = (|| {
            if self.runs.is_empty() {
                // Everything fit the buffer: no file at all.
                let (layout, n_key) = (self.layout, self.n_key);
                self.buf.sort_by(|a, b| cmp(layout, n_key, a, b));
                for e in &self.buf {
                    sink(e)?;
                }
                return Ok(());
            }
            self.write_run()?;
            while self.runs.len() > 1 {
                self.merge_pass()?;
            }
            self.read_back(&mut sink)
        })();
        let file = self.file.take().map(|(name, f)| {
            drop(f);
            name
        });
        (result.map(|_| self.stats), file)
    }

    /// Gives up the sort: the name of its temporary file, if it made one,
    /// for the caller to remove.
    pub fn abort(mut self) -> Option<String> {
        self.file.take().map(|(name, f)| {
            drop(f);
            name
        })
    }

    /// One pass of two-way merges (`row_merge`): runs 1 and 2 into one,
    /// 3 and 4 into the next, ..., a last lone run copied, from the half
    /// of the file that holds them to the other.
    fn merge_pass(&mut self) -> Result<()> {
        let total: u64 = self.runs.iter().map(|&(_, len)| len).sum();
        let out_base = if self.runs[0].0 < total { total } else { 0 };
        let (layout, n_key) = (self.layout, self.n_key);
        let step = (self.buffer_bytes as u64 / 2).clamp(4096, CHUNK);
        let (name, file) = self.file.as_mut().expect("runs were written");
        let mut out = RunWriter {
            pos: out_base,
            buf: Vec::with_capacity(CHUNK as usize),
        };
        let mut runs = Vec::with_capacity(self.runs.len().div_ceil(2));
        for pair in self.runs.chunks(2) {
            let start = out.pos + out.buf.len() as u64;
            let mut readers: Vec<RunReader> = pair
                .iter()
                .map(|&(off, len)| RunReader::new(off, len, step))
                .collect();
            let mut heads = Vec::with_capacity(2);
            for r in &mut readers {
                heads.push(r.next(&mut **file, name)?);
            }
            loop {
                // The first run's entry first among equals.
                let take = match (&heads[0], heads.get(1).and_then(|h| h.as_ref())) {
                    (None, None) => break,
                    (Some(_), None) => 0,
                    (None, Some(_)) => 1,
                    (Some(a), Some(b)) => {
                        usize::from(cmp(layout, n_key, a, b) == Ordering::Greater)
                    }
                };
                let e = heads[take].take().expect("the head taken");
                out.put(&mut **file, name, &e)?;
                heads[take] = readers[take].next(&mut **file, name)?;
            }
            runs.push((start, out.pos + out.buf.len() as u64 - start));
        }
        out.flush(&mut **file, name)?;
        self.runs = runs;
        self.file_len = self.file_len.max(out_base + total);
        self.stats.passes += 1;
        self.stats.bytes_spilled += total;
        Ok(())
    }

    /// The one run the passes leave, read once more, in order, into
    /// `sink` (`row_merge_insert_index_tuples`).
    fn read_back(&mut self, sink: &mut impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let (name, file) = self.file.as_mut().expect("runs were written");
        let &[(off, len)] = self.runs.as_slice() else {
            unreachable!("the merge passes leave one run");
        };
        let mut reader = RunReader::new(off, len, (self.buffer_bytes as u64).clamp(4096, CHUNK));
        while let Some(e) = reader.next(&mut **file, name)? {
            sink(&e)?;
        }
        Ok(())
    }
}

/// Writes a merge pass's output in chunks.
struct RunWriter {
    /// Where `buf` goes in the file.
    pos: u64,
    buf: Vec<u8>,
}

impl RunWriter {
    fn put(&mut self, file: &mut dyn File, name: &str, entry: &[u8]) -> Result<()> {
        self.buf
            .extend_from_slice(&(entry.len() as u32).to_be_bytes());
        self.buf.extend_from_slice(entry);
        if self.buf.len() as u64 >= CHUNK {
            self.flush(file, name)?;
        }
        Ok(())
    }

    fn flush(&mut self, file: &mut dyn File, name: &str) -> Result<()> {
        if !self.buf.is_empty() {
            file.write_at(self.pos, &self.buf)
                .map_err(|e| Error::io("write", name, e))?;
            self.pos += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }
}

/// Reads one run in chunks.
struct RunReader {
    pos: u64,
    end: u64,
    chunk: Vec<u8>,
    at: usize,
    /// Bytes read at a time.
    step: u64,
}

/// The most a run reader reads at a time.
const CHUNK: u64 = 64 * 1024;

impl RunReader {
    /// A reader of the run of `len` bytes at `off`, `step` bytes at a time.
    fn new(off: u64, len: u64, step: u64) -> RunReader {
        RunReader {
            pos: off,
            end: off + len,
            chunk: Vec::new(),
            at: 0,
            step,
        }
    }

    fn fill(&mut self, file: &mut dyn File, name: &str, need: usize) -> Result<()> {
        let have = self.chunk.len() - self.at;
        if have >= need {
            return Ok(());
        }
        let more = (need - have) as u64;
        let want = more.max(self.step).min(self.end - self.pos);
        if want < more {
            return Err(Error::Corrupt {
                file: name.to_string(),
                reason: "a merge run ends inside a record".into(),
            });
        }
        let mut buf = vec![0u8; want as usize];
        file.read_at(self.pos, &mut buf)
            .map_err(|e| Error::io("read", name, e))?;
        self.pos += want;
        self.chunk.drain(..self.at);
        self.at = 0;
        self.chunk.extend_from_slice(&buf);
        Ok(())
    }

    fn next(&mut self, file: &mut dyn File, name: &str) -> Result<Option<Vec<u8>>> {
        if self.at == self.chunk.len() && self.pos == self.end {
            return Ok(None);
        }
        self.fill(file, name, 4)?;
        let len = u32::from_be_bytes(
            self.chunk[self.at..self.at + 4]
                .try_into()
                .expect("4 bytes"),
        ) as usize;
        self.fill(file, name, 4 + len)?;
        let e = self.chunk[self.at + 4..self.at + 4 + len].to_vec();
        self.at += 4 + len;
        Ok(Some(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemStorage;
    use crate::record::{FieldDef, FieldKind, RowFormat};

    fn layout() -> RecordLayout {
        RecordLayout::new(
            RowFormat::Compact,
            vec![FieldDef::not_null(FieldKind::Fixed(8))],
        )
    }

    fn entry(l: &RecordLayout, v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        let b = v.to_be_bytes();
        record::encode(l, &[record::FieldValue::Inline(&b)], false, &mut out);
        out
    }

    #[test]
    fn runs_spilled_to_the_file_merge_in_order_and_the_file_goes() {
        let l = layout();
        let mut st = MemStorage::new();
        // A 1 KiB buffer: 2000 entries make many runs.
        let mut s = Sorter::new(&l, 1, 1024, format!("{TEMP_PREFIX}1"));
        let mut want = Vec::new();
        for i in 0..2000u64 {
            let v = (i * 7919) % 2003;
            want.push(v);
            s.add(&mut st, entry(&l, v)).unwrap();
        }
        want.sort();
        let mut got = Vec::new();
        let (stats, file) = s.finish(|e| {
            got.push(e.to_vec());
            Ok(())
        });
        let stats = stats.unwrap();
        st.remove(&file.expect("runs were spilled")).unwrap();
        assert!(stats.runs > 10, "{stats:?}");
        assert_eq!(stats.entries, 2000);
        // Two by two until one run is left, each pass writing every entry
        // again (`row_merge_sort`).
        let passes = u64::BITS - (stats.runs - 1).leading_zeros();
        assert_eq!(stats.passes, u64::from(passes), "{stats:?}");
        let bytes = 2000 * (entry(&l, 0).len() as u64 + 4);
        assert_eq!(stats.bytes_spilled, bytes * (1 + stats.passes), "{stats:?}");
        let expect: Vec<Vec<u8>> = want.iter().map(|&v| entry(&l, v)).collect();
        assert_eq!(got, expect);
        assert!(st.list().unwrap().is_empty());
    }

    #[test]
    fn a_sort_that_fits_writes_no_file() {
        let l = layout();
        let mut st = MemStorage::new();
        let mut s = Sorter::new(&l, 1, 1 << 20, format!("{TEMP_PREFIX}2"));
        for v in [3u64, 1, 2] {
            s.add(&mut st, entry(&l, v)).unwrap();
        }
        let mut got = Vec::new();
        let (stats, file) = s.finish(|e| {
            got.push(e.to_vec());
            Ok(())
        });
        assert_eq!(stats.unwrap().runs, 0);
        assert_eq!(file, None);
        assert_eq!(got, vec![entry(&l, 1), entry(&l, 2), entry(&l, 3)]);
        assert!(st.list().unwrap().is_empty());
    }
}
