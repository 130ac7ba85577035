//! The apiserver side of a watch: the three requests the driver makes (a list
//! page, the current resourceVersion, a watch), behind a small trait, with
//! kube's answers turned into the machine's inputs. The only file of the watch
//! that calls the Kubernetes client.

use std::future::Future;

use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use kube::Api;
use kube::api::{ListParams, WatchEvent, WatchParams};

use super::Watched;
use super::machine::{Failure, Input, Page};

/// Server-side watch timeout; the watch is then simply renewed.
const WATCH_TIMEOUT_S: u32 = 290;
/// A streaming list must send every existing Event before its timeout, so it gets longer.
const STREAMING_LIST_TIMEOUT_S: u32 = 1800;
/// The annotation on the bookmark that ends a streaming list's initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// A watch's items, as the machine's inputs.
pub type Items<K> = BoxStream<'static, Input<K, kube::Error>>;

/// The list and watch calls of one resource type.
pub trait Source<K> {
    /// One page of at most `limit` objects (0: all), continuing a list if given a token.
    fn list(
        &self,
        limit: u32,
        continue_token: Option<String>,
    ) -> impl Future<Output = Result<Page<K>, Failure<kube::Error>>> + Send;

    /// The resourceVersion current now, if the apiserver says.
    fn current_version(&self) -> impl Future<Output = Option<u64>> + Send;

    /// A watch from `from`, or a streaming list (`from` empty).
    fn watch(
        &self,
        from: String,
        streaming: bool,
    ) -> impl Future<Output = Result<Items<K>, Failure<kube::Error>>> + Send;
}

impl<K: Watched> Source<K> for Api<K>
where
    K::DynamicType: Clone + Send + Sync,
{
    async fn list(
        &self,
        limit: u32,
        continue_token: Option<String>,
    ) -> Result<Page<K>, Failure<kube::Error>> {
        let mut params = ListParams::default();
        if limit > 0 {
            params = params.limit(limit);
        }
        if let Some(token) = &continue_token {
            params = params.continue_token(token);
        }
        let list = Api::list(self, &params).await.map_err(failure)?;
        Ok(Page {
            items: list.items,
            continue_token: list.metadata.continue_,
            resource_version: list.metadata.resource_version,
        })
    }

    async fn current_version(&self) -> Option<u64> {
        Api::list(self, &ListParams::default().limit(1))
            .await
            .ok()
            .and_then(|l| l.metadata.resource_version)
            .and_then(|v| v.parse::<u64>().ok())
    }

    async fn watch(&self, from: String, streaming: bool) -> Result<Items<K>, Failure<kube::Error>> {
        let params = if streaming {
            WatchParams::streaming_lists().timeout(STREAMING_LIST_TIMEOUT_S)
        } else {
            WatchParams::default().timeout(WATCH_TIMEOUT_S)
        };
        let stream = Api::watch(self, &params, &from).await.map_err(failure)?;
        Ok(stream.into_stream().map(input).boxed())
    }
}

fn failure(error: kube::Error) -> Failure<kube::Error> {
    let (status, continue_token) = match &error {
        kube::Error::Api(s) => (
            Some((s.code, s.message.clone())),
            s.metadata.as_ref().and_then(|m| m.continue_.clone()),
        ),
        _ => (None, None),
    };
    Failure {
        status,
        continue_token,
        error,
    }
}

fn input<K>(item: Result<WatchEvent<K>, kube::Error>) -> Input<K, kube::Error> {
    match item {
        Ok(WatchEvent::Added(obj)) => Input::Added(obj),
        Ok(WatchEvent::Modified(obj)) => Input::Modified(obj),
        Ok(WatchEvent::Deleted(obj)) => Input::Deleted(obj),
        Ok(WatchEvent::Bookmark(b)) => Input::Bookmark {
            initial_events_end: b
                .metadata
                .annotations
                .get(INITIAL_EVENTS_END)
                .map(String::as_str)
                == Some("true"),
            resource_version: b.metadata.resource_version,
        },
        Ok(WatchEvent::Error(status)) => Input::ErrorEvent {
            code: status.code,
            message: status.message,
        },
        Err(e) => Input::StreamFailed(e),
    }
}
