//! Load time of a large `timeline -o html` page in headless Chromium. Not a
//! test: it prints figures for docs/performance.md.
//!
//!   cargo bench --bench timeline_html -- [--lanes 500] [--entries 50000] [--runs 3] [--unfold]
//!
//! Builds a synthetic timeline through the real code (`timeline::assemble`,
//! `summary::summarize`, `render::html::page`): one Deployment, ReplicaSets of
//! about 50 Pods each, and Nodes, `--lanes` lanes in all, with Events spread over
//! two hours until there are `--entries` entries. Writes it to
//! `target/timeline-bench.html`, then loads it `--runs` times with
//! `chromium --headless=new --dump-dom` and prints, per run, the wall time of
//! the whole Chromium process (most of it serialising the DOM) and the page's
//! own marks: `data-drawn-ms`, the `performance.now()` at which its script had
//! drawn the picture (interactive from then on), `data-frame-ms`, how long its
//! first frame took (each zoom or pan step redraws the same), `data-loaded-ms`,
//! the load event, and `data-table-ms`, when the script had put the table's
//! last row in, a block at a time between the user's events (`?`: still under
//! way when Chromium dumped the DOM, as it is at 50,000 entries). An empty page's wall
//! time is printed as the yardstick of Chromium's start-up. `--unfold` loads
//! the page with every owner unfolded (`#unfold`), the most lanes it can draw.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use kubectl_diag::model::EventSummary;
use kubectl_diag::model::{Condition, ObjectRef, ObjectState, OwnerRef, RecordedObject, Version};
use kubectl_diag::model::{Gap, GapReason};
use kubectl_diag::timeline::{Relation, Subject};

mod support;
use support::{flag, percentile};

/// 2026-11-29T03:00:00Z
const T0: i64 = 1_795_921_200_000;
const SPAN: i64 = 2 * 3_600_000;

fn object(
    kind: &str,
    name: &str,
    uid: &str,
    created: i64,
    owner: Option<&OwnerRef>,
) -> RecordedObject {
    RecordedObject {
        id: 0,
        object: ObjectRef {
            api_version: if kind == "Node" || kind == "Pod" {
                "v1"
            } else {
                "apps/v1"
            }
            .into(),
            kind: kind.into(),
            namespace: if kind == "Node" { "" } else { "shop" }.into(),
            name: name.into(),
            uid: uid.into(),
            field_path: String::new(),
        },
        created: Some(created),
        first_seen: Some(created),
        state: ObjectState {
            owners: owner.into_iter().cloned().collect(),
            ..ObjectState::default()
        },
        state_at: created,
        ..RecordedObject::default()
    }
}

fn ready(status: &str) -> Condition {
    Condition {
        type_: "Ready".into(),
        status: status.into(),
        reason: if status == "True" {
            ""
        } else {
            "ContainersNotReady"
        }
        .into(),
        ..Condition::default()
    }
}

/// A little deterministic noise (xorshift), so runs compare.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn subjects(lanes: usize) -> Vec<Subject> {
    let nodes = 4usize;
    let pods_per = 50usize;
    let rest = lanes.saturating_sub(1 + nodes);
    let replica_sets = rest.div_ceil(pods_per + 1).max(1);
    let pods = rest.saturating_sub(replica_sets);
    let mut out = Vec::new();
    let deploy = object("Deployment", "web", "d-0", T0, None);
    out.push(Subject {
        object: deploy,
        relation: Some(Relation::Target),
        depth: 0,
        versions: vec![Version {
            at: T0,
            state: ObjectState {
                generation: 1,
                observed_generation: Some(1),
                ..ObjectState::default()
            },
            ..Version::default()
        }],
    });
    let owners: Vec<OwnerRef> = (0..replica_sets)
        .map(|r| OwnerRef {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: format!("web-{r:04x}"),
            uid: format!("rs-{r}"),
            controller: true,
        })
        .collect();
    let deploy_owner = OwnerRef {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: "web".into(),
        uid: "d-0".into(),
        controller: true,
    };
    for (r, o) in owners.iter().enumerate() {
        let at = T0 + r as i64 * SPAN / replica_sets as i64;
        let mut state = ObjectState {
            owners: vec![deploy_owner.clone()],
            ..ObjectState::default()
        };
        state.replicas.insert("replicas".into(), pods_per as i64);
        out.push(Subject {
            object: object("ReplicaSet", &o.name, &o.uid, at, Some(&deploy_owner)),
            relation: Some(Relation::Owned),
            depth: 1,
            versions: vec![Version {
                at,
                state,
                ..Version::default()
            }],
        });
    }
    for p in 0..pods {
        let owner = &owners[p % replica_sets];
        let start = T0 + (p % replica_sets) as i64 * SPAN / replica_sets as i64 + p as i64 * 1_000;
        let state = |phase: &str, node: &str, ready_: Option<&str>| ObjectState {
            phase: phase.into(),
            node_name: node.into(),
            conditions: ready_.into_iter().map(ready).collect(),
            owners: vec![owner.clone()],
            ..ObjectState::default()
        };
        let node = format!("node-{}", p % nodes);
        out.push(Subject {
            object: object(
                "Pod",
                &format!("{}-p{p:05}", owner.name),
                &format!("pod-{p}"),
                start,
                Some(owner),
            ),
            relation: Some(Relation::Owned),
            depth: 2,
            versions: vec![
                Version {
                    at: start,
                    state: state("Pending", "", None),
                    ..Version::default()
                },
                Version {
                    at: start + 2_000,
                    state: state("Running", &node, Some("False")),
                    ..Version::default()
                },
                Version {
                    at: start + 30_000,
                    state: state("Running", &node, Some("True")),
                    ..Version::default()
                },
            ],
        });
    }
    for n in 0..nodes {
        let mut o = object(
            "Node",
            &format!("node-{n}"),
            &format!("node-{n}"),
            T0 - SPAN,
            None,
        );
        o.object.namespace.clear();
        out.push(Subject {
            object: o,
            relation: Some(Relation::Node),
            depth: 3,
            versions: vec![Version {
                at: T0 - SPAN,
                state: ObjectState {
                    conditions: vec![ready("True")],
                    ..ObjectState::default()
                },
                ..Version::default()
            }],
        });
    }
    out
}

fn events(subjects: &[Subject], n: usize) -> Vec<EventSummary> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let reasons = [
        (
            "Normal",
            "Pulled",
            "Container image \"web:1\" already present on machine",
        ),
        ("Normal", "Started", "Started container web"),
        (
            "Warning",
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
        ),
        (
            "Warning",
            "BackOff",
            "Back-off restarting failed container web in pod",
        ),
        ("Normal", "Killing", "Stopping container web"),
    ];
    let pods: Vec<&Subject> = subjects
        .iter()
        .filter(|s| s.object.object.kind == "Pod")
        .collect();
    (0..n)
        .map(|i| {
            let s = pods[i % pods.len()];
            let (type_, reason, message) = reasons[rng.below(reasons.len() as u64) as usize];
            let created = s.object.created.unwrap();
            let first = created + rng.below((T0 + SPAN - 200_000 - created).max(1) as u64) as i64;
            let count = if rng.below(4) == 0 {
                1 + rng.below(20) as i64
            } else {
                1
            };
            EventSummary {
                involved: s.object.object.clone(),
                type_: type_.into(),
                reason: reason.into(),
                message: format!("{message} #{i}"),
                count,
                in_window: count,
                first,
                last: first + (count - 1) * 10_000,
                reporting: "kubelet".into(),
                host: String::new(),
            }
        })
        .collect()
}

/// The number in `name="…"` of the dumped DOM.
fn attribute(dom: &str, name: &str) -> Option<f64> {
    let key = format!("{name}=\"");
    dom.find(&key)
        .map(|i| &dom[i + key.len()..])
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
}

fn chromium(page: &Path, fragment: &str) -> (f64, [Option<f64>; 4]) {
    let started = Instant::now();
    let out = Command::new("/usr/bin/chromium")
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1400,900",
            "--dump-dom",
        ])
        .arg(format!("file://{}{fragment}", page.display()))
        .output()
        .expect("/usr/bin/chromium: install Debian's chromium package");
    let wall = started.elapsed().as_secs_f64();
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        wall,
        [
            "data-drawn-ms",
            "data-loaded-ms",
            "data-table-ms",
            "data-frame-ms",
        ]
        .map(|a| attribute(&dom, a)),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lanes = flag(&args, "--lanes", 500) as usize;
    let target = flag(&args, "--entries", 50_000) as usize;
    let runs = flag(&args, "--runs", 3) as usize;
    let fragment = if args.iter().any(|a| a == "--unfold") {
        "#unfold"
    } else {
        ""
    };

    let subjects = subjects(lanes);
    let gaps = vec![Gap {
        start: T0 + SPAN / 3,
        finish: T0 + SPAN / 3 + 120_000,
        reason: GapReason::NotRunning,
        detail: "the recorder was not running".into(),
        resources: vec!["events".into()],
    }];
    let (since, until) = (T0 - 60_000, T0 + SPAN + 60_000);
    let bare = kubectl_diag::timeline::assemble(&subjects, &[], &gaps, &[], since, until);
    let events = events(&subjects, target.saturating_sub(bare.entries.len()));
    let started = Instant::now();
    let mut timeline =
        kubectl_diag::timeline::assemble(&subjects, &events, &gaps, &[], since, until);
    timeline.summary = Some(kubectl_diag::timeline::summary::summarize(
        &subjects,
        &timeline,
        1,
        Vec::new(),
    ));
    let assembled = started.elapsed();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("timeline-bench.html");
    let started = Instant::now();
    let mut html = Vec::new();
    kubectl_diag::render::html::page(&timeline, "Deployment/web — bench", &mut html).unwrap();
    let rendered = started.elapsed();
    std::fs::write(&page, &html).unwrap();
    println!(
        "{} lanes, {} entries; assemble {:.0} ms, render {:.0} ms, page {:.1} MiB: {}",
        timeline.objects.len(),
        timeline.entries.len(),
        assembled.as_secs_f64() * 1e3,
        rendered.as_secs_f64() * 1e3,
        html.len() as f64 / 1048576.0,
        page.display()
    );

    let empty = dir.join("timeline-bench-empty.html");
    std::fs::write(&empty, "<!DOCTYPE html><title>empty</title>").unwrap();
    let (yardstick, _) = chromium(&empty, "");
    println!("chromium start-up (an empty page): {:.2} s", yardstick);

    let mut walls = Vec::new();
    let mut marks: [Vec<f64>; 4] = Default::default();
    let ms = |v: Option<f64>| v.map_or("?".to_string(), |ms| format!("{ms:.0} ms"));
    for run in 1..=runs {
        let (wall, at) = chromium(&page, fragment);
        println!(
            "run {run}: chromium --dump-dom {wall:.2} s; picture drawn at {} (one frame {}), page loaded at {}, table in at {}",
            ms(at[0]),
            ms(at[3]),
            ms(at[1]),
            ms(at[2]),
        );
        walls.push(wall);
        for (v, at) in marks.iter_mut().zip(at) {
            v.extend(at);
        }
    }
    walls.sort_by(f64::total_cmp);
    for v in marks.iter_mut() {
        v.sort_by(f64::total_cmp);
    }
    let median = |v: &[f64]| (!v.is_empty()).then(|| percentile(v, 0.5));
    println!(
        "median of {runs}: chromium {:.2} s (start-up {yardstick:.2} s); picture drawn at {} (one frame {}); page loaded at {}; table in at {}",
        percentile(&walls, 0.5),
        ms(median(&marks[0])),
        ms(median(&marks[3])),
        ms(median(&marks[1])),
        ms(median(&marks[2])),
    );
}
