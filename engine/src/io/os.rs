//! [`OsStorage`] and [`OsClock`]: the real directory and the real clock.
//!
//! `create`, `remove` and `rename` change the directory; `sync_dir` fsyncs
//! it, which is what makes those changes durable (the engine calls it
//! after each of them, as MySQL's `os_parent_dir_fsync_posix` does).

use super::{Clock, File, Storage};
use std::fs;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::Instant;

/// A directory on the real file system.
#[derive(Debug)]
pub struct OsStorage {
    dir: PathBuf,
}

impl OsStorage {
    /// Uses `dir` (created if missing) as the engine's directory.
    pub fn new(dir: impl Into<PathBuf>) -> io::Result<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir)?;
        Ok(OsStorage { dir })
    }

    fn path(&self, name: &str) -> io::Result<PathBuf> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid file name {name:?}"),
            ));
        }
        Ok(self.dir.join(name))
    }
}

struct OsFile {
    file: fs::File,
}

impl File for OsFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }
    fn len(&mut self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
}

impl Storage for OsStorage {
    fn create(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(self.path(name)?)?;
        Ok(Box::new(OsFile { file }))
    }
    fn open(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(self.path(name)?)?;
        Ok(Box::new(OsFile { file }))
    }
    fn exists(&mut self, name: &str) -> io::Result<bool> {
        Ok(self.path(name)?.exists())
    }
    fn remove(&mut self, name: &str) -> io::Result<()> {
        fs::remove_file(self.path(name)?)
    }
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        fs::rename(self.path(from)?, self.path(to)?)
    }
    fn list(&mut self) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                if let Some(name) = entry.file_name().to_str() {
                    names.push(name.to_string());
                }
            }
        }
        names.sort();
        Ok(names)
    }
    fn sync_dir(&mut self) -> io::Result<()> {
        fs::File::open(&self.dir)?.sync_all()
    }
}

/// Wall-clock time since the clock was made.
#[derive(Debug)]
pub struct OsClock {
    origin: Instant,
}

impl OsClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        OsClock {
            origin: Instant::now(),
        }
    }
}

impl Default for OsClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for OsClock {
    fn now_us(&self) -> u64 {
        self.origin.elapsed().as_micros() as u64
    }
}
