//! [`MemStorage`]: an in-memory directory with no faults and no latency.
//!
//! Everything written is durable at once. It serves unit tests and
//! benchmarks that want the engine's own cost without any I/O; the `sim`
//! crate's simulated disk is the one that crashes and tears.

use super::{File, Storage};
use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

type Files = BTreeMap<String, Arc<Mutex<Vec<u8>>>>;

/// An in-memory directory. Clones share the same files, so a test can keep
/// a handle, drop the engine and open a new one on the same data.
#[derive(Debug, Clone, Default)]
pub struct MemStorage {
    files: Arc<Mutex<Files>>,
}

impl MemStorage {
    /// An empty directory.
    pub fn new() -> Self {
        Self::default()
    }

    fn files(&self) -> MutexGuard<'_, Files> {
        // A poisoned lock only means another test thread panicked; the map
        // itself is always consistent.
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of a file's bytes, for tests that corrupt files on purpose.
    pub fn read_file(&self, name: &str) -> Option<Vec<u8>> {
        let files = self.files();
        let data = files.get(name)?;
        let bytes = data.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Some(bytes)
    }

    /// Replaces a file's bytes, for tests that corrupt files on purpose.
    pub fn write_file(&self, name: &str, bytes: Vec<u8>) {
        let mut files = self.files();
        files.insert(name.to_string(), Arc::new(Mutex::new(bytes)));
    }
}

struct MemFile {
    data: Arc<Mutex<Vec<u8>>>,
}

impl MemFile {
    fn data(&self) -> MutexGuard<'_, Vec<u8>> {
        self.data.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl File for MemFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let data = self.data();
        let start = offset as usize;
        let end = start.checked_add(buf.len());
        match end {
            Some(end) if end <= data.len() => {
                buf.copy_from_slice(&data[start..end]);
                Ok(())
            }
            _ => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past the end of the file",
            )),
        }
    }
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let mut data = self.data();
        let start = offset as usize;
        let end = start + buf.len();
        if data.len() < end {
            data.resize(end, 0);
        }
        data[start..end].copy_from_slice(buf);
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn len(&mut self) -> io::Result<u64> {
        Ok(self.data().len() as u64)
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.data().resize(len as usize, 0);
        Ok(())
    }
}

fn not_found(name: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("no file {name:?}"))
}

impl Storage for MemStorage {
    fn create(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        let mut files = self.files();
        if files.contains_key(name) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("file {name:?} exists"),
            ));
        }
        let data = Arc::new(Mutex::new(Vec::new()));
        files.insert(name.to_string(), data.clone());
        Ok(Box::new(MemFile { data }))
    }
    fn open(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        let files = self.files();
        let data = files.get(name).ok_or_else(|| not_found(name))?.clone();
        Ok(Box::new(MemFile { data }))
    }
    fn exists(&mut self, name: &str) -> io::Result<bool> {
        Ok(self.files().contains_key(name))
    }
    fn remove(&mut self, name: &str) -> io::Result<()> {
        self.files()
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| not_found(name))
    }
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        let mut files = self.files();
        let data = files.remove(from).ok_or_else(|| not_found(from))?;
        files.insert(to.to_string(), data);
        Ok(())
    }
    fn list(&mut self) -> io::Result<Vec<String>> {
        Ok(self.files().keys().cloned().collect())
    }
    fn sync_dir(&mut self) -> io::Result<()> {
        // Memory has no power to lose: every change is as durable as it
        // will ever be.
        Ok(())
    }
}
