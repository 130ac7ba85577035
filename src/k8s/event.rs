//! The Event as it comes off the wire (core/v1 and events.k8s.io/v1 alike),
//! decoded into a small struct and normalised into [`EventObservation`].
//!
//! NB: core/v1 and events.k8s.io/v1 are two views of the same stored objects.
//! The recorder watches core/v1, whose JSON also carries the events.k8s.io
//! fields (`series`, `eventTime`, `reportingComponent`); imports may be either
//! view, so every field accepts both spellings.

use std::borrow::Cow;

use chrono::DateTime;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

use crate::model::{EventObservation, ObjectRef};

/// Messages longer than this are cut (at a character boundary) before storing.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireEvent {
    #[serde(deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
    #[serde(alias = "regarding")]
    pub involved_object: WireRef,
    pub related: Option<WireRef>,
    pub reason: Option<String>,
    #[serde(alias = "note")]
    pub message: Option<String>,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub action: Option<String>,
    #[serde(alias = "deprecatedCount", deserialize_with = "saturating_count")]
    pub count: Option<i64>,
    #[serde(alias = "deprecatedFirstTimestamp")]
    pub first_timestamp: WireTime,
    #[serde(alias = "deprecatedLastTimestamp")]
    pub last_timestamp: WireTime,
    pub event_time: WireTime,
    pub series: Option<WireSeries>,
    #[serde(alias = "deprecatedSource")]
    pub source: Option<WireSource>,
    #[serde(alias = "reportingController")]
    pub reporting_component: Option<String>,
    pub reporting_instance: Option<String>,
}

/// The metadata fields the recorder uses. NB: decoding k8s-openapi's full
/// `ObjectMeta` (managedFields with their timestamps, labels, annotations)
/// cost more than the rest of an Event together; the rest is skipped unread.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    creation_timestamp: WireTime,
}

/// A wire timestamp as k8s-openapi's `Time`, for the `ObjectMeta` kube wants.
pub(super) fn k8s_time(
    text: &Option<String>,
) -> Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time> {
    text.as_deref()
        .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok())
        .map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time)
}

fn slim_meta<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    let m = Option::<SlimMeta>::deserialize(d)?.unwrap_or_default();
    Ok(ObjectMeta {
        name: m.name,
        namespace: m.namespace,
        uid: m.uid,
        resource_version: m.resource_version,
        creation_timestamp: m
            .creation_timestamp
            .0
            .and_then(|ms| k8s_openapi::jiff::Timestamp::from_millisecond(ms).ok())
            .map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time),
        ..ObjectMeta::default()
    })
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireRef {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub uid: Option<String>,
    pub field_path: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireSeries {
    #[serde(deserialize_with = "saturating_count")]
    pub count: Option<i64>,
    pub last_observed_time: WireTime,
}

/// A count, saturated at `i64::MAX` when larger (2^63 and up, as an unsigned
/// or, past 2^64, a float): README promises such a count is clamped to the
/// API's int32 ([`WireEvent::count_too_high`]), not that the Event is refused.
/// A fraction is no count.
fn saturating_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    struct Count;
    impl<'de> serde::de::Visitor<'de> for Count {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a whole number")
        }
        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Option<i64>, E> {
            Ok(Some(n))
        }
        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Option<i64>, E> {
            Ok(Some(i64::try_from(n).unwrap_or(i64::MAX)))
        }
        fn visit_i128<E: serde::de::Error>(self, n: i128) -> Result<Option<i64>, E> {
            Ok(Some(
                n.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
            ))
        }
        fn visit_u128<E: serde::de::Error>(self, n: u128) -> Result<Option<i64>, E> {
            Ok(Some(i64::try_from(n).unwrap_or(i64::MAX)))
        }
        fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Option<i64>, E> {
            if n.is_finite() && n.fract() == 0.0 {
                // NB: `as` saturates at the bounds of i64.
                Ok(Some(n as i64))
            } else {
                Err(E::invalid_value(serde::de::Unexpected::Float(n), &self))
            }
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<i64>, D::Error> {
            d.deserialize_any(Count)
        }
    }
    d.deserialize_option(Count)
}

/// A Kubernetes `Time` or `MicroTime` decoded straight into epoch
/// milliseconds; absent, null or unparseable text is `None`.
///
/// NB: read from the JSON text in place: keeping each of an Event's five
/// timestamps as a `String` first cost five allocations an Event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WireTime(pub Option<i64>);

impl<'de> Deserialize<'de> for WireTime {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<WireTime, D::Error> {
        struct Text;
        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = WireTime;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an RFC 3339 time")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<WireTime, E> {
                Ok(WireTime(parse_k8s_time(text)))
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<WireTime, E> {
                Ok(WireTime(None))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<WireTime, E> {
                Ok(WireTime(None))
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<WireTime, D::Error> {
                d.deserialize_str(Text)
            }
        }
        d.deserialize_option(Text)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct WireSource {
    pub component: Option<String>,
    pub host: Option<String>,
}

impl kube::Resource for WireEvent {
    type DynamicType = ();
    type Scope = kube::core::NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Event".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "events".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// Parses a Kubernetes `Time` or `MicroTime` into epoch milliseconds.
pub fn parse_k8s_time(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_millis())
}

fn text(field: Option<String>) -> String {
    field.unwrap_or_default()
}

fn object_ref(r: WireRef) -> ObjectRef {
    ObjectRef {
        api_version: text(r.api_version),
        kind: text(r.kind),
        namespace: text(r.namespace),
        name: text(r.name),
        uid: text(r.uid),
        field_path: text(r.field_path),
    }
}

/// Cuts `s` to at most `max` bytes without splitting a character.
pub fn truncate_utf8(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

/// What ends a message cut at [`MAX_MESSAGE_BYTES`], so that a reader knows
/// the rest is missing.
pub const CUT_MARK: &str = "… [cut at 64 KiB]";

/// An Event's message as stored: at most [`MAX_MESSAGE_BYTES`], and when cut,
/// cut shorter to end in [`CUT_MARK`] (a message cut silently read as whole).
pub fn cut_message(s: String) -> String {
    if s.len() <= MAX_MESSAGE_BYTES {
        return s;
    }
    let mut s = truncate_utf8(s, MAX_MESSAGE_BYTES - CUT_MARK.len());
    s.push_str(CUT_MARK);
    s
}

impl WireEvent {
    /// The count as the API gave it: `series.count`, else `count`, when above 0.
    fn raw_count(&self) -> Option<i64> {
        self.series
            .as_ref()
            .and_then(|s| s.count)
            .filter(|c| *c > 0)
            .or(self.count.filter(|c| *c > 0))
    }

    /// Whether it carries no time at all: no firstTimestamp, eventTime,
    /// creationTimestamp, lastTimestamp or series.lastObservedTime.
    pub fn has_no_time(&self) -> bool {
        self.first_timestamp.0.is_none()
            && self.event_time.0.is_none()
            && self.metadata.creation_timestamp.is_none()
            && self.last_timestamp.0.is_none()
            && self
                .series
                .as_ref()
                .is_none_or(|s| s.last_observed_time.0.is_none())
    }

    /// Whether its count is above what the API allows ([`crate::model::MAX_COUNT`]).
    pub fn count_too_high(&self) -> bool {
        self.raw_count()
            .is_some_and(|c| c > crate::model::MAX_COUNT)
    }

    /// Normalises the way kubectl does: first = `firstTimestamp`, else `eventTime`;
    /// last = `series.lastObservedTime`, else `lastTimestamp`, else first;
    /// count = `series.count`, else `count`, with 0 (or absent) meaning 1.
    /// A count above [`crate::model::MAX_COUNT`] (the API's int32) becomes it.
    /// Returns `None` for an object with no uid and no name: nothing can identify it.
    pub fn into_observation(self) -> Option<EventObservation> {
        let count = self.raw_count().unwrap_or(1).min(crate::model::MAX_COUNT);
        let meta = self.metadata;
        let first = self
            .first_timestamp
            .0
            .or(self.event_time.0)
            .or_else(|| meta.creation_timestamp.map(|t| t.0.as_millisecond()))
            .unwrap_or(0);
        let series = self.series.as_ref();
        let last = series
            .and_then(|s| s.last_observed_time.0)
            .or(self.last_timestamp.0)
            .unwrap_or(first);
        let uid = text(meta.uid);
        let name = text(meta.name);
        if uid.is_empty() && name.is_empty() {
            return None;
        }
        let source = self.source.unwrap_or_default();
        let reporting_controller = self
            .reporting_component
            .filter(|c| !c.is_empty())
            .or(source.component)
            .unwrap_or_default();
        Some(EventObservation {
            uid,
            namespace: text(meta.namespace),
            name,
            resource_version: text(meta.resource_version),
            involved: object_ref(self.involved_object),
            related: self.related.map(object_ref),
            reason: text(self.reason),
            type_: text(self.type_),
            message: cut_message(text(self.message)),
            action: text(self.action),
            reporting_controller,
            reporting_instance: text(self.reporting_instance),
            source_host: source.host.unwrap_or_default(),
            first,
            last: last.max(first),
            count,
            last_from: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(json: serde_json::Value) -> EventObservation {
        serde_json::from_value::<WireEvent>(json)
            .unwrap()
            .into_observation()
            .unwrap()
    }

    #[test]
    fn core_v1_event_with_count() {
        let o = obs(serde_json::json!({
            "metadata": {"name": "web.1", "namespace": "prod", "uid": "u1", "resourceVersion": "42"},
            "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "prod", "uid": "p1", "apiVersion": "v1"},
            "reason": "BackOff", "type": "Warning", "message": "Back-off restarting failed container",
            "count": 7, "firstTimestamp": "2026-11-29T03:00:00Z", "lastTimestamp": "2026-11-29T03:05:00Z",
            "source": {"component": "kubelet", "host": "node-1"}
        }));
        assert_eq!(o.count, 7);
        assert_eq!(o.first, parse_k8s_time("2026-11-29T03:00:00Z").unwrap());
        assert_eq!(o.last, parse_k8s_time("2026-11-29T03:05:00Z").unwrap());
        assert_eq!(o.reporting_controller, "kubelet");
        assert_eq!(o.source_host, "node-1");
        assert_eq!(o.involved.kind, "Pod");
    }

    #[test]
    fn events_k8s_io_series_wins_over_deprecated_fields() {
        let o = obs(serde_json::json!({
            "metadata": {"name": "x", "namespace": "ns", "uid": "u2"},
            "regarding": {"kind": "Pod", "name": "p"},
            "note": "pulling", "reason": "Pulling", "type": "Normal",
            "eventTime": "2026-11-29T03:00:00.123456Z",
            "series": {"count": 4, "lastObservedTime": "2026-11-29T03:10:00.000001Z"},
            "deprecatedCount": 2,
            "reportingController": "example.com/ctl", "reportingInstance": "ctl-0"
        }));
        assert_eq!(o.count, 4);
        assert_eq!(o.first, parse_k8s_time("2026-11-29T03:00:00.123Z").unwrap());
        assert_eq!(o.last, parse_k8s_time("2026-11-29T03:10:00Z").unwrap());
        assert_eq!(o.message, "pulling");
        assert_eq!(o.reporting_controller, "example.com/ctl");
    }

    /// Regression: a count of 2^63-1 was stored as such and overflowed every SUM.
    #[test]
    fn a_count_above_int32_is_clamped_to_it() {
        let wire: WireEvent = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "e", "uid": "u"}, "count": i64::MAX
        }))
        .unwrap();
        assert!(wire.count_too_high());
        assert_eq!(wire.into_observation().unwrap().count, i64::from(i32::MAX));
        let wire: WireEvent = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "e", "uid": "u"}, "count": i32::MAX
        }))
        .unwrap();
        assert!(!wire.count_too_high());
    }

    /// Regression (issue 27.16): 2^63 and more were refused ("invalid
    /// value: integer `9223372036854775808`, expected i64"), not clamped.
    #[test]
    fn a_count_of_2_63_or_more_is_clamped_not_refused() {
        for count in [
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "1e30",
        ] {
            let json = format!(r#"{{"metadata":{{"name":"e","uid":"u"}},"count":{count}}}"#);
            let wire: WireEvent = serde_json::from_str(&json).expect(count);
            assert!(wire.count_too_high(), "{count}");
            assert_eq!(wire.into_observation().unwrap().count, i64::from(i32::MAX));
            let json =
                format!(r#"{{"metadata":{{"name":"e","uid":"u"}},"series":{{"count":{count}}}}}"#);
            let wire: WireEvent = serde_json::from_str(&json).expect(count);
            assert_eq!(wire.into_observation().unwrap().count, i64::from(i32::MAX));
        }
        let yaml: WireEvent =
            serde_saphyr::from_str("metadata: {name: e, uid: u}\ncount: 9223372036854775808\n")
                .unwrap();
        assert!(yaml.count_too_high());
        assert!(serde_json::from_str::<WireEvent>(r#"{"count":1.5}"#).is_err());
        let null: WireEvent = serde_json::from_str(r#"{"count":null}"#).unwrap();
        assert_eq!(null.count, None);
    }

    #[test]
    fn zero_count_means_one_and_last_defaults_to_first() {
        let o = obs(serde_json::json!({
            "metadata": {"name": "x", "uid": "u3", "creationTimestamp": "2026-11-29T01:00:00Z"},
            "count": 0
        }));
        assert_eq!(o.count, 1);
        assert_eq!(o.first, parse_k8s_time("2026-11-29T01:00:00Z").unwrap());
        assert_eq!(o.last, o.first);
    }

    #[test]
    fn times_decode_from_text_null_or_nothing() {
        let t = |json: &str| {
            serde_json::from_str::<WireSeries>(json)
                .unwrap()
                .last_observed_time
        };
        assert_eq!(
            t(r#"{"lastObservedTime": "2026-11-29T03:10:00.000001Z"}"#),
            WireTime(parse_k8s_time("2026-11-29T03:10:00Z"))
        );
        assert_eq!(t(r#"{"lastObservedTime": null}"#), WireTime(None));
        assert_eq!(t(r#"{}"#), WireTime(None));
        assert_eq!(t(r#"{"lastObservedTime": "yesterday"}"#), WireTime(None));
        // Escaped text (no borrowing possible) decodes the same.
        assert_eq!(
            t(r#"{"lastObservedTime": "2026-11-29T03:10:00\u002e5Z"}"#),
            WireTime(parse_k8s_time("2026-11-29T03:10:00.5Z"))
        );
        assert!(serde_json::from_str::<WireSeries>(r#"{"lastObservedTime": 7}"#).is_err());
        // kubectl's YAML dumps, as `import` reads them.
        let yaml: WireSeries =
            serde_saphyr::from_str("lastObservedTime: 2026-11-29T03:10:00Z\n").unwrap();
        assert_eq!(
            yaml.last_observed_time,
            WireTime(parse_k8s_time("2026-11-29T03:10:00Z"))
        );
    }

    /// Regression (issue 27.20): a message cut at 64 KiB read as whole.
    #[test]
    fn a_message_cut_at_64_kib_ends_in_a_mark() {
        let o = obs(serde_json::json!({
            "metadata": {"name": "e", "uid": "u"}, "message": "é".repeat(MAX_MESSAGE_BYTES)
        }));
        assert!(
            o.message.ends_with("é… [cut at 64 KiB]"),
            "{}",
            &o.message[o.message.len() - 40..]
        );
        assert!(o.message.len() <= MAX_MESSAGE_BYTES);
        let whole = "x".repeat(MAX_MESSAGE_BYTES);
        assert_eq!(
            cut_message(whole.clone()),
            whole,
            "64 KiB exactly is not cut"
        );
    }

    #[test]
    fn long_messages_are_cut_on_a_char_boundary() {
        let s = "é".repeat(MAX_MESSAGE_BYTES); // two bytes each
        let cut = truncate_utf8(s, MAX_MESSAGE_BYTES + 1);
        assert_eq!(cut.len(), MAX_MESSAGE_BYTES);
    }
}
