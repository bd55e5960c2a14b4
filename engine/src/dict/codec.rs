//! The persistent form of a definition: a table's definition and storage
//! serialized for its row of SYS_TABLES, and read back from it.
//! InnoDB spreads a definition over SYS_TABLES, SYS_COLUMNS, SYS_INDEXES,
//! SYS_FIELDS and SYS_FOREIGN (`dict_create_sys_tables_tuple` and its
//! siblings, `dict_load_table`); here it is one versioned byte string,
//! written in the lowest version that holds it.

use super::*;
use crate::mach::put_varint;

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn type_code(ty: &ColumnType) -> (u8, u64) {
    match *ty {
        ColumnType::ShortInt { len, unsigned } => (7, u64::from(len) | (unsigned as u64) << 8),
        ColumnType::Int { unsigned } => (1, unsigned as u64),
        ColumnType::BigInt { unsigned } => (2, unsigned as u64),
        ColumnType::Char(n) => (3, n as u64),
        ColumnType::VarChar(n) => (4, n as u64),
        ColumnType::Text { max_len } => (5, max_len as u64),
        ColumnType::Blob { max_len } => (6, max_len as u64),
        ColumnType::FixBinary(n) => (8, n as u64),
    }
}

fn format_code(f: RowFormat) -> u8 {
    match f {
        RowFormat::Redundant => 0,
        RowFormat::Compact => 1,
        RowFormat::Dynamic => 2,
        RowFormat::Compressed { .. } => 3,
    }
}

/// Serializes a definition and its storage for SYS_TABLES.
///
/// Version 1 has no server definition; version 2 ends with one; version 3
/// adds each column's collation number after its nullability and each
/// index's prefix lengths after its columns, and ends with a server
/// definition of any length; version 4 adds the primary key's prefix
/// lengths after its columns; version 5 ends with the foreign keys. A table is written in the lowest version that
/// holds it, so the engine's own tables keep the bytes (and page counts)
/// they had before the later versions.
pub fn encode_def(def: &TableDef, st: &TableStorage) -> Vec<u8> {
    let v5 = !def.foreign.is_empty();
    let v4 = v5 || !def.primary_prefixes.is_empty();
    let v3 = v4
        || def.columns.iter().any(|c| c.collation != Collation::Binary)
        || def.indexes.iter().any(|ix| !ix.prefixes.is_empty());
    let version = if v5 {
        5u8
    } else if v4 {
        4u8
    } else if v3 {
        3
    } else if def.server.is_empty() {
        1
    } else {
        2
    };
    let mut out = vec![version];
    put_str(&mut out, &def.name);
    out.push(format_code(def.row_format));
    if let RowFormat::Compressed { key_block_size } = def.row_format {
        out.push(key_block_size as u8);
    }
    put_varint(&mut out, def.columns.len() as u64);
    for c in &def.columns {
        put_str(&mut out, &c.name);
        let (code, p) = type_code(&c.ty);
        out.push(code);
        put_varint(&mut out, p);
        out.push(c.nullable as u8);
        if v3 {
            put_varint(&mut out, u64::from(c.collation.id()));
        }
    }
    put_varint(&mut out, def.primary_key.len() as u64);
    for &c in &def.primary_key {
        put_varint(&mut out, c as u64);
    }
    if v4 {
        // One per key column (0: whole), given or not.
        for i in 0..def.primary_key.len() {
            put_varint(
                &mut out,
                u64::from(def.primary_prefixes.get(i).copied().unwrap_or(0)),
            );
        }
    }
    put_varint(&mut out, def.indexes.len() as u64);
    for ix in &def.indexes {
        put_str(&mut out, &ix.name);
        out.push(ix.unique as u8);
        put_varint(&mut out, ix.columns.len() as u64);
        for &c in &ix.columns {
            put_varint(&mut out, c as u64);
        }
        if v3 {
            put_varint(&mut out, ix.prefixes.len() as u64);
            for &p in &ix.prefixes {
                put_varint(&mut out, u64::from(p));
            }
        }
    }
    put_varint(&mut out, st.id);
    put_varint(&mut out, st.space as u64);
    put_varint(&mut out, st.clustered.0);
    put_varint(&mut out, st.clustered.1 as u64);
    put_varint(&mut out, st.secondary.len() as u64);
    for &(id, root) in &st.secondary {
        put_varint(&mut out, id);
        put_varint(&mut out, root as u64);
    }
    if version >= 2 {
        put_varint(&mut out, def.server.len() as u64);
        out.extend_from_slice(&def.server);
    }
    if version >= 5 {
        put_varint(&mut out, def.foreign.len() as u64);
        for fk in &def.foreign {
            put_str(&mut out, &fk.id);
            put_str(&mut out, &fk.parent);
            put_varint(&mut out, fk.columns.len() as u64);
            for (&c, p) in fk.columns.iter().zip(&fk.parent_columns) {
                put_varint(&mut out, c as u64);
                put_str(&mut out, p);
            }
            out.push(fk.on_delete.code());
            out.push(fk.on_update.code());
        }
    }
    out
}

struct Rd<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Rd<'_> {
    fn err() -> Error {
        Error::Corrupt {
            file: "ibdata1".into(),
            reason: "malformed table definition in SYS_TABLES".into(),
        }
    }
    fn byte(&mut self) -> Result<u8> {
        let v = *self.b.get(self.pos).ok_or_else(Self::err)?;
        self.pos += 1;
        Ok(v)
    }
    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Self::err())
    }
    fn small(&mut self, max: u64) -> Result<usize> {
        let v = self.varint()?;
        if v > max {
            return Err(Self::err());
        }
        Ok(v as usize)
    }
    fn string(&mut self) -> Result<String> {
        let n = self.small(1024)?;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(Self::err)?;
        let s = std::str::from_utf8(&self.b[self.pos..end])
            .map_err(|_| Self::err())?
            .to_string();
        self.pos = end;
        Ok(s)
    }
}

/// Deserializes a SYS_TABLES definition.
pub fn decode_def(b: &[u8]) -> Result<(TableDef, TableStorage)> {
    let mut r = Rd { b, pos: 0 };
    let version = r.byte()?;
    if !(1..=5).contains(&version) {
        return Err(Rd::err());
    }
    let name = r.string()?;
    let row_format = match r.byte()? {
        0 => RowFormat::Redundant,
        1 => RowFormat::Compact,
        2 => RowFormat::Dynamic,
        3 => {
            let key_block_size = u32::from(r.byte()?);
            crate::mach::zip_size_of(key_block_size).map_err(|_| Rd::err())?;
            RowFormat::Compressed { key_block_size }
        }
        _ => return Err(Rd::err()),
    };
    let n = r.small(1000)?;
    let mut columns = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.string()?;
        let code = r.byte()?;
        let p = r.varint()?;
        let ty = match code {
            7 => ColumnType::ShortInt {
                len: u8::try_from(p & 0xFF)
                    .ok()
                    .filter(|l| (1..=3).contains(l))
                    .ok_or_else(Rd::err)?,
                unsigned: p >> 8 != 0,
            },
            1 => ColumnType::Int { unsigned: p != 0 },
            2 => ColumnType::BigInt { unsigned: p != 0 },
            3 => ColumnType::Char(u16::try_from(p).map_err(|_| Rd::err())?),
            4 => ColumnType::VarChar(u16::try_from(p).map_err(|_| Rd::err())?),
            5 => ColumnType::Text {
                max_len: u32::try_from(p).map_err(|_| Rd::err())?,
            },
            6 => ColumnType::Blob {
                max_len: u32::try_from(p).map_err(|_| Rd::err())?,
            },
            8 => ColumnType::FixBinary(u16::try_from(p).map_err(|_| Rd::err())?),
            _ => return Err(Rd::err()),
        };
        let nullable = r.byte()? != 0;
        let collation = if version >= 3 {
            let id = u16::try_from(r.varint()?).map_err(|_| Rd::err())?;
            Collation::from_id(id).ok_or_else(Rd::err)?
        } else {
            Collation::Binary
        };
        columns.push(ColumnDef {
            name,
            ty,
            nullable,
            collation,
        });
    }
    let npk = r.small(16)?;
    let mut primary_key = Vec::new();
    for _ in 0..npk {
        primary_key.push(r.small(n as u64)?);
    }
    let mut primary_prefixes = Vec::new();
    if version >= 4 {
        for _ in 0..npk {
            primary_prefixes.push(u16::try_from(r.varint()?).map_err(|_| Rd::err())?);
        }
        // A key with no prefix column has no prefix lengths in memory.
        if primary_prefixes.iter().all(|&p| p == 0) {
            primary_prefixes.clear();
        }
    }
    let nix = r.small(64)?;
    let mut indexes = Vec::new();
    for _ in 0..nix {
        let name = r.string()?;
        let unique = r.byte()? != 0;
        let nc = r.small(16)?;
        let mut cols = Vec::new();
        for _ in 0..nc {
            cols.push(r.small(n as u64)?);
        }
        let mut prefixes = Vec::new();
        if version >= 3 {
            for _ in 0..r.small(16)? {
                prefixes.push(u16::try_from(r.varint()?).map_err(|_| Rd::err())?);
            }
        }
        indexes.push(IndexDef {
            name,
            columns: cols,
            unique,
            prefixes,
        });
    }
    let id = r.varint()?;
    let space = r.small(u32::MAX as u64)? as u32;
    let cid = r.varint()?;
    let croot = r.small(u32::MAX as u64)? as u32;
    let ns = r.small(64)?;
    let mut secondary = Vec::new();
    for _ in 0..ns {
        let sid = r.varint()?;
        let sroot = r.small(u32::MAX as u64)? as u32;
        secondary.push((sid, sroot));
    }
    let server = if version >= 2 {
        let n = r.small(MAX_SERVER_DEF_BYTES as u64)?;
        let end = r.pos + n;
        if (n == 0 && version == 2) || end > b.len() {
            return Err(Rd::err());
        }
        let v = b[r.pos..end].to_vec();
        r.pos = end;
        v
    } else {
        Vec::new()
    };
    let mut foreign = Vec::new();
    if version >= 5 {
        for _ in 0..r.small(1024)? {
            let id = r.string()?;
            let parent = r.string()?;
            let nc = r.small(16)?;
            let mut columns = Vec::with_capacity(nc);
            let mut parent_columns = Vec::with_capacity(nc);
            for _ in 0..nc {
                columns.push(r.small(n as u64)?);
                parent_columns.push(r.string()?);
            }
            let on_delete = FkAction::from_code(r.byte()?).ok_or_else(Rd::err)?;
            let on_update = FkAction::from_code(r.byte()?).ok_or_else(Rd::err)?;
            foreign.push(ForeignDef {
                id,
                columns,
                parent,
                parent_columns,
                on_delete,
                on_update,
            });
        }
    }
    if ns != nix || r.pos != b.len() {
        return Err(Rd::err());
    }
    let def = TableDef {
        name,
        columns,
        primary_key,
        primary_prefixes,
        indexes,
        row_format,
        foreign,
        server,
    };
    def.validate().map_err(|_| Rd::err())?;
    Ok((
        def,
        TableStorage {
            id,
            space,
            clustered: (cid, croot),
            secondary,
        },
    ))
}
