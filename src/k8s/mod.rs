//! The edge: the only module that speaks Kubernetes. Wire objects are decoded
//! into small structs here and converted to [`crate::model`] types, so the rest
//! of the crate never sees a client type.

pub mod audit;
pub mod connect;
pub mod discovery;
pub mod event;
pub mod object;
pub mod reconstruct;
pub mod refs;
pub mod snapshot;
pub mod text;
