//! The ground floor: how values are laid out in bytes and which page sizes
//! exist, which every floor above reads and none of which needs anything
//! of the engine but its error type (InnoDB's `mach0data` and the page
//! size constants of `univ.i`).
//!
//! ```text
//! varint (LEB128): 7 bits a byte, low bits first, high bit = more follow
//!   300 -> ac 02
//! compressed page sizes (KEY_BLOCK_SIZE x 1 KiB): 1, 2, 4, 8, 16 KiB
//! ```

use crate::error::{Error, Result};

/// The physical page sizes a compressed table may have, in bytes
/// (KEY_BLOCK_SIZE=1, 2, 4, 8, 16).
pub const ZIP_SIZES: [usize; 5] = [1024, 2048, 4096, 8192, 16384];

/// Appends a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Whether `size` is a page size a compressed table may have.
pub fn is_zip_size(size: usize) -> bool {
    ZIP_SIZES.contains(&size)
}

/// Checks a KEY_BLOCK_SIZE (in KiB) and gives the physical page size.
pub fn zip_size_of(key_block_size: u32) -> Result<usize> {
    let size = (key_block_size as usize).saturating_mul(1024);
    if is_zip_size(size) {
        Ok(size)
    } else {
        Err(Error::InvalidArgument(format!(
            "KEY_BLOCK_SIZE={key_block_size} is not one of 1, 2, 4, 8, 16"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_take_seven_bits_a_byte_low_first() {
        let enc = |v| {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            out
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(127), [0x7f]);
        assert_eq!(enc(300), [0xac, 0x02]);
        assert_eq!(enc(u64::MAX).len(), 10);
        assert_eq!(zip_size_of(8).unwrap(), 8192);
        assert!(zip_size_of(3).is_err() && zip_size_of(32).is_err());
    }
}
