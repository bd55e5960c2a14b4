//! The connection phase: the server's greeting (handshake v10), the
//! client's HandshakeResponse41, `mysql_native_password` (MySQL 5.1's
//! `scramble` and `check_scramble`, sql/password.c), and the
//! AuthSwitchRequest a server sends a client that offered another
//! plugin.

use super::{put_lenenc_str, Reader, WireError, WireResult};
use sha1::{Digest, Sha1};

/// Capability flags (`CLIENT_*`).
pub mod cap {
    /// CLIENT_LONG_PASSWORD (also: a MySQL, not a MariaDB, server).
    pub const LONG_PASSWORD: u32 = 1;
    /// CLIENT_FOUND_ROWS: affected rows are found rows.
    pub const FOUND_ROWS: u32 = 1 << 1;
    /// CLIENT_LONG_FLAG.
    pub const LONG_FLAG: u32 = 1 << 2;
    /// CLIENT_CONNECT_WITH_DB.
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    /// CLIENT_NO_SCHEMA.
    pub const NO_SCHEMA: u32 = 1 << 4;
    /// CLIENT_COMPRESS.
    pub const COMPRESS: u32 = 1 << 5;
    /// CLIENT_LOCAL_FILES.
    pub const LOCAL_FILES: u32 = 1 << 7;
    /// CLIENT_PROTOCOL_41.
    pub const PROTOCOL_41: u32 = 1 << 9;
    /// CLIENT_INTERACTIVE.
    pub const INTERACTIVE: u32 = 1 << 10;
    /// CLIENT_SSL.
    pub const SSL: u32 = 1 << 11;
    /// CLIENT_TRANSACTIONS.
    pub const TRANSACTIONS: u32 = 1 << 13;
    /// CLIENT_SECURE_CONNECTION: a 20-byte scramble, a length-prefixed
    /// auth response.
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    /// CLIENT_MULTI_STATEMENTS.
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    /// CLIENT_MULTI_RESULTS.
    pub const MULTI_RESULTS: u32 = 1 << 17;
    /// CLIENT_PS_MULTI_RESULTS.
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    /// CLIENT_PLUGIN_AUTH.
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    /// CLIENT_CONNECT_ATTRS.
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    /// CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA.
    pub const PLUGIN_AUTH_LENENC_DATA: u32 = 1 << 21;
    /// CLIENT_DEPRECATE_EOF.
    pub const DEPRECATE_EOF: u32 = 1 << 24;

    /// What innosim's server offers: MySQL 5.1's set with plugin auth,
    /// connection attributes and multi-results; no SSL, compression,
    /// LOAD DATA LOCAL or EOF-less result sets.
    pub const SERVER: u32 = LONG_PASSWORD
        | FOUND_ROWS
        | LONG_FLAG
        | CONNECT_WITH_DB
        | NO_SCHEMA
        | PROTOCOL_41
        | INTERACTIVE
        | TRANSACTIONS
        | SECURE_CONNECTION
        | MULTI_RESULTS
        | PS_MULTI_RESULTS
        | PLUGIN_AUTH
        | CONNECT_ATTRS
        | PLUGIN_AUTH_LENENC_DATA;
}

/// Server status flags (`SERVER_STATUS_*`).
pub mod status {
    /// A transaction is open.
    pub const IN_TRANS: u16 = 1;
    /// Autocommit is on.
    pub const AUTOCOMMIT: u16 = 1 << 1;
    /// More result sets follow.
    pub const MORE_RESULTS_EXISTS: u16 = 1 << 3;
}

/// The one authentication plugin innosim's server speaks.
pub const NATIVE_PASSWORD: &str = "mysql_native_password";

/// The server's greeting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Greeting {
    /// Server version text (`5.1.45-innosim`).
    pub version: String,
    /// The connection's id.
    pub connection_id: u32,
    /// The 20-byte scramble.
    pub scramble: [u8; 20],
    /// Capabilities.
    pub capabilities: u32,
    /// The server's character set (its default collation's id).
    pub charset: u8,
    /// Status flags.
    pub status: u16,
    /// Auth plugin name.
    pub plugin: String,
}

impl Greeting {
    /// The greeting's payload (protocol version 10).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![10];
        out.extend_from_slice(self.version.as_bytes());
        out.push(0);
        out.extend_from_slice(&self.connection_id.to_le_bytes());
        out.extend_from_slice(&self.scramble[..8]);
        out.push(0);
        out.extend_from_slice(&(self.capabilities as u16).to_le_bytes());
        out.push(self.charset);
        out.extend_from_slice(&self.status.to_le_bytes());
        out.extend_from_slice(&((self.capabilities >> 16) as u16).to_le_bytes());
        out.push(21);
        out.extend_from_slice(&[0; 10]);
        out.extend_from_slice(&self.scramble[8..]);
        out.push(0);
        out.extend_from_slice(self.plugin.as_bytes());
        out.push(0);
        out
    }

    /// Reads a greeting (a client's side).
    pub fn decode(payload: &[u8]) -> WireResult<Greeting> {
        let mut r = Reader::new(payload);
        let proto = r.u8("greeting")?;
        if proto != 10 {
            return Err(WireError(format!("protocol version {proto}, not 10")));
        }
        let version = String::from_utf8_lossy(r.nul_str()).into_owned();
        let connection_id = r.uint(4, "greeting")? as u32;
        let mut scramble = [0u8; 20];
        scramble[..8].copy_from_slice(r.take(8, "greeting")?);
        r.u8("greeting")?;
        let low = r.uint(2, "greeting")? as u32;
        let charset = r.u8("greeting")?;
        let status = r.uint(2, "greeting")? as u16;
        let high = r.uint(2, "greeting")? as u32;
        let _auth_len = r.u8("greeting")?;
        r.take(10, "greeting")?;
        scramble[8..].copy_from_slice(r.take(12, "greeting")?);
        r.u8("greeting")?;
        let plugin = String::from_utf8_lossy(r.nul_str()).into_owned();
        Ok(Greeting {
            version,
            connection_id,
            scramble,
            capabilities: low | high << 16,
            charset,
            status,
            plugin,
        })
    }
}

/// The client's HandshakeResponse41.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The client's capabilities.
    pub capabilities: u32,
    /// The largest packet it takes.
    pub max_packet: u32,
    /// Its character set.
    pub charset: u8,
    /// User name.
    pub user: String,
    /// The auth plugin's answer to the scramble.
    pub auth: Vec<u8>,
    /// The database to start in.
    pub database: Option<String>,
    /// The plugin the client answered with.
    pub plugin: Option<String>,
    /// Connection attributes (key, value).
    pub attrs: Vec<(String, String)>,
}

impl Response {
    /// Reads a HandshakeResponse41. A client without CLIENT_PROTOCOL_41
    /// (a pre-4.1 client) is refused.
    pub fn decode(payload: &[u8]) -> WireResult<Response> {
        let mut r = Reader::new(payload);
        let capabilities = r.uint(4, "handshake response")? as u32;
        if capabilities & cap::PROTOCOL_41 == 0 {
            return Err(WireError("a client without the 4.1 protocol".into()));
        }
        if capabilities & cap::SSL != 0 && payload.len() == 32 {
            return Err(WireError(
                "an SSL request (the server offers no SSL)".into(),
            ));
        }
        let max_packet = r.uint(4, "handshake response")? as u32;
        let charset = r.u8("handshake response")?;
        r.take(23, "handshake response")?;
        let user = String::from_utf8_lossy(r.nul_str()).into_owned();
        let auth = if capabilities & cap::PLUGIN_AUTH_LENENC_DATA != 0 {
            r.lenenc_str("auth response")?.unwrap_or_default().to_vec()
        } else if capabilities & cap::SECURE_CONNECTION != 0 {
            let n = r.u8("auth response")?;
            r.take(usize::from(n), "auth response")?.to_vec()
        } else {
            r.nul_str().to_vec()
        };
        let database = (capabilities & cap::CONNECT_WITH_DB != 0 && !r.is_empty())
            .then(|| String::from_utf8_lossy(r.nul_str()).into_owned())
            .filter(|d| !d.is_empty());
        let plugin = (capabilities & cap::PLUGIN_AUTH != 0 && !r.is_empty())
            .then(|| String::from_utf8_lossy(r.nul_str()).into_owned());
        let mut attrs = Vec::new();
        if capabilities & cap::CONNECT_ATTRS != 0 && !r.is_empty() {
            let n = r.lenenc("connection attributes")?.unwrap_or(0);
            let n = usize::try_from(n).map_err(|_| WireError("attributes length".into()))?;
            let mut a = Reader::new(r.take(n, "connection attributes")?);
            while !a.is_empty() {
                let k = a.lenenc_str("attribute")?.unwrap_or_default();
                let v = a.lenenc_str("attribute")?.unwrap_or_default();
                attrs.push((
                    String::from_utf8_lossy(k).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ));
            }
        }
        Ok(Response {
            capabilities,
            max_packet,
            charset,
            user,
            auth,
            database,
            plugin,
            attrs,
        })
    }

    /// The payload a client sends.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.capabilities.to_le_bytes());
        out.extend_from_slice(&self.max_packet.to_le_bytes());
        out.push(self.charset);
        out.extend_from_slice(&[0; 23]);
        out.extend_from_slice(self.user.as_bytes());
        out.push(0);
        if self.capabilities & cap::PLUGIN_AUTH_LENENC_DATA != 0 {
            put_lenenc_str(&mut out, &self.auth);
        } else {
            out.push(self.auth.len() as u8);
            out.extend_from_slice(&self.auth);
        }
        if self.capabilities & cap::CONNECT_WITH_DB != 0 {
            out.extend_from_slice(self.database.as_deref().unwrap_or("").as_bytes());
            out.push(0);
        }
        if self.capabilities & cap::PLUGIN_AUTH != 0 {
            out.extend_from_slice(self.plugin.as_deref().unwrap_or(NATIVE_PASSWORD).as_bytes());
            out.push(0);
        }
        if self.capabilities & cap::CONNECT_ATTRS != 0 {
            let mut a = Vec::new();
            for (k, v) in &self.attrs {
                put_lenenc_str(&mut a, k.as_bytes());
                put_lenenc_str(&mut a, v.as_bytes());
            }
            put_lenenc_str(&mut out, &a);
        }
        out
    }
}

/// The AuthSwitchRequest asking the client to answer the scramble with
/// `mysql_native_password`.
pub fn auth_switch(scramble: &[u8; 20]) -> Vec<u8> {
    let mut out = vec![0xFE];
    out.extend_from_slice(NATIVE_PASSWORD.as_bytes());
    out.push(0);
    out.extend_from_slice(scramble);
    out.push(0);
    out
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// What the server keeps of a password: SHA1(SHA1(password)), as
/// `mysql.user.Password` holds it (without its `*` and hex); `None` for
/// the empty password.
pub fn password_hash(password: &str) -> Option<[u8; 20]> {
    (!password.is_empty()).then(|| sha1(&[&sha1(&[password.as_bytes()])]))
}

/// A client's answer to `scramble` for `password` (`scramble` in
/// password.c): SHA1(password) XOR SHA1(scramble, SHA1(SHA1(password))),
/// empty for the empty password.
pub fn native_token(scramble: &[u8; 20], password: &str) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = sha1(&[password.as_bytes()]);
    let stage2 = sha1(&[&stage1]);
    let mix = sha1(&[scramble, &stage2]);
    stage1.iter().zip(mix).map(|(a, b)| a ^ b).collect()
}

/// Whether `token` answers `scramble` for the password whose hash is
/// `hash` (`check_scramble`): the token XOR SHA1(scramble, hash) is
/// SHA1(password), whose SHA1 must be the hash.
pub fn check_native(scramble: &[u8; 20], token: &[u8], hash: Option<&[u8; 20]>) -> bool {
    match hash {
        None => token.is_empty(),
        Some(hash) => {
            if token.len() != 20 {
                return false;
            }
            let mix = sha1(&[scramble, hash]);
            let stage1: Vec<u8> = token.iter().zip(mix).map(|(a, b)| a ^ b).collect();
            sha1(&[&stage1]) == *hash
        }
    }
}
