//! The ground every other cluster test stands on: the local control plane
//! schedules Pods onto KWOK nodes, the real scheduler writes its own
//! FailedScheduling message, and finalizers really block a namespace deletion.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, Pod};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use support::{TestNamespace, client, wait_for, wait_until};

#[tokio::test]
async fn deployment_pods_run_on_kwok_nodes() {
    let ns = TestNamespace::new("smoke-deploy").await;
    let deploy: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                    "resources": {"requests": {"cpu": "100m"}}}]}
            }
        }
    }))
    .unwrap();
    ns.api::<Deployment>()
        .create(&PostParams::default(), &deploy)
        .await
        .unwrap();
    let pods: Api<Pod> = ns.api();
    wait_until(
        Duration::from_secs(60),
        "2 Running pods of deploy/web",
        || async {
            let list = pods
                .list(&ListParams::default().labels("app=web"))
                .await
                .unwrap();
            list.items.len() == 2
                && list.items.iter().all(|p| {
                    let status = p.status.as_ref();
                    status.and_then(|s| s.phase.as_deref()) == Some("Running")
                        && p.spec
                            .as_ref()
                            .and_then(|s| s.node_name.as_deref())
                            .is_some_and(|n| n.starts_with("kwok-"))
                })
        },
    )
    .await;
}

#[tokio::test]
async fn unschedulable_pod_gets_the_schedulers_own_message() {
    let ns = TestNamespace::new("smoke-sched").await;
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "too-big"},
        "spec": {"containers": [{"name": "c", "image": "busybox",
            "resources": {"requests": {"cpu": "8", "memory": "1Gi"}}}]}
    }))
    .unwrap();
    ns.api::<Pod>()
        .create(&PostParams::default(), &pod)
        .await
        .unwrap();
    let events: Api<Event> = ns.api();
    let event = wait_for(
        Duration::from_secs(60),
        "a FailedScheduling event",
        || async {
            let list = events
                .list(
                    &ListParams::default()
                        .fields("involvedObject.name=too-big,reason=FailedScheduling"),
                )
                .await
                .unwrap();
            list.items.into_iter().next()
        },
    )
    .await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(
        event.reporting_component.as_deref(),
        Some("default-scheduler")
    );
    let message = event.message.unwrap_or_default();
    // Two small nodes lack cpu; the large one is tainted: several reasons at once.
    assert!(message.starts_with("0/3 nodes are available:"), "{message}");
    assert!(message.contains("Insufficient cpu"), "{message}");
    assert!(message.contains("untolerated taint"), "{message}");
}

#[tokio::test]
async fn custom_finalizer_keeps_namespace_terminating() {
    let client = client().await;
    let name = format!("smoke-fin-{}", support::uuid_suffix());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap(),
        )
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &name);
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(serde_json::json!({
            "metadata": {"name": "held", "finalizers": ["example.com/never-removed"]}
        }))
        .unwrap(),
    )
    .await
    .unwrap();
    namespaces
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();

    wait_until(
        Duration::from_secs(90),
        "NamespaceContentRemaining and NamespaceFinalizersRemaining",
        || async {
            let ns = namespaces.get(&name).await.unwrap();
            let status = ns.status.unwrap_or_default();
            let seen: Vec<String> = status
                .conditions
                .unwrap_or_default()
                .into_iter()
                .filter(|c| c.status == "True")
                .map(|c| c.type_)
                .collect();
            status.phase.as_deref() == Some("Terminating")
                && seen.iter().any(|t| t == "NamespaceContentRemaining")
                && seen.iter().any(|t| t == "NamespaceFinalizersRemaining")
        },
    )
    .await;

    // Let it go: remove the finalizer, and the namespace finishes deleting.
    cms.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    wait_until(
        Duration::from_secs(90),
        "the namespace to be gone",
        || async { namespaces.get_opt(&name).await.unwrap().is_none() },
    )
    .await;
}
