//! `innosim serve`: the engine's SQL layer behind the MySQL protocol on
//! loopback TCP, for the `mariadb` client, drivers and sysbench.
//!
//! One thread owns the engine (`engine::sql::Server`) and runs
//! statements in the order they arrive; each connection has a thread of
//! its own that speaks the protocol (`engine::wire`) and hands the
//! engine thread its commands over a channel. A statement that waits for
//! a lock blocks only its connection: the engine thread keeps it aside,
//! resumes it whenever another statement has run and when its lock wait's
//! deadline on the engine's clock passes, and answers when it ends. A connection that closes rolls back its transaction.
//!
//! Built so far: the connection phase (greeting, `mysql_native_password`
//! with one configured user, an AuthSwitchRequest for a client that
//! offers another plugin, 1045 for a wrong password, 1040 past
//! max_connections), COM_QUERY with text result sets, COM_INIT_DB,
//! COM_PING, COM_QUIT, COM_PROCESS_KILL and KILL [QUERY] (a killed
//! connection's socket is shut), COM_STATISTICS, COM_FIELD_LIST, the
//! prepared statements' commands (below), and an ERR 1047 for any
//! other.
//!
//! A prepared statement is kept by its connection: its text, where its
//! `?` parameters stand, and its result columns as the SQL layer
//! describes them before it runs (`Server::describe`; a table column's
//! definition, an expression announced as a string). An execute puts
//! each parameter's literal where its `?` stood and runs the text, as
//! MySQL 5.1 writes it to its query log, and answers rows in binary
//! form, described as the prepare described them. A result column that is a table's column is defined
//! by its schema (type, display length, charset, NOT NULL, UNSIGNED,
//! PRIMARY or UNIQUE where the column itself says so, AUTO_INCREMENT);
//! any other (an expression, SHOW's columns) by its values (an integer
//! LONGLONG, a decimal NEWDECIMAL, a float DOUBLE, anything else
//! VAR_STRING), where MySQL types the expression.

use engine::sql::{ConnId, Outcome, Reply, Server};
use engine::wire::binary::{self, PrepareOk};
use engine::wire::handshake::{self, cap, status, Greeting, Response};
use engine::wire::reply::{self, flag, ty, ColumnDef, ErrPacket, OkPacket};
use engine::wire::{write_packet, Command, PacketReader};
use rand::{Rng, SeedableRng};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// How long the engine thread waits at most between rounds of background
/// work (the engine's once-a-second tasks run in `tick`).
const TICK_US: u64 = 100_000;

/// MySQL 5.1's default `max_allowed_packet`.
pub const MAX_ALLOWED_PACKET: usize = 1 << 20;

/// The version the greeting announces.
pub const VERSION: &str = "5.1.45-innosim";

/// latin1_swedish_ci's id, the server's default collation.
const LATIN1: u8 = 8;

/// Who may connect.
#[derive(Debug, Clone)]
pub struct Account {
    /// User name.
    pub user: String,
    /// SHA1(SHA1(password)), `None` for the empty password.
    pub hash: Option<[u8; 20]>,
}

impl Account {
    /// An account with a password in clear.
    pub fn new(user: &str, password: &str) -> Account {
        Account {
            user: user.to_string(),
            hash: handshake::password_hash(password),
        }
    }
}

/// Where the server's log lines go (stderr for `innosim serve`).
pub type Logger = std::sync::Arc<dyn Fn(String) + Send + Sync>;

/// A statement's answer, with the connection's state after it.
struct Answer {
    reply: Reply,
    in_trans: bool,
    autocommit: bool,
    insert_id: u64,
    sources: Vec<Option<engine::sql::ColumnSource>>,
}

/// What a connection thread asks the engine thread.
enum Msg {
    Connect(Sender<ConnId>),
    Query {
        conn: ConnId,
        sql: String,
        answer: Sender<Answer>,
    },
    Disconnect(ConnId),
    /// The user the connection logged in as.
    Client {
        conn: ConnId,
        user: String,
        host: String,
    },
    /// COM_PROCESS_KILL.
    Kill {
        conn: ConnId,
        target: u32,
        answer: Sender<Answer>,
    },
    /// COM_STATISTICS.
    Statistics(Sender<String>),
    /// COM_STMT_PREPARE: what the statement returns.
    Describe {
        conn: ConnId,
        sql: String,
        answer: Sender<Described>,
    },
    /// COM_FIELD_LIST: a table's columns matching a pattern.
    FieldList {
        conn: ConnId,
        table: String,
        wildcard: String,
        answer: Sender<Result<Vec<engine::sql::ColumnSource>, engine::sql::error::SqlError>>,
    },
}

/// A prepared statement's result columns, as the SQL layer describes
/// them (`None`: known only once it runs).
type Described = Result<Option<engine::sql::Described>, engine::sql::error::SqlError>;

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

/// What the server admits.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The one account.
    pub account: Account,
    /// max_connections: one more is refused with 1040.
    pub max_connections: usize,
    /// A Unix socket to listen on too.
    pub socket: Option<std::path::PathBuf>,
    /// The seed of the connections' scrambles. A server others can reach
    /// draws it where it starts (`innosim serve` from the OS), so that it
    /// cannot be guessed; a test or a replay gives its own.
    pub scramble_seed: u64,
}

impl Settings {
    /// `account`, and MySQL 5.1's 151 connections.
    pub fn new(account: Account) -> Settings {
        Settings {
            account,
            max_connections: 151,
            socket: None,
            scramble_seed: 0,
        }
    }
}

/// A connection's byte stream: TCP or a Unix socket.
pub trait Stream: Read + Write + Send {
    /// A handle that shuts the stream down from another thread (KILL).
    fn closer(&self) -> Option<Box<dyn Fn() + Send>>;
}

impl Stream for TcpStream {
    fn closer(&self) -> Option<Box<dyn Fn() + Send>> {
        let s = self.try_clone().ok()?;
        Some(Box::new(move || {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }))
    }
}

impl Stream for std::os::unix::net::UnixStream {
    fn closer(&self) -> Option<Box<dyn Fn() + Send>> {
        let s = self.try_clone().ok()?;
        Some(Box::new(move || {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }))
    }
}

/// The open connections' sockets, for KILL to close.
type Sockets =
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<ConnId, Box<dyn Fn() + Send>>>>;

/// What every accepted connection shares.
#[derive(Clone)]
struct Shared {
    tx: Sender<Msg>,
    account: Account,
    log: Logger,
    sockets: Sockets,
    open: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    max: usize,
}

impl Shared {
    /// Serves one accepted stream on a thread of its own.
    fn spawn(&self, stream: Box<dyn Stream>, peer: String, scramble: [u8; 20]) {
        let me = self.clone();
        let _ = std::thread::Builder::new()
            .name("connection".into())
            .spawn(move || {
                let n = me.open.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let ended = if n >= me.max {
                    // ER_CON_COUNT_ERROR, in place of the greeting.
                    let mut w = Wire {
                        stream,
                        reader: PacketReader::new(0),
                        seq: 0,
                    };
                    (me.log)(format!("connection from {peer} refused: too many"));
                    w.send(&[err(1040, "Too many connections")])
                } else {
                    connection(stream, &me, scramble, &peer)
                };
                me.open.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                if let Err(e) = ended {
                    (me.log)(format!("connection from {peer} ended: {e}"));
                }
            });
    }
}

/// Serves each stream a listener accepts until `stop`, each with a
/// scramble of its own from an RNG seeded with `seed`.
fn accept_loop<S: Stream + 'static>(
    incoming: impl Iterator<Item = std::io::Result<S>>,
    stop: &std::sync::atomic::AtomicBool,
    shared: &Shared,
    seed: u64,
    peer_of: impl Fn(&S) -> String,
) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for stream in incoming {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let peer = peer_of(&stream);
        shared.spawn(Box::new(stream), peer, scramble(&mut rng));
    }
}

/// A seed drawn from the operating system's entropy: for a server others
/// can reach, whose scrambles must not be guessable.
pub fn os_seed() -> u64 {
    rand_chacha::ChaCha8Rng::from_entropy().gen()
}

/// A scramble: 20 printable bytes, as MySQL's create_random_string makes
/// it.
fn scramble(rng: &mut rand_chacha::ChaCha8Rng) -> [u8; 20] {
    let mut s = [0u8; 20];
    for b in &mut s {
        *b = rng.gen_range(33..127);
    }
    s
}

/// A running server: where it listens, and how to stop it.
pub struct Handle {
    /// The address it listens on.
    pub addr: std::net::SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    engine: Option<std::thread::JoinHandle<Result<(), String>>>,
    accept: Option<std::thread::JoinHandle<()>>,
    unix: Option<(std::path::PathBuf, std::thread::JoinHandle<()>)>,
}

impl Handle {
    /// Stops accepting, lets the engine thread close the engine cleanly,
    /// and waits for both.
    pub fn shutdown(mut self) -> Result<(), String> {
        self.stop_threads()
    }

    fn stop_threads(&mut self) -> Result<(), String> {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the accept loops.
        let _ = TcpStream::connect(self.addr);
        if let Some(a) = self.accept.take() {
            let _ = a.join();
        }
        if let Some((path, a)) = self.unix.take() {
            let _ = std::os::unix::net::UnixStream::connect(&path);
            let _ = a.join();
            let _ = std::fs::remove_file(&path);
        }
        match self.engine.take() {
            Some(e) => e
                .join()
                .map_err(|_| "the engine thread panicked".to_string())?,
            None => Ok(()),
        }
    }

    /// Serves until the process ends.
    pub fn wait(mut self) -> Result<(), String> {
        if let Some(a) = self.accept.take() {
            let _ = a.join();
        }
        self.stop_threads()
    }
}

/// Serves `server` on `listener` (bound already: port 0 picks a free
/// one), letting in `account`.
pub fn start(
    mut server: Server,
    listener: TcpListener,
    settings: Settings,
    log: Logger,
) -> std::io::Result<Handle> {
    let addr = listener.local_addr()?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = channel::<Msg>();
    let engine_stop = stop.clone();
    let engine_log = log.clone();
    let sockets: Sockets = Default::default();
    let engine_sockets = sockets.clone();
    server.set_max_connections(settings.max_connections as u64);
    let engine = std::thread::Builder::new()
        .name("engine".into())
        .spawn(move || engine_loop(server, rx, engine_stop, engine_log, engine_sockets))?;
    let shared = Shared {
        tx,
        account: settings.account.clone(),
        log: log.clone(),
        sockets,
        open: Default::default(),
        max: settings.max_connections,
    };
    let accept_stop = stop.clone();
    let tcp = shared.clone();
    let seed = settings.scramble_seed;
    let accept = std::thread::Builder::new()
        .name("accept".into())
        .spawn(move || {
            accept_loop(
                listener.incoming(),
                &accept_stop,
                &tcp,
                seed,
                |s: &TcpStream| {
                    let _ = s.set_nodelay(true);
                    s.peer_addr().map_or("?".to_string(), |a| a.to_string())
                },
            )
        })?;
    let unix = match &settings.socket {
        None => None,
        Some(path) => {
            // A socket file a killed server left behind is replaced.
            let _ = std::fs::remove_file(path);
            let unix_listener = std::os::unix::net::UnixListener::bind(path)?;
            let unix_stop = stop.clone();
            let local = shared.clone();
            let handle = std::thread::Builder::new()
                .name("accept-unix".into())
                .spawn(move || {
                    accept_loop(
                        unix_listener.incoming(),
                        &unix_stop,
                        &local,
                        seed.wrapping_add(1),
                        |_: &std::os::unix::net::UnixStream| "localhost (socket)".to_string(),
                    )
                })?;
            Some((path.clone(), handle))
        }
    };
    Ok(Handle {
        addr,
        stop,
        engine: Some(engine),
        accept: Some(accept),
        unix,
    })
}

/// The engine thread: statements in arrival order, blocked ones resumed
/// until they end.
fn engine_loop(
    mut server: Server,
    rx: Receiver<Msg>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    log: Logger,
    sockets: Sockets,
) -> Result<(), String> {
    let mut blocked: Vec<(ConnId, Sender<Answer>)> = Vec::new();
    let started_us = server.engine().now_us();
    let mut questions = 0u64;
    let answer = |server: &Server, c: ConnId, reply: Reply| {
        let (in_trans, autocommit) = server.transaction_state(c);
        Answer {
            reply,
            in_trans,
            autocommit,
            insert_id: server.statement_insert_id(c),
            sources: server.result_columns(c).to_vec(),
        }
    };
    loop {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        // Wait for a message, or until the earliest lock wait deadline on
        // the engine's clock, or the next round of background work; a
        // blocked statement with no deadline (a commit waiting for the
        // group commit's sync) is resumed again soon.
        let now = server.engine().now_us();
        let mut wait_us = TICK_US;
        for (c, _) in &blocked {
            wait_us = wait_us.min(match server.wait_deadline_us(*c) {
                Some(d) => d.saturating_sub(now),
                None => 1_000,
            });
        }
        match rx.recv_timeout(Duration::from_micros(wait_us.max(100))) {
            Ok(Msg::Connect(back)) => {
                let _ = back.send(server.connect());
            }
            Ok(Msg::Query {
                conn,
                sql,
                answer: back,
            }) => {
                questions += 1;
                match server.execute(conn, &sql) {
                    Outcome::Done(reply) => {
                        let _ = back.send(answer(&server, conn, reply));
                    }
                    Outcome::Blocked => blocked.push((conn, back)),
                }
            }
            Ok(Msg::Client { conn, user, host }) => server.set_client(conn, &user, &host),
            Ok(Msg::Kill {
                conn,
                target,
                answer: back,
            }) => {
                let reply = match server.kill(conn, u64::from(target), false) {
                    Ok(()) => Reply::Ok {
                        affected: 0,
                        info: None,
                        warnings: 0,
                    },
                    Err(e) => Reply::Error(e),
                };
                let _ = back.send(answer(&server, conn, reply));
            }
            Ok(Msg::Describe {
                conn,
                sql,
                answer: back,
            }) => {
                let _ = back.send(server.describe(conn, &sql));
            }
            Ok(Msg::FieldList {
                conn,
                table,
                wildcard,
                answer: back,
            }) => {
                let _ = back.send(server.table_columns(conn, &table, &wildcard));
            }
            Ok(Msg::Statistics(back)) => {
                let uptime =
                    (server.engine().now_us().saturating_sub(started_us) / 1_000_000).max(1);
                let threads = sockets.lock().map_or(0, |m| m.len());
                let _ = back.send(format!(
                    "Uptime: {uptime}  Threads: {threads}  Questions: {questions}  \
                     Slow queries: 0  Opens: 0  Flush tables: 1  Open tables: 0  \
                     Queries per second avg: {:.3}",
                    questions as f64 / uptime as f64
                ));
            }
            Ok(Msg::Disconnect(conn)) => {
                blocked.retain(|(c, _)| *c != conn);
                match server.disconnect(conn) {
                    Ok(()) => log(format!("connection {conn} closed")),
                    Err(e) => log(format!("connection {conn} closed: {e}")),
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if let Err(e) = server.tick() {
            log(format!("background work: {e}"));
        }
        // Whatever ran may have released a lock, and time has passed.
        let mut still = Vec::with_capacity(blocked.len());
        for (conn, back) in blocked.drain(..) {
            match server.resume(conn) {
                Outcome::Done(reply) => {
                    let _ = back.send(answer(&server, conn, reply));
                }
                Outcome::Blocked => still.push((conn, back)),
            }
        }
        blocked = still;
        // KILL: the connection's socket is shut, its thread sees the end
        // and disconnects it (rolling back what it had open).
        for k in server.take_killed() {
            if let Some(close) = sockets.lock().ok().and_then(|mut m| m.remove(&k)) {
                close();
            }
            log(format!("connection {k} killed"));
        }
    }
    let closed = server.close().map_err(|e| e.to_string());
    log(match &closed {
        Ok(()) => "engine closed cleanly".to_string(),
        Err(e) => format!("engine closed: {e}"),
    });
    closed
}

/// A connection's socket, its packet reader and its sequence id.
struct Wire {
    stream: Box<dyn Stream>,
    reader: PacketReader,
    seq: u8,
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

    fn send(&mut self, payloads: &[Vec<u8>]) -> Result<(), String> {
        let mut out = Vec::new();
        for p in payloads {
            self.seq = write_packet(&mut out, self.seq, p);
        }
        self.stream.write_all(&out).map_err(|e| e.to_string())
    }
}

fn status_of(in_trans: bool, autocommit: bool) -> u16 {
    (if in_trans { status::IN_TRANS } else { 0 }) | if autocommit { status::AUTOCOMMIT } else { 0 }
}

fn err(code: u16, message: &str) -> Vec<u8> {
    ErrPacket {
        code,
        sqlstate: engine::sql::error::sqlstate(code).to_string(),
        message: message.to_string(),
    }
    .encode()
}

/// One connection, from the greeting to its close.
fn connection(
    stream: Box<dyn Stream>,
    shared: &Shared,
    scramble: [u8; 20],
    peer: &str,
) -> Result<(), String> {
    let tx = &shared.tx;
    let (back, answer) = channel();
    tx.send(Msg::Connect(back)).map_err(|e| e.to_string())?;
    let conn = answer.recv().map_err(|e| e.to_string())?;
    (shared.log)(format!("connection {conn} from {peer}"));
    if let (Some(close), Ok(mut m)) = (stream.closer(), shared.sockets.lock()) {
        m.insert(conn, close);
    }
    let result = session(stream, tx, conn, &shared.account, scramble);
    if let Ok(mut m) = shared.sockets.lock() {
        m.remove(&conn);
    }
    let _ = tx.send(Msg::Disconnect(conn));
    result
}

fn session(
    stream: Box<dyn Stream>,
    tx: &Sender<Msg>,
    conn: ConnId,
    account: &Account,
    scramble: [u8; 20],
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
    let mut stmts: std::collections::HashMap<u32, Prepared> = Default::default();
    let mut next_stmt = 0u32;
    let ask = |sql: String| -> Result<Answer, String> {
        let (back, answer) = channel();
        tx.send(Msg::Query {
            conn,
            sql,
            answer: back,
        })
        .map_err(|e| e.to_string())?;
        answer.recv().map_err(|e| e.to_string())
    };
    let _ = tx.send(Msg::Client {
        conn,
        user: resp.user.clone(),
        host: "localhost".into(),
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
                tx.send(Msg::Kill {
                    conn,
                    target,
                    answer: back,
                })
                .map_err(|e| e.to_string())?;
                let a = answer.recv().map_err(|e| e.to_string())?;
                w.send(&answer_packets(a))?;
            }
            Command::FieldList { table, wildcard } => {
                let (back, answer) = channel();
                tx.send(Msg::FieldList {
                    conn,
                    table: String::from_utf8_lossy(&table).into_owned(),
                    wildcard: String::from_utf8_lossy(&wildcard).into_owned(),
                    answer: back,
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
            Command::Statistics => {
                let (back, answer) = channel();
                tx.send(Msg::Statistics(back)).map_err(|e| e.to_string())?;
                let text = answer.recv().map_err(|e| e.to_string())?;
                w.send(&[text.into_bytes()])?;
            }
            Command::StmtPrepare(q) => {
                let sql = match utf8(&q) {
                    Ok(s) => s,
                    Err(e) => {
                        w.send(&[e])?;
                        continue;
                    }
                };
                let holes = engine::sql::lex::placeholders(&sql);
                // Described with each parameter a 0, a literal that fits
                // wherever a parameter may stand.
                let mut probe = sql.clone();
                for &at in holes.iter().rev() {
                    probe.replace_range(at..at + 1, "0");
                }
                let (back, answer) = channel();
                tx.send(Msg::Describe {
                    conn,
                    sql: probe,
                    answer: back,
                })
                .map_err(|e| e.to_string())?;
                match answer.recv().map_err(|e| e.to_string())? {
                    Err(e) => w.send(&[err(e.code, &e.message)])?,
                    Ok(described) => {
                        let columns: Vec<ColumnDef> = described
                            .unwrap_or_default()
                            .iter()
                            .map(|(name, src)| match src {
                                Some(src) => column_of(name, src),
                                // An expression: typed once it runs;
                                // announced as a string.
                                None => ColumnDef {
                                    name: name.clone(),
                                    org_name: name.clone(),
                                    charset: u16::from(LATIN1),
                                    ty: ty::VAR_STRING,
                                    ..ColumnDef::default()
                                },
                            })
                            .collect();
                        next_stmt += 1;
                        let id = next_stmt;
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
                        stmts.insert(
                            id,
                            Prepared {
                                sql,
                                holes,
                                columns,
                                types: Vec::new(),
                                long_data: Default::default(),
                            },
                        );
                        w.send(&out)?;
                    }
                }
            }
            Command::StmtExecute(payload) => {
                let id = payload
                    .get(..4)
                    .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                let Some(st) = stmts.get_mut(&id) else {
                    w.send(&[err(
                        1243,
                        &format!(
                            "Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"
                        ),
                    )])?;
                    continue;
                };
                let params = match binary::decode_execute(&payload, st.holes.len(), &mut st.types) {
                    Ok((_, p)) => p,
                    Err(e) => {
                        w.send(&[err(
                            1210,
                            &format!("Incorrect arguments to mysqld_stmt_execute: {e}"),
                        )])?;
                        continue;
                    }
                };
                // The layer reads statements as UTF-8: a parameter's bytes
                // that are not (binary data above 0x7F) are refused, not
                // replaced (see `utf8`).
                let bad = params
                    .iter()
                    .find_map(|p| match p {
                        binary::Param::Bytes(b) => utf8(b).err(),
                        _ => None,
                    })
                    .or_else(|| st.long_data.values().find_map(|b| utf8(b).err()));
                if let Some(e) = bad {
                    st.long_data.clear();
                    w.send(&[e])?;
                    continue;
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
                let a = ask(sql)?;
                w.send(&binary_answer(a, &columns)?)?;
            }
            Command::StmtSendLongData(payload) => {
                // No reply. Statement id, parameter number, the bytes.
                if payload.len() >= 6 {
                    let id = u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]);
                    let param = u16::from_le_bytes([payload[4], payload[5]]);
                    if let Some(st) = stmts.get_mut(&id) {
                        st.long_data
                            .entry(param)
                            .or_default()
                            .extend_from_slice(&payload[6..]);
                    }
                }
            }
            Command::StmtReset(id) => match stmts.get_mut(&id) {
                Some(st) => {
                    st.long_data.clear();
                    w.send(&[OkPacket::default().encode()])?;
                }
                None => w.send(&[err(
                    1243,
                    &format!(
                        "Unknown prepared statement handler ({id}) given to mysqld_stmt_reset"
                    ),
                )])?,
            },
            Command::StmtClose(id) => {
                stmts.remove(&id);
            }
            _ => w.send(&[err(1047, "Unknown command")])?,
        }
    }
}

/// A command's text as the SQL layer takes it. The layer reads
/// statements as UTF-8; bytes that are not (a latin1 client's accented
/// letters, a driver's raw binary string) are refused with 1300 rather
/// than replaced, which would change the data.
fn utf8(bytes: &[u8]) -> Result<String, Vec<u8>> {
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

/// The packets that answer a statement.
fn answer_packets(a: Answer) -> Vec<Vec<u8>> {
    let status = status_of(a.in_trans, a.autocommit);
    match a.reply {
        Reply::Error(e) => vec![err(e.code, &e.message)],
        Reply::Ok {
            affected,
            info,
            warnings,
        } => vec![OkPacket {
            affected,
            last_insert_id: a.insert_id,
            status,
            warnings: warnings.min(usize::from(u16::MAX)) as u16,
            info: info.unwrap_or_default(),
        }
        .encode()],
        Reply::Rows {
            columns,
            rows,
            warnings,
        } => {
            let mut out = Vec::with_capacity(rows.len() + columns.len() + 3);
            let mut count = Vec::new();
            engine::wire::put_lenenc(&mut count, columns.len() as u64);
            out.push(count);
            for (i, name) in columns.iter().enumerate() {
                let def = match a.sources.get(i) {
                    Some(Some(src)) if a.sources.len() == columns.len() => column_of(name, src),
                    _ => column_def(name, rows.iter().map(|r| &r[i])),
                };
                out.push(def.encode());
            }
            out.push(reply::eof(0, status));
            for r in &rows {
                let values: Vec<Option<Vec<u8>>> = r
                    .iter()
                    .map(|d| (!d.is_null()).then(|| d.to_bytes()))
                    .collect();
                out.push(reply::text_row(&values));
            }
            out.push(reply::eof(
                warnings.min(usize::from(u16::MAX)) as u16,
                status,
            ));
            out
        }
    }
}

/// A table column's definition as MySQL 5.1 sends it: its type code,
/// display length in bytes, flags and decimals (`Field::make_field`).
fn column_of(name: &str, src: &engine::sql::ColumnSource) -> ColumnDef {
    use engine::sql::ast::SqlType;
    let spec = &src.spec;
    let mb = src.collation.max_char_bytes();
    let binary_coll = src.collation == engine::record::collation::Collation::Binary;
    let text_charset = if binary_coll { 63 } else { src.collation.id() };
    let mut flags = if spec.not_null { flag::NOT_NULL } else { 0 };
    if spec.primary {
        flags |= flag::PRI_KEY;
    }
    if spec.unique {
        flags |= flag::UNIQUE_KEY;
    }
    if spec.auto_increment {
        flags |= flag::AUTO_INCREMENT;
    }
    let (t, length, more, charset, decimals) = match spec.ty {
        SqlType::Integer {
            bytes,
            unsigned,
            width,
        } => {
            let (t, w) = match bytes {
                1 => (ty::TINY, 4),
                2 => (ty::SHORT, 6),
                3 => (ty::INT24, 9),
                4 => (ty::LONG, 11),
                _ => (ty::LONGLONG, 20),
            };
            let w = width.map_or(if unsigned && bytes < 8 { w - 1 } else { w }, u32::from);
            let u = if unsigned { flag::UNSIGNED } else { 0 };
            (t, w, flag::NUM | u, 63, 0)
        }
        SqlType::Char(n) => (
            ty::STRING,
            u32::from(n) * mb,
            if binary_coll { flag::BINARY } else { 0 },
            text_charset,
            0,
        ),
        SqlType::VarChar(n) => (
            ty::VAR_STRING,
            u32::from(n) * mb,
            if binary_coll { flag::BINARY } else { 0 },
            text_charset,
            0,
        ),
        SqlType::Text(max) => (
            ty::BLOB,
            max.saturating_mul(mb),
            flag::BLOB,
            text_charset,
            0,
        ),
        SqlType::Blob(max) => (ty::BLOB, max, flag::BLOB | flag::BINARY, 63, 0),
        SqlType::Decimal { precision, scale } => (
            ty::NEWDECIMAL,
            u32::from(precision) + u32::from(scale > 0) + 1,
            flag::NUM,
            63,
            scale,
        ),
        SqlType::Float { double, digits } => {
            let (t, len) = if double {
                (ty::DOUBLE, 22)
            } else {
                (ty::FLOAT, 12)
            };
            match digits {
                Some((m, d)) => (t, u32::from(m), flag::NUM, 63, d),
                None => (t, len, flag::NUM, 63, 31),
            }
        }
        SqlType::Date => (ty::DATE, 10, flag::BINARY, 63, 0),
        SqlType::Time => (ty::TIME, 8, flag::BINARY, 63, 0),
        SqlType::DateTime => (ty::DATETIME, 19, flag::BINARY, 63, 0),
        SqlType::Timestamp => (
            ty::TIMESTAMP,
            19,
            flag::BINARY | flag::TIMESTAMP | flag::UNSIGNED,
            63,
            0,
        ),
        SqlType::Year => (ty::YEAR, 4, flag::NUM | flag::UNSIGNED, 63, 0),
        SqlType::Enum(_) => {
            let longest = spec.members.iter().map(|m| m.len()).max().unwrap_or(0) as u32;
            (ty::STRING, longest * mb, flag::ENUM, text_charset, 0)
        }
        SqlType::Set(_) => {
            let all: usize = spec.members.iter().map(|m| m.len() + 1).sum();
            let len = all.saturating_sub(1) as u32;
            (ty::STRING, len * mb, flag::SET, text_charset, 0)
        }
    };
    ColumnDef {
        schema: src.db.clone(),
        table: src.table.clone(),
        org_table: src.org_table.clone(),
        name: name.to_string(),
        org_name: spec.name.clone(),
        charset,
        length,
        ty: t,
        flags: flags | more,
        decimals,
    }
}

/// A result column's definition, its type inferred from its values.
fn column_def<'a>(
    name: &str,
    values: impl Iterator<Item = &'a engine::sql::value::Datum>,
) -> ColumnDef {
    use engine::sql::value::Datum;
    let mut kind = None;
    let mut length = 0u32;
    for v in values {
        length = length.max(v.to_bytes().len() as u32);
        if v.is_null() {
            continue;
        }
        let k = match v {
            Datum::Int(_) => 0,
            Datum::UInt(_) => 1,
            Datum::Dec(..) => 2,
            Datum::Real(..) => 3,
            _ => 4,
        };
        kind = Some(match kind {
            None => k,
            Some(p) if p == k => k,
            // Integers beside unsigned integers: unsigned where any is.
            Some(p @ (0 | 1)) if k <= 1 => p.max(k),
            Some(_) => 4,
        });
    }
    let (t, flags, charset, decimals) = match kind {
        Some(0) => (ty::LONGLONG, flag::NUM, 63, 0),
        Some(1) => (ty::LONGLONG, flag::NUM | flag::UNSIGNED, 63, 0),
        Some(2) => (ty::NEWDECIMAL, flag::NUM, 63, 0),
        Some(3) => (ty::DOUBLE, flag::NUM, 63, 31),
        Some(_) => (ty::VAR_STRING, 0, u16::from(LATIN1), 0),
        None => (ty::NULL, flag::BINARY, 63, 0),
    };
    ColumnDef {
        name: name.to_string(),
        org_name: name.to_string(),
        charset,
        length: length.max(1),
        ty: t,
        flags,
        decimals,
        ..ColumnDef::default()
    }
}
