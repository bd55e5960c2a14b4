//! `innosim serve`: the engine's SQL layer behind the MySQL protocol on
//! loopback TCP and a Unix socket, for the `mariadb` client, drivers and
//! sysbench.
//!
//! One thread owns the engine (`engine::sql::Server`) and runs statements
//! in the order they arrive (`engine_thread`); each connection has a
//! thread of its own that speaks the protocol (`engine::wire`) and hands
//! the engine thread its commands over a channel (`connection`). A
//! statement that waits for a lock blocks only its connection: the engine
//! thread keeps it aside, resumes it whenever another statement has run
//! and when its lock wait's deadline on the engine's clock passes, and
//! answers when it ends. A connection that closes rolls back its
//! transaction.
//!
//! The engine lives on a [`Host`]: a data directory ([`DirHost`]) or the
//! simulated disk on the real clock ([`SimHost`]), where
//! `SET GLOBAL innosim_crash = 'power-loss' [AFTER n]` pulls the plug.
//! When the machine goes down, or the engine stops itself (a failed fsync
//! or rollback), every connection is dropped unanswered and the engine is
//! opened again, recovery's report in the log. `SHUTDOWN`, COM_SHUTDOWN
//! and SIGTERM close it cleanly.
//!
//! The protocol: the connection phase (greeting, `mysql_native_password`
//! with one configured user, an AuthSwitchRequest for a client that
//! offers another plugin, 1045 for a wrong password, 1040 past
//! max_connections), COM_QUERY with text result sets (`answer`: a table
//! column defined by its schema, as `Field::make_field` does, an
//! expression by its values), COM_INIT_DB, COM_PING, COM_QUIT,
//! COM_PROCESS_KILL and `KILL [QUERY]` (a killed connection's socket is
//! shut), COM_STATISTICS, COM_FIELD_LIST, COM_SHUTDOWN, the prepared
//! statements' commands (`prepared`), and an ERR 1047 for any other.

mod answer;
mod connection;
mod engine_thread;
pub mod host;
mod prepared;
pub mod record;

use self::connection::{err, Wire};
use self::engine_thread::{engine_loop, Core, Msg};
pub use self::host::{DirHost, Host, SimHost};
use self::record::SharedRecorder;
use engine::sql::ConnId;
use engine::wire::handshake::{self, status};
use engine::wire::PacketReader;
use rand::{Rng, SeedableRng};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{channel, Sender};

/// How long the engine thread waits at most between rounds of background
/// work (the engine's once-a-second tasks run in `tick`).
pub(super) const TICK_US: u64 = 100_000;

/// MySQL 5.1's default `max_allowed_packet`.
pub const MAX_ALLOWED_PACKET: usize = 1 << 20;

/// The version the greeting announces.
pub const VERSION: &str = "5.1.45-innosim";

/// latin1_swedish_ci's id, the server's default collation.
pub(super) const LATIN1: u8 = 8;

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
    /// Record every event and command packet to this file (see
    /// [`record`]).
    pub record: Option<std::path::PathBuf>,
    /// The engine's clock stands still instead of following the wall
    /// clock: no round of background work (purge, the log's once-a-second
    /// flush, the page cleaner) ever comes due and no lock wait times out.
    /// `innosim diff` against this server wants that, since its in-process
    /// side's clock stands still too: a purge at a moment the wall clock
    /// chose would change the gap locks one side sees and not the other.
    pub frozen_clock: bool,
}

impl Settings {
    /// `account`, and MySQL 5.1's 151 connections.
    pub fn new(account: Account) -> Settings {
        Settings {
            account,
            max_connections: 151,
            socket: None,
            scramble_seed: 0,
            record: None,
            frozen_clock: false,
        }
    }
}

/// A connection's byte stream: TCP or a Unix socket.
pub trait Stream: Read + Write + Send {
    /// A handle that shuts the stream down from another thread (KILL).
    fn closer(&self) -> Option<Box<dyn Fn() + Send>>;
    /// Ends the sending half: the peer reads the end of the stream.
    fn shutdown_write(&self) -> std::io::Result<()>;
}

impl Stream for TcpStream {
    fn shutdown_write(&self) -> std::io::Result<()> {
        self.shutdown(std::net::Shutdown::Write)
    }

    fn closer(&self) -> Option<Box<dyn Fn() + Send>> {
        let s = self.try_clone().ok()?;
        Some(Box::new(move || {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }))
    }
}

impl Stream for std::os::unix::net::UnixStream {
    fn shutdown_write(&self) -> std::io::Result<()> {
        self.shutdown(std::net::Shutdown::Write)
    }

    fn closer(&self) -> Option<Box<dyn Fn() + Send>> {
        let s = self.try_clone().ok()?;
        Some(Box::new(move || {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }))
    }
}

/// The open connections' sockets, for KILL to close.
pub(super) type Sockets =
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<ConnId, Box<dyn Fn() + Send>>>>;

/// What every accepted connection shares.
#[derive(Clone)]
pub(super) struct Shared {
    tx: Sender<Msg>,
    recorder: Option<SharedRecorder>,
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
                    connection::connection(stream, &me, scramble, &peer)
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
        let Ok(stream) = stream else {
            // Out of descriptors, say: wait a little rather than spin.
            std::thread::sleep(std::time::Duration::from_millis(10));
            continue;
        };
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

    /// Serves until the engine thread ends (SHUTDOWN, or the flag
    /// [`stopper`](Self::stopper) gives raised), then stops accepting.
    pub fn wait(mut self) -> Result<(), String> {
        let r = match self.engine.take() {
            Some(e) => e
                .join()
                .map_err(|_| "the engine thread panicked".to_string())?,
            None => Ok(()),
        };
        self.stop_threads().and(r)
    }

    /// The flag that stops the server (SIGTERM's handler raises it).
    pub fn stopper(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        self.stop.clone()
    }
}

/// Opens the engine on `host` (running recovery, whose report it
/// returns) and serves it on `listener` (bound already: port 0 picks a
/// free one), letting in `settings.account`.
pub fn start(
    mut host: Box<dyn Host>,
    listener: TcpListener,
    settings: Settings,
    log: Logger,
) -> Result<(Handle, engine::RecoveryReport), String> {
    let (server, report) = host.open()?;
    let recorder: Option<SharedRecorder> = match &settings.record {
        None => None,
        Some(path) => {
            let header = record::header_for(
                host.as_ref(),
                report.created,
                settings.max_connections as u64,
            );
            let r = record::Recorder::create(path, &header)?;
            Some(std::sync::Arc::new(std::sync::Mutex::new(r)))
        }
    };
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = channel::<Msg>();
    let engine_stop = stop.clone();
    let engine_log = log.clone();
    let sockets: Sockets = Default::default();
    let engine_sockets = sockets.clone();
    let engine_recorder = recorder.clone();
    let frozen_clock = settings.frozen_clock;
    let core = Core::new(host, server, settings.max_connections as u64, log.clone());
    let engine = std::thread::Builder::new()
        .name("engine".into())
        .spawn(move || {
            let r = engine_loop(
                core,
                rx,
                engine_stop.clone(),
                engine_sockets,
                engine_recorder,
                engine_log,
                frozen_clock,
            );
            // Whatever ended the engine thread ends the server: the accept
            // loops stop at their next connection, which `Handle` makes.
            engine_stop.store(true, std::sync::atomic::Ordering::SeqCst);
            r
        })
        .map_err(|e| e.to_string())?;
    let shared = Shared {
        tx,
        recorder,
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
        })
        .map_err(|e| e.to_string())?;
    let unix = match &settings.socket {
        None => None,
        Some(path) => {
            // A socket file a killed server left behind is replaced.
            let _ = std::fs::remove_file(path);
            let unix_listener = std::os::unix::net::UnixListener::bind(path)
                .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
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
                })
                .map_err(|e| e.to_string())?;
            Some((path.clone(), handle))
        }
    };
    Ok((
        Handle {
            addr,
            stop,
            engine: Some(engine),
            accept: Some(accept),
            unix,
        },
        report,
    ))
}

/// The status flags of an OK or EOF packet.
pub(super) fn status_of(in_trans: bool, autocommit: bool) -> u16 {
    (if in_trans { status::IN_TRANS } else { 0 }) | if autocommit { status::AUTOCOMMIT } else { 0 }
}
