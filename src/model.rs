//! Plain data, free of Kubernetes client types: what the recorder stores and
//! what timelines and checks read. `k8s` converts wire objects into these.

/// A reference to an API object, as an Event's `involvedObject`/`regarding` or `related` gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub field_path: String,
}

/// One observation of one Event object, normalised the way kubectl reads it.
///
/// Times are milliseconds since the Unix epoch, UTC.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventObservation {
    pub uid: String,
    pub namespace: String,
    pub name: String,
    pub resource_version: String,
    pub involved: ObjectRef,
    pub related: Option<ObjectRef>,
    pub reason: String,
    pub type_: String,
    pub message: String,
    pub action: String,
    pub reporting_controller: String,
    pub reporting_instance: String,
    pub source_host: String,
    /// `firstTimestamp`, else `eventTime`, else the object's creation time.
    pub first: i64,
    /// `series.lastObservedTime`, else `lastTimestamp`, else `first`.
    pub last: i64,
    /// `series.count`, else `count`; 0 or absent counts as 1.
    pub count: i64,
}

/// What the watch saw: a live Event (added or changed) or its deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventChange {
    Upsert(Box<EventObservation>),
    Deleted { uid: String, at: i64 },
}
