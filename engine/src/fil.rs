//! Tablespace files: the map from space id to file, page-granular reads and
//! writes, file growth. Mirrors InnoDB's `fil0fil.cc`.
//!
//! Space 0 is the system tablespace `ibdata1`; every table created with
//! file-per-table lives in its own `<name>.ibd` with a space id from the
//! transaction system header. A page that lies beyond a file's end reads
//! as zeros (never written); writing it extends the file.
//!
//! This layer knows nothing of page contents beyond sealing on write and
//! validating on read; it must never hand a page that failed validation to
//! anyone as data.
//!
//! Each space has a physical page size: 16 KiB, or a compressed table's
//! KEY_BLOCK_SIZE (1 to 16 KiB, [`crate::page::zip`]), recorded in page 0's
//! FSP flags ([`page_size_of_flags`]) and in the FILE_CREATE
//! record, as InnoDB's `fil_space_t::zip_size` is. Page `n` of a space lies
//! at byte `n * page size`, and every read and write here is of whole
//! physical pages.

use crate::error::{Error, Result};
use crate::io::{File, Storage};
use crate::page::{self, PageId, PageState, PAGE_SIZE};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Offset of a tablespace's FSP flags on its page 0 (the last field of the
/// FSP header, laid out by `fsp`, after the FIL header): the file layer
/// reads them to learn a space's page size before anything above it runs.
pub const FSP_FLAGS: usize = page::FIL_PAGE_DATA + 20;

/// The bit position of the compressed page size in [`FSP_FLAGS`].
const FLAGS_ZSSIZE_SHIFT: u32 = 1;
/// Its mask.
const FLAGS_ZSSIZE_MASK: u32 = 0xf << FLAGS_ZSSIZE_SHIFT;

/// The FSP flags of a space of compressed pages of `zip_size` bytes
/// (`None`: 16 KiB pages, not compressed).
pub fn flags_for(zip_size: Option<usize>) -> u32 {
    match zip_size {
        None => 0,
        Some(size) => {
            debug_assert!(crate::mach::is_zip_size(size));
            (size / 512).trailing_zeros() << FLAGS_ZSSIZE_SHIFT
        }
    }
}

/// The compressed page size FSP flags record (`None`: 16 KiB pages, not
/// compressed); an error names what is wrong with them.
pub fn page_size_of_flags(flags: u32) -> std::result::Result<Option<usize>, String> {
    if flags & !FLAGS_ZSSIZE_MASK != 0 {
        return Err(format!("unknown FSP flags {flags:#x}"));
    }
    match (flags & FLAGS_ZSSIZE_MASK) >> FLAGS_ZSSIZE_SHIFT {
        0 => Ok(None),
        s @ 1..=5 => Ok(Some(512 << s)),
        s => Err(format!("compressed page size code {s} in the FSP flags")),
    }
}

/// Space id of the system tablespace.
pub const SYSTEM_SPACE: u32 = 0;
/// File name of the system tablespace.
pub const SYSTEM_FILE: &str = "ibdata1";

struct SpaceFile {
    name: String,
    file: Box<dyn File>,
    /// File length in pages as last set or observed.
    len_pages: u32,
    /// The physical page size in bytes.
    page_size: usize,
    /// Whether pages are compressed ([`crate::page::zip`]) images.
    compressed: bool,
    /// Written since its last sync.
    unsynced: bool,
}

/// I/O counters, for benchmarks and the figures in the README.
#[derive(Debug, Default, Clone, Copy)]
pub struct FilStats {
    /// Pages read.
    pub pages_read: u64,
    /// Pages written (home locations and doublewrite area alike).
    pub pages_written: u64,
    /// Data file syncs.
    pub syncs: u64,
}

/// The open tablespace files.
pub struct Fil {
    storage: Box<dyn Storage>,
    spaces: BTreeMap<u32, SpaceFile>,
    /// Counters.
    pub stats: FilStats,
    /// The `trust-page-id` canary: a page read is validated against the
    /// page number and space its own header claims, so a page that a
    /// misdirected write left at the wrong offset passes.
    pub trust_page_id: bool,
    /// The `skip-directory-sync` canary: a tablespace file is created
    /// without syncing the directory, so a power loss may take its name
    /// (and every page written to it) away after the table was committed.
    pub skip_dir_sync: bool,
}

impl Fil {
    /// A registry over `storage` with no spaces open.
    pub fn new(storage: Box<dyn Storage>) -> Self {
        Fil {
            storage,
            spaces: BTreeMap::new(),
            stats: FilStats::default(),
            trust_page_id: false,
            skip_dir_sync: false,
        }
    }

    /// The storage, for the log and for listing files.
    pub fn storage(&mut self) -> &mut dyn Storage {
        &mut *self.storage
    }

    /// Whether a space is open.
    pub fn is_open(&self, space: u32) -> bool {
        self.spaces.contains_key(&space)
    }

    /// The open spaces' ids, ascending.
    pub fn space_ids(&self) -> Vec<u32> {
        self.spaces.keys().copied().collect()
    }

    /// The open space whose file has this name, if any.
    pub fn space_of(&self, name: &str) -> Option<u32> {
        self.spaces
            .iter()
            .find(|(_, s)| s.name == name)
            .map(|(&id, _)| id)
    }

    /// The file name of an open space.
    pub fn name(&self, space: u32) -> Option<&str> {
        self.spaces.get(&space).map(|s| s.name.as_str())
    }

    /// The physical page size of an open space.
    pub fn page_size(&self, space: u32) -> Option<usize> {
        self.spaces.get(&space).map(|s| s.page_size)
    }

    /// The compressed page size of an open space of a compressed table
    /// (`None` for 16 KiB pages that are not compressed).
    pub fn zip_size(&self, space: u32) -> Option<usize> {
        self.spaces
            .get(&space)
            .and_then(|s| s.compressed.then_some(s.page_size))
    }

    /// The largest physical page size of the open compressed spaces, if any.
    pub fn max_zip_size(&self) -> Option<usize> {
        self.spaces
            .values()
            .filter(|s| s.compressed)
            .map(|s| s.page_size)
            .max()
    }

    /// Creates a space's file (empty) of 16 KiB pages and opens it.
    pub fn create(&mut self, space: u32, name: &str) -> Result<()> {
        self.create_sized(space, name, None)
    }

    /// Creates a space's file (empty) of compressed pages of `zip_size`
    /// bytes, or of 16 KiB pages when `None`, and opens it.
    pub fn create_sized(&mut self, space: u32, name: &str, zip_size: Option<usize>) -> Result<()> {
        assert!(!self.spaces.contains_key(&space), "space {space} exists");
        check_zip_size(name, zip_size)?;
        let file = self
            .storage
            .create(name)
            .map_err(|e| Error::io("create", name, e))?;
        self.insert(space, name, file, 0, zip_size);
        if !self.skip_dir_sync {
            self.sync_dir()?;
        }
        Ok(())
    }

    /// Makes the files created and removed so far durable (their names:
    /// syncing a file makes only its bytes durable). A failure stops the
    /// engine, as a failed fsync of a file does: the directory's state on
    /// disk is unknown.
    pub fn sync_dir(&mut self) -> Result<()> {
        self.storage
            .sync_dir()
            .map_err(|e| Error::io("sync_dir", ".", e))
    }

    /// Opens an existing space file.
    pub fn open(&mut self, space: u32, name: &str) -> Result<()> {
        self.open_sized(space, name, None)
    }

    /// Opens an existing space's file: with compressed pages of
    /// `Some(zip_size)` bytes (`Some(None)`: 16 KiB pages), or, when
    /// `None`, as page 0's FSP flags say (16 KiB pages for a file too short
    /// to hold them, whose page 0 was never written). Flags that name no
    /// valid size are corruption.
    pub fn open_sized(
        &mut self,
        space: u32,
        name: &str,
        zip_size: Option<Option<usize>>,
    ) -> Result<()> {
        if self.spaces.contains_key(&space) {
            return Ok(());
        }
        let mut file = self
            .storage
            .open(name)
            .map_err(|e| Error::io("open", name, e))?;
        let len = file.len().map_err(|e| Error::io("stat", name, e))?;
        let zip_size = match zip_size {
            Some(size) => size,
            None => {
                let mut hdr = [0u8; FSP_FLAGS + 4];
                if len >= hdr.len() as u64 {
                    file.read_at(0, &mut hdr)
                        .map_err(|e| Error::io("read", name, e))?;
                    page_size_of_flags(page::get_u32(&hdr, FSP_FLAGS)).map_err(|reason| {
                        Error::CorruptPage {
                            file: name.to_string(),
                            page_no: 0,
                            reason,
                        }
                    })?
                } else {
                    None
                }
            }
        };
        check_zip_size(name, zip_size)?;
        let page_size = zip_size.unwrap_or(PAGE_SIZE);
        let len_pages = (len / page_size as u64) as u32;
        self.insert(space, name, file, len_pages, zip_size);
        Ok(())
    }

    fn insert(
        &mut self,
        space: u32,
        name: &str,
        file: Box<dyn File>,
        len_pages: u32,
        zip_size: Option<usize>,
    ) {
        self.spaces.insert(
            space,
            SpaceFile {
                name: name.to_string(),
                file,
                len_pages,
                page_size: zip_size.unwrap_or(PAGE_SIZE),
                compressed: zip_size.is_some(),
                unsynced: false,
            },
        );
    }

    /// Closes and deletes a space's file.
    pub fn delete(&mut self, space: u32) -> Result<()> {
        if let Some(sf) = self.spaces.remove(&space) {
            self.storage
                .remove(&sf.name)
                .map_err(|e| Error::io("remove", &sf.name, e))?;
            self.sync_dir()?;
        }
        Ok(())
    }

    /// Renames a space's file (its open handle stays valid) and makes the
    /// new name durable.
    pub fn rename(&mut self, space: u32, to: &str) -> Result<()> {
        let sf = self.space(space)?;
        let from = sf.name.clone();
        self.storage
            .rename(&from, to)
            .map_err(|e| Error::io("rename", &from, e))?;
        self.space(space)?.name = to.to_string();
        self.sync_dir()
    }

    /// Closes a space without touching its file.
    pub fn close(&mut self, space: u32) {
        self.spaces.remove(&space);
    }

    fn space(&mut self, space: u32) -> Result<&mut SpaceFile> {
        self.spaces.get_mut(&space).ok_or_else(|| Error::Corrupt {
            file: format!("space {space}"),
            reason: "reference to a tablespace that is not open".into(),
        })
    }

    /// The file length of a space in pages.
    pub fn len_pages(&mut self, space: u32) -> Result<u32> {
        Ok(self.space(space)?.len_pages)
    }

    /// Extends a space's file to at least `pages` pages (zero filled).
    /// A full disk surfaces here as [`Error::TableFull`].
    pub fn extend(&mut self, space: u32, pages: u32) -> Result<()> {
        let sf = self.space(space)?;
        if sf.len_pages >= pages {
            return Ok(());
        }
        sf.file
            .set_len(pages as u64 * sf.page_size as u64)
            .map_err(|e| Error::io("extend", &sf.name, e))?;
        sf.len_pages = pages;
        sf.unsynced = true;
        Ok(())
    }

    /// Reads and validates a page into `buf`, one physical page of the
    /// space. A page past the end of the file, or all zeros, is
    /// [`PageState::Zero`] and `buf` is zeroed.
    pub fn read_page(&mut self, id: PageId, buf: &mut [u8]) -> Result<PageState> {
        let sf = self.space(id.space)?;
        assert_eq!(buf.len(), sf.page_size, "one physical page of {}", sf.name);
        if id.page_no >= sf.len_pages {
            buf.fill(0);
            return Ok(PageState::Zero);
        }
        let res = sf
            .file
            .read_at(id.page_no as u64 * sf.page_size as u64, buf);
        if let Err(e) = res {
            return Err(Error::io("read", &sf.name, e));
        }
        self.stats.pages_read += 1;
        self.validate_read(id, buf)
    }

    /// Validates a page image just read for `id` (the page it claims to be
    /// under the trust-page-id canary): a corruption is named by the page
    /// the engine asked for.
    fn validate_read(&mut self, id: PageId, image: &[u8]) -> Result<PageState> {
        let claimed = if self.trust_page_id {
            PageId::new(
                page::get_u32(image, page::FIL_PAGE_SPACE_ID),
                page::get_u32(image, page::FIL_PAGE_OFFSET),
            )
        } else {
            id
        };
        let sf = self.space(id.space)?;
        page::validate_image(image, sf.compressed, claimed, &sf.name).map_err(|e| match e {
            Error::CorruptPage { file, reason, .. } => Error::CorruptPage {
                file,
                page_no: id.page_no,
                reason,
            },
            e => e,
        })
    }

    /// [`Fil::read_page`] into a buffer shared with the storage, for
    /// storage that keeps page images in memory
    /// ([`crate::io::File::read_shared`]): `Ok(None)`, having read
    /// nothing, from storage that does not, and for a page past the end
    /// of the file (read those with [`Fil::read_page`]).
    pub fn read_page_shared(&mut self, id: PageId) -> Result<Option<(PageState, Arc<[u8]>)>> {
        let Some(image) = self.read_page_shared_image(id)? else {
            return Ok(None);
        };
        let state = self.validate_read(id, &image)?;
        Ok(Some((state, image)))
    }

    /// The storage's own image of page `id`, for storage that keeps page
    /// images in memory ([`crate::io::File::read_shared`]): `Ok(None)`,
    /// having read nothing, from storage that does not, and for a page
    /// past the end of the file.
    fn read_page_shared_image(&mut self, id: PageId) -> Result<Option<Arc<[u8]>>> {
        let sf = self.space(id.space)?;
        if id.page_no >= sf.len_pages {
            return Ok(None);
        }
        let image = match sf
            .file
            .read_shared(id.page_no as u64 * sf.page_size as u64, sf.page_size)
        {
            Ok(Some(image)) => image,
            Ok(None) => return Ok(None),
            Err(e) => return Err(Error::io("read", &sf.name, e)),
        };
        self.stats.pages_read += 1;
        Ok(Some(image))
    }

    /// Reads a page without validating it (doublewrite repair inspects
    /// damaged pages itself): the storage's own image where it shares its
    /// images, else a copy (one read either way). `None` for a page past
    /// the end of the file.
    pub fn read_page_raw(&mut self, id: PageId) -> Result<Option<Arc<[u8]>>> {
        if let Some(image) = self.read_page_shared_image(id)? {
            return Ok(Some(image));
        }
        let mut copy = vec![0u8; self.space(id.space)?.page_size];
        if !self.read_page_prefix(id, &mut copy)? {
            return Ok(None);
        }
        self.stats.pages_read += 1;
        Ok(Some(Arc::from(copy)))
    }

    /// Reads the first `buf.len()` bytes of a page without validating them
    /// (doublewrite recovery reads each slot's FIL header to learn which
    /// page it claims to hold). `false` if the page is past the file's end.
    pub fn read_page_prefix(&mut self, id: PageId, buf: &mut [u8]) -> Result<bool> {
        let sf = self.space(id.space)?;
        assert!(buf.len() <= sf.page_size, "a prefix of one page");
        if id.page_no >= sf.len_pages {
            buf.fill(0);
            return Ok(false);
        }
        sf.file
            .read_at(id.page_no as u64 * sf.page_size as u64, buf)
            .map_err(|e| Error::io("read", &sf.name, e))?;
        Ok(true)
    }

    /// Writes a sealed page image to its home (or any) location in `space`.
    pub fn write_page_at(&mut self, space: u32, page_no: u32, buf: &[u8]) -> Result<()> {
        let sf = self.space(space)?;
        assert_eq!(buf.len(), sf.page_size, "one physical page of {}", sf.name);
        sf.file
            .write_at(page_no as u64 * sf.page_size as u64, buf)
            .map_err(|e| write_failed(&sf.name, e))?;
        self.page_written(space, page_no)
    }

    /// [`Fil::write_page_at`] of a shared page image (see
    /// [`crate::io::File::write_shared`]).
    pub fn write_page_shared(
        &mut self,
        space: u32,
        page_no: u32,
        buf: &std::sync::Arc<[u8]>,
    ) -> Result<()> {
        let sf = self.space(space)?;
        assert_eq!(buf.len(), sf.page_size, "one physical page of {}", sf.name);
        sf.file
            .write_shared(page_no as u64 * sf.page_size as u64, buf)
            .map_err(|e| write_failed(&sf.name, e))?;
        self.page_written(space, page_no)
    }

    /// Notes a page write: the file's length in pages, unsynced, counted.
    fn page_written(&mut self, space: u32, page_no: u32) -> Result<()> {
        let sf = self.space(space)?;
        if page_no >= sf.len_pages {
            sf.len_pages = page_no + 1;
        }
        sf.unsynced = true;
        self.stats.pages_written += 1;
        Ok(())
    }

    /// Syncs one space's file if it has unsynced writes.
    pub fn sync(&mut self, space: u32) -> Result<()> {
        let sf = self.space(space)?;
        if !sf.unsynced {
            return Ok(());
        }
        sf.file.sync().map_err(|e| Error::io("sync", &sf.name, e))?;
        sf.unsynced = false;
        self.stats.syncs += 1;
        Ok(())
    }

    /// Syncs every file with unsynced writes.
    pub fn sync_all(&mut self) -> Result<()> {
        for space in self.space_ids() {
            self.sync(space)?;
        }
        Ok(())
    }

    /// File sizes in bytes by name, for SHOW TABLE STATUS and reports.
    pub fn file_size_bytes(&mut self, space: u32) -> Result<u64> {
        let sf = self.space(space)?;
        Ok(sf.len_pages as u64 * sf.page_size as u64)
    }
}

/// A compressed space's page size must be one of [`page::zip::ZIP_SIZES`].
fn check_zip_size(name: &str, zip_size: Option<usize>) -> Result<()> {
    match zip_size {
        Some(size) if !page::zip::is_zip_size(size) => Err(Error::Corrupt {
            file: name.to_string(),
            reason: format!("compressed page size {size}"),
        }),
        _ => Ok(()),
    }
}

/// A failed page write, a full disk included, stops the engine (an I/O
/// error, not [`Error::TableFull`]): the page was written because the pool
/// needed its frame or a checkpoint needed it on disk, and whoever asked
/// may hold a half-made mini-transaction. A page write grows a file only
/// where a crash lost the extension the tablespace header records (InnoDB
/// too treats a failed data-file write as fatal).
fn write_failed(file: &str, source: std::io::Error) -> Error {
    Error::Io {
        op: "write",
        file: file.to_string(),
        source,
    }
}
