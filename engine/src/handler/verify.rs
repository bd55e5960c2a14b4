//! What `innochecksum` does to a data directory, on an open engine:
//! every page of every file read back from disk and checked (its
//! checksum and the page number and space id it claims, as every read
//! checks them), no page LSN past the end of the log, and every
//! compressed index page decompressed to a 16 KiB frame whose structure
//! holds. The doublewrite buffer's slots are copies of other pages and
//! are skipped (recovery checks a slot when it needs it). CHECK TABLE (`check`) checks the trees; this checks the files.

use super::Engine;
use crate::doublewrite::{DBLWR_PAGES, DBLWR_START};
use crate::error::Result;
use crate::page::{self, zip::ZipPage, PageId, PageState, PageType, PAGE_SIZE};

/// What a scan of the files found.
#[derive(Debug, Default, Clone)]
pub struct FileReport {
    /// Pages read and checked.
    pub pages: u64,
    /// Of those, never written (all zeros).
    pub zero_pages: u64,
    /// Compressed index pages decompressed and checked.
    pub compressed: u64,
    /// Doublewrite buffer slots skipped: copies of other pages (of any
    /// page size) that recovery checks when it needs one.
    pub doublewrite_slots: u64,
    /// Everything found wrong, one line each.
    pub problems: Vec<String>,
}

impl Engine {
    /// Writes every dirty page and a checkpoint, then reads every page of
    /// every open file back from disk and checks it.
    pub fn verify_files(&mut self) -> Result<FileReport> {
        self.checkpoint()?;
        let end_lsn = self.pager.log.lsn();
        let mut report = FileReport::default();
        for space in self.pager.fil.space_ids() {
            let Some(size) = self.pager.fil.page_size(space) else {
                continue;
            };
            let name = self.pager.fil.name(space).unwrap_or("?").to_string();
            let pages = self.pager.fil.len_pages(space)?;
            let mut buf = vec![0u8; size];
            for page_no in 0..pages {
                if space == crate::fil::SYSTEM_SPACE
                    && (DBLWR_START..DBLWR_START + DBLWR_PAGES).contains(&page_no)
                {
                    report.doublewrite_slots += 1;
                    continue;
                }
                report.pages += 1;
                let id = PageId::new(space, page_no);
                match self.pager.fil.read_page(id, &mut buf) {
                    Ok(PageState::Zero) => {
                        report.zero_pages += 1;
                        continue;
                    }
                    Ok(PageState::Valid) => {}
                    Err(e) => {
                        report.problems.push(format!("{name} page {page_no}: {e}"));
                        continue;
                    }
                }
                let lsn = page::page_lsn(&buf);
                if lsn > end_lsn {
                    report.problems.push(format!(
                        "{name} page {page_no}: LSN {lsn} is past the end of the log ({end_lsn})"
                    ));
                }
                if size < PAGE_SIZE && page::page_type_raw(&buf) == PageType::Index as u16 {
                    report.compressed += 1;
                    let checked = ZipPage::from_image(buf.clone()).and_then(|z| {
                        let mut frame = vec![0u8; PAGE_SIZE];
                        z.decompress(&mut frame).map(|_| ())
                    });
                    if let Err(e) = checked {
                        report.problems.push(format!(
                            "{name} page {page_no}: the compressed page does not decompress: {}",
                            e.0
                        ));
                    }
                }
            }
        }
        Ok(report)
    }
}
