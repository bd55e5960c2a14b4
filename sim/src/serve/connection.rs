//! One connection: the greeting, authentication, and its commands, each
//! handed to the engine thread and answered in the protocol.

use super::answer::{answer_packets, column_of};
use super::engine_thread::{Answer, Back, Described, Event, Msg};
use super::prepared::Statements;
use super::record::SharedRecorder;
use super::{Account, Shared, Stream, LATIN1, MAX_ALLOWED_PACKET, VERSION};
use engine::sql::{ConnId, Reply};
use engine::wire::handshake::{self, cap, status, Greeting, Response};
use engine::wire::reply::{self, ErrPacket, OkPacket};
use engine::wire::{write_packet, Command, PacketReader};
use std::sync::mpsc::{channel, Sender};

/// A connection's socket, its packet reader and its sequence id.
pub(super) struct Wire {
    pub(super) stream: Box<dyn Stream>,
    pub(super) reader: PacketReader,
    pub(super) seq: u8,
}

impl Wire {
    fn read(&mut self) -> Result<Option<Vec<u8>>, String> {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match self.reader.next_packet() {
                Ok(Some(p)) => {
                    self.seq = p.seq.wrapping_add(1);
                    return Ok(Some(p.payload));
                }
                Ok(None) => {}
                Err(e) => return Err(e.to_string()),
            }
            let n = self.stream.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                return Ok(None);
            }
            self.reader.feed(&buf[..n]);
        }
    }

    pub(super) fn send(&mut self, payloads: &[Vec<u8>]) -> Result<(), String> {
        let mut out = Vec::new();
        for p in payloads {
            self.seq = write_packet(&mut out, self.seq, p);
        }
        self.stream.write_all(&out).map_err(|e| e.to_string())
    }
}

pub(super) fn err(code: u16, message: &str) -> Vec<u8> {
    ErrPacket {
        code,
        sqlstate: engine::sql::error::sqlstate(code).to_string(),
        message: message.to_string(),
    }
    .encode()
}

/// One connection, from the greeting to its close.
pub(super) fn connection(
    stream: Box<dyn Stream>,
    shared: &Shared,
    scramble: [u8; 20],
    peer: &str,
) -> Result<(), String> {
    let tx = &shared.tx;
    let (back, answer) = channel();
    tx.send(Msg {
        event: Event::Connect,
        back: Some(Back::Conn(back)),
    })
    .map_err(|e| e.to_string())?;
    let conn = answer.recv().map_err(|e| e.to_string())?;
    (shared.log)(format!("connection {conn} from {peer}"));
    if let (Some(close), Ok(mut m)) = (stream.closer(), shared.sockets.lock()) {
        m.insert(conn, close);
    }
    let result = session(
        stream,
        tx,
        conn,
        &shared.account,
        scramble,
        shared.recorder.as_ref(),
    );
    if let Ok(mut m) = shared.sockets.lock() {
        m.remove(&conn);
    }
    let _ = tx.send(Msg {
        event: Event::Disconnect { conn },
        back: None,
    });
    result
}

fn session(
    stream: Box<dyn Stream>,
    tx: &Sender<Msg>,
    conn: ConnId,
    account: &Account,
    scramble: [u8; 20],
    recorder: Option<&SharedRecorder>,
) -> Result<(), String> {
    let mut w = Wire {
        stream,
        reader: PacketReader::new(MAX_ALLOWED_PACKET + 4096),
        seq: 0,
    };
    let greeting = Greeting {
        version: VERSION.into(),
        connection_id: conn,
        scramble,
        capabilities: cap::SERVER,
        charset: LATIN1,
        status: status::AUTOCOMMIT,
        plugin: handshake::NATIVE_PASSWORD.into(),
    };
    w.send(&[greeting.encode()])?;
    let Some(payload) = w.read()? else {
        return Ok(());
    };
    let resp = match Response::decode(&payload) {
        Ok(r) => r,
        Err(e) => {
            w.send(&[err(1043, "Bad handshake")])?;
            return Err(e.to_string());
        }
    };
    let mut token = resp.auth.clone();
    if resp
        .plugin
        .as_deref()
        .is_some_and(|p| p != handshake::NATIVE_PASSWORD)
    {
        w.send(&[handshake::auth_switch(&scramble)])?;
        token = w.read()?.ok_or("closed during authentication")?;
    }
    if resp.user != account.user
        || !handshake::check_native(&scramble, &token, account.hash.as_ref())
    {
        let using = if token.is_empty() { "NO" } else { "YES" };
        w.send(&[err(
            1045,
            &format!(
                "Access denied for user '{}'@'localhost' (using password: {using})",
                resp.user
            ),
        )])?;
        return Ok(());
    }
    let mut stmts = Statements::default();
    let ask = |sql: String| -> Result<Answer, String> {
        let (back, answer) = channel();
        tx.send(Msg {
            event: Event::Query { conn, sql },
            back: Some(Back::Answer(back)),
        })
        .map_err(|e| e.to_string())?;
        answer.recv().map_err(|e| e.to_string())
    };
    let _ = tx.send(Msg {
        event: Event::Client {
            conn,
            user: resp.user.clone(),
            host: "localhost".into(),
        },
        back: None,
    });
    if let Some(db) = &resp.database {
        let a = ask(format!("USE `{}`", db.replace('`', "``")))?;
        if let Reply::Error(e) = a.reply {
            w.send(&[err(e.code, &e.message)])?;
            return Ok(());
        }
    }
    w.send(&[OkPacket {
        status: status::AUTOCOMMIT,
        ..OkPacket::default()
    }
    .encode()])?;
    loop {
        w.seq = 0;
        let payload = match w.read() {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(()),
            Err(e) => {
                // Over max_allowed_packet (ER_NET_PACKET_TOO_LARGE), or
                // a broken stream: the error, then the connection closes.
                let _ = w.send(&[err(
                    1153,
                    "Got a packet bigger than 'max_allowed_packet' bytes",
                )]);
                return Err(e);
            }
        };
        if let Some(r) = recorder {
            if let Ok(mut r) = r.lock() {
                let _ = r.packet(conn, &payload);
            }
        }
        let cmd = match Command::decode(&payload) {
            Ok(c) => c,
            Err(e) => {
                w.send(&[err(1047, "Unknown command")])?;
                return Err(e.to_string());
            }
        };
        match cmd {
            Command::Quit => return Ok(()),
            Command::Ping => w.send(&[OkPacket::default().encode()])?,
            Command::InitDb(db) => match utf8(&db) {
                Ok(db) => {
                    let a = ask(format!("USE `{}`", db.replace('`', "``")))?;
                    w.send(&answer_packets(a))?;
                }
                Err(e) => w.send(&[e])?,
            },
            Command::Query(q) => match utf8(&q) {
                Ok(sql) => {
                    let a = ask(sql)?;
                    w.send(&answer_packets(a))?;
                }
                Err(e) => w.send(&[e])?,
            },
            Command::ProcessKill(target) => {
                let (back, answer) = channel();
                tx.send(Msg {
                    event: Event::Kill { conn, target },
                    back: Some(Back::Answer(back)),
                })
                .map_err(|e| e.to_string())?;
                let a = answer.recv().map_err(|e| e.to_string())?;
                w.send(&answer_packets(a))?;
            }
            Command::FieldList { table, wildcard } => {
                let (back, answer) = channel();
                tx.send(Msg {
                    event: Event::FieldList {
                        conn,
                        table: String::from_utf8_lossy(&table).into_owned(),
                        wildcard: String::from_utf8_lossy(&wildcard).into_owned(),
                    },
                    back: Some(Back::Fields(back)),
                })
                .map_err(|e| e.to_string())?;
                match answer.recv().map_err(|e| e.to_string())? {
                    Ok(cols) => {
                        // Each definition followed by the column's default
                        // (mysql_list_fields), then an EOF.
                        let mut out: Vec<Vec<u8>> = cols
                            .iter()
                            .map(|src| {
                                let mut def = column_of(&src.spec.name, src).encode();
                                match &src.spec.default {
                                    Some(d) if !d.is_null() => {
                                        engine::wire::put_lenenc_str(&mut def, &d.to_bytes())
                                    }
                                    _ => def.push(0xFB),
                                }
                                def
                            })
                            .collect();
                        out.push(reply::eof(0, status::AUTOCOMMIT));
                        w.send(&out)?;
                    }
                    Err(e) => w.send(&[err(e.code, &e.message)])?,
                }
            }
            Command::Shutdown => {
                // The one account may (MySQL asks for the SHUTDOWN
                // privilege); the server closes the engine and ends.
                w.send(&[OkPacket::default().encode()])?;
                tx.send(Msg {
                    event: Event::Shutdown { conn },
                    back: None,
                })
                .map_err(|e| e.to_string())?;
            }
            Command::Statistics => {
                let (back, answer) = channel();
                tx.send(Msg {
                    event: Event::Statistics { conn },
                    back: Some(Back::Stats(back)),
                })
                .map_err(|e| e.to_string())?;
                let text = answer.recv().map_err(|e| e.to_string())?;
                w.send(&[text.into_bytes()])?;
            }
            Command::StmtPrepare(q) => {
                let describe = |sql: String| -> Result<Described, String> {
                    let (back, answer) = channel();
                    tx.send(Msg {
                        event: Event::Describe { conn, sql },
                        back: Some(Back::Described(back)),
                    })
                    .map_err(|e| e.to_string())?;
                    answer.recv().map_err(|e| e.to_string())
                };
                let out = stmts.prepare(&q, describe)?;
                w.send(&out)?;
            }
            Command::StmtExecute(payload) => {
                let out = stmts.execute(&payload, ask)?;
                w.send(&out)?;
            }
            Command::StmtSendLongData(payload) => stmts.send_long_data(&payload),
            Command::StmtReset(id) => w.send(&[stmts.reset(id)])?,
            Command::StmtClose(id) => stmts.close(id),
            _ => w.send(&[err(1047, "Unknown command")])?,
        }
    }
}

/// A command's text as the SQL layer takes it. The layer reads
/// statements as UTF-8; bytes that are not (a latin1 client's accented
/// letters, a driver's raw binary string) are refused with 1300 rather
/// than replaced, which would change the data.
pub(super) fn utf8(bytes: &[u8]) -> Result<String, Vec<u8>> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(e) => {
            let at = e.valid_up_to();
            let bad: String = bytes[at..]
                .iter()
                .take(16)
                .map(|b| format!("\\x{b:02X}"))
                .collect();
            Err(err(
                1300,
                &format!("Invalid utf8 character string: '{bad}'"),
            ))
        }
    }
}
