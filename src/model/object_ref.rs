//! Which API object a fact is about: the one reference every source gives
//! (an Event's `involvedObject`/`regarding`, an object watch's, an audit
//! entry's) and every reader keys on.

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
