//! Definitions round trip through their persistent form, and the check
//! for records too big for a tree follows InnoDB's arithmetic.

use super::*;

#[test]
fn definitions_round_trip() {
    let def = TableDef {
        name: "sbtest".into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::INT_UNSIGNED,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "k".into(),
                ty: ColumnType::INT,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "c".into(),
                ty: ColumnType::Char(120),
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "pad".into(),
                ty: ColumnType::Char(60),
                nullable: true,
                collation: Default::default(),
            },
            ColumnDef {
                name: "tiny".into(),
                ty: ColumnType::ShortInt {
                    len: 3,
                    unsigned: true,
                },
                nullable: true,
                collation: Default::default(),
            },
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "k".into(),
            columns: vec![1],
            unique: false,
            prefixes: Vec::new(),
        }],
        row_format: RowFormat::Dynamic,
        foreign: Vec::new(),
        server: Vec::new(),
    };
    def.validate().unwrap();
    let st = TableStorage {
        id: 7,
        space: 3,
        clustered: (10, 1),
        secondary: vec![(11, 2)],
    };
    let enc = encode_def(&def, &st);
    assert_eq!(enc[0], 1, "no server definition: version 1");
    assert_eq!(decode_def(&enc).unwrap(), (def.clone(), st.clone()));
    for cut in 0..enc.len() {
        assert!(decode_def(&enc[..cut]).is_err());
    }
    let with_server = TableDef {
        foreign: Vec::new(),
        server: b"CREATE TABLE `sbtest` (...)".to_vec(),
        ..def.clone()
    };
    let enc2 = encode_def(&with_server, &st);
    assert_eq!(enc2[0], 2);
    assert_eq!(decode_def(&enc2).unwrap(), (with_server, st.clone()));
    for cut in 0..enc2.len() {
        assert!(decode_def(&enc2[..cut]).is_err());
    }
    // Version 5: the constraints, after the server definition.
    let with_foreign = TableDef {
        foreign: vec![ForeignDef {
            id: "sbtest_ibfk_1".into(),
            columns: vec![1],
            parent: "parent".into(),
            parent_columns: vec!["pk".into()],
            on_delete: FkAction::Cascade,
            on_update: FkAction::SetNull,
        }],
        ..def.clone()
    };
    let enc5 = encode_def(&with_foreign, &st);
    assert_eq!(enc5[0], 5);
    assert_eq!(decode_def(&enc5).unwrap(), (with_foreign, st.clone()));
    for cut in 0..enc5.len() {
        assert!(decode_def(&enc5[..cut]).is_err());
    }
    let t = Table::new(def, &st);
    assert_eq!(t.fields.len(), 7);
    assert_eq!(t.secondary[0].from_clustered, vec![t.col_field[1], 0]);
}

/// `dict_index_too_big_for_tree`'s arithmetic at KEY_BLOCK_SIZE=1: a
/// secondary index on a TEXT prefix and an INT key has an empty-page
/// room of 1024 - 106 - compressBound(6) = 899 bytes, a byte less for
/// a record and half that, 449, for a node pointer, whose size is 2
/// (directory slot) + 1 (null bits) + 2 + p (the prefix and its
/// length) + 4 (the key) + 4 (the child page): so a prefix of 435
/// fits and 436 does not; at 2 KiB both fit.
#[test]
fn too_big_for_tree_follows_innodb_arithmetic() {
    let def = |p: u16, kbs: u32| TableDef {
        name: "t".into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::INT,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "c".into(),
                ty: ColumnType::TEXT,
                nullable: true,
                collation: Default::default(),
            },
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "c".into(),
            columns: vec![1],
            unique: false,
            prefixes: vec![p],
        }],
        row_format: RowFormat::Compressed {
            key_block_size: kbs,
        },
        foreign: Vec::new(),
        server: Vec::new(),
    };
    assert_eq!(crate::page::zip::empty_size(2, 1024), 899);
    assert_eq!(too_big_for_tree(&def(435, 1), 0), None);
    assert_eq!(too_big_for_tree(&def(436, 1), 0), Some(("c".into(), 8126)));
    assert_eq!(
        too_big_for_tree(&def(436, 1), 2),
        None,
        "only the indexes checked"
    );
    assert_eq!(too_big_for_tree(&def(436, 2), 0), None);
    // The whole TEXT in the clustered index counts as 40 bytes.
    let mut wide = def(10, 1);
    wide.indexes.clear();
    assert_eq!(too_big_for_tree(&wide, 0), None);
}
