//! `kubectl diag changes`: the cluster-wide feed of what changed, from the
//! recording — spec diffs with their writers, objects created and deleted in
//! bulk (folded), types that appeared or went — newest last.

use std::io::Write;

use anyhow::Context;

use crate::changes::{Item, Line};
use crate::cli::{ChangesArgs, CheckOutput, GlobalArgs};
use crate::render::{Paint, escape};
use crate::store::{self, Mode};
use crate::units::rfc3339;

pub fn run(
    global: &GlobalArgs,
    args: &ChangesArgs,
    out: &mut dyn Write,
    paint: Paint,
) -> anyhow::Result<u8> {
    let since = args.since;
    let until = args
        .until
        .unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
    if since > until {
        anyhow::bail!(
            "--since {} is after --until {}: nothing to show",
            rfc3339(since),
            rfc3339(until)
        );
    }
    let path = crate::paths::db_path(global.db.as_ref());
    let recording = store::Recording::open(&path, Mode::ReadOnly)?;
    let (cluster, _, label) = super::check::choose_cluster(&recording, args.cluster.as_deref())?;
    let namespace = global.namespace.clone().filter(|_| !global.all_namespaces);
    let mut items = recording.feed(cluster, since, until, namespace.as_deref())?;
    if !args.kinds.is_empty() {
        let recorded = recording.resource_types(cluster)?;
        let builtin = super::timeline::builtin_types();
        let mut kinds = Vec::new();
        for name in args
            .kinds
            .iter()
            .map(|k| k.trim())
            .filter(|k| !k.is_empty())
        {
            let t = recorded
                .resolve(name)
                .or_else(|| builtin.resolve(name))
                .with_context(|| {
                    format!(
                        "--kinds {name}: no such resource type in the recording of {label}; use a kubectl name such as deploy, node, cm, or a custom resource's plural"
                    )
                })?;
            kinds.push(t.kind.clone());
        }
        items.retain(|i| kinds.contains(&i.kind));
    }
    match args.output {
        CheckOutput::Json => {
            // NB: rendered first and written as bytes, so that a closed pipe is an
            // io::Error that main recognises, not a serde_json one.
            let text = serde_json::to_string_pretty(&Feed {
                since,
                until,
                items: &items,
            })?;
            writeln!(out, "{text}")?;
        }
        _ if items.is_empty() => {
            let scope = namespace
                .map(|n| format!(" in namespace {n}"))
                .unwrap_or_default();
            writeln!(
                out,
                "No changes recorded{scope} between {} and {}.",
                rfc3339(since),
                rfc3339(until)
            )?;
        }
        CheckOutput::Wide => table(&crate::changes::lines(&items), out, paint)?,
        _ => table(&crate::changes::fold(&items), out, paint)?,
    }
    Ok(crate::exit::OK)
}

/// NB: times are RFC 3339, as in `timeline -o json` and `check -o json`;
/// they were epoch milliseconds.
#[derive(serde::Serialize)]
struct Feed<'a> {
    #[serde(serialize_with = "crate::units::ser_rfc3339")]
    since: i64,
    #[serde(serialize_with = "crate::units::ser_rfc3339")]
    until: i64,
    items: &'a [Item],
}

fn table(lines: &[Line], out: &mut dyn Write, paint: Paint) -> anyhow::Result<()> {
    let rows = lines.iter().map(|l| {
        vec![
            crate::units::rfc3339(l.at).replace('T', " ")[..19].to_string(),
            escape(&l.object).into_owned(),
            paint.dim(&escape(&l.by)),
            escape(&l.change).into_owned(),
        ]
    });
    // NB: CHANGE last, as kubectl puts MESSAGE last: one long diff must not
    // push every other row's writer off a 120-column screen (each row then
    // wrapped into two lines, and an hour no longer fitted the first screen).
    crate::render::plain_table(out, ["TIME (UTC)", "OBJECT", "BY", "CHANGE"], rows)?;
    Ok(())
}
