//! The OTLP destination's unit tests.

use super::*;

#[test]
fn a_batch_partly_rejected_says_how_many_of_how_many_escaped() {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsPartialSuccess;
    let p = ExportLogsPartialSuccess {
        rejected_log_records: 2,
        error_message: "bad\n\u{1b}[31mred\u{202e}".into(),
    };
    let e = partially_rejected("otlp+http://c:4318/v1/logs".into(), 10, &p).to_string();
    assert!(
        e.contains("rejected 2 of 10 record(s): bad\\n\\x1b[31mred\\u{202e}"),
        "{e}"
    );
}

/// Regression (issue 44.3): a header written with a space for its colon printed its secret.
#[test]
fn a_malformed_header_never_prints_its_text() {
    for bad in ["api-key s3cretTOKEN: x", "Authorization Bearer s3cretTOKEN"] {
        let e = parse_headers(
            &[bad.to_string()],
            None,
            "--ship-header",
            "--ship-header-file",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("--ship-header #1: "), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
    }
    let e = parse_headers(
        &["X: a\u{1}s3cret".to_string()],
        None,
        "--header",
        "--header-file",
    )
    .unwrap_err()
    .to_string();
    assert!(!e.contains("s3cret"), "{e}");
}

/// Regression (issue 44.3): an `api_key` in the query was printed.
#[test]
fn an_otlp_url_error_never_prints_its_query_or_credentials() {
    for bad in [
        "otlp+https://collector/v1/logs?api_key=s3cretPW",
        "otlp+http://u:s3cretPW@collector:4318",
        "otlp+http://s3cretPW@collector:4318",
        "otlp+http://collector:s3cretPW/v1/logs",
    ] {
        let e = OtlpUrl::parse(bad).unwrap_err().to_string();
        assert!(!e.contains("s3cret"), "{e}");
        assert!(e.contains("collector"), "{e}");
    }
}

#[test]
fn urls_default_their_port_and_path_and_refuse_credentials() {
    let u = OtlpUrl::parse("otlp+http://collector").unwrap();
    assert_eq!(u.shown(), "otlp+http://collector:4318/v1/logs");
    assert_eq!(u.http(), "http://collector:4318/v1/logs");
    let u = OtlpUrl::parse("otlp+https://otlp.example.com/otlp/v1/logs").unwrap();
    assert_eq!(u.shown(), "otlp+https://otlp.example.com:443/otlp/v1/logs");
    let u = OtlpUrl::parse("otlp+http://127.0.0.1:14318/").unwrap();
    assert_eq!(u.http(), "http://127.0.0.1:14318/v1/logs");
    let e = OtlpUrl::parse("otlp+http://user:secret@host:4318").unwrap_err();
    assert!(!e.to_string().contains("secret"), "{e}");
    assert!(OtlpUrl::parse("otlp+http://host:port").is_err());
    assert!(OtlpUrl::parse("otlp+http://host/v1/logs?key=1").is_err());
    assert!(OtlpUrl::parse("http://host:4318").is_err());
}

#[test]
fn headers_parse_from_flags_and_files_and_never_show_values() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("h");
    std::fs::write(
        &f,
        "# key\n\nAuthorization: Bearer s3cret\r\nX-Scope-OrgID: team-a\n",
    )
    .unwrap();
    let h = parse_headers(
        &["api-key: abc".into()],
        Some(&f),
        "--ship-header",
        "--ship-header-file",
    )
    .unwrap();
    assert_eq!(
        h,
        vec![
            ("api-key".into(), "abc".into()),
            ("Authorization".into(), "Bearer s3cret".into()),
            ("X-Scope-OrgID".into(), "team-a".into())
        ]
    );
    let e = parse_headers(
        &["novalue-s3cret".into()],
        None,
        "--ship-header",
        "--ship-header-file",
    )
    .unwrap_err();
    assert!(!e.to_string().contains("s3cret"), "{e}");
    let e = parse_headers(
        &["X: bad\u{7f}s3cret".into()],
        None,
        "--ship-header",
        "--ship-header-file",
    )
    .unwrap_err();
    assert!(!e.to_string().contains("s3cret"), "{e}");
    assert!(parse_headers(&["Content-Type: text/plain".into()], None, "a", "b").is_err());
}

#[test]
fn decimals_are_written_as_format_writes_them() {
    for n in [0, 1, 9, 10, 12345, -1, -907, i64::MAX, i64::MIN] {
        let mut buf = [0u8; 20];
        assert_eq!(decimal(n, &mut buf), n.to_string().as_bytes(), "{n}");
    }
}

#[test]
fn record_uids_are_uuid5_of_the_documented_names() {
    // Python 3: uuid.uuid5(uuid.NAMESPACE_URL, "http://www.example.com/").
    assert_eq!(
        uuid5("http://www.example.com/"),
        "fcde3c85-2270-590f-9e7c-ee003d65e0e2"
    );
    assert_eq!(
        occurrence_uid("c", "e", 3),
        uuid5("kubectl-diag:occurrence/c/e/3")
    );
    assert_eq!(
        version_uid("c", ("u", "Pod", "ns", "p"), Some("42"), 1, 2),
        uuid5("kubectl-diag:version/c/u/42")
    );
    assert_eq!(
        version_uid("c", ("", "Pod", "ns", "p"), None, 1, 2),
        uuid5("kubectl-diag:version/c/Pod/ns/p/at:1:2")
    );
    assert_eq!(
        gap_uid("c", "events", 5, "relist"),
        uuid5("kubectl-diag:gap/c/events/5/relist")
    );
}

#[test]
fn times_are_written_as_chronos_patterns_write_them() {
    for ms in [
        0,
        1,
        999,
        1_700_000_000_000,
        1_795_000_012_345,
        4_102_444_799_999,
    ] {
        let t = chrono::DateTime::from_timestamp_millis(ms).unwrap();
        assert_eq!(rfc3339(ms), t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
        assert_eq!(
            go_time(ms),
            t.format("%Y-%m-%d %H:%M:%S +0000 UTC").to_string()
        );
    }
    assert_eq!(rfc3339(1_700_000_000_007), "2023-11-14T22:13:20.007Z");
}

#[test]
fn severities_follow_the_collector() {
    assert_eq!(severity("Normal"), (9, "Normal".into()));
    assert_eq!(severity("Warning"), (13, "Warning".into()));
    assert_eq!(severity("weird"), (0, String::new()));
}

#[test]
fn every_otlp_select_reads_as_many_columns_as_its_table_has() {
    crate::ship::tables::assert_selects_match(OTLP_TABLES);
}

/// The attribute names of an Event's record are the collector's: the names its
/// k8seventsreceiver writes (tests/fixtures/otlp/k8seventsreceiver-attributes.txt,
/// copied from its source; the file's header cites it), each where it writes it.
#[test]
fn event_attribute_names_match_the_collectors_k8seventsreceiver() {
    let fixture = include_str!("../../../tests/fixtures/otlp/k8seventsreceiver-attributes.txt");
    let mut want_resource = Vec::new();
    let mut want_record = Vec::new();
    for line in fixture
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (place, name) = line.split_once(char::is_whitespace).unwrap();
        match place {
            "resource" => want_resource.push(name.trim().to_string()),
            "record" => want_record.push(name.trim().to_string()),
            other => panic!("{other}"),
        }
    }
    // One occurrence row, its values as the outbox reader gives them (ids resolved).
    let table = &OTLP_TABLES[0];
    let row: Vec<rusqlite::types::Value> = table
        .columns
        .iter()
        .map(|(name, ty)| match ty.wire() {
            Ty::Str => rusqlite::types::Value::Text(format!("{name}-value")),
            _ => rusqlite::types::Value::Integer(match *name {
                "count" => 4,
                "n" => 2,
                _ => 1_700_000_000_000,
            }),
        })
        .collect();
    let recs = records(table, &[row], 5);
    assert_eq!(recs.len(), 1);
    let res: Vec<&str> = recs[0].resource.iter().map(|k| k.key.as_str()).collect();
    let rec: Vec<&str> = recs[0]
        .record
        .attributes
        .iter()
        .map(|k| k.key.as_str())
        .collect();
    // NB: the involved object's resourceVersion is not recorded (docs/schema.md).
    for name in want_resource
        .iter()
        .filter(|n| *n != "k8s.object.resource_version")
    {
        assert!(
            res.contains(&name.as_str()),
            "resource attribute {name} missing: {res:?}"
        );
    }
    for name in &want_record {
        assert!(
            rec.contains(&name.as_str()),
            "record attribute {name} missing: {rec:?}"
        );
    }
    // Ours are only what the collector does not have.
    for name in rec.iter().chain(&res) {
        let ours = name.starts_with("kubectl_diag.")
            || matches!(
                *name,
                "log.record.uid" | "k8s.cluster.uid" | "k8s.cluster.name" | "service.name"
            );
        assert!(
            ours || want_resource.iter().chain(&want_record).any(|w| w == name),
            "{name} is neither the collector's nor ours"
        );
    }
    assert_eq!(recs[0].record.severity_number, 0); // "type-value" is no Event type
    assert_eq!(recs[0].record.time_unix_nano, 1_700_000_000_000_000_000);
    let attr = |k: &str| {
        recs[0]
            .record
            .attributes
            .iter()
            .find(|a| a.key == k)
            .and_then(|a| a.value.clone())
            .and_then(|v| v.value)
    };
    assert_eq!(attr("k8s.event.count"), Some(any_value::Value::IntValue(4)));
    assert_eq!(
        attr("kubectl_diag.occurrences"),
        Some(any_value::Value::IntValue(2))
    );
    assert_eq!(
        attr("k8s.event.start_time"),
        Some(any_value::Value::StringValue(
            "2023-11-14 22:13:20 +0000 UTC".into()
        ))
    );
    assert_eq!(
        attr("log.record.uid"),
        Some(any_value::Value::StringValue(occurrence_uid(
            "cluster-value",
            "event_uid-value",
            4
        )))
    );
}

/// Records of three resources, one of them twice, with every kind of value.
fn three_resources() -> Vec<Rec<'static>> {
    let r = |obj: &'static str, n: i64| Rec {
        resource: vec![("k8s.object.name", st(obj)), ("n", Val::I(n))],
        attributes: vec![
            ("a", st("x")),
            ("b", Val::I(n)),
            ("c", st("")),
            ("d", Val::I(-3)),
            ("", st("no key")),
        ],
        time_unix_nano: 7,
        observed_time_unix_nano: 11,
        severity_number: 13,
        severity_text: Cow::Borrowed("Warning"),
        body: Cow::Owned(format!("{obj} {n}")),
    };
    vec![r("a", 1), r("b", 2), r("a", 1), r("c", 300)]
}

#[test]
fn records_of_one_resource_share_one_resource_logs() {
    let req = request(three_resources().iter().map(Rec::to_prost));
    assert_eq!(req.resource_logs.len(), 3);
    assert_eq!(req.resource_logs[0].scope_logs[0].log_records.len(), 2);
}

/// The body written straight from the records is, byte for byte, what
/// prost writes for the `opentelemetry-proto` messages of the same records.
#[test]
fn bodies_encode_as_prost_encodes_the_messages() {
    let recs = three_resources();
    let mut body = Body::default();
    for r in &recs {
        body.push(r);
    }
    assert_eq!(body.records, 4);
    let want = request(recs.iter().map(Rec::to_prost)).encode_to_vec();
    assert_eq!(body.finish(), want);
    // It starts over, and an empty one is the empty request.
    assert_eq!(body.records, 0);
    assert_eq!(
        body.finish(),
        ExportLogsServiceRequest::default().encode_to_vec()
    );
    // Defaults are left out as prost leaves them out; long values take longer lengths.
    let plain = Rec {
        resource: vec![],
        attributes: vec![("long", st("y".repeat(300)))],
        time_unix_nano: 0,
        observed_time_unix_nano: 0,
        severity_number: 0,
        severity_text: Cow::Borrowed(""),
        body: Cow::Borrowed(""),
    };
    body.push(&plain);
    body.push(&recs[1]);
    let want = request([plain.to_prost(), recs[1].to_prost()]).encode_to_vec();
    assert_eq!(body.finish(), want);
}

/// A batch of real rows (occurrences, versions, gaps) written both ways.
#[test]
fn a_batch_encodes_as_prost_encodes_its_records() {
    let mut tables = Vec::new();
    for table in OTLP_TABLES {
        let rows: Vec<Vec<rusqlite::types::Value>> = (0..3i64)
            .map(|row| {
                table
                    .columns
                    .iter()
                    .map(|(name, ty)| match ty.wire() {
                        Ty::Str => rusqlite::types::Value::Text(format!("{name}-{}", row % 2)),
                        Ty::NStr | Ty::NInt if row == 1 => rusqlite::types::Value::Null,
                        Ty::NStr => rusqlite::types::Value::Text(format!("{name}-é")),
                        _ => rusqlite::types::Value::Integer(1_700_000_000_000 + row),
                    })
                    .collect()
            })
            .collect();
        tables.push((table, rows));
    }
    let mut body = Body::default();
    let push_all = |body: &mut Body| {
        for (table, rows) in &tables {
            for row in rows {
                let values: Vec<ValueRef<'_>> = row.iter().map(ValueRef::from).collect();
                body.push(&record(table, &values, 42));
            }
        }
    };
    push_all(&mut body);
    assert_eq!(body.records, 9);
    let want = request(
        tables
            .iter()
            .flat_map(|(table, rows)| records(table, rows, 42)),
    )
    .encode_to_vec();
    assert_eq!(body.finish(), want);
    // The same Body, its buffers reused, writes the next batch alike.
    push_all(&mut body);
    assert_eq!(body.records, 9);
    assert_eq!(body.finish(), want);
}

/// Read from a real recording: strings resolved by id, the Event's uid
/// written from its 16 bytes, its client-go name rebuilt, a version's diff.
#[test]
fn a_recorded_occurrence_reads_back_with_its_strings_and_uid() {
    use crate::model::{EventChange, EventObservation, ObjectRef};
    let (_d, mut w) = crate::store::testing::recording();
    let url = "otlp+http://h:4318/v1/logs".to_string();
    let (reg, _) = super::super::outbox::register(w.connection(), &[url], 1).unwrap();
    let uid = "0f8e2a5c-1b2d-4e3f-8a9b-0c1d2e3f4a5b";
    let mut b = w.begin().unwrap();
    for count in [1, 2] {
        b.apply(&EventChange::Upsert(Box::new(EventObservation {
            uid: uid.into(),
            namespace: "shop".into(),
            name: "web-1.187c3a4b5d6e7f80".into(),
            involved: ObjectRef {
                kind: "Pod".into(),
                namespace: "shop".into(),
                name: "web-1".into(),
                uid: "pod-uid".into(),
                api_version: "v1".into(),
                ..Default::default()
            },
            reason: "BackOff".into(),
            type_: "Warning".into(),
            message: "Back-off restarting failed container".into(),
            reporting_controller: "kubelet".into(),
            source_host: "node-a".into(),
            first: 1_000,
            last: 1_000 * count,
            count,
            ..Default::default()
        })))
        .unwrap();
    }
    b.commit().unwrap();
    let conn = w.connection();
    super::super::outbox::prepare(conn).unwrap();
    let otlp = Otlp::new(OtlpUrl::parse("otlp+http://h:4318").unwrap(), &[]).unwrap();
    let batch = otlp
        .take(conn, reg[0].cursor, super::super::outbox::BATCH_KEYS)
        .unwrap()
        .unwrap();
    assert_eq!(batch.rows(), 2);
    let mut protobuf = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&batch.bodies[0].0[..]),
        &mut protobuf,
    )
    .unwrap();
    let sent = ExportLogsServiceRequest::decode(protobuf.as_slice()).unwrap();
    let text = |kvs: &[KeyValue], key: &str| -> String {
        let v = kvs.iter().find(|kv| kv.key == key).unwrap();
        match v.value.as_ref().and_then(|a| a.value.as_ref()) {
            Some(any_value::Value::StringValue(s)) => s.clone(),
            Some(any_value::Value::IntValue(n)) => n.to_string(),
            other => panic!("{key}: {other:?}"),
        }
    };
    let group = &sent.resource_logs[0];
    let resource = &group.resource.as_ref().unwrap().attributes;
    assert_eq!(text(resource, "k8s.object.kind"), "Pod");
    assert_eq!(text(resource, "k8s.object.name"), "web-1");
    assert_eq!(text(resource, "k8s.object.api_version"), "v1");
    assert_eq!(text(resource, "k8s.node.name"), "node-a");
    let records = &group.scope_logs[0].log_records;
    assert_eq!(records.len(), 2);
    let last = &records[1].attributes;
    assert_eq!(text(last, "k8s.event.uid"), uid);
    assert_eq!(text(last, "k8s.event.name"), "web-1.187c3a4b5d6e7f80");
    assert_eq!(text(last, "k8s.event.reason"), "BackOff");
    assert_eq!(text(last, "k8s.event.reporting_controller"), "kubelet");
    assert_eq!(text(last, "k8s.namespace.name"), "shop");
    assert_eq!(text(last, "k8s.event.count"), "2");
    assert_eq!(text(last, "log.record.uid"), occurrence_uid("uid", uid, 2));
    // The Event's start: its first occurrence's time, for the row of count 2
    // too (read from the row of count 1, not its own).
    for r in records {
        assert_eq!(
            text(&r.attributes, "k8s.event.start_time"),
            "1970-01-01 00:00:01 +0000 UTC"
        );
    }
    assert_eq!(records[1].severity_text, "Warning");
    assert_eq!(
        records[1].body.as_ref().and_then(|a| a.value.clone()),
        Some(any_value::Value::StringValue(
            "Back-off restarting failed container".into()
        ))
    );
}

/// A server answering each request with the next of `answers` (status line, headers, body).
fn canned(answers: Vec<Vec<u8>>) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut answers = answers.into_iter();
        for mut conn in listener.incoming().flatten() {
            let Some(answer) = answers.next() else { return };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let n = conn.read(&mut chunk).unwrap_or(0);
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_ascii_lowercase();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len: usize = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse().unwrap());
                    if buf.len() >= end + 4 + len || n == 0 {
                        break;
                    }
                } else if n == 0 {
                    break;
                }
            }
            let _ = conn.write_all(&answer);
        }
    });
    port
}

fn answer(status: &str, headers: &str, body: &[u8]) -> Vec<u8> {
    let mut a = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    a.extend_from_slice(body);
    a
}

#[tokio::test]
async fn answers_are_read_as_the_otlp_spec_says() {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsPartialSuccess;
    let rejected = ExportLogsServiceResponse {
        partial_success: Some(ExportLogsPartialSuccess {
            rejected_log_records: 3,
            error_message: "too old\u{1b}]0;owned\u{7}\u{1b}[2J".into(),
        }),
    }
    .encode_to_vec();
    let warned = ExportLogsServiceResponse {
        partial_success: Some(ExportLogsPartialSuccess {
            rejected_log_records: 0,
            error_message: "took all, but".into(),
        }),
    }
    .encode_to_vec();
    let port = canned(vec![
        answer("200 OK", "", &[0x0a, 0x00]),
        answer("200 OK", "", &warned),
        answer("200 OK", "", &rejected),
        answer("429 Too Many Requests", "Retry-After: 7\r\n", b""),
        answer("503 Service Unavailable", "", b""),
        answer("400 Bad Request", "", b"bad"),
        answer("401 Unauthorized", "", b""),
    ]);
    let otlp = Otlp::new(
        OtlpUrl::parse(&format!("otlp+http://127.0.0.1:{port}")).unwrap(),
        &[("Authorization".into(), "Bearer s3cret".into())],
    )
    .unwrap();
    assert!(
        otlp.probe().await.is_ok(),
        "an empty partial_success is success"
    );
    assert!(
        otlp.probe().await.is_ok(),
        "a warning that rejected nothing is success"
    );
    // Regression (issue 44.10): the start probe said "rejected 3 of 0 record(s)".
    let e = otlp.probe().await.unwrap_err();
    assert!(
        matches!(e, ChError::Refused { .. })
            && e.to_string()
                .contains("answered the start probe (an empty request) with 3 rejected record(s)"),
        "{e}"
    );
    // Regression (issue 44.4): the receiver's error_message reached the status line raw.
    assert!(!e.to_string().contains('\u{1b}'), "{e:?}");
    assert!(
        e.to_string().contains("too old\\x1b]0;owned\\x07\\x1b[2J"),
        "{e:?}"
    );
    let e = otlp.probe().await.unwrap_err();
    assert!(e.retry() && e.wait(0) == Duration::from_secs(7), "{e}");
    let e = otlp.probe().await.unwrap_err();
    assert!(
        matches!(e, ChError::Unavailable { .. }) && e.wait(2) == super::super::backoff(2),
        "{e}"
    );
    let e = otlp.probe().await.unwrap_err();
    assert!(!e.retry() && e.to_string().contains("400"), "{e}");
    let e = otlp.probe().await.unwrap_err();
    assert!(!e.retry() && e.to_string().contains("--ship-header"), "{e}");
    assert!(!e.to_string().contains("s3cret"));
}
