//! `innosim serve --record FILE` and `innosim replay-served FILE`: a served
//! run, written down and run again on the simulated disk.
//!
//! The file is JSON lines. The first describes the server (its host: a
//! fresh data directory or the simulated disk with its seed and faults;
//! the settings the engine was opened with). Each later line is either one
//! event of the engine thread, in the order it handled them, with the
//! engine clock's reading and a digest of every answer it gave
//! (`{"t": .., "event": .., "out": [..]}`), or one command packet a
//! connection received after logging in (`{"conn": .., "packet": "hex"}`),
//! kept for the reader and for tests that send them again, mutated, to a
//! live server.
//!
//! A replay opens a new engine on the simulated disk with the recorded
//! settings and a manual clock, and hands it the events one by one, the
//! clock set to each one's reading first: the engine thread's work is a
//! function of the events and the clock alone (`engine_thread::Core`), so
//! every answer must have the recorded digest. A failure a real client
//! found becomes a run anyone can repeat, and the first answer that
//! differs is reported with what the replay answered.
//!
//! # What it showed
//!
//! The events are whatever the engine thread handled: a connection's statement, prepare, close,
//! KILL, or a wait that ended with nothing arrived. The engine clock stands still while an
//! event is handled and the engine thread moves it to the wall clock before each one, which is
//! what lets a replay set it to each recorded reading. A sysbench run of 3 s at 4 threads on
//! `--sim` (58,632 events, 8 deadlocks) replayed with every answer the same in 1.8 s (`innosim
//! serve --sim --seed 3 --record /tmp/rec1.jsonl`, sysbench against it, SHUTDOWN, then `innosim
//! replay-served /tmp/rec1.jsonl`). `cargo test --test serve_record` records a run with
//! prepared statements, a 1205, a 1213 and a power loss on command, replays it (a digest
//! changed in the file is found), and sends 300 of its command packets mutated, random bytes
//! and cut packets to a live server: each ends only its own connection, a witness connection
//! answers after every one, and `innosim check` passes on the directory afterwards.

use super::engine_thread::{Core, Effects, Event};
use super::host::{advance_to, Host, SimHost};
use super::Logger;
use crate::profile::FaultKind;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// How a recording names its host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum HostRecord {
    /// A data directory.
    Dir,
    /// The simulated disk.
    Sim {
        /// Its fault seed.
        seed: u64,
        /// The fault kinds it injected.
        faults: Vec<FaultKind>,
    },
}

/// The settings a recording was served with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The format's version.
    pub innosim_record: u32,
    /// Where the engine's files were.
    pub host: HostRecord,
    /// Whether the engine began on an empty disk (a replay needs it).
    pub created: bool,
    /// innodb_flush_log_at_trx_commit.
    pub flush: u8,
    /// innodb_lock_wait_timeout, microseconds.
    pub lock_wait_timeout_us: u64,
    /// max_connections.
    pub max_connections: u64,
    /// innodb_buffer_pool_size, in pages (page writes and evictions, and so
    /// the I/O count an armed crash waits for, follow it).
    pub buffer_pool_pages: usize,
}

#[derive(Serialize, Deserialize)]
struct EventLine {
    t: u64,
    event: Event,
    out: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    dropped_all: bool,
}

#[derive(Serialize, Deserialize)]
struct PacketLine {
    conn: u32,
    packet: String,
}

/// Writes a recording as the server runs.
pub struct Recorder {
    out: std::io::BufWriter<std::fs::File>,
}

impl Recorder {
    /// Creates `path` and writes the header.
    pub fn create(path: &std::path::Path, header: &Header) -> Result<Recorder, String> {
        let f = std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut r = Recorder {
            out: std::io::BufWriter::new(f),
        };
        r.line(&serde_json::to_string(header).map_err(|e| e.to_string())?)?;
        Ok(r)
    }

    fn line(&mut self, s: &str) -> Result<(), String> {
        writeln!(self.out, "{s}").map_err(|e| e.to_string())
    }

    /// One event the engine thread handled at `t`, and what it answered.
    pub(super) fn event(&mut self, t: u64, event: &Event, fx: &Effects) -> Result<(), String> {
        let line = EventLine {
            t,
            event: event.clone(),
            out: fx
                .outputs
                .iter()
                .map(|(_, o)| format!("{:016x}", o.digest()))
                .collect(),
            dropped_all: fx.dropped_all,
        };
        self.line(&serde_json::to_string(&line).map_err(|e| e.to_string())?)?;
        // Written through, so that a killed server leaves its record.
        self.out.flush().map_err(|e| e.to_string())
    }

    /// A command packet connection `conn` received.
    pub(super) fn packet(&mut self, conn: u32, payload: &[u8]) -> Result<(), String> {
        let line = PacketLine {
            conn,
            packet: payload.iter().map(|b| format!("{b:02x}")).collect(),
        };
        self.line(&serde_json::to_string(&line).map_err(|e| e.to_string())?)
    }
}

/// The recorder, shared by the engine thread and the connections.
pub(super) type SharedRecorder = std::sync::Arc<std::sync::Mutex<Recorder>>;

/// The command packets of a recording, by connection, in order.
pub fn packets(path: &std::path::Path) -> Result<Vec<(u32, Vec<u8>)>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for line in std::io::BufReader::new(f).lines().skip(1) {
        let line = line.map_err(|e| e.to_string())?;
        if let Ok(p) = serde_json::from_str::<PacketLine>(&line) {
            let bytes = (0..p.packet.len() / 2)
                .map(|i| u8::from_str_radix(&p.packet[2 * i..2 * i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|e| format!("a packet line: {e}"))?;
            out.push((p.conn, bytes));
        }
    }
    Ok(out)
}

/// What a replay found.
#[derive(Debug, Default)]
pub struct Replayed {
    /// Events handled.
    pub events: u64,
    /// Answers compared.
    pub answers: u64,
    /// Crashes (and engine stops) the replay met, as the recording did.
    pub restarts: u64,
    /// The first difference, if any.
    pub mismatch: Option<String>,
}

/// Replays the recording at `path` on the simulated disk.
pub fn replay(path: &std::path::Path, log: Logger) -> Result<Replayed, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = std::io::BufReader::new(f).lines();
    let first = lines
        .next()
        .ok_or("an empty recording")?
        .map_err(|e| e.to_string())?;
    let header: Header = serde_json::from_str(&first)
        .map_err(|e| format!("{}: not a recording ({e})", path.display()))?;
    if header.innosim_record != 1 {
        return Err(format!(
            "recording format {} (this build reads 1)",
            header.innosim_record
        ));
    }
    if !header.created {
        return Err(
            "the recording began on a directory that held a database: only a run that \
                    began empty (a new --dir, or --sim) can be replayed"
                .into(),
        );
    }
    let config = engine::Config {
        flush_at_commit: engine::FlushAtCommit::from_setting(header.flush)
            .map_err(|e| e.to_string())?,
        lock_wait_timeout_us: header.lock_wait_timeout_us,
        buffer_pool_pages: header.buffer_pool_pages,
        ..crate::script::script_config()
    };
    let mut host: Box<dyn Host> = match &header.host {
        HostRecord::Sim { seed, faults } => Box::new(SimHost::new(config, *seed, faults)),
        // A directory that began empty is the simulated disk without
        // faults, refusing crashes on command as real files do.
        HostRecord::Dir => Box::new(SimHost::new(config, 0, &[]).refusing_crashes()),
    };
    let clock = host.clock();
    let (server, _) = host.open()?;
    let mut core = Core::new(host, server, header.max_connections, log);
    let mut r = Replayed::default();
    for (n, line) in lines.enumerate() {
        let line = line.map_err(|e| e.to_string())?;
        let Ok(ev) = serde_json::from_str::<EventLine>(&line) else {
            if serde_json::from_str::<PacketLine>(&line).is_ok() {
                continue;
            }
            return Err(format!("line {}: neither an event nor a packet", n + 2));
        };
        advance_to(&clock, ev.t);
        let fx = core.handle(&ev.event)?;
        r.events += 1;
        r.restarts += u64::from(fx.dropped_all);
        let got: Vec<String> = fx
            .outputs
            .iter()
            .map(|(_, o)| format!("{:016x}", o.digest()))
            .collect();
        r.answers += got.len().min(ev.out.len()) as u64;
        if got != ev.out || fx.dropped_all != ev.dropped_all {
            r.mismatch = Some(format!(
                "line {}: {:?} at {} us answered {} time(s) (digests {got:?}{}), recorded {:?}{}: {:?}",
                n + 2,
                ev.event,
                ev.t,
                got.len(),
                if fx.dropped_all { ", a restart" } else { "" },
                ev.out,
                if ev.dropped_all { ", a restart" } else { "" },
                fx.outputs
            ));
            break;
        }
        if fx.stop {
            break;
        }
        if fx.dropped_all {
            core.reopen(None)?;
        }
    }
    let _ = core.close();
    Ok(r)
}

/// A header for a server about to start on `host`.
pub fn header_for(host: &dyn Host, created: bool, max_connections: u64) -> Header {
    let config = host.config();
    Header {
        innosim_record: 1,
        host: host.describe(),
        created,
        flush: match config.flush_at_commit {
            engine::FlushAtCommit::Lazy => 0,
            engine::FlushAtCommit::Sync => 1,
            engine::FlushAtCommit::Write => 2,
        },
        lock_wait_timeout_us: config.lock_wait_timeout_us,
        max_connections,
        buffer_pool_pages: config.buffer_pool_pages,
    }
}
