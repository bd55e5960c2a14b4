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
//!
//! # Running it
//!
//! ```text
//! innosim serve [--dir D | --sim [--seed N] [--profile P]] [--port N] [--socket PATH]
//!               [--user U --password P] [--innodb-flush-log-at-trx-commit=N]
//!               [--innodb-lock-wait-timeout=S] [--innodb-buffer-pool-size=SIZE]
//!               [--max-connections=N] [--record FILE]
//! ```
//!
//! The server listens on 127.0.0.1, port 3407 unless told (leaving MySQL's 3306 free), as user
//! `root` with no password unless told. On a real data directory (`innosim-data` unless told)
//! the directory is created on first start and recovered on every start, the recovery report in
//! the log. `engine::wire` is the protocol as a pure codec (bytes in, bytes out: framing,
//! handshake v10, `mysql_native_password`, OK/ERR/EOF, column definitions, text rows); this
//! module runs one engine thread that takes statements in arrival order and a thread per
//! connection; `sim::client` is the client side on the same codec. `--socket PATH` adds a Unix
//! socket beside the TCP port (`mariadb -S PATH` works).
//!
//! # What works, and how it is shown
//!
//! - `cargo test --test real_clients` (the clients installed by
//!   `tests/tools/setup-clients.sh`): the `mariadb` command-line client (statements with `-e`,
//!   `\G`, SHOW TABLE STATUS, a failing statement's error line and exit status 1), PyMySQL
//!   (`tests/tools/pymysql_session.py`: parameters, autocommit on and off, a 1205 and a 1213
//!   raised as `OperationalError`), and sysbench `oltp_read_write` (prepare, 4 s runs at 4 and
//!   16 threads with prepared statements on and off, cleanup; no error but the deadlocks it
//!   retries); seeds/000's `mysql>` transcripts typed into the client (`-vvv`): the same
//!   warnings (1478, with their texts), the same `ERROR 1005 ... (errno: 1478)`, the same SHOW
//!   TABLE STATUS row to Auto_increment, and seeds/002's `desc sbtest` and four fast ALTERs
//!   (the client pads the Key column one wider than the seed's, for want of a NOT NULL flag on
//!   SHOW's columns); and seeds/000's lock-wait session in two clients, read through
//!   INNODB_LOCK_WAITS, INNODB_TRX and INNODB_LOCKS while it waits, then its 1205 after the
//!   timeout, in real time;
//! - by hand: a wrong password's 1045 in the `mariadb` client; PyMySQL with `charset='utf8'`:
//!   parameters, `lastrowid`, autocommit off with rollback, DECIMAL, DOUBLE, DATE, VARCHAR and
//!   BLOB columns as Decimal, float, date, str and bytes, 1146 and 1115 as exceptions (MySQL
//!   5.1 has no utf8mb4, so PyMySQL's default charset gets 1115, as from 5.1);
//! - `cargo test --test serve`: replies and status flags, column definitions from the schema,
//!   the OK packet's insert id, lock waits between connections ending by timeout (1205, in real
//!   time) or by the holder's commit, a connection closed mid-transaction rolled back, `KILL
//!   [QUERY]` (1317) and COM_PROCESS_KILL, SHOW PROCESSLIST, COM_STATISTICS, max_connections
//!   (1040), broken packets (garbage, a cut command, one over max_allowed_packet: 1153) that
//!   end only their own connection, COM_FIELD_LIST (a table's column definitions with their
//!   defaults) and the Unix socket;
//! - a kill-restart loop on real files (`kill -9` of `innosim serve` after 200 commits through
//!   PyMySQL, 200 cycles, every acknowledged commit found after each restart): 18.6 cycles/s
//!   over the first 50 cycles and 17.3 over the last 50, now that recovery ends with a
//!   checkpoint (the build before it, 3d89547, beside it in one sitting: 14.7 falling to 8.0),
//!   measured by `python3 tests/tools/kill_restart_loop.py target/release/innosim /tmp/kl 200
//!   200` (needs PyMySQL; `innosim crashloop`, [`crate::crashloop`], is the same loop without
//!   Python).
//!
//! # Prepared statements and sysbench
//!
//! COM_STMT_PREPARE, EXECUTE, SEND_LONG_DATA, RESET and CLOSE: a statement is described before
//! it runs (its result columns from the schema), and each execute puts its parameters' literals
//! where its `?`s stood and answers rows in the binary protocol (`cargo test --test serve`).
//! sysbench 1.0.20 (Debian's package) runs against it, checked by hand: `sysbench
//! oltp_read_write --db-driver=mysql --mysql-port=N --mysql-user=root --mysql-db=test
//! --tables=1 --table-size=1000` prepare, then run for 10 s at 4 threads (1,466 transactions/s,
//! 79 ignored errors: the deadlocks sysbench retries) and at 16 (1,491/s, 1,439 ignored), and
//! with `--db-ps-mode=disable` at 4 (1,406/s), then cleanup; `innosim check` passed on the
//! directory after the server was killed.
//!
//! # The simulated disk, and pulling its plug
//!
//! `innosim serve --sim [--seed N] [--profile P]` serves the simulated disk on the real clock
//! (with the profile's faults, if one is named). `SET GLOBAL innosim_crash = 'power-loss'
//! [AFTER n]` (also `'power-loss-all'` and `'process-crash'`) pulls its plug now or after n
//! more I/O operations: every connection is dropped unanswered (the `mariadb` client prints
//! 2013, Lost connection), the server recovers on what survived, logs recovery's report and
//! serves again, numbering connections on. An engine that stops itself (a failed fsync, a
//! rollback that meets a full disk) is opened again the same way, on either host. `SHUTDOWN`,
//! COM_SHUTDOWN (`mariadb-admin shutdown`), SIGTERM and SIGINT close the engine cleanly. `cargo
//! test --test serve` covers each.
//!
//! `cargo test --test real_clients a_power_loss` pulls the plug on `--sim` in the middle of a
//! sysbench run whose transactions also add a row to a side table
//! (`tests/tools/sysbench_acked.lua`, each thread counting the commits acknowledged to it):
//! after the restart every thread's acknowledged rows are there, at most its one in-flight row
//! beside them, and CHECK TABLE passes.
//!
//! # Under load
//!
//! `cargo test --test serve_load -- --nocapture` runs 64 connections for 30 s against the real
//! binary (`--innodb-buffer-pool-size 33554432`) on a conflicting workload: this machine, one
//! run, 202,215 commits, 179 deadlocks, no other error, resident memory 14.6 MiB idle and 33.3
//! MiB at its peak (about 300 KiB a connection above idle, pool pages included); the test holds
//! the peak under idle + the pool + 1 MiB a connection.
//!
//! # Checking a directory: `innosim check`
//!
//! `innosim check DIR` is what innochecksum and mysqlcheck do for users who kill their own
//! servers: it recovers the directory (the report printed), runs CHECK TABLE on every table,
//! and reads back every page of every file (checksum, page number, no LSN past the log's end,
//! every compressed index page decompressed to a frame whose structure holds; the doublewrite
//! buffer's slots are skipped), exiting 1 on any damage and 2 for a directory without a
//! database (`cargo test --test check_dir`: a clean directory with a compressed table passes,
//! one flipped bit is found).
//!
//! Recording a served run and replaying it is [`record`]'s; the crash loop under a real client
//! is [`crate::crashloop`]'s.

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
