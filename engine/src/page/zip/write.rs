//! Changes to a compressed page that do not recompress it: a record
//! logged in the modification log (`page_zip_write_rec`,
//! `page_zip_dir_insert`), a record's delete mark, system columns or
//! references rewritten in place (`page_zip_rec_set_deleted`,
//! `page_zip_write_trx_id_and_roll_ptr`, `page_zip_write_blob_ptr`), a
//! record dropped from the dense directory (`page_zip_dir_delete`) and the
//! headers copied from the frame (`page_zip_write_header`).

use super::*;

impl<D: AsRef<[u8]> + AsMut<[u8]>> ZipPage<D> {
    fn bytes_mut(&mut self) -> &mut [u8] {
        self.data.as_mut()
    }

    /// Replaces this image with `other`, a page of the same size (a
    /// recompression of it, or a copy).
    pub fn assign<E: AsRef<[u8]>>(&mut self, other: &ZipPage<E>) {
        self.bytes_mut().copy_from_slice(other.bytes());
        self.m_end = other.m_end;
    }

    /// Writes the tail back (its length may have changed), zeroing what it
    /// no longer covers, and the counts in the header.
    pub(super) fn put_tail(&mut self, t: &Tail) {
        let size = self.bytes().len();
        let len = t.refs.len() + t.stored.len() + 2 * t.dir.len();
        let old_start = self.ext_start().unwrap_or(size);
        let start = size - len;
        self.bytes_mut()[old_start.min(start)..start].fill(0);
        self.bytes_mut()[start..start + t.refs.len()].copy_from_slice(&t.refs);
        let s = start + t.refs.len();
        self.bytes_mut()[s..s + t.stored.len()].copy_from_slice(&t.stored);
        let d = s + t.stored.len();
        for (k, e) in t.dir.iter().enumerate() {
            put_u16(self.bytes_mut(), d + 2 * k, *e);
        }
        put_u16(self.bytes_mut(), INDEX_N_SLOTS, t.dir.len() as u16);
        put_u16(
            self.bytes_mut(),
            ZIP_N_EXT,
            (t.refs.len() / EXTERNAL_REF_LEN) as u16,
        );
    }

    /// `page_zip_write_header`: the FIL and index headers as `frame` has
    /// them (LSN, links, heap top, garbage, level, max trx id). The record
    /// count is the directory's, and the checksum the image's.
    pub fn write_header(&mut self, frame: &[u8]) {
        self.bytes_mut()[FIL_PAGE_OFFSET..INDEX_N_SLOTS]
            .copy_from_slice(&frame[FIL_PAGE_OFFSET..INDEX_N_SLOTS]);
        self.bytes_mut()[index::INDEX_HEAP_TOP..ZIP_STREAM_LEN]
            .copy_from_slice(&frame[index::INDEX_HEAP_TOP..ZIP_STREAM_LEN]);
    }

    /// `page_zip_write_rec` with `page_zip_dir_insert`: records the record
    /// `frame` now holds in `slot` (just inserted there when `inserted`,
    /// else rewritten in place at the same length and with as many
    /// references). `Ok(false)`, and nothing changed, when the log has no
    /// room: the caller recompresses. An insert that reorganized `frame`
    /// moved every record, so it must recompress instead, as InnoDB's
    /// `page_zip_reorganize` does.
    pub fn write_rec(
        &mut self,
        fields: &ZipFields,
        frame: &[u8],
        slot: usize,
        inserted: bool,
    ) -> Result<bool> {
        let n = self.n_recs();
        let expect = if inserted { n + 1 } else { n };
        if index::n_recs(frame) != expect || slot >= expect {
            return Err(Error::InvalidArgument(format!(
                "slot {slot} of a frame of {} records against {n} compressed",
                index::n_recs(frame)
            )));
        }
        let rec = index::rec(frame, slot);
        let off = index::rec_offset(frame, slot);
        // A new record sits right below the heap top the image recorded;
        // anywhere else, the frame was reorganized and every record moved,
        // which only recompressing can follow.
        let top = usize::from(get_u16(self.bytes(), index::INDEX_HEAP_TOP));
        if inserted && off + 2 + rec.len() != top {
            return Ok(false);
        }
        let view = RecordView::parse(&fields.layout, rec)?;
        let mut elided = Vec::new();
        fields.elided(&view, &mut elided);
        let mut entry = Vec::with_capacity(rec.len() + 8);
        put_varint(&mut entry, off as u64);
        let (mut stored, mut refs) = (Vec::new(), Vec::new());
        pack(rec, &view, &elided, &mut entry, &mut stored, &mut refs);
        let grows = if inserted {
            2 + stored.len() + refs.len()
        } else {
            0
        };
        if entry.len() + grows > self.free() {
            return Ok(false);
        }
        let mut tail = self.tail_checked()?;
        let u = fields.stored.len();
        let ref_at = self.refs_before(fields, frame, slot)?;
        let refs_after = ref_at + refs.len() + self.refs_from(fields, frame, slot + 1)?;
        let refs_now = tail.refs.len() + if inserted { refs.len() } else { 0 };
        if ref_at > tail.refs.len() || refs_after != refs_now {
            return Err(Error::InvalidArgument(format!(
                "the record in slot {slot} holds other off-page references than the page"
            )));
        }
        let dir = off as u16 | if view.is_deleted() { DIR_DELETED } else { 0 };
        if inserted {
            tail.dir.insert(slot, dir);
            tail.stored.splice(u * slot..u * slot, stored);
            tail.refs.splice(ref_at..ref_at, refs);
        } else {
            tail.dir[slot] = dir;
            tail.stored[u * slot..u * (slot + 1)].copy_from_slice(&stored);
            tail.refs[ref_at..ref_at + refs.len()].copy_from_slice(&refs);
        }
        let m_end = self.m_end;
        self.bytes_mut()[m_end..m_end + entry.len()].copy_from_slice(&entry);
        self.m_end += entry.len();
        self.put_tail(&tail);
        self.write_header(frame);
        Ok(true)
    }

    /// A record rewritten at the same length in `frame`'s `slot` (its old
    /// bytes `old`): when only its delete mark, stored columns or
    /// references changed, they are written in place
    /// (`page_zip_rec_set_deleted`, `page_zip_write_trx_id_and_roll_ptr`,
    /// `page_zip_write_blob_ptr`); otherwise the record is logged again.
    /// `Ok(false)`, nothing changed, when the log has no room.
    pub fn rewrite_rec(
        &mut self,
        fields: &ZipFields,
        frame: &[u8],
        slot: usize,
        old: &[u8],
    ) -> Result<bool> {
        let new = index::rec(frame, slot);
        if packed_of(fields, old)? != packed_of(fields, new)? {
            return self.write_rec(fields, frame, slot, false);
        }
        if slot >= self.n_recs() || index::n_recs(frame) != self.n_recs() {
            return Err(Error::InvalidArgument(format!("rewrite of slot {slot}")));
        }
        let view = RecordView::parse(&fields.layout, new)?;
        let mut elided = Vec::new();
        fields.elided(&view, &mut elided);
        let (mut stored, mut refs) = (Vec::new(), Vec::new());
        pack(new, &view, &elided, &mut Vec::new(), &mut stored, &mut refs);
        let mut tail = self.tail_checked()?;
        let u = fields.stored.len();
        let ref_at = self.refs_before(fields, frame, slot)?;
        if ref_at + refs.len() > tail.refs.len() {
            return Err(Error::InvalidArgument(format!(
                "the record in slot {slot} holds more references than the page"
            )));
        }
        let off = index::rec_offset(frame, slot) as u16;
        tail.dir[slot] = off | if view.is_deleted() { DIR_DELETED } else { 0 };
        tail.stored[u * slot..u * (slot + 1)].copy_from_slice(&stored);
        tail.refs[ref_at..ref_at + refs.len()].copy_from_slice(&refs);
        self.put_tail(&tail);
        self.write_header(frame);
        Ok(true)
    }

    /// A record replaced by one of another length in `frame`'s `slot`
    /// (the old one held `old_refs` references): the frame deleted it and
    /// inserted the new one at the heap top. `Ok(false)`, nothing
    /// changed, when the log has no room or the frame was reorganized.
    pub fn replace_rec(
        &mut self,
        fields: &ZipFields,
        frame: &[u8],
        slot: usize,
        old_refs: usize,
    ) -> Result<bool> {
        let n = self.n_recs();
        if index::n_recs(frame) != n || slot >= n {
            return Err(Error::InvalidArgument(format!(
                "replacing slot {slot} of {n}"
            )));
        }
        let saved = (self.bytes().to_vec(), self.m_end);
        let mut tail = self.tail_checked()?;
        let u = fields.stored.len();
        let ref_at = self.refs_before(fields, frame, slot)?;
        if ref_at + old_refs * EXTERNAL_REF_LEN > tail.refs.len() {
            return Err(Error::InvalidArgument(format!(
                "replacing slot {slot}: references"
            )));
        }
        tail.dir.remove(slot);
        tail.stored.drain(u * slot..u * (slot + 1));
        tail.refs
            .drain(ref_at..ref_at + old_refs * EXTERNAL_REF_LEN);
        self.put_tail(&tail);
        match self.write_rec(fields, frame, slot, true) {
            Ok(true) => Ok(true),
            other => {
                self.bytes_mut().copy_from_slice(&saved.0);
                self.m_end = saved.1;
                other
            }
        }
    }

    /// `page_zip_dir_delete`: the record in `slot`, holding `n_refs`
    /// references, has left `frame` (already deleted there).
    pub fn delete_rec(
        &mut self,
        fields: &ZipFields,
        frame: &[u8],
        slot: usize,
        n_refs: usize,
    ) -> Result<()> {
        let mut tail = self.tail_checked()?;
        let u = fields.stored.len();
        let ref_at = self.refs_before(fields, frame, slot)?;
        if slot >= tail.dir.len()
            || index::n_recs(frame) + 1 != tail.dir.len()
            || ref_at + n_refs * EXTERNAL_REF_LEN > tail.refs.len()
        {
            return Err(Error::InvalidArgument(format!(
                "deleting slot {slot} of {} compressed records",
                tail.dir.len()
            )));
        }
        tail.dir.remove(slot);
        tail.stored.drain(u * slot..u * (slot + 1));
        tail.refs.drain(ref_at..ref_at + n_refs * EXTERNAL_REF_LEN);
        self.put_tail(&tail);
        self.write_header(frame);
        Ok(())
    }
}
