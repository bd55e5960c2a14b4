//! A file's bytes as shared, copy-on-write chunks.
//!
//! The simulated disk keeps two images of every file (durable and current)
//! and rebuilds them at every restart. As flat `Vec<u8>`s each extension
//! reallocated and copied the whole file and each restart copied every
//! file; with chunks, extending appends (zero chunks are not even
//! allocated), and cloning an image shares its chunks until one side
//! writes to them.
//!
//! ```text
//!   len ──────────────────────────────────────────▶│
//!   chunks: [Some(A)] [None = zeros] [Some(B)] [Some(C) ..tail zero]
//!              │ shared with a clone until either side writes
//! ```
//!
//! Invariant: bytes of the last chunk past `len` are zero, so growing the
//! file again shows zeros, as a real file's extension does.

use std::sync::Arc;

/// Bytes per chunk: one page, so a page write touches one chunk.
pub(super) const CHUNK: usize = 16 * 1024;

/// One chunk's bytes; a whole-chunk write shares it between the current
/// image, the pending write and, once synced, the durable image.
pub(super) type Chunk = Arc<[u8; CHUNK]>;

/// `bytes` as whole chunks, if written at a chunk boundary and a whole
/// number of chunks long (a page write): one copy, then shared.
pub(super) fn whole_chunks(offset: u64, bytes: &[u8]) -> Option<Vec<Chunk>> {
    if bytes.is_empty()
        || !offset.is_multiple_of(CHUNK as u64)
        || !bytes.len().is_multiple_of(CHUNK)
    {
        return None;
    }
    Some(bytes.chunks_exact(CHUNK).map(chunk_of).collect())
}

/// `bytes` as one chunk without a copy, if it is exactly one chunk long and
/// written at a chunk boundary.
pub(super) fn shared_chunk(offset: u64, bytes: &Arc<[u8]>) -> Option<Vec<Chunk>> {
    if !offset.is_multiple_of(CHUNK as u64) {
        return None;
    }
    Chunk::try_from(Arc::clone(bytes)).ok().map(|c| vec![c])
}

/// A new chunk holding `bytes` (exactly [`CHUNK`] of them): one allocation
/// and one copy, with no zeroed array built on the stack first.
fn chunk_of(bytes: &[u8]) -> Chunk {
    Chunk::try_from(Arc::<[u8]>::from(bytes)).expect("a whole chunk")
}

/// A new all-zero chunk.
fn zero_chunk() -> Chunk {
    static ZERO: [u8; CHUNK] = [0; CHUNK];
    chunk_of(&ZERO)
}

/// The bytes of one file; see the module comment.
#[derive(Debug, Clone, Default)]
pub(super) struct Image {
    len: u64,
    chunks: Vec<Option<Chunk>>,
}

/// The chunk holding byte `offset`, and where in it.
fn locate(offset: u64) -> (usize, usize) {
    (
        (offset / CHUNK as u64) as usize,
        (offset % CHUNK as u64) as usize,
    )
}

/// Chunks needed for `len` bytes.
fn chunks_for(len: u64) -> usize {
    len.div_ceil(CHUNK as u64) as usize
}

impl Image {
    /// An image holding `bytes`.
    pub(super) fn from_bytes(bytes: &[u8]) -> Self {
        let mut image = Image::default();
        image.write(0, bytes);
        image
    }

    /// The file's length in bytes.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// Truncates or zero-extends. The caller has bounded `len`.
    pub(super) fn set_len(&mut self, len: u64) {
        if len < self.len {
            self.chunks.truncate(chunks_for(len));
            let (last, within) = locate(len);
            if within > 0 {
                if let Some(Some(chunk)) = self.chunks.get_mut(last) {
                    Arc::make_mut(chunk)[within..].fill(0);
                }
            }
        } else {
            self.chunks.resize(chunks_for(len), None);
        }
        self.len = len;
    }

    /// Writes `bytes` at `offset`, zero-filling any hole before it. A
    /// zero-length write does not extend the file, even past its end.
    pub(super) fn write(&mut self, offset: u64, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let end = offset + bytes.len() as u64;
        if end > self.len {
            self.set_len(end);
        }
        let mut done = 0;
        while done < bytes.len() {
            let (index, within) = locate(offset + done as u64);
            let take = (CHUNK - within).min(bytes.len() - done);
            let chunk = self.chunks[index].get_or_insert_with(zero_chunk);
            Arc::make_mut(chunk)[within..within + take].copy_from_slice(&bytes[done..done + take]);
            done += take;
        }
    }

    /// Writes whole chunks at the chunk boundary `offset` by sharing them:
    /// the same as [`Image::write`] of their bytes.
    pub(super) fn put_chunks(&mut self, offset: u64, chunks: &[Chunk]) {
        assert!(
            offset.is_multiple_of(CHUNK as u64),
            "whole chunks go at a boundary"
        );
        let end = offset + (chunks.len() * CHUNK) as u64;
        if end > self.len {
            self.set_len(end);
        }
        let first = (offset / CHUNK as u64) as usize;
        for (slot, chunk) in self.chunks[first..].iter_mut().zip(chunks) {
            *slot = Some(Arc::clone(chunk));
        }
    }

    /// Fills `buf` from `offset`; `false`, with `buf` unchanged, if that
    /// reads past the end.
    pub(super) fn read(&self, offset: u64, buf: &mut [u8]) -> bool {
        match offset.checked_add(buf.len() as u64) {
            Some(end) if end <= self.len => {}
            _ => return false,
        }
        let mut done = 0;
        while done < buf.len() {
            let (index, within) = locate(offset + done as u64);
            let take = (CHUNK - within).min(buf.len() - done);
            let out = &mut buf[done..done + take];
            match &self.chunks[index] {
                Some(chunk) => out.copy_from_slice(&chunk[within..within + take]),
                None => out.fill(0),
            }
            done += take;
        }
        true
    }

    /// The chunk holding exactly the `len` bytes at `offset`, shared: a
    /// read of one whole written chunk (a page) inside the file. `None` for
    /// any other read, and for a chunk never written (zeros).
    pub(super) fn shared_chunk_at(&self, offset: u64, len: usize) -> Option<Arc<[u8]>> {
        if len != CHUNK || !offset.is_multiple_of(CHUNK as u64) || offset + CHUNK as u64 > self.len
        {
            return None;
        }
        let (index, _) = locate(offset);
        let chunk: Arc<[u8]> = Arc::clone(self.chunks[index].as_ref()?) as Arc<[u8]>;
        Some(chunk)
    }

    /// Flips one bit of a byte inside the file.
    pub(super) fn flip_bit(&mut self, offset: u64, bit: u8) {
        assert!(offset < self.len, "a flipped bit lies inside the file");
        let (index, within) = locate(offset);
        let chunk = self.chunks[index].get_or_insert_with(zero_chunk);
        Arc::make_mut(chunk)[within] ^= 1 << bit;
    }

    /// The whole file as one buffer.
    pub(super) fn to_vec(&self) -> Vec<u8> {
        let mut bytes = vec![0; self.len as usize];
        let filled = self.read(0, &mut bytes);
        debug_assert!(filled);
        bytes
    }
}

impl PartialEq for Image {
    fn eq(&self, other: &Self) -> bool {
        if self.len != other.len {
            return false;
        }
        let zero = [0u8; CHUNK];
        self.chunks.iter().zip(&other.chunks).all(|(a, b)| {
            let a: &[u8; CHUNK] = a.as_deref().unwrap_or(&zero);
            let b: &[u8; CHUNK] = b.as_deref().unwrap_or(&zero);
            a == b
        })
    }
}

impl Eq for Image {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image behaves as a flat buffer under writes, truncations and
    /// extensions across chunk boundaries, and clones do not share writes.
    #[test]
    fn image_matches_a_flat_buffer() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut image = Image::default();
        let mut flat: Vec<u8> = Vec::new();
        let mut clones = Vec::new();
        for step in 0..2000 {
            match rng.gen_range(0..10) {
                0..=5 => {
                    let whole = rng.gen_bool(0.3);
                    let (offset, len) = if whole {
                        (
                            rng.gen_range(0..5) * CHUNK as u64,
                            rng.gen_range(1..3) * CHUNK,
                        )
                    } else {
                        (
                            rng.gen_range(0..5 * CHUNK as u64),
                            rng.gen_range(0..2 * CHUNK),
                        )
                    };
                    let byte = rng.gen::<u8>() | 1;
                    let bytes = vec![byte; len];
                    match whole_chunks(offset, &bytes) {
                        Some(chunks) => {
                            assert!(whole);
                            image.put_chunks(offset, &chunks)
                        }
                        None => image.write(offset, &bytes),
                    }
                    if len > 0 {
                        let end = offset as usize + len;
                        if flat.len() < end {
                            flat.resize(end, 0);
                        }
                        flat[offset as usize..end].copy_from_slice(&bytes);
                    }
                }
                6 | 7 => {
                    let len = rng.gen_range(0..6 * CHUNK as u64);
                    image.set_len(len);
                    flat.resize(len as usize, 0);
                }
                8 => {
                    if !flat.is_empty() {
                        let offset = rng.gen_range(0..flat.len() as u64);
                        image.flip_bit(offset, 3);
                        flat[offset as usize] ^= 1 << 3;
                    }
                }
                _ => clones.push((image.clone(), flat.clone())),
            }
            assert_eq!(image.len(), flat.len() as u64, "step {step}");
            let offset = rng.gen_range(0..=flat.len() as u64);
            let len = rng.gen_range(0..=(flat.len() as u64 - offset).min(40_000)) as usize;
            let mut buf = vec![0xAA; len];
            assert!(image.read(offset, &mut buf));
            assert_eq!(buf, flat[offset as usize..offset as usize + len]);
            let mut past = vec![0; 1];
            assert!(!image.read(flat.len() as u64, &mut past));
        }
        for (image, flat) in clones {
            assert_eq!(image.to_vec(), flat);
            assert_eq!(image, Image::from_bytes(&flat));
        }
    }
}
