//! How the model compares strings: MySQL's collations, restated from what
//! MySQL documents them to do rather than from a copy of a weight table.
//!
//! latin1_swedish_ci (MySQL's default) compares letters without case and
//! folds the accented letters of Latin-1 to their base letters, except
//! that Swedish sorts Å, Ä (with Æ) and Ö after Z, in that order, and
//! takes Ü for Y; a string compares as if padded with spaces (`PAD SPACE`),
//! so trailing spaces never matter. latin1_bin compares bytes, padded the
//! same way. binary compares bytes, unpadded. ascii_general_ci folds the
//! 26 ASCII letters to capitals and nothing else; ascii_bin compares
//! bytes; both pad with spaces.
//!
//! The engine has its own table (`engine/src/record/collation.rs`, from
//! MySQL's `sort_order_latin1`); the collation property test holds the two
//! to the same answers, so a wrong weight in either is found.

use std::cmp::Ordering;

/// A collation, as a column declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Collation {
    /// Bytes, no padding.
    #[default]
    Binary,
    /// Bytes, padded with spaces.
    Latin1Bin,
    /// Case- and accent-folding as Swedish has it, padded with spaces.
    Latin1SwedishCi,
    /// ASCII letters without case, padded with spaces.
    AsciiGeneralCi,
    /// Bytes of ASCII, padded with spaces.
    AsciiBin,
}

impl Collation {
    /// The collation of MySQL's name for it.
    pub fn by_name(name: &str) -> Option<Collation> {
        match name.to_ascii_lowercase().as_str() {
            "binary" => Some(Collation::Binary),
            "latin1_bin" => Some(Collation::Latin1Bin),
            "latin1_swedish_ci" => Some(Collation::Latin1SwedishCi),
            "ascii_general_ci" => Some(Collation::AsciiGeneralCi),
            "ascii_bin" => Some(Collation::AsciiBin),
            _ => None,
        }
    }

    /// MySQL's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            Collation::Latin1Bin => "latin1_bin",
            Collation::Latin1SwedishCi => "latin1_swedish_ci",
            Collation::AsciiGeneralCi => "ascii_general_ci",
            Collation::AsciiBin => "ascii_bin",
        }
    }

    /// The weight one Latin-1 byte sorts by.
    pub fn weight(self, c: u8) -> u8 {
        match self {
            Collation::Binary | Collation::Latin1Bin | Collation::AsciiBin => c,
            Collation::Latin1SwedishCi => swedish(c),
            Collation::AsciiGeneralCi if c.is_ascii_lowercase() => c - 32,
            Collation::AsciiGeneralCi => c,
        }
    }

    /// Whether strings compare as if padded with spaces.
    pub fn pads(self) -> bool {
        self != Collation::Binary
    }

    /// Compares two strings.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        if !self.pads() {
            return a.cmp(b);
        }
        let space = self.weight(b' ');
        let n = a.len().max(b.len());
        // Past its end a string reads as spaces.
        let at = |s: &[u8], i: usize| s.get(i).map_or(space, |&c| self.weight(c));
        (0..n)
            .map(|i| at(a, i).cmp(&at(b, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// The weights of `s` with trailing spaces dropped: two strings are
    /// equal in the collation exactly when these are.
    pub fn key(self, s: &[u8]) -> impl Iterator<Item = u8> + '_ {
        let end = if self.pads() {
            s.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1)
        } else {
            s.len()
        };
        s[..end].iter().map(move |&c| self.weight(c))
    }
}

/// latin1_swedish_ci's weight of a Latin-1 byte.
fn swedish(c: u8) -> u8 {
    const A: u8 = b'A';
    const C: u8 = b'C';
    const D: u8 = b'D';
    const E: u8 = b'E';
    const I: u8 = b'I';
    const N: u8 = b'N';
    const O: u8 = b'O';
    const U: u8 = b'U';
    const Y: u8 = b'Y';
    // Å, Ä and Ö come after Z, as the three characters after 'Z' in ASCII
    // do ('[', '\\', ']'), and so weigh the same as those.
    const ARING: u8 = b'[';
    const AUML: u8 = b'\\';
    const OUML: u8 = b']';
    match c {
        b'a'..=b'z' => c - 32,
        // Lower-case Latin-1 letters are their capitals plus 32, but for
        // ÷ (0xF7) and ÿ (0xFF), which MySQL leaves as they are.
        0xE0..=0xFE if c != 0xF7 => swedish(c - 32),
        0xC0..=0xC3 => A, // À Á Â Ã
        0xC4 => AUML,     // Ä
        0xC5 => ARING,    // Å
        0xC6 => AUML,     // Æ sorts with Ä
        0xC7 => C,        // Ç
        0xC8..=0xCB => E, // È É Ê Ë
        0xCC..=0xCF => I, // Ì Í Î Ï
        0xD0 => D,        // Ð
        0xD1 => N,        // Ñ
        0xD2..=0xD5 => O, // Ò Ó Ô Õ
        0xD6 => OUML,     // Ö
        0xD9..=0xDB => U, // Ù Ú Û
        0xDC | 0xDD => Y, // Ü (as Swedish has it) and Ý
        // × (0xD7), Ø (0xD8), Þ (0xDE), ß (0xDF), and everything else:
        // itself.
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swedish_folds_case_accents_and_padding() {
        let ci = Collation::Latin1SwedishCi;
        assert_eq!(ci.compare(b"abc", b"ABC"), Ordering::Equal);
        assert_eq!(ci.compare(b"abc", b"abc   "), Ordering::Equal);
        assert_eq!(ci.compare(b"e", &[0xE9]), Ordering::Equal, "e = é");
        assert_eq!(ci.compare(b"z", &[0xC5]), Ordering::Less, "z < Å");
        assert_eq!(ci.compare(&[0xC5], &[0xE4]), Ordering::Less, "Å < ä");
        assert_eq!(ci.compare(&[0xC4], &[0xD6]), Ordering::Less, "Ä < Ö");
        assert_eq!(ci.compare(b"y", &[0xFC]), Ordering::Equal, "y = ü");
        // A character below the space sorts before the padding.
        assert_eq!(ci.compare(b"a\x01", b"a"), Ordering::Less);
        assert_eq!(Collation::Binary.compare(b"a", b"a "), Ordering::Less);
        assert_eq!(Collation::Latin1Bin.compare(b"a", b"a "), Ordering::Equal);
        assert_eq!(Collation::Latin1Bin.compare(b"a", b"A"), Ordering::Greater);
    }

    #[test]
    fn equal_strings_share_their_key() {
        let all: Vec<Vec<u8>> = [
            &b""[..],
            b" ",
            b"a",
            b"A ",
            b"a\x01",
            b"ab",
            b"AB  ",
            &[0xE4],
        ]
        .iter()
        .map(|s| s.to_vec())
        .collect();
        for c in [
            Collation::Binary,
            Collation::Latin1Bin,
            Collation::Latin1SwedishCi,
            Collation::AsciiGeneralCi,
            Collation::AsciiBin,
        ] {
            for a in &all {
                for b in &all {
                    let keys_equal = c.key(a).eq(c.key(b));
                    assert_eq!(keys_equal, c.compare(a, b).is_eq(), "{c:?} {a:?} {b:?}");
                }
            }
        }
    }
}
