//! The log group: the set of open log files, the group header that pins
//! their sizes, the checkpoint slots, and reads and writes addressed by LSN.
//! Mirrors the file-handling parts of `log0log.cc` (`log_group_write_buf`,
//! `log_group_checkpoint`, `log_group_read_checkpoint_info`).
//!
//! Writes are split at file boundaries here and nowhere else, and every file
//! written is remembered as dirty until it is synced, so a sync of the log
//! syncs exactly the files that need it.

use super::block::{
    checkpoint_slot, decode_checkpoint, decode_group_header, encode_checkpoint,
    encode_group_header, LOG_BLOCK_SIZE, LOG_CHECKPOINT_1, LOG_CHECKPOINT_2, LOG_GROUP_HEADER,
};
use super::{Geometry, LogConfig};
use crate::error::{Error, Result};
use crate::io::{File, Storage};

/// The name of log file `i`.
pub(crate) fn file_name(i: usize) -> String {
    format!("ib_logfile{i}")
}

/// The open files of a log group.
pub(crate) struct LogFiles {
    files: Vec<Box<dyn File>>,
    names: Vec<String>,
    /// Files written since their last sync.
    dirty: Vec<bool>,
    geometry: Geometry,
}

impl LogFiles {
    /// Creates the files of a new log: each `file_size_bytes` long, the
    /// group header in the first block of file 0, everything else zero.
    /// Nothing is synced; the caller syncs once the first block and
    /// checkpoint are written too.
    pub(crate) fn create(storage: &mut dyn Storage, cfg: &LogConfig) -> Result<LogFiles> {
        let geometry = Geometry::new(cfg);
        let mut files = Vec::with_capacity(cfg.files as usize);
        let mut names = Vec::with_capacity(cfg.files as usize);
        for i in 0..cfg.files as usize {
            let name = file_name(i);
            let mut file = storage
                .create(&name)
                .map_err(|e| Error::io("create", &name, e))?;
            file.set_len(cfg.file_size_bytes)
                .map_err(|e| Error::io("set_len", &name, e))?;
            files.push(file);
            names.push(name);
        }
        // The files' names are durable before anything in them is.
        storage
            .sync_dir()
            .map_err(|e| Error::io("sync_dir", ".", e))?;
        let mut group = LogFiles {
            dirty: vec![true; files.len()],
            files,
            names,
            geometry,
        };
        let header = encode_group_header(cfg.files, cfg.file_size_bytes);
        group.write_at(0, LOG_GROUP_HEADER, &header)?;
        Ok(group)
    }

    /// Opens the files of an existing log and checks them against `cfg`:
    /// a missing or short file, or a bad group header, is
    /// [`Error::Corrupt`]; a header describing other sizes than `cfg` is
    /// [`Error::InvalidArgument`].
    pub(crate) fn open(storage: &mut dyn Storage, cfg: &LogConfig) -> Result<LogFiles> {
        let geometry = Geometry::new(cfg);
        let mut files = Vec::with_capacity(cfg.files as usize);
        let mut names = Vec::with_capacity(cfg.files as usize);
        for i in 0..cfg.files as usize {
            let name = file_name(i);
            let exists = storage
                .exists(&name)
                .map_err(|e| Error::io("exists", &name, e))?;
            if !exists {
                return Err(Error::Corrupt {
                    file: name,
                    reason: "the redo log file is missing".to_string(),
                });
            }
            let file = storage
                .open(&name)
                .map_err(|e| Error::io("open", &name, e))?;
            files.push(file);
            names.push(name);
            // The header is checked as soon as file 0 is open, so that a
            // configuration mismatch is reported as such and not as a
            // missing or short file further on.
            if i == 0 {
                check_header(&mut files[0], &names[0], cfg)?;
            }
        }
        for (file, name) in files.iter_mut().zip(&names) {
            let len = file.len().map_err(|e| Error::io("len", name, e))?;
            if len != cfg.file_size_bytes {
                return Err(Error::Corrupt {
                    file: name.clone(),
                    reason: format!(
                        "the redo log file is {len} bytes long, the log header says {}",
                        cfg.file_size_bytes
                    ),
                });
            }
        }
        Ok(LogFiles {
            dirty: vec![false; files.len()],
            files,
            names,
            geometry,
        })
    }

    /// The shape of the ring.
    pub(crate) fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The name of file 0, for error messages about the log as a whole.
    pub(crate) fn first_name(&self) -> &str {
        &self.names[0]
    }

    /// Reads `buf` from file `file` at `offset`.
    fn read_at(&mut self, file: usize, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.files[file]
            .read_at(offset, buf)
            .map_err(|e| Error::io("read", &self.names[file], e))
    }

    /// Writes `buf` to file `file` at `offset` and marks the file dirty.
    fn write_at(&mut self, file: usize, offset: u64, buf: &[u8]) -> Result<()> {
        self.dirty[file] = true;
        self.files[file]
            .write_at(offset, buf)
            .map_err(|e| Error::io("write", &self.names[file], e))
    }

    /// Reads stream bytes starting at the block-aligned `lsn`, at most up
    /// to the end of the file that holds it. Returns how many bytes were
    /// read (a multiple of 512 when `buf.len()` is).
    pub(crate) fn read_blocks(&mut self, lsn: u64, buf: &mut [u8]) -> Result<usize> {
        debug_assert_eq!(lsn % LOG_BLOCK_SIZE as u64, 0);
        let (file, offset, room) = self.geometry.locate(lsn);
        let n = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        self.read_at(file, offset, &mut buf[..n])?;
        Ok(n)
    }

    /// Writes whole blocks starting at the block-aligned `lsn`, splitting
    /// the write where the stream crosses from one file to the next (or
    /// wraps to the first). Returns the number of write calls made.
    pub(crate) fn write_blocks(&mut self, lsn: u64, blocks: &[u8]) -> Result<u64> {
        debug_assert_eq!(lsn % LOG_BLOCK_SIZE as u64, 0);
        debug_assert_eq!(blocks.len() % LOG_BLOCK_SIZE, 0);
        assert!(
            blocks.len() as u64 <= self.geometry.capacity,
            "a log write larger than the ring would overwrite itself"
        );
        let mut done = 0usize;
        let mut writes = 0;
        while done < blocks.len() {
            let (file, offset, room) = self.geometry.locate(lsn + done as u64);
            let n = (blocks.len() - done).min(usize::try_from(room).unwrap_or(usize::MAX));
            self.write_at(file, offset, &blocks[done..done + n])?;
            done += n;
            writes += 1;
        }
        Ok(writes)
    }

    /// Syncs every file written since its last sync. Returns the number of
    /// syncs made.
    pub(crate) fn sync_dirty(&mut self) -> Result<u64> {
        let mut syncs = 0;
        for i in 0..self.files.len() {
            if self.dirty[i] {
                self.sync(i)?;
                syncs += 1;
            }
        }
        Ok(syncs)
    }

    /// Syncs file `i`.
    fn sync(&mut self, i: usize) -> Result<()> {
        self.files[i]
            .sync()
            .map_err(|e| Error::io("sync", &self.names[i], e))?;
        self.dirty[i] = false;
        Ok(())
    }

    /// Marks every file as needing a sync (their contents were not written
    /// by us and may not be durable yet).
    pub(crate) fn mark_all_dirty(&mut self) {
        self.dirty.fill(true);
    }

    /// Writes checkpoint `no` at `lsn` into its slot and syncs file 0: when
    /// this returns `Ok` the checkpoint is durable.
    pub(crate) fn write_checkpoint(&mut self, no: u64, lsn: u64) -> Result<()> {
        let block = encode_checkpoint(no, lsn);
        self.write_at(0, checkpoint_slot(no), &block)?;
        self.sync(0)
    }

    /// Reads both checkpoint slots and returns the valid checkpoint with the
    /// highest number as (number, LSN).
    pub(crate) fn read_checkpoint(&mut self) -> Result<(u64, u64)> {
        let mut best: Option<(u64, u64)> = None;
        for slot in [LOG_CHECKPOINT_1, LOG_CHECKPOINT_2] {
            let mut block = [0u8; LOG_BLOCK_SIZE];
            self.read_at(0, slot, &mut block)?;
            if let Some((no, lsn)) = decode_checkpoint(&block, slot) {
                if best.is_none_or(|(best_no, _)| no > best_no) {
                    best = Some((no, lsn));
                }
            }
        }
        best.ok_or_else(|| Error::Corrupt {
            file: self.names[0].clone(),
            reason: "neither checkpoint slot holds a valid checkpoint".to_string(),
        })
    }
}

/// Checks the group header of file 0 against the configuration.
fn check_header(file: &mut Box<dyn File>, name: &str, cfg: &LogConfig) -> Result<()> {
    let len = file.len().map_err(|e| Error::io("len", name, e))?;
    if len < LOG_BLOCK_SIZE as u64 {
        return Err(Error::Corrupt {
            file: name.to_string(),
            reason: format!("the redo log file is only {len} bytes long"),
        });
    }
    let mut header = [0u8; LOG_BLOCK_SIZE];
    file.read_at(LOG_GROUP_HEADER, &mut header)
        .map_err(|e| Error::io("read", name, e))?;
    let (files, file_size_bytes) =
        decode_group_header(&header).map_err(|reason| Error::Corrupt {
            file: name.to_string(),
            reason,
        })?;
    if files != cfg.files || file_size_bytes != cfg.file_size_bytes {
        return Err(Error::InvalidArgument(format!(
            "the configured redo log size ({} files of {} bytes) differs from the log files \
             ({files} files of {file_size_bytes} bytes)",
            cfg.files, cfg.file_size_bytes
        )));
    }
    Ok(())
}
