//! The MySQL client/server protocol as MySQL 5.1 speaks it, bytes in and
//! bytes out: packet framing, the connection phase (handshake v10 and
//! `mysql_native_password`), the command phase's commands, and the
//! replies (OK, ERR, EOF, text result sets). Pure functions and plain
//! values, no sockets and no threads, so that the server
//! (`sim::serve`) drives it over TCP and the simulator or a test drives
//! it over in-memory bytes, and one side of a connection can be checked
//! with the other's code.
//!
//! Taken from the protocol's documentation (MySQL's "Client/Server
//! Protocol" pages of the internals manual) and MySQL 5.1's
//! `sql/net_serv.cc` (framing), `sql/sql_acl.cc` and
//! `sql/password.c` (handshake, `scramble` / `check_scramble`),
//! `sql/protocol.cc` (`net_send_ok`, `net_send_error_packet`,
//! `net_send_eof`, `Protocol::send_fields`):
//!
//! ```text
//! packet:   [payload length: 3 bytes LE][sequence id: 1][payload]
//!           a payload of 0xFFFFFF bytes or more goes as packets of
//!           0xFFFFFF bytes, then one shorter (maybe empty) packet
//! lenenc:   < 0xFB: 1 byte; 0xFC + 2 bytes; 0xFD + 3 bytes; 0xFE + 8
//!           bytes; 0xFB in a row is NULL
//! ```
//!
//! The sequence id starts at 0 with each command (and with the server's
//! greeting) and goes up by one with every packet either side sends.

pub mod binary;
pub mod handshake;
pub mod reply;

use std::fmt;

/// The largest payload one packet carries.
pub const MAX_PACKET: usize = 0xFF_FFFF;

/// A protocol violation the other side made: the connection cannot go on
/// (the server answers with an ERR where it still can, and closes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WireError {}

/// Result of decoding.
pub type WireResult<T> = Result<T, WireError>;

fn short(what: &str) -> WireError {
    WireError(format!("{what}: packet too short"))
}

/// One logical packet: its sequence id (of its first physical packet)
/// and its whole payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Sequence id.
    pub seq: u8,
    /// Payload, joined from its physical packets.
    pub payload: Vec<u8>,
}

/// Cuts logical packets out of a byte stream as it arrives
/// (`my_net_read`): physical packets of 0xFFFFFF bytes are joined with
/// the ones after them, and a payload larger than `max_payload`
/// (`max_allowed_packet`) is an error before it is buffered whole.
#[derive(Debug)]
pub struct PacketReader {
    buf: Vec<u8>,
    max_payload: usize,
}

impl PacketReader {
    /// A reader that refuses payloads over `max_payload` bytes.
    pub fn new(max_payload: usize) -> PacketReader {
        PacketReader {
            buf: Vec::new(),
            max_payload,
        }
    }

    /// Bytes received.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received and not yet part of a packet taken.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next whole logical packet, if all of it has arrived.
    pub fn next_packet(&mut self) -> WireResult<Option<Packet>> {
        let mut at = 0;
        let mut payload_len = 0usize;
        let mut seq = None;
        loop {
            let Some(h) = self.buf.get(at..at + 4) else {
                return self.too_big(payload_len).map(|_| None);
            };
            let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
            seq.get_or_insert(h[3]);
            payload_len += len;
            self.too_big(payload_len)?;
            if self.buf.len() < at + 4 + len {
                return Ok(None);
            }
            at += 4 + len;
            if len < MAX_PACKET {
                break;
            }
        }
        let mut payload = Vec::with_capacity(payload_len);
        let mut p = 0;
        while p < at {
            let h = &self.buf[p..p + 4];
            let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
            payload.extend_from_slice(&self.buf[p + 4..p + 4 + len]);
            p += 4 + len;
        }
        self.buf.drain(..at);
        Ok(Some(Packet {
            seq: seq.expect("a header was read"),
            payload,
        }))
    }

    fn too_big(&self, len: usize) -> WireResult<()> {
        if len > self.max_payload {
            return Err(WireError(format!(
                "a packet of {len} bytes or more, over max_allowed_packet ({})",
                self.max_payload
            )));
        }
        Ok(())
    }
}

/// Frames `payload` as one logical packet starting at sequence id `seq`
/// and appends it to `out`; returns the sequence id after it.
pub fn write_packet(out: &mut Vec<u8>, seq: u8, payload: &[u8]) -> u8 {
    let mut seq = seq;
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_PACKET);
        out.extend_from_slice(&[n as u8, (n >> 8) as u8, (n >> 16) as u8, seq]);
        out.extend_from_slice(&rest[..n]);
        seq = seq.wrapping_add(1);
        rest = &rest[n..];
        if n < MAX_PACKET {
            return seq;
        }
    }
}

/// Appends a length-encoded integer.
pub fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xFA => out.push(v as u8),
        0xFB..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_str(out: &mut Vec<u8>, s: &[u8]) {
    put_lenenc(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// A cursor over a payload.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    /// Whether everything was read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize, what: &str) -> WireResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| short(what))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// One byte.
    pub fn u8(&mut self, what: &str) -> WireResult<u8> {
        Ok(self.take(1, what)?[0])
    }

    /// A little-endian integer of `n` bytes (at most 8).
    pub fn uint(&mut self, n: usize, what: &str) -> WireResult<u64> {
        let b = self.take(n, what)?;
        Ok(b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
    }

    /// A string ended by a zero byte (the zero consumed), or by the end
    /// of the payload.
    pub fn nul_str(&mut self) -> &'a [u8] {
        let rest = self.rest();
        match rest.iter().position(|&b| b == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => {
                self.pos = self.bytes.len();
                rest
            }
        }
    }

    /// A length-encoded integer; `None` for the NULL marker 0xFB.
    pub fn lenenc(&mut self, what: &str) -> WireResult<Option<u64>> {
        Ok(match self.u8(what)? {
            0xFB => None,
            0xFC => Some(self.uint(2, what)?),
            0xFD => Some(self.uint(3, what)?),
            0xFE => Some(self.uint(8, what)?),
            0xFF => return Err(WireError(format!("{what}: 0xFF is no length"))),
            b => Some(u64::from(b)),
        })
    }

    /// A length-encoded string; `None` for NULL.
    pub fn lenenc_str(&mut self, what: &str) -> WireResult<Option<&'a [u8]>> {
        match self.lenenc(what)? {
            None => Ok(None),
            Some(n) => {
                let n = usize::try_from(n).map_err(|_| short(what))?;
                self.take(n, what).map(Some)
            }
        }
    }
}

/// A command of the command phase (the first byte of a client's packet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// COM_QUIT.
    Quit,
    /// COM_INIT_DB: `USE db`.
    InitDb(Vec<u8>),
    /// COM_QUERY: a statement's text.
    Query(Vec<u8>),
    /// COM_FIELD_LIST: a table's columns (and a LIKE pattern).
    FieldList {
        /// The table.
        table: Vec<u8>,
        /// The pattern, maybe empty.
        wildcard: Vec<u8>,
    },
    /// COM_STATISTICS.
    Statistics,
    /// COM_PROCESS_KILL: a connection id.
    ProcessKill(u32),
    /// COM_PING.
    Ping,
    /// COM_SHUTDOWN.
    Shutdown,
    /// COM_SET_OPTION: multi-statements on (0) or off (1).
    SetOption(u16),
    /// COM_STMT_PREPARE: a statement's text.
    StmtPrepare(Vec<u8>),
    /// COM_STMT_EXECUTE: the payload after the command byte.
    StmtExecute(Vec<u8>),
    /// COM_STMT_CLOSE: a statement id (no reply).
    StmtClose(u32),
    /// COM_STMT_RESET: a statement id.
    StmtReset(u32),
    /// COM_STMT_SEND_LONG_DATA: the payload after the command byte (no
    /// reply).
    StmtSendLongData(Vec<u8>),
    /// Any other command byte.
    Unknown(u8),
}

/// COM_* codes.
pub mod com {
    /// COM_QUIT.
    pub const QUIT: u8 = 0x01;
    /// COM_INIT_DB.
    pub const INIT_DB: u8 = 0x02;
    /// COM_QUERY.
    pub const QUERY: u8 = 0x03;
    /// COM_FIELD_LIST.
    pub const FIELD_LIST: u8 = 0x04;
    /// COM_SHUTDOWN.
    pub const SHUTDOWN: u8 = 0x08;
    /// COM_STATISTICS.
    pub const STATISTICS: u8 = 0x09;
    /// COM_PROCESS_KILL.
    pub const PROCESS_KILL: u8 = 0x0C;
    /// COM_PING.
    pub const PING: u8 = 0x0E;
    /// COM_STMT_PREPARE.
    pub const STMT_PREPARE: u8 = 0x16;
    /// COM_STMT_EXECUTE.
    pub const STMT_EXECUTE: u8 = 0x17;
    /// COM_STMT_SEND_LONG_DATA.
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    /// COM_STMT_CLOSE.
    pub const STMT_CLOSE: u8 = 0x19;
    /// COM_STMT_RESET.
    pub const STMT_RESET: u8 = 0x1A;
    /// COM_SET_OPTION.
    pub const SET_OPTION: u8 = 0x1B;
}

impl Command {
    /// Decodes a command packet's payload. An empty payload, or a
    /// command whose arguments are cut short, is an error.
    pub fn decode(payload: &[u8]) -> WireResult<Command> {
        let (&code, args) = payload
            .split_first()
            .ok_or_else(|| WireError("an empty command packet".into()))?;
        let mut r = Reader::new(args);
        let id = |r: &mut Reader<'_>, what: &str| r.uint(4, what).map(|v| v as u32);
        Ok(match code {
            com::QUIT => Command::Quit,
            com::INIT_DB => Command::InitDb(args.to_vec()),
            com::QUERY => Command::Query(args.to_vec()),
            com::FIELD_LIST => {
                let table = r.nul_str().to_vec();
                Command::FieldList {
                    table,
                    wildcard: r.rest().to_vec(),
                }
            }
            com::SHUTDOWN => Command::Shutdown,
            com::STATISTICS => Command::Statistics,
            com::PROCESS_KILL => Command::ProcessKill(id(&mut r, "COM_PROCESS_KILL")?),
            com::PING => Command::Ping,
            com::SET_OPTION => Command::SetOption(r.uint(2, "COM_SET_OPTION")? as u16),
            com::STMT_PREPARE => Command::StmtPrepare(args.to_vec()),
            com::STMT_EXECUTE => Command::StmtExecute(args.to_vec()),
            com::STMT_CLOSE => Command::StmtClose(id(&mut r, "COM_STMT_CLOSE")?),
            com::STMT_RESET => Command::StmtReset(id(&mut r, "COM_STMT_RESET")?),
            com::STMT_SEND_LONG_DATA => Command::StmtSendLongData(args.to_vec()),
            other => Command::Unknown(other),
        })
    }

    /// Encodes the command as a client sends it.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Command::Quit => out.push(com::QUIT),
            Command::InitDb(db) => {
                out.push(com::INIT_DB);
                out.extend_from_slice(db);
            }
            Command::Query(q) => {
                out.push(com::QUERY);
                out.extend_from_slice(q);
            }
            Command::FieldList { table, wildcard } => {
                out.push(com::FIELD_LIST);
                out.extend_from_slice(table);
                out.push(0);
                out.extend_from_slice(wildcard);
            }
            Command::Statistics => out.push(com::STATISTICS),
            Command::ProcessKill(id) => {
                out.push(com::PROCESS_KILL);
                out.extend_from_slice(&id.to_le_bytes());
            }
            Command::Ping => out.push(com::PING),
            Command::Shutdown => out.push(com::SHUTDOWN),
            Command::SetOption(o) => {
                out.push(com::SET_OPTION);
                out.extend_from_slice(&o.to_le_bytes());
            }
            Command::StmtPrepare(q) => {
                out.push(com::STMT_PREPARE);
                out.extend_from_slice(q);
            }
            Command::StmtExecute(p) => {
                out.push(com::STMT_EXECUTE);
                out.extend_from_slice(p);
            }
            Command::StmtClose(id) => {
                out.push(com::STMT_CLOSE);
                out.extend_from_slice(&id.to_le_bytes());
            }
            Command::StmtReset(id) => {
                out.push(com::STMT_RESET);
                out.extend_from_slice(&id.to_le_bytes());
            }
            Command::StmtSendLongData(p) => {
                out.push(com::STMT_SEND_LONG_DATA);
                out.extend_from_slice(p);
            }
            Command::Unknown(c) => out.push(*c),
        }
        out
    }
}

#[cfg(test)]
mod tests;
