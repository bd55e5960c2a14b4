use super::handshake::{self, cap, Greeting, Response};
use super::reply::{self, ColumnDef, ErrPacket, OkPacket, Reply};
use super::*;

fn framed(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_packet(&mut out, seq, payload);
    out
}

#[test]
fn packets_are_cut_from_a_stream_arriving_a_byte_at_a_time() {
    let mut bytes = framed(0, b"hello");
    bytes.extend(framed(1, b""));
    bytes.extend(framed(2, &[7; 300]));
    let mut r = PacketReader::new(1 << 20);
    let mut got = Vec::new();
    for b in &bytes {
        r.feed(&[*b]);
        while let Some(p) = r.next_packet().unwrap() {
            got.push(p);
        }
    }
    assert_eq!(
        got,
        vec![
            Packet {
                seq: 0,
                payload: b"hello".to_vec()
            },
            Packet {
                seq: 1,
                payload: Vec::new()
            },
            Packet {
                seq: 2,
                payload: vec![7; 300]
            },
        ]
    );
    assert_eq!(r.buffered(), 0);
}

#[test]
fn a_payload_of_16_mib_or_more_is_split_and_joined() {
    // Exactly 0xFFFFFF bytes: a full packet, then an empty one.
    for len in [MAX_PACKET, MAX_PACKET + 10] {
        let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut out = Vec::new();
        let next = write_packet(&mut out, 5, &payload);
        assert_eq!(next, 7, "two physical packets");
        assert_eq!(out.len(), len + 8);
        assert_eq!(&out[..4], &[0xFF, 0xFF, 0xFF, 5]);
        let rest = len - MAX_PACKET;
        assert_eq!(&out[4 + MAX_PACKET..8 + MAX_PACKET], &[rest as u8, 0, 0, 6]);
        let mut r = PacketReader::new(32 << 20);
        r.feed(&out);
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(p.seq, 5);
        assert_eq!(p.payload, payload);
    }
}

#[test]
fn a_packet_over_max_allowed_packet_is_refused_before_it_arrives_whole() {
    let mut r = PacketReader::new(1000);
    r.feed(&[0xE9, 0x03, 0, 0]); // 1001 bytes announced
    let e = r.next_packet().unwrap_err();
    assert!(e.0.contains("max_allowed_packet"), "{e}");
    let mut r = PacketReader::new(1000);
    r.feed(&framed(0, &[1; 1000]));
    assert_eq!(r.next_packet().unwrap().unwrap().payload.len(), 1000);
}

#[test]
fn length_encoded_integers_round_trip_at_every_width() {
    for v in [
        0u64,
        250,
        251,
        0xFFFF,
        0x1_0000,
        0xFF_FFFF,
        0x100_0000,
        u64::MAX,
    ] {
        let mut out = Vec::new();
        put_lenenc(&mut out, v);
        let width = match v {
            0..=250 => 1,
            251..=0xFFFF => 3,
            0x1_0000..=0xFF_FFFF => 4,
            _ => 9,
        };
        assert_eq!(out.len(), width, "{v}");
        let mut r = Reader::new(&out);
        assert_eq!(r.lenenc("x").unwrap(), Some(v));
        assert!(r.is_empty());
    }
    assert_eq!(Reader::new(&[0xFB]).lenenc("x").unwrap(), None);
    assert!(Reader::new(&[0xFF]).lenenc("x").is_err());
    assert!(Reader::new(&[0xFD, 1]).lenenc("x").is_err());
}

#[test]
fn commands_round_trip_and_cut_arguments_are_errors() {
    let cmds = [
        Command::Quit,
        Command::InitDb(b"test".to_vec()),
        Command::Query(b"SELECT 1".to_vec()),
        Command::FieldList {
            table: b"t".to_vec(),
            wildcard: b"a%".to_vec(),
        },
        Command::Statistics,
        Command::ProcessKill(7),
        Command::Ping,
        Command::SetOption(1),
        Command::StmtPrepare(b"SELECT ?".to_vec()),
        Command::StmtClose(3),
        Command::StmtReset(4),
        Command::Unknown(0x63),
    ];
    for c in cmds {
        assert_eq!(Command::decode(&c.encode()).unwrap(), c);
    }
    assert!(Command::decode(&[]).is_err());
    assert!(Command::decode(&[com::PROCESS_KILL, 1, 2]).is_err());
    assert!(Command::decode(&[com::STMT_CLOSE]).is_err());
}

#[test]
fn the_greeting_and_the_response_round_trip() {
    let g = Greeting {
        version: "5.1.45-innosim".into(),
        connection_id: 42,
        scramble: *b"abcdefghijklmnopqrst",
        capabilities: cap::SERVER,
        charset: 8,
        status: handshake::status::AUTOCOMMIT,
        plugin: handshake::NATIVE_PASSWORD.into(),
    };
    assert_eq!(Greeting::decode(&g.encode()).unwrap(), g);
    let r = Response {
        capabilities: cap::SERVER | cap::MULTI_STATEMENTS,
        max_packet: 1 << 24,
        charset: 33,
        user: "root".into(),
        auth: handshake::native_token(&g.scramble, "secret"),
        database: Some("test".into()),
        plugin: Some(handshake::NATIVE_PASSWORD.into()),
        attrs: vec![("_client_name".into(), "innosim".into())],
    };
    assert_eq!(Response::decode(&r.encode()).unwrap(), r);
    // Without the length-encoded auth data: a one-byte length.
    let old = Response {
        capabilities: cap::PROTOCOL_41 | cap::SECURE_CONNECTION | cap::PLUGIN_AUTH,
        database: None,
        attrs: Vec::new(),
        ..r.clone()
    };
    assert_eq!(Response::decode(&old.encode()).unwrap(), old);
    // A 4.0 client, and a cut response, are refused.
    assert!(Response::decode(&0u32.to_le_bytes()).is_err());
    assert!(Response::decode(&r.encode()[..20]).is_err());
}

#[test]
fn native_passwords_check_as_mysql_checks_them() {
    let scramble = *b"0123456789abcdefghij";
    let hash = handshake::password_hash("secret");
    let token = handshake::native_token(&scramble, "secret");
    assert_eq!(token.len(), 20);
    assert!(handshake::check_native(&scramble, &token, hash.as_ref()));
    let wrong = handshake::native_token(&scramble, "Secret");
    assert!(!handshake::check_native(&scramble, &wrong, hash.as_ref()));
    let other = *b"0123456789abcdefghiX";
    assert!(!handshake::check_native(&other, &token, hash.as_ref()));
    assert!(!handshake::check_native(&scramble, &[], hash.as_ref()));
    // The empty password: no token, and no token only.
    assert_eq!(handshake::password_hash(""), None);
    assert!(handshake::check_native(&scramble, &[], None));
    assert!(!handshake::check_native(&scramble, &token, None));
    // SHA1(SHA1("secret")), as MySQL's PASSWORD('secret') shows it:
    // *14E65567ABDB5135D0CFD9A70B3032C179A49EE7.
    let hex: String = hash.unwrap().iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(hex, "14E65567ABDB5135D0CFD9A70B3032C179A49EE7");
}

#[test]
fn replies_read_back_as_a_client_reads_them() {
    let ok = OkPacket {
        affected: 3,
        last_insert_id: 300,
        status: 2,
        warnings: 1,
        info: "Records: 3  Duplicates: 0  Warnings: 1".into(),
    };
    let (r, n) = reply::read_reply(&[ok.encode()]).unwrap().unwrap();
    assert_eq!((r, n), (Reply::Ok(ok), 1));
    let err = ErrPacket {
        code: 1205,
        sqlstate: "HY000".into(),
        message: "Lock wait timeout exceeded; try restarting transaction".into(),
    };
    let (r, _) = reply::read_reply(&[err.encode()]).unwrap().unwrap();
    assert_eq!(r, Reply::Err(err));
    let col = ColumnDef {
        schema: "test".into(),
        table: "t".into(),
        org_table: "t".into(),
        name: "a".into(),
        org_name: "a".into(),
        charset: 63,
        length: 11,
        ty: reply::ty::LONG,
        flags: reply::flag::NOT_NULL | reply::flag::PRI_KEY | reply::flag::NUM,
        decimals: 0,
    };
    let mut count = Vec::new();
    put_lenenc(&mut count, 1);
    let rows = [Some(b"1".to_vec())];
    let null = [None];
    let payloads = vec![
        count,
        col.encode(),
        reply::eof(0, 2),
        reply::text_row(&rows),
        reply::text_row(&null),
        reply::eof(0, 3),
    ];
    let (r, n) = reply::read_reply(&payloads).unwrap().unwrap();
    assert_eq!(n, 6);
    assert_eq!(
        r,
        Reply::Rows {
            columns: vec![col],
            rows: vec![vec![Some(b"1".to_vec())], vec![None]],
            warnings: 0,
            status: 3,
        }
    );
    // Not all of it yet: nothing.
    assert_eq!(reply::read_reply(&payloads[..4]).unwrap(), None);
}

#[test]
fn prepared_statements_parameters_and_binary_rows_round_trip() {
    use super::binary::{self, Param, PrepareOk};
    use super::reply::{flag, ty};
    let ok = PrepareOk {
        statement_id: 7,
        columns: 2,
        params: 3,
        warnings: 0,
    };
    assert_eq!(PrepareOk::decode(&ok.encode()).unwrap(), ok);
    // id 7, flags 0, iterations 1, null bitmap (param 1 NULL), new types.
    let mut p = vec![7, 0, 0, 0, 0, 1, 0, 0, 0, 0b010, 1];
    p.extend([ty::LONGLONG, 0x80, ty::VAR_STRING, 0, ty::DOUBLE, 0]);
    p.extend(42u64.to_le_bytes());
    p.extend(2.5f64.to_bits().to_le_bytes());
    let mut types = Vec::new();
    let (id, params) = binary::decode_execute(&p, 3, &mut types).unwrap();
    assert_eq!(id, 7);
    assert_eq!(
        params,
        vec![Param::UInt(42), Param::Null, Param::Double(2.5)]
    );
    // The next execute may send no types: the last ones hold.
    let mut q = vec![7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0];
    q.extend((-5i64 as u64).to_le_bytes());
    q.push(3);
    q.extend(b"a'b");
    q.extend(1.0f64.to_bits().to_le_bytes());
    types[0].1 = false;
    let (_, params) = binary::decode_execute(&q, 3, &mut types).unwrap();
    assert_eq!(
        params,
        vec![
            Param::Int(-5),
            Param::Bytes(b"a'b".to_vec()),
            Param::Double(1.0)
        ]
    );
    assert_eq!(params[1].literal(), "'a\\'b'");
    assert_eq!(Param::Double(2.5).literal(), "2.5e0");
    assert_eq!(Param::Bytes(b"x\\\ny".to_vec()).literal(), "'x\\\\\\ny'");
    // Without types ever sent: refused.
    assert!(binary::decode_execute(&q, 3, &mut Vec::new()).is_err());
    assert!(binary::decode_execute(&q[..12], 3, &mut types).is_err());
    let col = |t: u8, f: u16| ColumnDef {
        name: "c".into(),
        ty: t,
        flags: f,
        ..ColumnDef::default()
    };
    let cols = vec![
        col(ty::LONG, 0),
        col(ty::LONGLONG, flag::UNSIGNED),
        col(ty::DOUBLE, 0),
        col(ty::VAR_STRING, 0),
        col(ty::DATE, 0),
        col(ty::DATETIME, 0),
        col(ty::TIME, 0),
        col(ty::NEWDECIMAL, 0),
    ];
    let text = |s: &str| Some(s.as_bytes().to_vec());
    let values = vec![
        text("-7"),
        text("18446744073709551615"),
        text("0.25"),
        None,
        text("2020-01-02"),
        text("2020-01-02 03:04:05"),
        text("-26:00:01"),
        text("1.50"),
    ];
    let row = binary::binary_row(&cols, &values).unwrap();
    assert_eq!(binary::decode_binary_row(&cols, &row).unwrap(), values);
    assert!(binary::binary_row(&[col(ty::LONG, 0)], &[text("x")]).is_err());
}
