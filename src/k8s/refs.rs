//! What an object says of the objects around it, read off its spec: the
//! Pods a Service or a disruption budget selects, and the names a Pod (or a
//! workload's Pod template) needs to exist. The edges of the relationship
//! graph that owner references do not carry (`checks::relations` walks them).
//!
//! NB: decoded apart from `object::SlimSpec`, each for the kinds it fits: a
//! custom type whose spec has a `selector` or `volumes` of another shape must
//! not lose the rest of its spec.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::model::Requirement;

/// The annotation that names an Ingress's class the way before `ingressClassName`.
pub const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// The relationship fields of one object's state.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Fields {
    pub pod_selector: Vec<Requirement>,
    pub publish_not_ready: bool,
    pub selects_all: bool,
    pub refs: Vec<String>,
    pub priority: i64,
    pub priority_class: String,
    pub webhooks: Vec<crate::model::WebhookRef>,
    /// A Service's ports (`80`, or `80/http` when named).
    pub ports: Vec<String>,
    /// The Service ports an Ingress or a route sends to (`Service/web:8080`,
    /// `Service/web:http` for an Ingress's port by name).
    pub port_refs: Vec<String>,
}

/// An admission webhook configuration: it has no `spec`; its `webhooks` are
/// at the top level (see [`webhooks`]).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Webhook {
    name: String,
    client_config: ClientConfig,
    failure_policy: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ClientConfig {
    service: Option<ServiceRef>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ServiceRef {
    namespace: String,
    name: String,
}

/// The webhooks of a Validating/MutatingWebhookConfiguration that call a
/// Service (one given by URL is outside the cluster's graph).
pub fn webhooks(raw: Option<&RawValue>) -> Vec<crate::model::WebhookRef> {
    let hooks: Vec<Webhook> = decode(raw);
    hooks
        .into_iter()
        .filter_map(|h| {
            let s = h.client_config.service?;
            Some(crate::model::WebhookRef {
                name: h.name,
                service: format!("{}/{}", s.namespace, s.name),
                // NB: admissionregistration.k8s.io/v1 defaults to Fail.
                fail: h.failure_policy.as_deref() != Some("Ignore"),
            })
        })
        .collect()
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ServiceSpec {
    selector: BTreeMap<String, String>,
    publish_not_ready_addresses: bool,
    ports: Vec<ServicePort>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ServicePort {
    port: i64,
    name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct BudgetSpec {
    selector: Option<LabelSelector>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct LabelSelector {
    match_labels: BTreeMap<String, String>,
    match_expressions: Vec<Expression>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Expression {
    key: String,
    operator: String,
    values: Vec<String>,
}

/// A workload's spec, down to its Pod template (a CronJob's one level deeper).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WorkloadSpec {
    template: Option<Template>,
    job_template: Option<JobTemplate>,
    /// A StatefulSet's governing Service (its Pods' DNS names).
    service_name: String,
}

/// What an Ingress (networking.k8s.io/v1) names.
/// A Gateway API route's spec (`HTTPRoute`, `GRPCRoute`, `TLSRoute`,
/// `TCPRoute`, `UDPRoute`): the Gateways it attaches to, the backends it sends to.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RouteSpec {
    parent_refs: Vec<RouteRef>,
    rules: Vec<RouteRule>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RouteRule {
    backend_refs: Vec<RouteRef>,
}

/// A `parentRef` or `backendRef`: group and kind default to the Gateway
/// (parents) or the core Service (backends); namespace to the route's.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RouteRef {
    group: Option<String>,
    kind: Option<String>,
    name: String,
    namespace: Option<String>,
    /// A backendRef's port (a Service's needs one).
    port: Option<i64>,
}

impl RouteRef {
    /// `Kind/name` when it names a `default_kind` of `default_group` in the
    /// route's own namespace; `None` for another kind, or another namespace
    /// (a reference holds no namespace).
    fn same_namespace(&self, default_group: &str, default_kind: &str) -> Option<String> {
        let group = self.group.as_deref().unwrap_or(default_group);
        let kind = self.kind.as_deref().unwrap_or(default_kind);
        (group == default_group
            && kind == default_kind
            && !self.name.is_empty()
            && self.namespace.as_deref().is_none_or(str::is_empty))
        .then(|| format!("{kind}/{}", self.name))
    }
}

/// A Gateway's spec: the class whose controller would program it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct GatewaySpec {
    gateway_class_name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct IngressSpec {
    ingress_class_name: String,
    default_backend: Option<Backend>,
    rules: Vec<Rule>,
    tls: Vec<Tls>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Backend {
    service: Option<BackendService>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct BackendService {
    name: String,
    port: Option<BackendPort>,
}

/// An Ingress backend's Service port: a number or a name.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct BackendPort {
    number: Option<i64>,
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Rule {
    http: Option<Http>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Http {
    paths: Vec<Path>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Path {
    backend: Backend,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Tls {
    secret_name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct JobTemplate {
    spec: Option<JobSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct JobSpec {
    template: Option<Template>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Template {
    spec: Option<PodSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PodSpec {
    volumes: Vec<Volume>,
    containers: Vec<Container>,
    init_containers: Vec<Container>,
    image_pull_secrets: Vec<Named>,
    service_account_name: String,
    priority: Option<i64>,
    priority_class_name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Volume {
    config_map: Option<Named>,
    secret: Option<SecretVolume>,
    persistent_volume_claim: Option<Claim>,
    projected: Option<Projected>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Named {
    name: String,
    optional: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SecretVolume {
    secret_name: String,
    optional: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Claim {
    claim_name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Projected {
    sources: Vec<Projection>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Projection {
    config_map: Option<Named>,
    secret: Option<Named>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Container {
    env: Vec<Env>,
    env_from: Vec<EnvFrom>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Env {
    value_from: Option<ValueFrom>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ValueFrom {
    config_map_key_ref: Option<Named>,
    secret_key_ref: Option<Named>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct EnvFrom {
    config_map_ref: Option<Named>,
    secret_ref: Option<Named>,
}

/// Which of these kinds' specs are read, and how.
const WORKLOADS: &[&str] = &[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
];

fn decode<T: Default + serde::de::DeserializeOwned>(raw: Option<&RawValue>) -> T {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default()
}

/// The relationship fields of an object of built-in `group`/`kind`;
/// `controlled`: a controller owns it (its Pods' references are its
/// template's, kept once there); `annotations`: the ones the slim decoder
/// keeps (`object::SlimAnnotations`).
pub fn read(
    group: &str,
    kind: &str,
    spec: Option<&RawValue>,
    controlled: bool,
    annotations: Option<&BTreeMap<String, String>>,
) -> Fields {
    match (group, kind) {
        ("", "Service") => {
            let s: ServiceSpec = decode(spec);
            Fields {
                pod_selector: s
                    .selector
                    .into_iter()
                    .map(|(key, v)| Requirement {
                        key,
                        operator: "In".into(),
                        values: vec![v],
                    })
                    .collect(),
                publish_not_ready: s.publish_not_ready_addresses,
                ports: s
                    .ports
                    .iter()
                    .filter(|p| p.port > 0)
                    .map(|p| match p.name.as_str() {
                        "" => p.port.to_string(),
                        name => format!("{}/{name}", p.port),
                    })
                    .collect(),
                ..Fields::default()
            }
        }
        ("policy", "PodDisruptionBudget") => {
            let s: BudgetSpec = decode(spec);
            // NB: policy/v1: an empty selector selects every Pod of the
            // namespace; a missing one selects none.
            let Some(sel) = s.selector else {
                return Fields::default();
            };
            let pod_selector = requirements(sel);
            Fields {
                selects_all: pod_selector.is_empty(),
                pod_selector,
                ..Fields::default()
            }
        }
        ("", "Pod") => {
            let s: PodSpec = decode(spec);
            let priority = s.priority.unwrap_or(0);
            let priority_class = s.priority_class_name.clone();
            Fields {
                refs: if controlled { Vec::new() } else { pod_refs(s) },
                priority,
                priority_class,
                ..Fields::default()
            }
        }
        ("apps" | "batch", k) if WORKLOADS.contains(&k) && !controlled => {
            let s: WorkloadSpec = decode(spec);
            let service = s.service_name;
            let template = match s.job_template {
                Some(JobTemplate { spec: Some(job) }) => job.template,
                _ => s.template,
            };
            let mut refs = template
                .and_then(|t| t.spec)
                .map(pod_refs)
                .unwrap_or_default();
            // NB: a StatefulSet's Pods run without it; only their DNS names fail.
            if k == "StatefulSet" && !service.is_empty() {
                refs.push(format!("Service/{service}"));
                refs.sort();
            }
            Fields {
                refs,
                ..Fields::default()
            }
        }
        ("networking.k8s.io", "Ingress") => ingress(spec, annotations),
        // NB: a GatewayClass is cluster-scoped, as an IngressClass is.
        ("gateway.networking.k8s.io", "Gateway") => {
            let s: GatewaySpec = decode(spec);
            Fields {
                refs: (!s.gateway_class_name.is_empty())
                    .then(|| format!("GatewayClass/{}", s.gateway_class_name))
                    .into_iter()
                    .collect(),
                ..Fields::default()
            }
        }
        (
            "gateway.networking.k8s.io",
            "HTTPRoute" | "GRPCRoute" | "TLSRoute" | "TCPRoute" | "UDPRoute",
        ) => route(spec),
        _ => Fields::default(),
    }
}

/// The Service backends of an Ingress's rules and its default backend.
fn backend_services(s: &IngressSpec) -> impl Iterator<Item = &BackendService> {
    s.rules
        .iter()
        .filter_map(|r| r.http.as_ref())
        .flat_map(|h| &h.paths)
        .map(|p| &p.backend)
        .chain(s.default_backend.as_ref())
        .filter_map(|b| b.service.as_ref())
        .filter(|b| !b.name.is_empty())
}

/// What an Ingress needs: its backend Services (and the ports it sends to),
/// its TLS Secrets, its class.
fn ingress(spec: Option<&RawValue>, annotations: Option<&BTreeMap<String, String>>) -> Fields {
    let s: IngressSpec = decode(spec);
    let mut port_refs: Vec<String> = backend_services(&s)
        .filter_map(|b| {
            let port = b.port.as_ref()?;
            let port = match (port.number, port.name.as_deref()) {
                (Some(n), _) if n > 0 => n.to_string(),
                (_, Some(name)) if !name.is_empty() => name.to_string(),
                _ => return None,
            };
            Some(format!("Service/{}:{port}", b.name))
        })
        .collect();
    port_refs.sort();
    port_refs.dedup();
    let mut refs: Vec<String> = backend_services(&s)
        .map(|b| format!("Service/{}", b.name))
        .chain(
            s.tls
                .iter()
                .filter(|t| !t.secret_name.is_empty())
                .map(|t| format!("Secret/{}", t.secret_name)),
        )
        .collect();
    // NB: cluster-scoped: `checks::relations` looks it up outside the namespace.
    if !s.ingress_class_name.is_empty() {
        refs.push(format!("IngressClass/{}", s.ingress_class_name));
    } else if !annotations.is_some_and(|a| a.contains_key(INGRESS_CLASS_ANNOTATION)) {
        // No class, by field or by the older annotation: only the
        // cluster's default IngressClass (if one is marked) serves it.
        refs.push(crate::model::DEFAULT_INGRESS_CLASS_REF.to_string());
    }
    refs.sort();
    refs.dedup();
    Fields {
        refs,
        port_refs,
        ..Fields::default()
    }
}

/// What a Gateway API route needs: its Gateways and backend Services of its
/// own namespace, and the Service ports it sends to.
fn route(spec: Option<&RawValue>) -> Fields {
    let s: RouteSpec = decode(spec);
    let mut refs: Vec<String> = s
        .parent_refs
        .iter()
        .filter_map(|r| r.same_namespace("gateway.networking.k8s.io", "Gateway"))
        .chain(
            s.rules
                .iter()
                .flat_map(|r| &r.backend_refs)
                .filter_map(|r| r.same_namespace("", "Service")),
        )
        .collect();
    refs.sort();
    refs.dedup();
    let mut port_refs: Vec<String> = s
        .rules
        .iter()
        .flat_map(|r| &r.backend_refs)
        .filter_map(|r| {
            let port = r.port.filter(|p| *p > 0)?;
            Some(format!("{}:{port}", r.same_namespace("", "Service")?))
        })
        .collect();
    port_refs.sort();
    port_refs.dedup();
    Fields {
        refs,
        port_refs,
        ..Fields::default()
    }
}

/// A label selector as requirements: `matchLabels` as `In` of one value.
fn requirements(sel: LabelSelector) -> Vec<Requirement> {
    sel.match_labels
        .into_iter()
        .map(|(key, v)| Requirement {
            key,
            operator: "In".into(),
            values: vec![v],
        })
        .chain(sel.match_expressions.into_iter().map(|e| Requirement {
            key: e.key,
            operator: e.operator,
            values: e.values,
        }))
        .collect()
}

/// The names a Pod spec needs to exist, sorted, each once.
fn pod_refs(s: PodSpec) -> Vec<String> {
    let mut refs = Vec::new();
    let mut need = |kind: &str, n: &Named| {
        if !n.name.is_empty() && n.optional != Some(true) {
            refs.push(format!("{kind}/{}", n.name));
        }
    };
    for v in &s.volumes {
        if let Some(c) = &v.config_map {
            need("ConfigMap", c);
        }
        if let Some(sv) = &v.secret {
            need(
                "Secret",
                &Named {
                    name: sv.secret_name.clone(),
                    optional: sv.optional,
                },
            );
        }
        if let Some(p) = &v.projected {
            for src in &p.sources {
                // NB: every Pod gets the projected `kube-root-ca.crt` its
                // namespace's root CA publisher keeps: not the app's reference.
                if let Some(c) = src
                    .config_map
                    .as_ref()
                    .filter(|c| c.name != "kube-root-ca.crt")
                {
                    need("ConfigMap", c);
                }
                if let Some(sec) = &src.secret {
                    need("Secret", sec);
                }
            }
        }
    }
    for c in s.init_containers.iter().chain(&s.containers) {
        for e in &c.env {
            if let Some(from) = &e.value_from {
                if let Some(r) = &from.config_map_key_ref {
                    need("ConfigMap", r);
                }
                if let Some(r) = &from.secret_key_ref {
                    need("Secret", r);
                }
            }
        }
        for e in &c.env_from {
            if let Some(r) = &e.config_map_ref {
                need("ConfigMap", r);
            }
            if let Some(r) = &e.secret_ref {
                need("Secret", r);
            }
        }
    }
    for p in &s.image_pull_secrets {
        // NB: the kubelet only warns about a missing pull Secret (the pull may
        // still work anonymously); it is still a reference to what is not there.
        need("Secret", p);
    }
    for v in &s.volumes {
        if let Some(c) = v
            .persistent_volume_claim
            .as_ref()
            .filter(|c| !c.claim_name.is_empty())
        {
            refs.push(format!("PersistentVolumeClaim/{}", c.claim_name));
        }
    }
    if !s.service_account_name.is_empty() && s.service_account_name != "default" {
        refs.push(format!("ServiceAccount/{}", s.service_account_name));
    }
    refs.sort();
    refs.dedup();
    refs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 47: a route naming a Gateway or a Service that does not exist
    /// was no finding; its references are read, those of its own namespace.
    #[test]
    fn a_routes_gateways_and_services_of_its_namespace_are_its_references() {
        let spec = RawValue::from_string(
            r#"{"parentRefs":[{"name":"web-gw"},{"name":"other","namespace":"infra"},
                {"group":"","kind":"Service","name":"mesh"}],
               "rules":[{"backendRefs":[{"name":"web","port":80},{"name":"web","port":81},
                {"group":"example.com","kind":"Bucket","name":"b"}]},{"backendRefs":[{"name":"api"}]}]}"#
                .to_string(),
        )
        .unwrap();
        let f = read(
            "gateway.networking.k8s.io",
            "HTTPRoute",
            Some(&spec),
            false,
            None,
        );
        assert_eq!(f.refs, ["Gateway/web-gw", "Service/api", "Service/web"]);
        // The ports a Service backend is sent to; one without a port names none.
        assert_eq!(f.port_refs, ["Service/web:80", "Service/web:81"]);
    }

    /// What the port check compares: a Service's ports (named or not) and
    /// the Service ports an Ingress sends to, by number or by name.
    #[test]
    fn a_services_ports_and_an_ingress_backends_ports_are_kept() {
        let svc = raw(serde_json::json!({"selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": 8080}, {"port": 9090}]}));
        assert_eq!(
            read("", "Service", Some(&svc), false, None).ports,
            ["80/http", "9090"]
        );
        let ing = raw(serde_json::json!({"ingressClassName": "nginx",
            "defaultBackend": {"service": {"name": "web", "port": {"name": "http"}}},
            "rules": [{"http": {"paths": [
                {"path": "/", "backend": {"service": {"name": "web", "port": {"number": 8080}}}},
                {"path": "/b", "backend": {"resource": {"kind": "Bucket", "name": "b"}}}]}}]}));
        let f = read("networking.k8s.io", "Ingress", Some(&ing), false, None);
        assert_eq!(f.port_refs, ["Service/web:8080", "Service/web:http"]);
        assert_eq!(f.refs, ["IngressClass/nginx", "Service/web"]);
    }

    fn raw(v: serde_json::Value) -> Box<RawValue> {
        RawValue::from_string(v.to_string()).unwrap()
    }

    #[test]
    fn a_service_selector_is_a_list_of_in_requirements() {
        let spec =
            raw(serde_json::json!({"selector": {"app": "web", "tier": "front"}, "ports": []}));
        let f = read("", "Service", Some(&spec), false, None);
        let texts: Vec<String> = f.pod_selector.iter().map(Requirement::text).collect();
        assert_eq!(texts, ["app In [web]", "tier In [front]"]);
        assert!(
            read("", "Service", None, false, None)
                .pod_selector
                .is_empty()
        );
    }

    #[test]
    fn an_empty_budget_selector_selects_all_and_a_missing_one_none() {
        let all = raw(serde_json::json!({"selector": {}, "minAvailable": 1}));
        let f = read("policy", "PodDisruptionBudget", Some(&all), false, None);
        assert!(f.selects_all && f.pod_selector.is_empty());
        let none = raw(serde_json::json!({"minAvailable": 1}));
        assert!(!read("policy", "PodDisruptionBudget", Some(&none), false, None).selects_all);
        let expr = raw(
            serde_json::json!({"selector": {"matchLabels": {"app": "db"},
            "matchExpressions": [{"key": "role", "operator": "NotIn", "values": ["backup"]}]}}),
        );
        let f = read("policy", "PodDisruptionBudget", Some(&expr), false, None);
        let texts: Vec<String> = f.pod_selector.iter().map(Requirement::text).collect();
        assert_eq!(texts, ["app In [db]", "role NotIn [backup]"]);
    }

    #[test]
    fn a_template_names_what_it_needs_and_leaves_out_what_is_optional() {
        let spec = raw(serde_json::json!({"template": {"spec": {
            "serviceAccountName": "builder",
            "imagePullSecrets": [{"name": "regcred"}],
            "volumes": [
                {"name": "a", "configMap": {"name": "settings"}},
                {"name": "b", "secret": {"secretName": "tls"}},
                {"name": "c", "secret": {"secretName": "maybe", "optional": true}},
                {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "e", "projected": {"sources": [{"configMap": {"name": "kube-root-ca.crt"}}]}}
            ],
            "containers": [{"name": "web", "image": "x",
                "env": [{"name": "K", "valueFrom": {"configMapKeyRef": {"name": "flags", "key": "k"}}},
                        {"name": "P", "value": "plain"}],
                "envFrom": [{"secretRef": {"name": "db-creds"}}, {"configMapRef": {"name": "opt", "optional": true}}]}]
        }}}));
        let f = read("apps", "Deployment", Some(&spec), false, None);
        assert_eq!(
            f.refs,
            [
                "ConfigMap/flags",
                "ConfigMap/settings",
                "PersistentVolumeClaim/data",
                "Secret/db-creds",
                "Secret/regcred",
                "Secret/tls",
                "ServiceAccount/builder"
            ]
        );
        assert!(
            read("apps", "ReplicaSet", Some(&spec), true, None)
                .refs
                .is_empty(),
            "a Deployment's ReplicaSet: its template is the Deployment's"
        );
    }

    #[test]
    fn an_ingress_names_its_class_backends_and_tls_secrets_and_a_statefulset_its_service() {
        let spec = raw(serde_json::json!({"ingressClassName": "nginx",
            "defaultBackend": {"service": {"name": "fallback", "port": {"number": 80}}},
            "tls": [{"hosts": ["a"], "secretName": "a-tls"}],
            "rules": [{"host": "a", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"path": "/x", "pathType": "Prefix", "backend": {"resource": {"kind": "Bucket", "name": "b"}}}]}}]}));
        assert_eq!(
            read("networking.k8s.io", "Ingress", Some(&spec), false, None).refs,
            [
                "IngressClass/nginx",
                "Secret/a-tls",
                "Service/fallback",
                "Service/web"
            ]
        );
        let sts = raw(
            serde_json::json!({"serviceName": "db", "template": {"spec": {"containers": [{"name": "c"}]}}}),
        );
        assert_eq!(
            read("apps", "StatefulSet", Some(&sts), false, None).refs,
            ["Service/db"]
        );
    }

    #[test]
    fn a_webhook_names_its_service_and_whether_a_failed_call_refuses() {
        let hooks = raw(serde_json::json!([
            {"name": "a.example.com", "clientConfig": {"service": {"namespace": "hooks", "name": "svc"}}},
            {"name": "b.example.com", "failurePolicy": "Ignore", "clientConfig": {"service": {"namespace": "hooks", "name": "svc2"}}},
            {"name": "c.example.com", "clientConfig": {"url": "https://example.com"}}
        ]));
        let w = webhooks(Some(&hooks));
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].service.as_str(), w[0].fail), ("hooks/svc", true));
        assert_eq!((w[1].service.as_str(), w[1].fail), ("hooks/svc2", false));
    }

    #[test]
    fn a_cronjob_template_is_one_level_deeper_and_a_pod_keeps_its_priority() {
        let spec = raw(
            serde_json::json!({"jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "c", "envFrom": [{"configMapRef": {"name": "nightly"}}]}]}}}}}),
        );
        assert_eq!(
            read("batch", "CronJob", Some(&spec), false, None).refs,
            ["ConfigMap/nightly"]
        );
        let pod = raw(
            serde_json::json!({"priority": 1000, "priorityClassName": "high",
            "serviceAccountName": "default", "containers": [{"name": "c"}]}),
        );
        let f = read("", "Pod", Some(&pod), true, None);
        assert_eq!((f.priority, f.priority_class.as_str()), (1000, "high"));
        assert!(f.refs.is_empty(), "default ServiceAccount, and owned");
    }

    /// Issue 47: an Ingress that names no class, by field or by the older
    /// annotation, needs the cluster's default; a Gateway names its class.
    #[test]
    fn an_ingress_with_no_class_needs_the_default_and_a_gateway_its_class() {
        let spec = raw(serde_json::json!({"rules": [{"http": {"paths": [
            {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}));
        assert_eq!(
            read("networking.k8s.io", "Ingress", Some(&spec), false, None).refs,
            [crate::model::DEFAULT_INGRESS_CLASS_REF, "Service/web"]
        );
        let legacy: BTreeMap<String, String> =
            [(INGRESS_CLASS_ANNOTATION.to_string(), "nginx".to_string())].into();
        assert_eq!(
            read(
                "networking.k8s.io",
                "Ingress",
                Some(&spec),
                false,
                Some(&legacy)
            )
            .refs,
            ["Service/web"],
            "the annotation names a controller's class, not necessarily an object"
        );
        let gw = raw(
            serde_json::json!({"gatewayClassName": "istio", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}),
        );
        assert_eq!(
            read(
                "gateway.networking.k8s.io",
                "Gateway",
                Some(&gw),
                false,
                None
            )
            .refs,
            ["GatewayClass/istio"]
        );
    }
}
