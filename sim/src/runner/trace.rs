//! The trace: every statement, result, crash and recovery step of a run,
//! hashed as it is written (two runs of the same inputs must agree) and
//! kept as JSON lines when asked for.

use super::*;

pub(super) struct Trace {
    pub(super) hash: u64,
    pub(super) lines: Option<Vec<String>>,
}

impl Trace {
    /// Hashes the line and its newline FNV-1a style, eight bytes a step
    /// (one statement's line is hashed at every step of every seed).
    pub(super) fn push(&mut self, line: &str) {
        let mut h = Fnv(self.hash);
        std::hash::Hasher::write(&mut h, line.as_bytes());
        std::hash::Hasher::write_u8(&mut h, b'\n');
        self.hash = h.0;
        if let Some(l) = &mut self.lines {
            l.push(line.to_string());
        }
    }

    /// Keeps a line whose facts were hashed by another call.
    pub(super) fn keep(&mut self, line: String) {
        if let Some(l) = &mut self.lines {
            l.push(line);
        }
    }

    /// Hashes a statement step's facts: those its line shows, the
    /// statement in full (the line shortens long values), of a result its
    /// kind and size, as the line does, and of an error its code and
    /// `message`.
    pub(super) fn hash_statement(
        &mut self,
        io: u64,
        session: u32,
        t_us: u64,
        req: &Request,
        result: Stepped<'_>,
        message: Option<&str>,
    ) {
        use std::hash::Hash as _;
        let mut h = Fnv(self.hash);
        (io, session, t_us).hash(&mut h);
        req.hash(&mut h);
        match result {
            Stepped::Waiting => 0u64.hash(&mut h),
            Stepped::Done(Response::Ok) => 1u64.hash(&mut h),
            Stepped::Done(Response::Affected(n)) => (2u64, *n).hash(&mut h),
            Stepped::Done(Response::Row(r)) => (3u64, r.is_some()).hash(&mut h),
            Stepped::Done(Response::Rows(rs)) => (4u64, rs.len()).hash(&mut h),
            Stepped::Failed(e) => (5u64, e.mysql_code(), message).hash(&mut h),
        }
        self.hash = h.0;
    }
}

/// How a statement step ended, for the trace.
#[derive(Clone, Copy)]
pub(super) enum Stepped<'a> {
    /// It waits for a lock or a group commit.
    Waiting,
    /// It finished.
    Done(&'a Response),
    /// It failed.
    Failed(&'a engine::Error),
}

/// FNV-1a over whole words ([`crate::storage::fnv_word`]): a
/// [`std::hash::Hasher`] whose result depends only on what is hashed (no
/// per-process keys), so runs agree.
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = crate::storage::fnv_bytes(self.0, bytes);
    }

    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = crate::storage::fnv_word(self.0, v);
    }
}

/// A short description of a request for the trace (no long payloads).
/// Built once per statement, so written without `format!` per value.
pub fn describe(r: &Request) -> String {
    use std::fmt::Write as _;
    pub(super) fn v(out: &mut String, x: &Value) {
        match x {
            Value::Null => out.push_str("NULL"),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::UInt(u) => {
                let _ = write!(out, "{u}");
            }
            Value::Bytes(b) if b.len() > 16 => {
                let _ = write!(out, "<{} bytes>", b.len());
            }
            Value::Bytes(b) => out.extend(b.iter().map(|&c| char::from(c))),
        }
    }
    pub(super) fn vs(out: &mut String, xs: &[Value]) {
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            v(out, x);
        }
    }
    let mut out = String::with_capacity(48);
    match r {
        Request::Insert { table, row } => {
            let _ = write!(out, "insert {table} (");
            vs(&mut out, row);
            out.push(')');
        }
        Request::Update { table, key, set } => {
            let _ = write!(out, "update {table} [");
            vs(&mut out, key);
            out.push_str("] set ");
            for (i, (c, x)) in set.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(c);
                out.push('=');
                v(&mut out, x);
            }
        }
        Request::Delete { table, key } => {
            let _ = write!(out, "delete {table} [");
            vs(&mut out, key);
            out.push(']');
        }
        Request::Get { table, key } => {
            let _ = write!(out, "get {table} [");
            vs(&mut out, key);
            out.push(']');
        }
        Request::Scan {
            table,
            index,
            reverse,
            limit,
            ..
        } => {
            let _ = write!(out, "scan {table} {index:?} rev={reverse} limit={limit:?}");
        }
        Request::Locking {
            read, exclusive, ..
        } => {
            out.push_str(&describe(read));
            out.push_str(if *exclusive {
                " for update"
            } else {
                " lock in share mode"
            });
        }
        other => {
            let _ = write!(out, "{other:?}");
        }
    }
    out
}

/// Appends `s` as a JSON string literal (printable ASCII without quotes
/// or backslashes as it is, anything else through serde).
pub(super) fn push_json_str(out: &mut String, s: &str) {
    if s.bytes()
        .all(|c| c >= 0x20 && c != b'"' && c != b'\\' && c < 0x7f)
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into()));
    }
}

/// A short description of a response for the trace, into a reused buffer.
pub(super) fn short<'b>(r: &Response, buf: &'b mut String) -> &'b str {
    use std::fmt::Write as _;
    buf.clear();
    let _ = match r {
        Response::Ok => buf.write_str("ok"),
        Response::Affected(n) => write!(buf, "affected {n}"),
        Response::Row(r) => write!(buf, "row {}", r.is_some()),
        Response::Rows(rs) => write!(buf, "{} rows", rs.len()),
    };
    buf
}
