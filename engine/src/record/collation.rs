//! Collations: how the strings of a column compare. Mirrors MySQL 5.1's
//! `strings/ctype-latin1.c` (`sort_order_latin1`, the weights of
//! latin1_swedish_ci) and `ctype-simple.c` (`my_strnncollsp_simple`: each
//! byte through the weight table, the shorter string padded with spaces),
//! and `ctype-bin.c` for binary strings (bytes, no padding).
//!
//! latin1_swedish_ci is MySQL's default: 'a' = 'A', 'e' = 'é' = 'É',
//! 'abc' = 'abc  ', and 'Ä' sorts after 'Z' as in Swedish.
//!
//! utf8 (MySQL 5.1's: the Basic Multilingual Plane, one to three bytes a
//! character) compares by character in utf8_general_ci, each weighing
//! its `my_unicase_default` sort weight (`my_strnncollsp_utf8`), and by
//! bytes with trailing spaces ignored in utf8_bin (`my_strnncollsp_mb_bin`,
//! whose byte order is the code points' order).
//!
//! # Where collations apply, and how it is tested
//!
//! A CHAR, VARCHAR or TEXT column compares in its collation (latin1_swedish_ci by default,
//! latin1_bin, binary; `CHARACTER SET`/`COLLATE` on columns and tables) in index order,
//! uniqueness, duplicate checks and locks, as `cmp_data_data` does, so 'a', 'A' and 'a ' are
//! one key; the SQL layer's WHERE, ORDER BY, GROUP BY and DISTINCT use the same collation
//! (`cargo test --test collation`, `corpus/scenarios/column_collation.test`).
//!
//! utf8 columns: utf8_general_ci (MySQL 5.1's `my_unicase_default` weights) and utf8_bin in the
//! engine's index order, uniqueness and lock names, CHAR(n)/VARCHAR(n) counting characters and
//! keeping up to 3n bytes, prefixes in characters, 1366 for bytes that are not the Basic
//! Multilingual Plane in UTF-8 (`corpus/scenarios/utf8_columns.test`).
//!
//! The fuzzer's seed tables give about half their CHAR and VARCHAR columns latin1_swedish_ci
//! and some latin1_bin, with values of mixed case and trailing spaces; the models key those
//! columns in the collation (`models::Collation`, latin1_swedish_ci and utf8_general_ci
//! restated from their rules, not from the engine's tables), so duplicates, index order, ranges
//! and lock judgments follow it, while rows are still compared byte for byte. `cargo test
//! --test collation` holds the models' latin1_swedish_ci to the engine's for every byte, and
//! the engine, the SQL layer and the models to the same answers for random latin1 and utf8
//! strings. The unique-check-binary canary (a unique check in bytes) is caught at seed 4
//! (`innosim fuzz --seeds 0..100 --canary unique-check-binary`).

use std::cmp::Ordering;

/// A column's or an expression's collation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Collation {
    /// Bytes, without padding: BLOB, VARBINARY, `CHARACTER SET binary`.
    #[default]
    Binary,
    /// latin1_swedish_ci: case- and trailing-space-insensitive, accents
    /// folded as Swedish has it.
    Latin1SwedishCi,
    /// latin1_bin: bytes, trailing spaces ignored.
    Latin1Bin,
    /// ascii_general_ci: ASCII letters folded to capitals
    /// (`sort_order_ascii_general_ci`), trailing spaces ignored.
    AsciiGeneralCi,
    /// ascii_bin: bytes, trailing spaces ignored.
    AsciiBin,
    /// utf8_general_ci: characters by their weights (case and most
    /// accents folded), trailing spaces ignored.
    Utf8GeneralCi,
    /// utf8_bin: bytes, trailing spaces ignored.
    Utf8Bin,
}

/// MySQL 5.1's `sort_order_latin1`.
const LATIN1_SWEDISH_CI: [u8; 256] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, //
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, //
    32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, //
    48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, //
    64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, //
    80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, //
    96, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, //
    80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 123, 124, 125, 126, 127, //
    128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, //
    144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, //
    160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, //
    176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, //
    65, 65, 65, 65, 92, 91, 92, 67, 69, 69, 69, 69, 73, 73, 73, 73, //
    68, 78, 79, 79, 79, 79, 93, 215, 216, 85, 85, 85, 89, 89, 222, 223, //
    65, 65, 65, 65, 92, 91, 92, 67, 69, 69, 69, 69, 73, 73, 73, 73, //
    68, 78, 79, 79, 79, 79, 93, 247, 216, 85, 85, 85, 89, 89, 222, 255, //
];

impl Collation {
    /// Compares two strings of this collation.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary => a.cmp(b),
            Collation::Latin1Bin | Collation::AsciiBin | Collation::Utf8Bin => {
                pad_space(a, b, |c| c)
            }
            Collation::Utf8GeneralCi => utf8_general_ci(a, b),
            Collation::AsciiGeneralCi => pad_space(a, b, |c| c.to_ascii_uppercase()),
            Collation::Latin1SwedishCi => pad_space(a, b, |c| LATIN1_SWEDISH_CI[usize::from(c)]),
        }
    }

    /// The form all strings equal to `s` in this collation share, so that
    /// equal strings can be told equal by their bytes: each byte's weight,
    /// trailing spaces dropped (`s` itself for binary). Used where equality
    /// is all that matters, as in naming the record a lock is on.
    pub fn canonical(self, s: &[u8]) -> Vec<u8> {
        if self == Collation::Binary {
            return s.to_vec();
        }
        if self == Collation::Utf8GeneralCi {
            // Each character as the character of its weight (a weight
            // weighs itself), trailing spaces dropped; from a byte that
            // starts no character on, the bytes as they are, since the
            // comparison compares them so.
            let mut out = Vec::with_capacity(s.len());
            let mut rest = s;
            while let Some((c, n)) = decode_utf8(rest) {
                let w = char::from_u32(u32::from(utf8_weight(c))).unwrap_or('\u{FFFD}');
                let mut buf = [0u8; 4];
                out.extend_from_slice(w.encode_utf8(&mut buf).as_bytes());
                rest = &rest[n..];
            }
            if rest.is_empty() {
                while out.last() == Some(&b' ') {
                    out.pop();
                }
            } else {
                out.extend_from_slice(rest);
            }
            return out;
        }
        let space = self.weight(b' ');
        let mut out: Vec<u8> = s.iter().map(|&c| self.weight(c)).collect();
        while out.last() == Some(&space) {
            out.pop();
        }
        out
    }

    /// One byte's weight (the byte itself for the binary collations).
    pub fn weight(self, c: u8) -> u8 {
        match self {
            Collation::Latin1SwedishCi => LATIN1_SWEDISH_CI[usize::from(c)],
            Collation::AsciiGeneralCi | Collation::Utf8GeneralCi => c.to_ascii_uppercase(),
            _ => c,
        }
    }

    /// MySQL's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            Collation::Latin1SwedishCi => "latin1_swedish_ci",
            Collation::Latin1Bin => "latin1_bin",
            Collation::AsciiGeneralCi => "ascii_general_ci",
            Collation::AsciiBin => "ascii_bin",
            Collation::Utf8GeneralCi => "utf8_general_ci",
            Collation::Utf8Bin => "utf8_bin",
        }
    }

    /// Its character set's name.
    pub fn charset(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            Collation::Latin1SwedishCi | Collation::Latin1Bin => "latin1",
            Collation::AsciiGeneralCi | Collation::AsciiBin => "ascii",
            Collation::Utf8GeneralCi | Collation::Utf8Bin => "utf8",
        }
    }

    /// MySQL's collation number (`SHOW COLLATION`'s `Id`).
    pub fn id(self) -> u16 {
        match self {
            Collation::Binary => 63,
            Collation::Latin1SwedishCi => 8,
            Collation::Latin1Bin => 47,
            Collation::AsciiGeneralCi => 11,
            Collation::AsciiBin => 65,
            Collation::Utf8GeneralCi => 33,
            Collation::Utf8Bin => 83,
        }
    }

    /// The collation of a number, as a dictionary stores it.
    pub fn from_id(id: u16) -> Option<Collation> {
        Collation::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The collation of a name, any case.
    pub fn by_name(name: &str) -> Option<Collation> {
        Collation::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }

    /// Its character set's default collation, by the set's name.
    pub fn default_of_charset(charset: &str) -> Option<Collation> {
        match charset.to_ascii_lowercase().as_str() {
            "latin1" => Some(Collation::Latin1SwedishCi),
            "ascii" => Some(Collation::AsciiGeneralCi),
            "utf8" => Some(Collation::Utf8GeneralCi),
            "binary" => Some(Collation::Binary),
            _ => None,
        }
    }

    /// Every collation innosim has.
    pub const ALL: [Collation; 7] = [
        Collation::Latin1SwedishCi,
        Collation::Latin1Bin,
        Collation::AsciiGeneralCi,
        Collation::AsciiBin,
        Collation::Utf8GeneralCi,
        Collation::Utf8Bin,
        Collation::Binary,
    ];

    /// The most bytes a character of its set takes (`mbmaxlen`).
    pub fn max_char_bytes(self) -> u32 {
        match self {
            Collation::Utf8GeneralCi | Collation::Utf8Bin => 3,
            _ => 1,
        }
    }

    /// How many characters a value holds (its bytes in a single-byte set).
    pub fn chars(self, s: &[u8]) -> usize {
        if self.max_char_bytes() == 1 {
            return s.len();
        }
        s.iter().filter(|&&b| b & 0xC0 != 0x80).count()
    }

    /// Whether a value's bytes are characters of this collation's set:
    /// ASCII takes bytes below 128 only.
    pub fn accepts(self, s: &[u8]) -> bool {
        match self {
            Collation::AsciiGeneralCi | Collation::AsciiBin => s.is_ascii(),
            // MySQL 5.1's utf8 holds the Basic Multilingual Plane only.
            Collation::Utf8GeneralCi | Collation::Utf8Bin => {
                std::str::from_utf8(s).is_ok_and(|t| t.chars().all(|c| (c as u32) < 0x1_0000))
            }
            _ => true,
        }
    }
}

/// A BMP character's code point and byte length, if `s` starts with one
/// in well-formed UTF-8 of at most three bytes (`my_utf8_uni`).
fn decode_utf8(s: &[u8]) -> Option<(u32, usize)> {
    let b0 = *s.first()?;
    let cont = |i: usize| {
        s.get(i)
            .copied()
            .filter(|b| b & 0xC0 == 0x80)
            .map(|b| u32::from(b & 0x3F))
    };
    match b0 {
        0x00..=0x7F => Some((u32::from(b0), 1)),
        0xC2..=0xDF => Some(((u32::from(b0 & 0x1F) << 6) | cont(1)?, 2)),
        0xE0..=0xEF => {
            // Surrogates are no characters (MySQL 5.1's my_utf8_uni let
            // them by; its strict-mode check of a string does not).
            let c = (u32::from(b0 & 0x0F) << 12) | (cont(1)? << 6) | cont(2)?;
            (c >= 0x800 && !(0xD800..=0xDFFF).contains(&c)).then_some((c, 3))
        }
        _ => None,
    }
}

/// A character's utf8_general_ci weight.
fn utf8_weight(c: u32) -> u16 {
    let c = c as u16;
    match super::utf8_general_ci::SORT.binary_search_by_key(&c, |&(k, _)| k) {
        Ok(i) => super::utf8_general_ci::SORT[i].1,
        Err(_) => c,
    }
}

/// `my_strnncollsp_utf8`: character weights compared in turn; the longer
/// string's rest against spaces; from a byte that starts no character on,
/// the rest of both compared as bytes.
fn utf8_general_ci(a: &[u8], b: &[u8]) -> Ordering {
    let (mut x, mut y) = (a, b);
    while !x.is_empty() && !y.is_empty() {
        let (Some((cx, nx)), Some((cy, ny))) = (decode_utf8(x), decode_utf8(y)) else {
            return x.cmp(y);
        };
        match utf8_weight(cx).cmp(&utf8_weight(cy)) {
            Ordering::Equal => {}
            o => return o,
        }
        x = &x[nx..];
        y = &y[ny..];
    }
    let (rest, flip) = if x.is_empty() { (y, true) } else { (x, false) };
    let mut r = rest;
    while !r.is_empty() {
        let o = match decode_utf8(r) {
            Some((c, n)) => {
                r = &r[n..];
                utf8_weight(c).cmp(&u16::from(b' '))
            }
            None => Ordering::Greater,
        };
        if o != Ordering::Equal {
            return if flip { o.reverse() } else { o };
        }
    }
    Ordering::Equal
}

/// `my_strnncollsp_simple`: weights compared byte by byte; when one string
/// is a prefix of the other, the rest of the longer one against spaces.
fn pad_space(a: &[u8], b: &[u8], w: impl Fn(u8) -> u8) -> Ordering {
    let n = a.len().min(b.len());
    for (&x, &y) in a[..n].iter().zip(&b[..n]) {
        match w(x).cmp(&w(y)) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    let space = w(b' ');
    let (rest, flip) = if a.len() > n {
        (&a[n..], false)
    } else {
        (&b[n..], true)
    };
    for &c in rest {
        match w(c).cmp(&space) {
            Ordering::Equal => {}
            o => return if flip { o.reverse() } else { o },
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn utf8_general_ci_folds_case_and_accents_by_mysqls_planes() {
        let ci = Collation::Utf8GeneralCi;
        assert_eq!(ci.compare(b"abc", b"ABC  "), Equal);
        assert_eq!(ci.compare("é".as_bytes(), b"E"), Equal);
        assert_eq!(ci.compare("ß".as_bytes(), b"s"), Equal);
        // Fullwidth D (U+FF24) and d (U+FF44) are one letter; neither is D.
        assert_eq!(ci.compare("Ｄ".as_bytes(), "ｄ".as_bytes()), Equal);
        assert_eq!(ci.compare("Ｄ".as_bytes(), b"D"), Greater);
        assert_eq!(ci.compare(b"a", "Ä".as_bytes()), Equal);
        assert_eq!(ci.compare(b"z", "ж".as_bytes()), Less);
        assert_eq!(ci.canonical(b"Ab "), ci.canonical(b"aB"));
        assert_eq!(Collation::Utf8Bin.compare(b"a", b"A"), Greater);
        assert!(ci.accepts("ＤＤＤ".as_bytes()));
        assert!(!ci.accepts(&[0xC3]));
        assert!(!ci.accepts("😀".as_bytes()));
        assert_eq!(ci.chars("ＤＤＤ".as_bytes()), 3);
        assert_eq!(Collation::by_name("UTF8_GENERAL_CI"), Some(ci));
        assert_eq!(Collation::from_id(33), Some(ci));
    }

    #[test]
    fn swedish_ci_folds_case_accents_and_trailing_spaces() {
        let ci = Collation::Latin1SwedishCi;
        assert_eq!(ci.compare(b"a", b"A"), Equal);
        assert_eq!(ci.compare(b"InnoDB", b"innodb"), Equal);
        assert_eq!(ci.compare(b"abc", b"abc  "), Equal);
        assert_eq!(ci.compare(b"abc", b"abd"), Less);
        // e, é (0xE9) and É (0xC9) weigh the same; Ä (0xC4) after Z.
        assert_eq!(ci.compare(b"e", &[0xE9]), Equal);
        assert_eq!(ci.compare(&[0xC9], &[0xE9]), Equal);
        assert_eq!(ci.compare(b"Z", &[0xC4]), Less);
        // A control character below the space sorts a longer string first.
        assert_eq!(ci.compare(b"a\t", b"a"), Less);
        assert_eq!(ci.compare(b"a", b"a\t"), Greater);
    }

    #[test]
    fn binary_compares_bytes_and_latin1_bin_ignores_trailing_spaces() {
        assert_eq!(Collation::Binary.compare(b"a", b"A"), Greater);
        assert_eq!(Collation::Binary.compare(b"a", b"a "), Less);
        assert_eq!(Collation::Latin1Bin.compare(b"a", b"a "), Equal);
        assert_eq!(Collation::Latin1Bin.compare(b"a", b"A"), Greater);
        for c in Collation::ALL {
            assert_eq!(Collation::from_id(c.id()), Some(c));
            assert_eq!(Collation::by_name(c.name()), Some(c));
        }
    }
}
