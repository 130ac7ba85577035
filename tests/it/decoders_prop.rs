//! Property tests of the Event decoders `import` and the recorder share:
//! core/v1 and events.k8s.io/v1 JSON, dumps as a List, JSON Lines and YAML,
//! and the kubectl text readers (`src/k8s/text/`). Arbitrary input must never
//! panic; text outside kubectl's grammar must not be read as Events; what
//! can be written and read back must come back the same. Runs on stable in
//! `cargo test` (a few seconds in a debug build).

use kubectl_diag::commands::import::{Input, parse, parse_input};
use kubectl_diag::k8s::text::{self, age};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Any JSON value, a few levels deep, with the keys an Event has among others.
fn any_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("kind".to_string()),
        Just("items".to_string()),
        Just("metadata".to_string()),
        Just("count".to_string()),
        Just("series".to_string()),
        Just("firstTimestamp".to_string()),
        Just("eventTime".to_string()),
        Just("involvedObject".to_string()),
        Just("uid".to_string()),
        "[a-zA-Z]{1,8}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        Just(Value::from("Event")),
        Just(Value::from("2026-11-29T03:00:00Z")),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A plain text value as Kubernetes allows in names and messages (no control characters).
fn word() -> impl Strategy<Value = String> {
    "[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?"
}

#[derive(Debug, Clone)]
struct Ev {
    uid: String,
    name: String,
    namespace: String,
    kind: String,
    object: String,
    reason: String,
    message: String,
    count: i64,
    first_s: i64,
    span_s: i64,
}

fn any_event() -> impl Strategy<Value = Ev> {
    (
        (word(), word(), word(), "[A-Z][a-zA-Z]{0,12}", word()),
        (
            "[A-Z][a-zA-Z]{0,15}",
            "[ -~]{0,80}",
            1i64..=i64::from(i32::MAX),
        ),
        (1_000_000_000i64..4_000_000_000, 0i64..1_000_000),
    )
        .prop_map(
            |(
                (uid, name, namespace, kind, object),
                (reason, message, count),
                (first_s, span_s),
            )| Ev {
                uid,
                name,
                namespace,
                kind,
                object,
                reason,
                message,
                count,
                first_s,
                span_s,
            },
        )
}

fn rfc3339(s: i64) -> String {
    chrono::DateTime::from_timestamp(s, 0)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn core_v1(e: &Ev) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": e.name, "namespace": e.namespace, "uid": e.uid},
        "involvedObject": {"kind": e.kind, "namespace": e.namespace, "name": e.object},
        "reason": e.reason, "message": e.message, "type": "Warning", "count": e.count,
        "firstTimestamp": rfc3339(e.first_s), "lastTimestamp": rfc3339(e.first_s + e.span_s),
    })
}

fn events_k8s_io(e: &Ev) -> Value {
    json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": e.name, "namespace": e.namespace, "uid": e.uid},
        "regarding": {"kind": e.kind, "namespace": e.namespace, "name": e.object},
        "reason": e.reason, "note": e.message, "type": "Warning",
        "eventTime": format!("{}.000000Z", rfc3339(e.first_s).trim_end_matches('Z')),
        "series": {"count": e.count, "lastObservedTime":
            format!("{}.000000Z", rfc3339(e.first_s + e.span_s).trim_end_matches('Z'))},
    })
}

fn check_read(e: &Ev, events: &[kubectl_diag::model::EventObservation]) {
    assert_eq!(events.len(), 1);
    let o = &events[0];
    assert_eq!(
        (o.uid.as_str(), o.name.as_str(), o.namespace.as_str()),
        (e.uid.as_str(), e.name.as_str(), e.namespace.as_str())
    );
    assert_eq!(
        (o.involved.kind.as_str(), o.involved.name.as_str()),
        (e.kind.as_str(), e.object.as_str())
    );
    assert_eq!(
        (o.reason.as_str(), o.message.as_str()),
        (e.reason.as_str(), e.message.as_str())
    );
    assert_eq!(o.count, e.count);
    assert_eq!(
        (o.first, o.last),
        (e.first_s * 1000, (e.first_s + e.span_s) * 1000)
    );
}

/// Any JSON value with the keys of an audit entry and its exporters' envelopes.
fn any_audit_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("auditID".to_string()),
        Just("stage".to_string()),
        Just("verb".to_string()),
        Just("objectRef".to_string()),
        Just("responseObject".to_string()),
        Just("requestObject".to_string()),
        Just("responseStatus".to_string()),
        Just("protoPayload".to_string()),
        Just("message".to_string()),
        Just("items".to_string()),
        Just("events".to_string()),
        Just("kind".to_string()),
        Just("metadata".to_string()),
        Just("spec".to_string()),
        "[a-zA-Z]{1,8}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        Just(Value::from("ResponseComplete")),
        Just(Value::from("patch")),
        Just(Value::from("EventList")),
        Just(Value::from("k8s.io")),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any document of audit-like JSON, alone, as lines, as a CloudWatch
    /// message, or any bytes at all: read or refused, never a panic.
    #[test]
    fn any_audit_input_is_read_or_refused_without_panic(
        docs in prop::collection::vec(any_audit_json(), 1..4),
        bytes in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let lines: Vec<String> = docs.iter().map(|d| d.to_string()).collect();
        let wrapped: Vec<String> = lines.iter().map(|l| json!({"message": l}).to_string()).collect();
        for text in [lines.join("\n"), wrapped.join("\n"), serde_json::to_string_pretty(&docs).unwrap()] {
            for doc in text.lines() {
                let _ = kubectl_diag::k8s::audit::decode(doc);
                let _ = kubectl_diag::k8s::audit::looks_like_audit(doc);
            }
            let mut shape = "";
            let mut reader = std::io::Cursor::new(text.into_bytes());
            let _ = kubectl_diag::commands::import::audit::read(&mut reader, &mut shape, &mut |_| Ok(()));
        }
        let mut shape = "";
        let mut reader = std::io::Cursor::new(bytes);
        let _ = kubectl_diag::commands::import::audit::read(&mut reader, &mut shape, &mut |_| Ok(()));
    }

    /// Any text at all: read or refused, never a panic.
    #[test]
    fn any_text_is_read_or_refused_without_panic(text in ".{0,400}") {
        let _ = parse_input("f", &text, 0);
        let _ = text::parse(&text);
    }

    /// Any JSON document, as JSON, as JSON Lines, as YAML: never a panic, and
    /// every Event read has a uid or a name.
    #[test]
    fn any_json_is_read_or_refused_without_panic(docs in prop::collection::vec(any_json(), 1..4)) {
        let lines: Vec<String> = docs.iter().map(|d| d.to_string()).collect();
        let yaml = format!("---\n{}\n", lines.join("\n---\n"));
        for text in [lines[0].clone(), lines.join("\n"), yaml] {
            if let Ok(read) = parse("f", &text, 7) {
                for o in &read.events {
                    prop_assert!(!o.uid.is_empty() || !o.name.is_empty());
                    prop_assert!((1..=i64::from(i32::MAX)).contains(&o.count));
                }
            }
        }
    }

    /// An Event written as kubectl writes it comes back the same, in every
    /// form a dump takes: a core/v1 List, events.k8s.io, JSON Lines, YAML.
    #[test]
    fn an_event_written_and_read_back_is_the_same(e in any_event()) {
        for doc in [core_v1(&e), events_k8s_io(&e)] {
            let list = json!({"apiVersion": "v1", "kind": "List", "items": [doc.clone()]});
            for text in [
                list.to_string(),
                serde_json::to_string_pretty(&list).unwrap(),
                doc.to_string(),
                format!("---\n{list}\n"),
            ] {
                let read = parse("f", &text, 0);
                prop_assert!(read.is_ok(), "{text}: {read:?}");
                check_read(&e, &read.unwrap().events);
            }
        }
    }

    /// Ages as kubectl prints them (largest part first) are read back as an
    /// interval holding the age printed.
    #[test]
    fn a_printed_age_is_read_back_around_its_value(d in 0i64..400, h in 0i64..24, m in 0i64..60, s in 0i64..60) {
        let mut text = String::new();
        for (n, unit) in [(d, 'd'), (h, 'h'), (m, 'm'), (s, 's')] {
            if n > 0 {
                text.push_str(&format!("{n}{unit}"));
            }
        }
        prop_assume!(!text.is_empty());
        let ms = ((d * 24 + h) * 60 + m) * 60_000 + s * 1000;
        match age::parse_age(&text) {
            Some(age::When::Ago { min, max }) => prop_assert!(min <= ms && ms <= max, "{text}"),
            other => prop_assert!(false, "{text}: {other:?}"),
        }
    }

    /// Text outside the age grammar (parts smallest first, repeated units,
    /// unknown units, signs, spaces) is not an age.
    #[test]
    fn text_outside_the_age_grammar_is_not_an_age(a in 1u32..100, b in 1u32..100, junk in "[^0-9smhdy<]{1,3}") {
        for text in [
            format!("{a}s{b}m"),
            format!("{a}m{b}m"),
            format!("{a}{junk}"),
            format!("-{a}m"),
            format!("{a} m"),
            format!("{a}"),
        ] {
            prop_assert_eq!(age::parse_age(&text), None, "{}", text);
        }
    }

    /// A kubectl table whose rows are shuffled words: read or skipped, never a
    /// panic; and prose without a header is never read as Events.
    #[test]
    fn tables_of_arbitrary_cells_and_prose_never_panic(
        rows in prop::collection::vec(prop::collection::vec("[A-Za-z0-9/<>().:-]{0,12}", 0..8), 0..6),
        prose in prop::collection::vec("[a-z ,.]{0,60}", 0..6),
    ) {
        let body: Vec<String> = rows.iter().map(|r| r.join("   ")).collect();
        for header in [
            "LAST SEEN   TYPE      REASON    OBJECT      MESSAGE",
            "NAMESPACE   LAST SEEN   TYPE   REASON   OBJECT   SUBOBJECT   SOURCE   MESSAGE   FIRST SEEN   COUNT   NAME",
            "LASTSEEN   FIRSTSEEN   COUNT   NAME   KIND   SUBOBJECT   TYPE   REASON   SOURCE   MESSAGE",
            "Events:\n  Type    Reason   Age   From   Message\n  ----    ------   ----  ----   -------",
        ] {
            let text = if header.starts_with("Events:") {
                format!("Name: x\n{header}\n  {}\n", body.join("\n  "))
            } else {
                format!("{header}\n{}\n", body.join("\n"))
            };
            let _ = parse_input("f", &text, 0);
        }
        let prose = prose.join("\n");
        let read = text::parse(&prose);
        prop_assert!(read.events.is_empty(), "{prose:?}: {read:?}");
        if let Ok(Input::Text(t)) = parse_input("f", &prose, 0) {
            prop_assert!(t.events.is_empty());
        }
    }
}
