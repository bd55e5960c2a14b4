//! The simulated machine under a script: starting the server, innosim's
//! `crash` and `restart`, the startup options a test's `-master.opt`
//! gives, and `list_files` over the simulated data directory.

use super::{glob, Runner, Stop, DATADIR};
use crate::storage::{CrashMode, PowerLossPolicy};
use engine::io::Storage as _;
use engine::sql::Server;
use engine::{Config, FlushAtCommit};

/// Applies startup options (`--name=value`, `--loose-name=value`, or
/// `name=value`; `-` and `_` alike in names) to the engine's settings. An
/// option innosim does not know is an error, unless it is `--loose-`, which
/// mysqld ignores when it does not know it either.
pub(super) fn apply_startup(config: &mut Config, opts: &[String]) -> Result<(), String> {
    for o in opts {
        for word in o.split_whitespace() {
            let w = word.trim_start_matches("--");
            let (loose, w) = match w
                .strip_prefix("loose-")
                .or_else(|| w.strip_prefix("loose_"))
            {
                Some(rest) => (true, rest),
                None => (false, w),
            };
            let (k, v) = w.split_once('=').unwrap_or((w, "1"));
            let k = k.replace('-', "_");
            match set(config, &k, v) {
                Ok(Ok(())) => {}
                Ok(Err(Bad(m))) => return Err(m),
                Err(Unknown) if loose => {}
                Err(Unknown) => return Err(format!("unknown startup option '{word}'")),
            }
        }
    }
    Ok(())
}

struct Unknown;
struct Bad(String);

fn number(k: &str, v: &str) -> Result<u64, Bad> {
    v.parse()
        .map_err(|_| Bad(format!("option '{k}' takes a number, not '{v}'")))
}

fn boolean(k: &str, v: &str) -> Result<bool, Bad> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "on" | "true" => Ok(true),
        "0" | "off" | "false" => Ok(false),
        _ => Err(Bad(format!("option '{k}' takes ON or OFF, not '{v}'"))),
    }
}

/// One setting: Err(Unknown) for a name innosim has no setting for; the
/// inner result says whether the value was right.
fn set(c: &mut Config, k: &str, v: &str) -> Result<Result<(), Bad>, Unknown> {
    Ok(match k {
        "innodb_flush_log_at_trx_commit" => number(k, v).and_then(|n| {
            FlushAtCommit::from_setting(n.min(255) as u8)
                .map(|f| c.flush_at_commit = f)
                .map_err(|e| Bad(e.to_string()))
        }),
        "innodb_lock_wait_timeout" => number(k, v).map(|n| c.lock_wait_timeout_us = n * 1_000_000),
        "innodb_buffer_pool_pages" => number(k, v).map(|n| c.buffer_pool_pages = n as usize),
        "innodb_doublewrite" => boolean(k, v).map(|b| c.doublewrite = b),
        "innodb_rollback_on_timeout" => boolean(k, v).map(|b| c.rollback_on_timeout = b),
        "innodb_file_per_table" => boolean(k, v).map(|b| c.file_per_table = b),
        // innosim allocates with Rust's allocator, the system's: the
        // setting can only be what it is.
        "innodb_use_sys_malloc" => boolean(k, v).and_then(|b| {
            if b {
                Ok(())
            } else {
                Err(Bad(
                    "innosim always uses the system allocator (innodb_use_sys_malloc)".into(),
                ))
            }
        }),
        _ => return Err(Unknown),
    })
}

impl Runner {
    pub(super) fn start(&mut self) -> Result<(), String> {
        let (server, _) = Server::open(
            Box::new(self.storage.clone()),
            Box::new(self.clock.clone()),
            self.config.clone(),
        )
        .map_err(|e| format!("the server did not start: {e}"))?;
        self.server = Some(server);
        self.conns.clear();
        self.current = Some("default".into());
        Ok(())
    }

    /// `list_files DIR [PATTERN]`, as mysqltest's: the files of the
    /// simulated data directory `DIR` (`$MYSQLD_DATADIR` is its root; a
    /// database's directory is `$MYSQLD_DATADIR/<db>`) whose names match
    /// the glob `PATTERN` (`*` and `?`), sorted, one a line. The engine
    /// keeps a database's files as `<db>$<name>`; they are listed by name.
    /// The server keeps a database's own entry as a table of an empty
    /// name (`<db>$`); its file stands for the directory and is not
    /// listed.
    pub(super) fn list_files(&mut self, args: &str) -> Result<(), Stop> {
        let mut words = args.split_whitespace();
        let dir = words.next().ok_or_else(|| {
            self.die("Missing required argument 'dirname' to command 'list_files'")
        })?;
        let pattern = words.next().unwrap_or("*");
        let dir = dir.trim_end_matches('/');
        let db = dir
            .strip_prefix(DATADIR)
            .ok_or_else(|| {
                self.die(format!(
                    "list_files lists under $MYSQLD_DATADIR ({DATADIR})"
                ))
            })?
            .trim_start_matches('/')
            .to_string();
        let names = self
            .storage
            .clone()
            .list()
            .map_err(|e| self.die(format!("list_files: {e}")))?;
        let mut shown: Vec<String> = names
            .into_iter()
            .filter_map(|n| match n.split_once('$') {
                Some((d, f)) if d == db && !f.starts_with('.') => Some(f.to_string()),
                None if db.is_empty() => Some(n),
                _ => None,
            })
            .filter(|f| glob(pattern.as_bytes(), f.as_bytes()))
            .collect();
        shown.sort();
        for f in shown {
            self.out.push_str(&f);
            self.out.push('\n');
        }
        Ok(())
    }

    pub(super) fn crash(&mut self, args: &str) -> Result<(), Stop> {
        let words: Vec<&str> = args.split_whitespace().collect();
        let mut after = None;
        let mut power = false;
        let mut torn = false;
        let mut k = 0;
        while k < words.len() {
            match words[k] {
                "process" => power = false,
                "power" => power = true,
                "torn" => torn = true,
                "after" => {
                    k += 1;
                    after = Some(
                        words
                            .get(k)
                            .and_then(|w| w.parse::<u64>().ok())
                            .ok_or_else(|| self.die("crash after <n>"))?,
                    );
                }
                w => return Err(self.die(format!("crash: unknown word '{w}'"))),
            }
            k += 1;
        }
        self.pending_crash = Some(if power {
            if torn {
                CrashMode::PowerLoss(PowerLossPolicy::Random {
                    seed: self.seed,
                    sector_bytes: 512,
                    p_survive: 0.5,
                    p_torn: 0.25,
                })
            } else {
                CrashMode::PowerLoss(PowerLossPolicy::LoseAll)
            }
        } else {
            CrashMode::ProcessCrash
        });
        match after {
            Some(n) => {
                let at = self.storage.counters().ops + n;
                self.storage.set_crash_at(Some(at));
            }
            None => {
                self.storage.crash_now();
            }
        }
        Ok(())
    }

    /// `restart [name=value ...]`: the server stops (or is found crashed)
    /// and starts again with these settings on top of the current ones.
    pub(super) fn restart(&mut self, words: &[String]) -> Result<(), Stop> {
        let mut config = self.config.clone();
        apply_startup(&mut config, words).map_err(|m| self.die(format!("restart: {m}")))?;
        self.config = config;
        let server = self.server.take().expect("a server runs");
        match self.pending_crash.take() {
            Some(mode) => {
                // Dropping the server without closing it is the crash; the
                // disk decides what survived.
                drop(server);
                self.storage.set_crash_at(None);
                self.storage.restart(mode);
            }
            None => {
                if let Err(e) = server.close() {
                    self.out.push_str(&format!("shutdown failed: {e}\n"));
                }
            }
        }
        self.start().map_err(|m| self.die(m))?;
        self.conn("default");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_options_take_mysqlds_spellings_and_loose_ones_may_be_unknown() {
        let mut c = Config::default();
        apply_startup(
            &mut c,
            &["--loose-innodb_lock_wait_timeout=2 --innodb-file-per-table=OFF".into()],
        )
        .unwrap();
        assert_eq!(c.lock_wait_timeout_us, 2_000_000);
        assert!(!c.file_per_table);
        apply_startup(&mut c, &["--loose-innodb-use-sys-malloc=true".into()]).unwrap();
        apply_startup(&mut c, &["--loose-no-such-thing=1".into()]).unwrap();
        assert!(apply_startup(&mut c, &["--no-such-thing=1".into()]).is_err());
        assert!(apply_startup(&mut c, &["innodb_lock_wait_timeout=x".into()]).is_err());
        assert!(apply_startup(&mut c, &["--innodb_use_sys_malloc=0".into()]).is_err());
    }
}
