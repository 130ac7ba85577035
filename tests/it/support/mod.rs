//! Support for tests against the real local control plane (`scripts/cluster up`).
//!
//! A cluster test never skips itself: without a cluster it fails, loudly,
//! saying how to start one. Each test works in a fresh namespace that is
//! deleted afterwards.

#![allow(dead_code)]

pub mod cli;
pub mod clickhouse;
pub mod golden_file;
pub mod mcp;
pub mod timeline_recordings;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The test cluster's kubeconfig: `$KUBECONFIG`, else `target/cluster/kubeconfig`.
pub fn kubeconfig() -> PathBuf {
    let path = std::env::var_os("KUBECONFIG")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/cluster/kubeconfig"));
    assert!(
        path.exists(),
        "no test cluster: {} does not exist. Start one with `scripts/cluster up` \
         (cluster tests never skip themselves; CI starts it in .ci/run)",
        path.display()
    );
    path
}

/// The kubeconfig of the `viewer` user, who has no RBAC bindings at all.
pub fn viewer_kubeconfig() -> PathBuf {
    kubeconfig().with_file_name("viewer.kubeconfig")
}

pub async fn client() -> Client {
    let path = kubeconfig();
    let kc = Kubeconfig::read_from(&path).expect("reading the test kubeconfig");
    let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("test kubeconfig");
    let client = Client::try_from(config).expect("client");
    let api: Api<Namespace> = Api::all(client.clone());
    if let Err(e) = api.get("default").await {
        panic!(
            "the test cluster at {} does not answer ({e}); start it with `scripts/cluster up`",
            path.display()
        );
    }
    client
}

/// A namespace that exists for one test and is deleted when dropped.
pub struct TestNamespace {
    pub name: String,
    pub client: Client,
}

impl TestNamespace {
    pub async fn new(prefix: &str) -> TestNamespace {
        let client = client().await;
        let name = format!("{prefix}-{}", uuid_suffix());
        let api: Api<Namespace> = Api::all(client.clone());
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {"diag.test/owner": "kubectl-diag-tests"}}
        }))
        .unwrap();
        api.create(&PostParams::default(), &ns)
            .await
            .expect("creating the test namespace");
        // Pods need the namespace's default ServiceAccount (admission checks it).
        let sa: Api<k8s_openapi::api::core::v1::ServiceAccount> =
            Api::namespaced(client.clone(), &name);
        wait_until(
            Duration::from_secs(30),
            "default ServiceAccount",
            || async { sa.get_opt("default").await.ok().flatten().is_some() },
        )
        .await;
        TestNamespace { name, client }
    }

    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), &self.name)
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        let name = self.name.clone();
        delete_from_drop(move |client| async move {
            let api: Api<Namespace> = Api::all(client);
            let _ = api.delete(&name, &DeleteParams::background()).await;
        });
    }
}

/// Runs a cleanup from a `Drop` and waits for it: `cleanup` gets a client.
// NB: Drop cannot await, so the cleanup runs on a thread with its own
// runtime - and its own client: a kube Client's worker task lives on the
// runtime that made it, which is blocked right here.
pub fn delete_from_drop<F, Fut>(cleanup: F)
where
    F: FnOnce(Client) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let _ = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async { cleanup(client().await).await });
    })
    .join();
}

/// The S001 findings of `check scheduling -o json ARGS…`, once there are some.
pub fn s001_findings(db: &Path, args: &[&str]) -> Option<Vec<serde_json::Value>> {
    let out = diag(db)
        .args(["check", "scheduling", "-o", "json"])
        .args(args)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let found: Vec<serde_json::Value> = doc["findings"]
        .as_array()?
        .iter()
        .filter(|f| f["code"] == "S001")
        .cloned()
        .collect();
    (!found.is_empty()).then_some(found)
}

pub fn uuid_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{:x}",
        (nanos ^ u128::from(std::process::id()) << 40) & 0xff_ffff_ffff
    )
}

/// The recording `db` as a reader sees it: a recorder writing it is asked to
/// commit what it has received first (`store::ask`, as `sql` and every other
/// reader does), since it keeps a transaction open for up to --commit-every.
#[allow(dead_code)]
pub fn open_fresh(db: impl AsRef<Path>) -> rusqlite::Result<rusqlite::Connection> {
    kubectl_diag::store::ask::ask_to_commit(db.as_ref());
    rusqlite::Connection::open(db)
}

/// Polls `cond` until it holds; panics naming `what` after `timeout`.
pub async fn wait_until<F, Fut>(timeout: Duration, what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    wait_for(timeout, what, || {
        let fut = cond();
        async move { fut.await.then_some(()) }
    })
    .await
}

/// Polls `poll` until it yields a value; panics naming `what` after `timeout`.
pub async fn wait_for<T, F, Fut>(timeout: Duration, what: &str, mut poll: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = poll().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// An address on localhost that nothing listens on, for the recorder's `--listen`.
pub fn free_local_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

/// Waits until the Deployment `name` has `replicas` available replicas.
pub async fn wait_available(api: &Api<Deployment>, name: &str, replicas: i32) {
    let what = format!("Deployment {name} to have {replicas} available replicas");
    wait_until(Duration::from_secs(60), &what, || async {
        let status = api.get(name).await.unwrap().status.unwrap_or_default();
        status.available_replicas == Some(replicas)
    })
    .await
}

/// The built `kubectl-diag` binary, pointed at the test cluster and at `db`.
pub fn diag(db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"));
    cmd.env("KUBECONFIG", kubeconfig())
        .env("KUBECTL_DIAG_DB", db)
        .env("NO_COLOR", "1");
    cmd
}

pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("running kubectl-diag");
    assert!(
        out.status.success(),
        "{cmd:?} failed with {}:\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `scripts/cluster ARGS…` against the same cluster the tests use.
/// `scripts/cluster ARGS` with `env`, a failure reported on stderr rather than
/// asserted: for Drop guards that restore the shared cluster, where a panic
/// while unwinding would abort the test binary.
pub fn cluster_script_from_drop(args: &[&str], env: &[(&str, &str)]) {
    let out = Command::new(repo_root().join("scripts/cluster"))
        .args(args)
        .env("DIAG_CLUSTER_DIR", kubeconfig().parent().unwrap())
        .envs(env.iter().copied())
        .output();
    match out {
        Ok(out) if out.status.success() => {}
        Ok(out) => eprintln!(
            "scripts/cluster {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => eprintln!("scripts/cluster {args:?}: {e}"),
    }
}

/// `kubectl-diag ARGS` with no recording anywhere: no --db, no
/// `KUBECTL_DIAG_DB`, and a data folder that holds none. Exit code, stdout, stderr.
pub fn diag_no_recording(data: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args(args)
        .env("KUBECONFIG", kubeconfig())
        .env_remove("KUBECTL_DIAG_DB")
        .env("XDG_DATA_HOME", data)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

pub fn cluster_script(args: &[&str]) -> Output {
    let state = kubeconfig().parent().unwrap().to_path_buf();
    let out = Command::new(repo_root().join("scripts/cluster"))
        .args(args)
        .env("DIAG_CLUSTER_DIR", state)
        .output()
        .expect("running scripts/cluster");
    assert!(
        out.status.success(),
        "scripts/cluster {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A background `kubectl-diag` process, killed if the test ends without stopping it.
pub struct Background(Option<std::process::Child>);

impl Background {
    pub fn new(child: std::process::Child) -> Background {
        Background(Some(child))
    }

    pub fn pid(&self) -> u32 {
        self.0.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// SIGTERM, then the exit status (the recorder must flush and exit 0).
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let mut child = self.0.take().unwrap();
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        child.wait().unwrap()
    }

    /// SIGKILL: no flush, no goodbye.
    pub fn kill_9(mut self) {
        let mut child = self.0.take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The objects of a scenario manifest (`tests/scenarios/NAME`), as JSON.
pub fn scenario(name: &str) -> Vec<serde_json::Value> {
    let path = repo_root().join("tests/scenarios").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str_multiple::<serde_json::Value, _>(&text).unwrap()
}

/// Creates every object of a scenario manifest in `namespace` (cluster-scoped
/// ones cluster-wide); an object that already exists is left as it is.
pub async fn apply_scenario(client: &Client, namespace: &str, name: &str) {
    use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
    for doc in scenario(name) {
        let api_version = doc["apiVersion"].as_str().unwrap();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, doc["kind"].as_str().unwrap());
        let (ar, caps): (ApiResource, _) = kube::discovery::pinned_kind(client, &gvk)
            .await
            .unwrap_or_else(|e| panic!("{gvk:?}: {e}"));
        let api: Api<DynamicObject> = match caps.scope {
            kube::discovery::Scope::Namespaced => {
                Api::namespaced_with(client.clone(), namespace, &ar)
            }
            kube::discovery::Scope::Cluster => Api::all_with(client.clone(), &ar),
        };
        let obj: DynamicObject = serde_json::from_value(doc).unwrap();
        match api.create(&PostParams::default(), &obj).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => panic!("creating {gvk:?}: {e}"),
        }
    }
}

/// The Widget custom resource type (no controller), ready to use.
pub async fn widget_crd(client: &Client) -> kube::api::ApiResource {
    apply_scenario(client, "default", "widget-crd.yaml").await;
    let gvk = kube::api::GroupVersionKind::gvk("example.com", "v1", "Widget");
    wait_for(
        Duration::from_secs(30),
        "the Widget CRD to be served",
        || async {
            kube::discovery::pinned_kind(client, &gvk)
                .await
                .ok()
                .map(|(ar, _)| ar)
        },
    )
    .await
}

/// Starts `record --quiet -n NS ARGS…` in the background and waits until the
/// watch of `resource` (such as `pods/NS`) has committed its first position.
pub async fn start_recorder(db: &Path, ns: &str, extra: &[&str], resource: &str) -> Background {
    let child = Background::new(
        diag(db)
            .args(["record", "--quiet", "-n", ns])
            .args(extra)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let (db, resource) = (db.to_path_buf(), resource.to_string());
    wait_until(
        Duration::from_secs(30),
        "the recorder's first lists",
        || {
            let (db, resource) = (db.clone(), resource.clone());
            async move {
                open_fresh(&db)
                    .and_then(|c| {
                        c.query_row(
                            "SELECT count(*) FROM watch_positions WHERE resource = ?1",
                            [&resource],
                            |r| r.get::<_, i64>(0),
                        )
                    })
                    .is_ok_and(|n| n > 0)
            }
        },
    )
    .await;
    child
}

/// `kubectl ARGS…` with `input` on its stdin, with the kubectl built for the test cluster.
pub fn kubectl_stdin(args: &[&str], input: &str) {
    let mut child = Command::new(repo_root().join("scripts/cluster"))
        .arg("kubectl")
        .args(args)
        .env("DIAG_CLUSTER_DIR", kubeconfig().parent().unwrap())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `kubectl apply -n NS -f -` of `yaml`.
pub fn apply(ns: &str, yaml: &str) {
    kubectl_stdin(&["apply", "-n", ns, "-f", "-"], yaml);
}

pub fn kubectl(args: &[&str]) {
    let out = Command::new(repo_root().join("scripts/cluster"))
        .arg("kubectl")
        .args(args)
        .env("DIAG_CLUSTER_DIR", kubeconfig().parent().unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `(code, Kind/name)` of each finding of a `check -o json` document, in its order.
pub fn finding_keys(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                format!(
                    "{}/{}",
                    f["object"]["kind"].as_str().unwrap(),
                    f["object"]["name"].as_str().unwrap()
                ),
            )
        })
        .collect()
}

/// Held by each test of `tests/exclusive` for its whole run: those tests stop
/// or restart what the others use, so no two may overlap.
pub async fn exclusive() -> tokio::sync::MutexGuard<'static, ()> {
    static ONE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    ONE.lock().await
}
