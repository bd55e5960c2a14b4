//! Helpers for the tests of `innosim serve`: a server on a host with its
//! log, connecting while it recovers, and bad packets sent to it.

use engine::wire::reply::Reply;
use rand::{Rng, SeedableRng};
use sim::client::Client;
use sim::serve::{self, Account, Handle};
use std::sync::{Arc, Mutex};

/// The server's log lines.
pub type Log = Arc<Mutex<Vec<String>>>;

/// A server on `host` for user root with `password`, at most six
/// connections, a fixed scramble seed, and optionally a Unix socket and a
/// recording.
pub fn serve_on(
    host: Box<dyn serve::Host>,
    password: &str,
    socket: Option<std::path::PathBuf>,
    record: Option<std::path::PathBuf>,
    max_connections: usize,
) -> (Handle, Log) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l = lines.clone();
    let log: serve::Logger = Arc::new(move |s| l.lock().unwrap().push(s));
    let mut settings = serve::Settings::new(Account::new("root", password));
    settings.max_connections = max_connections;
    settings.scramble_seed = 7;
    settings.socket = socket;
    settings.record = record;
    let (h, _) = serve::start(host, listener, settings, log).unwrap();
    (h, lines)
}

/// Connects as root without a password, retrying while the server
/// recovers from a crash (the accept loop takes the connection; the
/// engine answers it once it is open again).
pub fn reconnect(h: &Handle) -> Client {
    for _ in 0..1_000 {
        if let Ok(c) = Client::connect(h.addr, "root", "", Some("test")) {
            return c;
        }
        std::thread::yield_now();
    }
    panic!("the server never came back");
}

/// The first value of the first row.
pub fn one(c: &mut Client, sql: &str) -> String {
    match c.query(sql).unwrap() {
        Reply::Rows { rows, .. } => String::from_utf8(rows[0][0].clone().unwrap()).unwrap(),
        other => panic!("{sql}: {other:?}"),
    }
}

/// A packet with its header: 3-byte length and sequence 0.
fn framed(payload: &[u8]) -> Vec<u8> {
    let n = payload.len() as u32;
    let mut out = vec![n as u8, (n >> 8) as u8, (n >> 16) as u8, 0];
    out.extend_from_slice(payload);
    out
}

/// Sends `rounds` bad packets to the live server `h`, each on a new
/// connection: two in three a recorded command packet with a few bytes
/// changed, one in three random bytes (header and all), one in fifty cut
/// short. After each, `witness` must still answer `check` with `want`.
/// COM_SHUTDOWN and COM_PROCESS_KILL are left out (the one account may
/// use them). Returns how many were answered before the close.
pub fn bad_packets(
    h: &Handle,
    packets: &[(u32, Vec<u8>)],
    rounds: usize,
    seed: u64,
    witness: &mut Client,
    check: &str,
    want: &str,
) -> usize {
    assert!(!packets.is_empty());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut answered = 0;
    for round in 0..rounds {
        let mut bytes = match round % 3 {
            0 | 1 => {
                let (_, p) = &packets[rng.gen_range(0..packets.len())];
                let mut p = p.clone();
                for _ in 0..rng.gen_range(1..4) {
                    if !p.is_empty() {
                        let i = rng.gen_range(0..p.len());
                        p[i] = rng.gen();
                    }
                }
                framed(&p)
            }
            _ => (0..rng.gen_range(1..64)).map(|_| rng.gen()).collect(),
        };
        if bytes.get(4).is_some_and(|&b| b == 0x08 || b == 0x0C) {
            bytes[4] = 0x0E; // COM_PING
        }
        if round % 50 == 0 {
            bytes.truncate(bytes.len() / 2);
        }
        let c = reconnect(h);
        if !c.send_raw_and_close(&bytes).unwrap_or_default().is_empty() {
            answered += 1;
        }
        assert_eq!(
            one(witness, check),
            want,
            "after bad packet {round}: {bytes:?}"
        );
    }
    answered
}
