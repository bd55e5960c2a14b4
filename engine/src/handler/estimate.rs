//! What the optimizer asks the engine before it reads (EXPLAIN's `rows`):
//! the rows in a table, as InnoDB's `stat_n_rows` holds them after
//! `dict_update_statistics` (`ha_innobase::info`), and the rows in a key
//! range of an index (`ha_innobase::records_in_range`, which calls
//! `btr_estimate_n_rows_in_range`). Both are estimates made from the
//! tree's pages, not counts: nothing is locked and no read view is used.

use super::Engine;
use crate::error::Result;
use crate::handler::RangeBound;

impl Engine {
    /// The table's estimated row count: the distinct primary keys that
    /// `sample_pages` leaf pages of its clustered index suggest (InnoDB's
    /// `stat_n_rows`, delete-marked records included, as InnoDB counts
    /// them), and at least 1, as `ha_innobase::info` gives the optimizer
    /// an empty table.
    pub fn estimated_rows(&mut self, table: &str, sample_pages: u64) -> Result<u64> {
        self.check_running()?;
        let id = self.table_id(table)?;
        let t = self.tables[&id].clone();
        let r = crate::btree::stats::estimate(
            &mut self.pager,
            &t.clustered,
            t.clustered.n_key,
            sample_pages,
        )
        .map(|est| est.n_diff.last().copied().unwrap_or(0).max(1));
        self.guard(r)
    }

    /// The estimated rows of `table` in the range `low ..= high` of its
    /// index `index` (`None`: the clustered index), bounds as a scan takes
    /// them.
    pub fn records_in_range(
        &mut self,
        table: &str,
        index: Option<&str>,
        low: &RangeBound,
        high: &RangeBound,
        sample_pages: u64,
    ) -> Result<u64> {
        let rows = self.estimated_rows(table, sample_pages)?;
        let id = self.table_id(table)?;
        let t = self.tables[&id].clone();
        let (ix, cols) = Self::scan_index(&t, index, low, high)?;
        let low = Self::bound_stored(&t, &cols, low)?;
        let high = Self::bound_stored(&t, &cols, high)?;
        let tree = match ix {
            None => &t.clustered,
            Some(i) => &t.secondary[i].index,
        };
        let r = crate::btree::stats::records_in_range(&mut self.pager, tree, &low, &high, rows);
        self.guard(r)
    }
}
