//! The tokenizer: MySQL's lexical rules for the statements innosim
//! speaks. Mirrors the parts of `sql_lex.cc` (`lex_one_token`) the
//! grammar needs: identifiers bare or in backquotes, strings in single or
//! double quotes with backslash escapes and doubled quotes, numbers,
//! operators, `@@` system variables, and comments (`-- `, `#`, `/* */`;
//! the body of a `/*! ... */` or `/*!40100 ... */` comment is read as
//! SQL, as MySQL does).

use super::error::SqlError;

/// A token's kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// An identifier or keyword; `quoted` if it was in backquotes (and so
    /// never a keyword).
    Word {
        /// The text (backquotes removed).
        text: String,
        /// Written in backquotes.
        quoted: bool,
    },
    /// A string literal's bytes.
    Str(Vec<u8>),
    /// An integer literal's digits.
    Int(String),
    /// A decimal literal (`1.5`, `.5`).
    Decimal(String),
    /// A literal with an exponent (`1.5e0`, `12E3`): a DOUBLE.
    Float(String),
    /// A hexadecimal literal's bytes (`0x6162`, `X'6162'`).
    Hex(Vec<u8>),
    /// Punctuation or an operator.
    Op(&'static str),
}

/// A token and where it starts in the statement text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Byte offset of its first character.
    pub start: usize,
    /// Byte offset after its last character.
    pub end: usize,
}

const OPS: [&str; 22] = [
    "<=>", "<=", ">=", "<>", "!=", "||", "&&", "(", ")", ",", ";", ".", "=", "<", ">", "+", "-",
    "*", "/", "%", "!", "?",
];

/// The byte offsets of a prepared statement's `?` parameters: each `?`
/// outside a string, a quoted name and a comment (`-- `, `#`, `/* */`;
/// a `/*! */` comment's text is statement text, as MySQL reads it).
pub fn placeholders(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() {
                    if b[i] == b'\\' && q != b'`' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q {
                        if b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2)
                    .is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') && b.get(i + 2) != Some(&b'!') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            b'?' => {
                out.push(i);
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Splits `text` into tokens. An unterminated string, identifier or
/// comment is a syntax error near where it starts.
pub fn tokenize(text: &str) -> Result<Vec<Token>, SqlError> {
    tokenize_in(text, false)
}

/// [`tokenize`], with `"` quoting identifiers as `` ` `` does when
/// `ansi_quotes` (sql_mode ANSI_QUOTES) rather than strings.
pub fn tokenize_in(text: &str, ansi_quotes: bool) -> Result<Vec<Token>, SqlError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // Inside a `/*! ... */` comment: its closing `*/` is skipped.
    let mut in_exec_comment = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#'
            || (c == b'-'
                && b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|x| x.is_ascii_whitespace()))
        {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'*' && in_exec_comment && b.get(i + 1) == Some(&b'/') {
            in_exec_comment = false;
            i += 2;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            if b.get(i + 2) == Some(&b'!') && !in_exec_comment {
                i += 3;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                in_exec_comment = true;
                continue;
            }
            let start = i;
            i += 2;
            loop {
                if i + 1 >= b.len() {
                    return Err(SqlError::syntax(text, start));
                }
                if b[i] == b'*' && b[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        let start = i;
        // X'6162' (an even count of digits) and 0x6162 (an odd count
        // takes a leading 0); `0x` followed by anything but hex digits
        // and word ends is a word, as in MySQL.
        if (c == b'x' || c == b'X') && b.get(i + 1) == Some(&b'\'') {
            let digits_end = (i + 2..b.len())
                .find(|&j| b[j] == b'\'')
                .ok_or_else(|| SqlError::syntax(text, start))?;
            let digits = &b[i + 2..digits_end];
            if !digits.len().is_multiple_of(2) || !digits.iter().all(u8::is_ascii_hexdigit) {
                return Err(SqlError::syntax(text, start));
            }
            out.push(Token {
                tok: Tok::Hex(hex_bytes(digits)),
                start,
                end: digits_end + 1,
            });
            i = digits_end + 1;
            continue;
        }
        if c == b'0' && b.get(i + 1) == Some(&b'x') {
            let mut j = i + 2;
            while j < b.len() && b[j].is_ascii_hexdigit() {
                j += 1;
            }
            if j > i + 2 && (j == b.len() || !is_word(b[j])) {
                out.push(Token {
                    tok: Tok::Hex(hex_bytes(&b[i + 2..j])),
                    start,
                    end: j,
                });
                i = j;
                continue;
            }
        }
        if c == b'\'' || (c == b'"' && !ansi_quotes) {
            let (s, end) = string(b, i).ok_or_else(|| SqlError::syntax(text, start))?;
            out.push(Token {
                tok: Tok::Str(s),
                start,
                end,
            });
            i = end;
            continue;
        }
        if c == b'`' || c == b'"' {
            // A quoted identifier; its quote doubled stands for itself.
            let mut s = Vec::new();
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(SqlError::syntax(text, start)),
                    Some(&q) if q == c && b.get(i + 1) == Some(&c) => {
                        s.push(c);
                        i += 2;
                    }
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(&x) => {
                        s.push(x);
                        i += 1;
                    }
                }
            }
            // An empty quoted identifier is a word too: MySQL's lexer takes
            // it, and what names it judges it (1103 for a table, 1231 or
            // 1210 for a variable's value).
            out.push(Token {
                tok: Tok::Word {
                    text: String::from_utf8_lossy(&s).into_owned(),
                    quoted: true,
                },
                start,
                end: i,
            });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(|x| x.is_ascii_digit())) {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let mut decimal = false;
            if i < b.len()
                && b[i] == b'.'
                && b.get(i + 1)
                    .is_none_or(|x| x.is_ascii_digit() || !is_word(*x))
            {
                decimal = true;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            // An exponent: `12e3`, `1.5e-7`, `.5E+2` are DOUBLE literals.
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                    j += 1;
                }
                let digits_at = j;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if j > digits_at && (j == b.len() || !is_word(b[j])) {
                    out.push(Token {
                        tok: Tok::Float(text[start..j].to_string()),
                        start,
                        end: j,
                    });
                    i = j;
                    continue;
                }
            }
            if i < b.len() && is_word(b[i]) {
                // `1abc` is an identifier in MySQL: one word.
                while i < b.len() && is_word(b[i]) {
                    i += 1;
                }
                out.push(bare(text, start, i));
                continue;
            }
            let digits = text[start..i].to_string();
            out.push(Token {
                tok: if decimal {
                    Tok::Decimal(digits)
                } else {
                    Tok::Int(digits)
                },
                start,
                end: i,
            });
            continue;
        }
        if c == b'@' {
            // `@@name`, `@@session.name`, `@@global.name`: one word.
            let mut j = i + 1;
            if b.get(j) == Some(&b'@') {
                j += 1;
            }
            let name_start = j;
            while j < b.len() && (is_word(b[j]) || b[j] == b'.') {
                j += 1;
            }
            if j == name_start {
                return Err(SqlError::syntax(text, start));
            }
            out.push(bare(text, start, j));
            i = j;
            continue;
        }
        if is_word(c) {
            while i < b.len() && is_word(b[i]) {
                i += 1;
            }
            out.push(bare(text, start, i));
            continue;
        }
        match OPS.iter().find(|op| b[i..].starts_with(op.as_bytes())) {
            Some(op) => {
                out.push(Token {
                    tok: Tok::Op(op),
                    start,
                    end: i + op.len(),
                });
                i += op.len();
            }
            None => return Err(SqlError::syntax(text, start)),
        }
    }
    Ok(out)
}

/// The bytes hex digits spell, an odd count with a leading 0.
fn hex_bytes(digits: &[u8]) -> Vec<u8> {
    let value = |d: u8| match d {
        b'0'..=b'9' => d - b'0',
        b'a'..=b'f' => d - b'a' + 10,
        _ => d - b'A' + 10,
    };
    let mut out = Vec::with_capacity(digits.len() / 2 + 1);
    let mut rest = digits;
    if rest.len() % 2 == 1 {
        out.push(value(rest[0]));
        rest = &rest[1..];
    }
    for pair in rest.chunks(2) {
        out.push(value(pair[0]) << 4 | value(pair[1]));
    }
    out
}

/// The unquoted word `text[start..end]`.
fn bare(text: &str, start: usize, end: usize) -> Token {
    Token {
        tok: Tok::Word {
            text: text[start..end].to_string(),
            quoted: false,
        },
        start,
        end,
    }
}

/// Whether a byte may be part of an unquoted identifier (MySQL allows
/// letters, digits, `_`, `$` and bytes above 0x7f).
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// A quoted string starting at `i`: its bytes and the offset after it.
fn string(b: &[u8], mut i: usize) -> Option<(Vec<u8>, usize)> {
    let q = b[i];
    i += 1;
    let mut s = Vec::new();
    loop {
        let c = *b.get(i)?;
        if c == q {
            if b.get(i + 1) == Some(&q) {
                s.push(q);
                i += 2;
                continue;
            }
            return Some((s, i + 1));
        }
        if c == b'\\' {
            let e = *b.get(i + 1)?;
            s.push(match e {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'0' => 0,
                b'b' => 8,
                b'Z' => 26,
                other => other,
            });
            i += 2;
            continue;
        }
        s.push(c);
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &str) -> Vec<Tok> {
        tokenize(t).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn strings_identifiers_and_comments() {
        assert_eq!(
            words("select `a``b`, 'it''s', \"x\\ny\" -- gone\n# gone too\n/* and this */ 1.5"),
            vec![
                Tok::Word {
                    text: "select".into(),
                    quoted: false
                },
                Tok::Word {
                    text: "a`b".into(),
                    quoted: true
                },
                Tok::Op(","),
                Tok::Str(b"it's".to_vec()),
                Tok::Op(","),
                Tok::Str(b"x\ny".to_vec()),
                Tok::Decimal("1.5".into()),
            ]
        );
    }

    #[test]
    fn executable_comments_are_read() {
        assert_eq!(
            words("x /*!40100 DEFAULT */ y"),
            words("x DEFAULT y"),
            "the body of /*!NNNNN ... */ is SQL"
        );
    }

    #[test]
    fn unterminated_things_are_syntax_errors() {
        for t in [
            "select 'abc",
            "select `abc",
            "select /* abc",
            "select @@",
            "select \\",
        ] {
            let e = tokenize(t).unwrap_err();
            assert_eq!(e.code, 1064, "{t}");
        }
    }
}
