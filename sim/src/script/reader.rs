//! Reading a script into commands, as mysqltest reads one: `read_line`
//! (a query runs to the delimiter, outside quotes; a `#` or `-` first on a
//! line makes the line a comment; `if (...)` and `while (...)` end at their
//! `{`; a `}` alone at a line's start ends a block), `convert_to_format_v1`
//! (the spaces after a newline in a query are dropped) and `read_command`
//! (the first word, up to a space, `(` or the delimiter, names the
//! command). Sourced files are read through a stack, as mysqltest's
//! `cur_file`.

/// What `read_command` made of a piece of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// `# ...`: nothing to do.
    Comment,
    /// `-- word ...`: must name a command.
    Dashed,
    /// Anything else: a command if its first word names one, else a query.
    Plain,
}

/// One command as read, before it is typed.
#[derive(Debug, Clone)]
pub(super) struct Command {
    /// How it was written.
    pub form: Form,
    /// The text, without a leading `--` and leading spaces.
    pub text: String,
    /// Byte length of its first word.
    pub first_word_len: usize,
    /// The file it came from, and the line it started on.
    pub file: String,
    pub line: usize,
}

impl Command {
    /// The first word (the command's name, for a command).
    pub fn first_word(&self) -> &str {
        &self.text[..self.first_word_len]
    }

    /// Everything after the first word and the spaces after it.
    pub fn argument(&self) -> &str {
        self.text[self.first_word_len..].trim_start()
    }
}

struct Source {
    name: String,
    text: Vec<u8>,
    pos: usize,
    line: usize,
}

/// The stack of files being read.
pub(super) struct Reader {
    stack: Vec<Source>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Normal,
    Quote(u8),
    SlashInQuote(u8),
    Comment,
    LineStart,
}

impl Reader {
    pub fn new(name: &str, text: &str) -> Reader {
        let mut r = Reader { stack: Vec::new() };
        r.push(name, text);
        r
    }

    /// Starts reading a sourced file; its commands come next.
    pub fn push(&mut self, name: &str, text: &str) {
        self.stack.push(Source {
            name: name.to_string(),
            text: text.as_bytes().to_vec(),
            pos: 0,
            line: 1,
        });
    }

    /// How deeply files are nested (1: the test itself).
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    fn getc(&mut self) -> Option<u8> {
        loop {
            let top = self.stack.last_mut()?;
            if top.pos < top.text.len() {
                let c = top.text[top.pos];
                top.pos += 1;
                if c == b'\n' {
                    top.line += 1;
                }
                return Some(c);
            }
            if self.stack.len() == 1 {
                return None;
            }
            self.stack.pop();
        }
    }

    fn ungetc(&mut self) {
        if let Some(top) = self.stack.last_mut() {
            top.pos -= 1;
            if top.text[top.pos] == b'\n' {
                top.line -= 1;
            }
        }
    }

    /// Whether the delimiter starts at `c` (the rest is read ahead and
    /// given back when it does not match).
    fn at_delimiter(&mut self, c: u8, delimiter: &[u8]) -> bool {
        if delimiter.first() != Some(&c) {
            return false;
        }
        let mut taken = 0;
        for &d in &delimiter[1..] {
            let top = self.stack.last().expect("reading");
            if top.pos < top.text.len() && top.text[top.pos] == d {
                self.stack.last_mut().expect("reading").pos += 1;
                taken += 1;
            } else {
                let top = self.stack.last_mut().expect("reading");
                top.pos -= taken;
                return false;
            }
        }
        true
    }

    /// mysqltest's `read_line`: the next piece of text, or None at the end
    /// of the test file. The line is the one the piece started on.
    fn read_line(&mut self, delimiter: &str) -> Option<(String, String, usize)> {
        let delim = delimiter.as_bytes();
        let mut buf: Vec<u8> = Vec::new();
        let mut state = State::LineStart;
        let mut start = self.position();
        loop {
            let depth = self.stack.len();
            let Some(c) = self.getc() else {
                if buf.is_empty() {
                    return None;
                }
                return Some(piece(start, &buf));
            };
            if self.stack.len() != depth {
                // A sourced file ended inside a piece: what it held so
                // far is that piece, as when the file ends at its end.
                self.ungetc();
                if !buf.is_empty() {
                    return Some(piece(start, &buf));
                }
                state = State::LineStart;
                start = self.position();
                continue;
            }
            if c == b'\n' && buf.last() == Some(&b'\r') {
                buf.pop();
            }
            let mut skip = false;
            match state {
                State::Normal => {
                    if self.at_delimiter(c, delim) {
                        return Some(piece(start, &buf));
                    }
                    if c == b'{' && (starts_word(&buf, b"while") || starts_word(&buf, b"if")) {
                        buf.push(c);
                        return Some(piece(start, &buf));
                    }
                    if matches!(c, b'\'' | b'"' | b'`') {
                        state = State::Quote(c);
                    }
                }
                State::Comment => {
                    if c == b'\n' {
                        return Some(piece(start, &buf));
                    }
                }
                State::LineStart => {
                    if c == b'#' || c == b'-' {
                        state = State::Comment;
                    } else if c.is_ascii_whitespace() {
                        skip = true;
                        if c == b'\n' {
                            start = self.position();
                        }
                    } else if self.at_delimiter(c, delim) {
                        return Some(piece(start, &buf));
                    } else if c == b'}' {
                        buf.push(c);
                        return Some(piece(start, &buf));
                    } else if matches!(c, b'\'' | b'"' | b'`') {
                        state = State::Quote(c);
                    } else {
                        state = State::Normal;
                    }
                }
                State::Quote(q) => {
                    if c == q {
                        state = State::Normal;
                    } else if c == b'\\' {
                        state = State::SlashInQuote(q);
                    }
                }
                State::SlashInQuote(q) => state = State::Quote(q),
            }
            if !skip {
                buf.push(c);
            }
        }
    }

    fn position(&self) -> (String, usize) {
        self.stack
            .last()
            .map_or((String::new(), 0), |s| (s.name.clone(), s.line))
    }

    /// mysqltest's `read_command`: the next command, or None at the end.
    pub fn read_command(&mut self, delimiter: &str) -> Option<Command> {
        let (file, raw, line) = self.read_line(delimiter)?;
        let text = format_v1(&raw);
        let (form, text) = if text.starts_with('#') {
            (Form::Comment, text.as_str())
        } else if let Some(rest) = text.strip_prefix("--") {
            (Form::Dashed, rest)
        } else {
            (Form::Plain, text.as_str())
        };
        let text = text.trim_start().to_string();
        let bytes = text.as_bytes();
        let mut n = 0;
        while n < bytes.len()
            && !bytes[n].is_ascii_whitespace()
            && bytes[n] != b'('
            && !bytes[n..].starts_with(delimiter.as_bytes())
        {
            n += 1;
        }
        Some(Command {
            form,
            text,
            first_word_len: n,
            file,
            line,
        })
    }
}

/// A piece read: its file, text and first line.
fn piece(start: (String, usize), buf: &[u8]) -> (String, String, usize) {
    (start.0, String::from_utf8_lossy(buf).into_owned(), start.1)
}

/// Whether `buf` starts with `word`, compared as mysqltest does (the
/// shorter of the two, case-insensitively).
fn starts_word(buf: &[u8], word: &[u8]) -> bool {
    let n = word.len().min(buf.len());
    buf[..n].eq_ignore_ascii_case(&word[..n])
}

/// mysqltest's `convert_to_format_v1`: after a newline outside quotes the
/// next line's leading spaces go.
fn format_v1(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut last_was_quote = false;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' && !last_was_quote {
            out.push(c);
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            last_was_quote = false;
        } else if matches!(c, b'\'' | b'"' | b'`') {
            out.push(c);
            i += 1;
            while i < b.len() && b[i] != c {
                out.push(b[i]);
                i += 1;
            }
            if i < b.len() {
                out.push(b[i]);
                i += 1;
            }
            last_was_quote = true;
        } else {
            out.push(c);
            i += 1;
            last_was_quote = false;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<(Form, String, usize)> {
        let mut r = Reader::new("t", text);
        let mut v = Vec::new();
        while let Some(c) = r.read_command(";") {
            v.push((c.form, c.text, c.line));
        }
        v
    }

    #[test]
    fn queries_run_to_the_delimiter_outside_quotes_and_comments_to_the_line_end() {
        let v = all("select 'a;b';  # trailing\n-- error 1062\ninsert into t\n   values (1);\n");
        assert_eq!(v[0], (Form::Plain, "select 'a;b'".into(), 1));
        assert_eq!(v[1], (Form::Comment, "# trailing".into(), 1));
        assert_eq!(v[2], (Form::Dashed, "error 1062".into(), 2));
        // The next line's leading spaces go, as format v1 has it.
        assert_eq!(v[3], (Form::Plain, "insert into t\nvalues (1)".into(), 3));
        assert_eq!(v.len(), 4);
    }

    #[test]
    fn blocks_end_at_their_brace_and_a_brace_alone_closes_them() {
        let v = all("while ($i)\n{\n  dec $i;\n}\nif (!$x) {\necho y;\n}\n");
        let texts: Vec<&str> = v.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(
            texts,
            ["while ($i)\n{", "dec $i", "}", "if (!$x) {", "echo y", "}"]
        );
    }

    #[test]
    fn a_delimiter_of_several_characters_is_matched_whole() {
        let mut r = Reader::new("t", "select 1|| select '||'||x|");
        assert_eq!(r.read_command("||").unwrap().text, "select 1");
        assert_eq!(r.read_command("||").unwrap().text, "select '||'");
        assert_eq!(r.read_command("||").unwrap().text, "x|");
    }

    #[test]
    fn a_sourced_file_is_read_before_the_rest() {
        let mut r = Reader::new("t", "a;\nb;\n");
        assert_eq!(r.read_command(";").unwrap().text, "a");
        r.push("inc", "x;\n");
        let c = r.read_command(";").unwrap();
        assert_eq!((c.text.as_str(), c.file.as_str()), ("x", "inc"));
        assert_eq!(r.read_command(";").unwrap().text, "b");
        assert!(r.read_command(";").is_none());
    }
}
