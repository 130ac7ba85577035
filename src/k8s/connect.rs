//! Connecting to a cluster the way kubectl does: `--kubeconfig`, then
//! `$KUBECONFIG` (a list of files, merged), then `~/.kube/config`, then the
//! in-cluster service account; `--context` picks the context, whose namespace
//! is the default for `-n`.

use k8s_openapi::api::core::v1::Namespace;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use thiserror::Error;

/// Why talking to the cluster failed, phrased for the person at the terminal.
#[derive(Debug, Error)]
pub enum ClusterError {
    /// No kubeconfig could be read and we are not inside a Pod.
    #[error(
        "no cluster configured: {detail}; pass --kubeconfig PATH, set KUBECONFIG, or run inside a Pod with a service account"
    )]
    NoConfig { detail: String },

    /// The kubeconfig was read but the context is unknown or incomplete.
    #[error(
        "cannot use context {context} from the kubeconfig: {detail}; list contexts with `kubectl config get-contexts`"
    )]
    BadContext { context: String, detail: String },

    /// The apiserver did not answer at all.
    #[error(
        "cannot reach the apiserver at {server}: {detail}; check that the cluster is up and the context is right (`kubectl cluster-info`)"
    )]
    Unreachable { server: String, detail: String },

    /// RBAC said no.
    #[error(
        "forbidden: the apiserver denied `{verb}` on {resource}{scope}: {message}; ask for a Role granting {verb} on {resource} (see deploy/rbac.yaml)"
    )]
    Forbidden {
        verb: String,
        resource: String,
        scope: String,
        message: String,
    },

    /// The credentials were refused.
    #[error(
        "the apiserver at {server} refused our credentials (401 Unauthorized): {message}; refresh the kubeconfig's credentials"
    )]
    Unauthorized { server: String, message: String },

    /// Any other answer from the apiserver.
    #[error("the apiserver answered {code} to {verb} {resource}: {message}")]
    Api {
        code: u16,
        verb: String,
        resource: String,
        message: String,
    },
}

/// A client, plus what the user asked for and what the kubeconfig said.
pub struct Connection {
    pub client: Client,
    /// The context name (the cluster's human label), or "in-cluster".
    pub context: String,
    /// `-n`, else the context's namespace, else "default".
    pub default_namespace: String,
    pub server: String,
}

/// Set by `kubectl diag mcp`, whose stdin is the protocol's: a login plugin
/// (`exec` in the kubeconfig) must never read it.
static NEVER_INTERACTIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, kubeconfig login plugins run with `interactiveMode: Never`.
pub fn never_interactive() {
    NEVER_INTERACTIVE.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Which cluster to talk to, as kubectl's flags say it (`--kubeconfig`,
/// `--context`, `-n`): plain data, so that this edge does not know the command line.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub kubeconfig: Option<std::path::PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
}

fn kubeconfig(args: &Target) -> Result<Kubeconfig, ClusterError> {
    let no_config = |e: &dyn std::fmt::Display| ClusterError::NoConfig {
        detail: e.to_string(),
    };
    let mut kc = match &args.kubeconfig {
        Some(path) => Kubeconfig::read_from(path).map_err(|e| ClusterError::NoConfig {
            detail: format!("cannot read kubeconfig {}: {e}", path.display()),
        }),
        None => Kubeconfig::read().map_err(|e| no_config(&e)),
    }?;
    if NEVER_INTERACTIVE.load(std::sync::atomic::Ordering::Relaxed) {
        for a in kc.auth_infos.iter_mut() {
            if let Some(exec) = a.auth_info.as_mut().and_then(|i| i.exec.as_mut()) {
                exec.interactive_mode = Some(kube::config::ExecInteractiveMode::Never);
            }
        }
    }
    Ok(kc)
}

/// Builds a client from the global flags.
/// The namespace a name without `-n` lives in, read offline: `-n`, else the
/// kubeconfig context's namespace, else `default` (as kubectl does).
pub fn default_namespace(args: &Target) -> String {
    if let Some(ns) = &args.namespace {
        return ns.clone();
    }
    kubeconfig(args)
        .ok()
        .and_then(|kc| {
            let name = args.context.clone().or(kc.current_context.clone())?;
            kc.contexts
                .into_iter()
                .find(|c| c.name == name)
                .and_then(|c| c.context)
                .and_then(|c| c.namespace)
        })
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "default".to_string())
}

pub async fn connect(args: &Target) -> Result<Connection, ClusterError> {
    let (config, context) = match kubeconfig(args) {
        Ok(kc) => {
            let context = args
                .context
                .clone()
                .or_else(|| kc.current_context.clone())
                .unwrap_or_default();
            if context.is_empty() {
                return Err(ClusterError::NoConfig {
                    detail: "the kubeconfig has no current context".into(),
                });
            }
            if !kc.contexts.iter().any(|c| c.name == context) {
                let known: Vec<_> = kc.contexts.iter().map(|c| c.name.as_str()).collect();
                return Err(ClusterError::BadContext {
                    context: format!("'{context}'"),
                    detail: format!("no such context (known: {})", known.join(", ")),
                });
            }
            let options = KubeConfigOptions {
                context: Some(context.clone()),
                ..Default::default()
            };
            let config = Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| ClusterError::BadContext {
                    context: format!("'{context}'"),
                    detail: e.to_string(),
                })?;
            (config, context)
        }
        Err(no_kubeconfig) if args.kubeconfig.is_none() && args.context.is_none() => {
            match Config::incluster() {
                Ok(config) => (config, "in-cluster".to_string()),
                Err(_) => return Err(no_kubeconfig),
            }
        }
        Err(e) => return Err(e),
    };
    let default_namespace = args
        .namespace
        .clone()
        .unwrap_or_else(|| config.default_namespace.clone());
    let server = config.cluster_url.to_string();
    let client = Client::try_from(config).map_err(|e| ClusterError::Unreachable {
        server: server.clone(),
        detail: e.to_string(),
    })?;
    Ok(Connection {
        client,
        context,
        default_namespace,
        server,
    })
}

/// Translates a client error into a [`ClusterError`] that names the request.
pub fn explain(
    err: kube::Error,
    verb: &str,
    resource: &str,
    namespace: Option<&str>,
    server: &str,
) -> ClusterError {
    let scope = match namespace {
        Some(ns) => format!(" in namespace {ns}"),
        None => " at cluster scope".to_string(),
    };
    match err {
        kube::Error::Api(status) if status.code == 403 => ClusterError::Forbidden {
            verb: verb.into(),
            resource: resource.into(),
            scope,
            message: status.message,
        },
        kube::Error::Api(status) if status.code == 401 => ClusterError::Unauthorized {
            server: server.into(),
            message: status.message,
        },
        kube::Error::Api(status) => ClusterError::Api {
            code: status.code,
            verb: verb.into(),
            resource: resource.into(),
            message: status.message,
        },
        other => ClusterError::Unreachable {
            server: server.into(),
            detail: error_chain(&other),
        },
    }
}

/// The whole `source()` chain on one line: hyper's top-level messages alone say too little.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        let next = c.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = c.source();
    }
    text
}

/// The cluster's identity: the uid of its `kube-system` namespace, stable for the cluster's life.
pub async fn cluster_uid(conn: &Connection) -> Result<String, ClusterError> {
    let api: Api<Namespace> = Api::all(conn.client.clone());
    let ns = api
        .get("kube-system")
        .await
        .map_err(|e| explain(e, "get", "namespaces (kube-system)", None, &conn.server))?;
    Ok(ns.metadata.uid.unwrap_or_default())
}
