//! Prepared statements (COM_STMT_PREPARE, EXECUTE, SEND_LONG_DATA,
//! RESET and CLOSE), kept by their connection.
//!
//! A prepared statement is its text, where its `?` parameters stand, and
//! its result columns as the SQL layer describes them before it runs
//! (`Server::describe`; a table column's definition, an expression
//! announced as a string). An execute puts each parameter's literal where
//! its `?` stood and runs the text, as MySQL 5.1 writes it to its query
//! log, and answers rows in binary form, described as the prepare
//! described them.

use super::answer::{answer_packets, column_of};
use super::connection::{err, utf8};
use super::engine_thread::{Answer, Described};
use super::{status_of, LATIN1};
use engine::sql::Reply;
use engine::wire::binary::{self, PrepareOk};
use engine::wire::handshake::status;
use engine::wire::reply::{self, flag, ty, ColumnDef, OkPacket};

/// A statement COM_STMT_PREPARE prepared.
struct Prepared {
    /// Its text.
    sql: String,
    /// Where its `?` parameters are.
    holes: Vec<usize>,
    /// Its result columns as the prepare described them.
    columns: Vec<ColumnDef>,
    /// The parameters' types from the last execute that sent them.
    types: Vec<(u8, bool)>,
    /// COM_STMT_SEND_LONG_DATA's bytes, by parameter, until the execute.
    long_data: std::collections::HashMap<u16, Vec<u8>>,
}

/// The packets that answer an executed prepared statement: as for a
/// query, but a result set's rows in binary form, described by the
/// columns the prepare announced where it announced them (the client
/// decodes the rows by those).
fn binary_answer(a: Answer, prepared: &[ColumnDef]) -> Result<Vec<Vec<u8>>, String> {
    let Reply::Rows { .. } = &a.reply else {
        return Ok(answer_packets(a));
    };
    let status = status_of(a.in_trans, a.autocommit);
    let text = answer_packets(a);
    // The text answer's packets: the count, the definitions, an EOF, the
    // rows, an EOF.
    let n = usize::try_from(
        engine::wire::Reader::new(&text[0])
            .lenenc("count")
            .ok()
            .flatten()
            .unwrap_or(0),
    )
    .unwrap_or(0);
    let defs: Vec<ColumnDef> = if prepared.len() == n {
        prepared.to_vec()
    } else {
        text[1..=n]
            .iter()
            .map(|p| ColumnDef::decode(p).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?
    };
    let mut out = vec![text[0].clone()];
    out.extend(defs.iter().map(ColumnDef::encode));
    out.push(reply::eof(0, status));
    for row in &text[n + 2..text.len() - 1] {
        let mut r = engine::wire::Reader::new(row);
        let values: Vec<Option<Vec<u8>>> = (0..n)
            .map(|_| r.lenenc_str("row").map(|v| v.map(<[u8]>::to_vec)))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        out.push(binary::binary_row(&defs, &values).map_err(|e| e.to_string())?);
    }
    out.push(text[text.len() - 1].clone());
    Ok(out)
}

/// A connection's prepared statements, by id.
#[derive(Default)]
pub(super) struct Statements {
    map: std::collections::HashMap<u32, Prepared>,
    next: u32,
}

impl Statements {
    /// COM_STMT_PREPARE: the answer's packets (an error, or PREPARE_OK with
    /// the parameters' and the columns' definitions). `describe` asks the
    /// engine thread what the statement returns.
    pub(super) fn prepare(
        &mut self,
        text: &[u8],
        describe: impl FnOnce(String) -> Result<Described, String>,
    ) -> Result<Vec<Vec<u8>>, String> {
        let sql = match utf8(text) {
            Ok(s) => s,
            Err(e) => return Ok(vec![e]),
        };
        let holes = engine::sql::lex::placeholders(&sql);
        // Described with each parameter a 0, a literal that fits wherever
        // a parameter may stand.
        let mut probe = sql.clone();
        for &at in holes.iter().rev() {
            probe.replace_range(at..at + 1, "0");
        }
        let described = match describe(probe)? {
            Err(e) => return Ok(vec![err(e.code, &e.message)]),
            Ok(d) => d,
        };
        let columns: Vec<ColumnDef> = described
            .unwrap_or_default()
            .iter()
            .map(|(name, src)| match src {
                Some(src) => column_of(name, src),
                // An expression: typed once it runs; announced as a string.
                None => ColumnDef {
                    name: name.clone(),
                    org_name: name.clone(),
                    charset: u16::from(LATIN1),
                    ty: ty::VAR_STRING,
                    ..ColumnDef::default()
                },
            })
            .collect();
        self.next += 1;
        let id = self.next;
        let mut out = vec![PrepareOk {
            statement_id: id,
            columns: columns.len() as u16,
            params: holes.len() as u16,
            warnings: 0,
        }
        .encode()];
        if !holes.is_empty() {
            for _ in &holes {
                out.push(
                    ColumnDef {
                        name: "?".into(),
                        charset: 63,
                        ty: ty::VAR_STRING,
                        flags: flag::BINARY,
                        ..ColumnDef::default()
                    }
                    .encode(),
                );
            }
            out.push(reply::eof(0, status::AUTOCOMMIT));
        }
        if !columns.is_empty() {
            out.extend(columns.iter().map(ColumnDef::encode));
            out.push(reply::eof(0, status::AUTOCOMMIT));
        }
        self.map.insert(
            id,
            Prepared {
                sql,
                holes,
                columns,
                types: Vec::new(),
                long_data: Default::default(),
            },
        );
        Ok(out)
    }

    /// COM_STMT_EXECUTE: runs the statement with its parameters (through
    /// `ask`) and answers in the binary protocol.
    pub(super) fn execute(
        &mut self,
        payload: &[u8],
        ask: impl FnOnce(String) -> Result<Answer, String>,
    ) -> Result<Vec<Vec<u8>>, String> {
        let id = payload
            .get(..4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let Some(st) = self.map.get_mut(&id) else {
            return Ok(vec![err(
                1243,
                &format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"),
            )]);
        };
        let params = match binary::decode_execute(payload, st.holes.len(), &mut st.types) {
            Ok((_, p)) => p,
            Err(e) => {
                return Ok(vec![err(
                    1210,
                    &format!("Incorrect arguments to mysqld_stmt_execute: {e}"),
                )])
            }
        };
        // The layer reads statements as UTF-8: a parameter's bytes that
        // are not (binary data above 0x7F) are refused, not replaced (see
        // `utf8`).
        let bad = params
            .iter()
            .find_map(|p| match p {
                binary::Param::Bytes(b) => utf8(b).err(),
                _ => None,
            })
            .or_else(|| st.long_data.values().find_map(|b| utf8(b).err()));
        if let Some(e) = bad {
            st.long_data.clear();
            return Ok(vec![e]);
        }
        let mut sql = st.sql.clone();
        for (k, &at) in st.holes.iter().enumerate().rev() {
            let value = match st.long_data.remove(&(k as u16)) {
                Some(bytes) => binary::Param::Bytes(bytes),
                None => params[k].clone(),
            };
            sql.replace_range(at..at + 1, &value.literal());
        }
        st.long_data.clear();
        let columns = st.columns.clone();
        binary_answer(ask(sql)?, &columns)
    }

    /// COM_STMT_SEND_LONG_DATA (no reply): statement id, parameter number,
    /// the bytes, kept until the execute.
    pub(super) fn send_long_data(&mut self, payload: &[u8]) {
        if payload.len() >= 6 {
            let id = u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]);
            let param = u16::from_le_bytes([payload[4], payload[5]]);
            if let Some(st) = self.map.get_mut(&id) {
                st.long_data
                    .entry(param)
                    .or_default()
                    .extend_from_slice(&payload[6..]);
            }
        }
    }

    /// COM_STMT_RESET: its long data dropped.
    pub(super) fn reset(&mut self, id: u32) -> Vec<u8> {
        match self.map.get_mut(&id) {
            Some(st) => {
                st.long_data.clear();
                OkPacket::default().encode()
            }
            None => err(
                1243,
                &format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_reset"),
            ),
        }
    }

    /// COM_STMT_CLOSE (no reply).
    pub(super) fn close(&mut self, id: u32) {
        self.map.remove(&id);
    }
}
