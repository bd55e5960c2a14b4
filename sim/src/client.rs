//! A MySQL protocol client over TCP, on the same codec the server speaks
//! (`engine::wire`): the connection phase with `mysql_native_password`,
//! COM_QUERY and its reply, COM_PING, COM_INIT_DB and COM_QUIT. For the
//! tests of `innosim serve` and for driving a real MySQL or MariaDB
//! server.

use engine::wire::handshake::{self, cap, Greeting, Response};
use engine::wire::reply::{self, Reply};
use engine::wire::{write_packet, Command, PacketReader};
use std::io::{Read, Write};
use std::net::TcpStream;

/// A failure of the connection (not a statement's ERR, which is a
/// [`Reply::Err`]).
#[derive(Debug)]
pub enum ClientError {
    /// The socket failed or closed.
    Io(std::io::Error),
    /// The server broke the protocol.
    Protocol(String),
    /// The server refused the connection (an ERR in the connection
    /// phase: 1045 and the like).
    Refused(reply::ErrPacket),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Io(e) => write!(f, "{e}"),
            ClientError::Protocol(m) => write!(f, "protocol: {m}"),
            ClientError::Refused(e) => {
                write!(f, "ERROR {} ({}): {}", e.code, e.sqlstate, e.message)
            }
        }
    }
}

impl std::error::Error for ClientError {}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> ClientError {
        ClientError::Io(e)
    }
}

impl From<engine::wire::WireError> for ClientError {
    fn from(e: engine::wire::WireError) -> ClientError {
        ClientError::Protocol(e.0)
    }
}

/// A statement the server prepared.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Its id.
    pub id: u32,
    /// Its `?` parameters.
    pub params: usize,
    /// Its result columns, as the prepare described them.
    pub columns: Vec<reply::ColumnDef>,
}

/// An open connection.
pub struct Client {
    stream: Box<dyn crate::serve::Stream>,
    reader: PacketReader,
    seq: u8,
    /// The server's greeting.
    pub greeting: Greeting,
}

impl Client {
    /// Connects and logs in as `user` with `password`, in `db` if given.
    pub fn connect(
        addr: impl std::net::ToSocketAddrs,
        user: &str,
        password: &str,
        db: Option<&str>,
    ) -> Result<Client, ClientError> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Client::login(Box::new(stream), user, password, db)
    }

    /// [`Client::connect`] over a Unix socket.
    pub fn connect_unix(
        path: impl AsRef<std::path::Path>,
        user: &str,
        password: &str,
        db: Option<&str>,
    ) -> Result<Client, ClientError> {
        let stream = std::os::unix::net::UnixStream::connect(path)?;
        Client::login(Box::new(stream), user, password, db)
    }

    fn login(
        stream: Box<dyn crate::serve::Stream>,
        user: &str,
        password: &str,
        db: Option<&str>,
    ) -> Result<Client, ClientError> {
        let mut c = Client {
            stream,
            reader: PacketReader::new(1 << 30),
            seq: 0,
            greeting: Greeting::default(),
        };
        let g = c.read()?;
        if g.first() == Some(&0xFF) {
            // Refused before the greeting (1040: too many connections).
            if let Some((Reply::Err(e), _)) = reply::read_reply(std::slice::from_ref(&g))? {
                return Err(ClientError::Refused(e));
            }
        }
        c.greeting = Greeting::decode(&g)?;
        let mut caps = cap::PROTOCOL_41
            | cap::SECURE_CONNECTION
            | cap::PLUGIN_AUTH
            | cap::LONG_PASSWORD
            | cap::TRANSACTIONS
            | cap::MULTI_RESULTS;
        if db.is_some() {
            caps |= cap::CONNECT_WITH_DB;
        }
        let resp = Response {
            capabilities: caps & c.greeting.capabilities,
            max_packet: 1 << 24,
            charset: 8,
            user: user.to_string(),
            auth: handshake::native_token(&c.greeting.scramble, password),
            database: db.map(str::to_string),
            plugin: Some(handshake::NATIVE_PASSWORD.into()),
            attrs: Vec::new(),
        };
        c.send(&resp.encode())?;
        let mut answer = c.read()?;
        if answer.first() == Some(&0xFE) {
            // AuthSwitchRequest: answer the new scramble.
            let mut r = engine::wire::Reader::new(&answer[1..]);
            let _plugin = r.nul_str();
            let data = r.nul_str();
            let mut scramble = [0u8; 20];
            if data.len() != 20 {
                return Err(ClientError::Protocol(
                    "an auth switch without a scramble".into(),
                ));
            }
            scramble.copy_from_slice(data);
            c.send(&handshake::native_token(&scramble, password))?;
            answer = c.read()?;
        }
        match reply::read_reply(&[answer])? {
            Some((Reply::Ok(_), _)) => Ok(c),
            Some((Reply::Err(e), _)) => Err(ClientError::Refused(e)),
            _ => Err(ClientError::Protocol("no OK after the handshake".into())),
        }
    }

    fn read(&mut self) -> Result<Vec<u8>, ClientError> {
        let mut buf = [0u8; 16 * 1024];
        loop {
            if let Some(p) = self.reader.next_packet()? {
                self.seq = p.seq.wrapping_add(1);
                return Ok(p.payload);
            }
            let n = self.stream.read(&mut buf)?;
            if n == 0 {
                return Err(ClientError::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
            self.reader.feed(&buf[..n]);
        }
    }

    fn send(&mut self, payload: &[u8]) -> Result<(), ClientError> {
        let mut out = Vec::new();
        self.seq = write_packet(&mut out, self.seq, payload);
        self.stream.write_all(&out)?;
        Ok(())
    }

    /// Sends `bytes` as they are (framing included, or broken), ends the
    /// sending half, and reads whatever the server sends until it closes:
    /// for tests of bad packets.
    pub fn send_raw_and_close(mut self, bytes: &[u8]) -> Result<Vec<u8>, ClientError> {
        self.stream.write_all(bytes)?;
        self.stream.shutdown_write()?;
        let mut out = Vec::new();
        self.stream.read_to_end(&mut out)?;
        Ok(out)
    }

    /// Sends a command and reads its whole reply.
    pub fn command(&mut self, cmd: &Command) -> Result<Reply, ClientError> {
        self.seq = 0;
        self.send(&cmd.encode())?;
        self.reply()
    }

    /// Reads one whole reply. A reply can end only at its first packet
    /// (OK, ERR), an EOF or an ERR: it is parsed only there, so that a
    /// result of many rows is read in linear time.
    fn reply(&mut self) -> Result<Reply, ClientError> {
        let mut payloads: Vec<Vec<u8>> = Vec::new();
        loop {
            let p = self.read()?;
            let may_end = payloads.is_empty()
                || p.first() == Some(&0xFF)
                || (p.first() == Some(&0xFE) && p.len() < 9);
            payloads.push(p);
            if may_end {
                if let Some((r, _)) = reply::read_reply(&payloads)? {
                    return Ok(r);
                }
            }
        }
    }

    /// Runs one statement.
    pub fn query(&mut self, sql: &str) -> Result<Reply, ClientError> {
        self.command(&Command::Query(sql.as_bytes().to_vec()))
    }

    /// Sends a statement without waiting for its reply (for a statement
    /// that blocks); [`Client::finish`] reads it.
    pub fn send_query(&mut self, sql: &str) -> Result<(), ClientError> {
        self.seq = 0;
        self.send(&Command::Query(sql.as_bytes().to_vec()).encode())
    }

    /// The reply of a statement [`Client::send_query`] sent.
    pub fn finish(&mut self) -> Result<Reply, ClientError> {
        self.reply()
    }

    /// COM_FIELD_LIST: a table's column definitions (each with its
    /// default after it, not decoded), or the server's error.
    pub fn field_list(
        &mut self,
        table: &str,
        wildcard: &str,
    ) -> Result<Result<Vec<reply::ColumnDef>, reply::ErrPacket>, ClientError> {
        self.seq = 0;
        self.send(
            &Command::FieldList {
                table: table.as_bytes().to_vec(),
                wildcard: wildcard.as_bytes().to_vec(),
            }
            .encode(),
        )?;
        let mut cols = Vec::new();
        loop {
            let p = self.read()?;
            match p.first() {
                Some(0xFF) => {
                    return match reply::read_reply(&[p])? {
                        Some((Reply::Err(e), _)) => Ok(Err(e)),
                        _ => Err(ClientError::Protocol("a broken ERR".into())),
                    }
                }
                Some(0xFE) if p.len() < 9 => return Ok(Ok(cols)),
                _ => cols.push(reply::ColumnDef::decode(&p)?),
            }
        }
    }

    /// COM_STMT_PREPARE: the statement's id, its parameters' count and
    /// its result columns, or the server's error.
    pub fn prepare(
        &mut self,
        sql: &str,
    ) -> Result<Result<Prepared, reply::ErrPacket>, ClientError> {
        self.seq = 0;
        self.send(&Command::StmtPrepare(sql.as_bytes().to_vec()).encode())?;
        let first = self.read()?;
        if first.first() == Some(&0xFF) {
            return match reply::read_reply(&[first])? {
                Some((Reply::Err(e), _)) => Ok(Err(e)),
                _ => Err(ClientError::Protocol("a broken ERR".into())),
            };
        }
        let ok = engine::wire::binary::PrepareOk::decode(&first)?;
        if ok.params > 0 {
            for _ in 0..ok.params {
                self.read()?;
            }
            self.read()?; // EOF
        }
        let mut columns = Vec::new();
        if ok.columns > 0 {
            for _ in 0..ok.columns {
                columns.push(reply::ColumnDef::decode(&self.read()?)?);
            }
            self.read()?; // EOF
        }
        Ok(Ok(Prepared {
            id: ok.statement_id,
            params: usize::from(ok.params),
            columns,
        }))
    }

    /// COM_STMT_EXECUTE with `params`, each sent as a string (type
    /// VAR_STRING) or NULL; rows come back in binary form and are given
    /// in text form.
    pub fn execute(
        &mut self,
        st: &Prepared,
        params: &[Option<&[u8]>],
    ) -> Result<Reply, ClientError> {
        let mut p = st.id.to_le_bytes().to_vec();
        p.push(0);
        p.extend(1u32.to_le_bytes());
        if st.params > 0 {
            let mut nulls = vec![0u8; st.params.div_ceil(8)];
            for (i, v) in params.iter().enumerate() {
                if v.is_none() {
                    nulls[i / 8] |= 1 << (i % 8);
                }
            }
            p.extend(nulls);
            p.push(1);
            for _ in 0..st.params {
                p.extend([reply::ty::VAR_STRING, 0]);
            }
            for v in params.iter().flatten() {
                engine::wire::put_lenenc_str(&mut p, v);
            }
        }
        self.seq = 0;
        self.send(&Command::StmtExecute(p).encode())?;
        let first = self.read()?;
        if matches!(first.first(), Some(0x00 | 0xFF)) {
            return reply::read_reply(&[first])?
                .map(|(r, _)| r)
                .ok_or_else(|| ClientError::Protocol("a cut reply".into()));
        }
        let n = engine::wire::Reader::new(&first)
            .lenenc("column count")?
            .unwrap_or(0) as usize;
        let mut columns = Vec::with_capacity(n);
        for _ in 0..n {
            columns.push(reply::ColumnDef::decode(&self.read()?)?);
        }
        self.read()?; // EOF
        let mut rows = Vec::new();
        loop {
            let p = self.read()?;
            if p.first() == Some(&0xFE) && p.len() < 9 {
                let mut r = engine::wire::Reader::new(&p[1..]);
                let warnings = r.uint(2, "EOF")? as u16;
                let status = r.uint(2, "EOF")? as u16;
                return Ok(Reply::Rows {
                    columns,
                    rows,
                    warnings,
                    status,
                });
            }
            rows.push(engine::wire::binary::decode_binary_row(&columns, &p)?);
        }
    }

    /// COM_STMT_CLOSE (no reply).
    pub fn close_statement(&mut self, st: &Prepared) -> Result<(), ClientError> {
        self.seq = 0;
        self.send(&Command::StmtClose(st.id).encode())
    }

    /// COM_STATISTICS: the server's one-line status text.
    pub fn statistics(&mut self) -> Result<String, ClientError> {
        self.seq = 0;
        self.send(&Command::Statistics.encode())?;
        let p = self.read()?;
        Ok(String::from_utf8_lossy(&p).into_owned())
    }

    /// Closes with COM_QUIT.
    pub fn quit(mut self) -> Result<(), ClientError> {
        self.seq = 0;
        self.send(&Command::Quit.encode())
    }
}
