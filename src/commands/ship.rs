//! `kubectl diag ship --db FILE --to clickhouse://…` (or `--to otlp+http://…`):
//! a recording (or an import) sent once. The file is only read: its rows go through an outbox
//! in the connection's temporary schema, in the batches the recorder would
//! send, so sending the same file again changes nothing in ClickHouse.

use std::io::Write;

use anyhow::Context as _;

use crate::ship::{self, Destination, outbox};
use crate::store::{Mode, Recording};

/// What `ship` was asked, its flags resolved once (`cli::resolve`).
pub struct ShipOptions {
    /// `--to`, with its password or headers read.
    pub destination: Destination,
    /// `--create-schema`, `--on-cluster`.
    pub create_schema: bool,
    pub on_cluster: Option<String>,
    /// `--retain`, in milliseconds; 0 keeps everything.
    pub retain: i64,
}

/// `--to` with `--password-file`, `--header` and `--header-file` read: the
/// destination, or what is wrong with them.
pub fn destination(
    to: &str,
    password_file: Option<&std::path::Path>,
    header: &[String],
    header_file: Option<&std::path::Path>,
) -> anyhow::Result<Destination> {
    let password = ship::url::password_from("--password-file", password_file)?;
    let headers = ship::otlp::parse_headers(header, header_file, "--header", "--header-file")?;
    let destination = Destination::parse(to, password.as_deref(), &headers)
        .map_err(|e| anyhow::anyhow!("--to {e}"))?;
    if !headers.is_empty() && !destination.takes_headers() {
        anyhow::bail!(
            "--header/--header-file: headers are for an OTLP --to (otlp+http://…); ClickHouse takes a password (--password-file)"
        );
    }
    Ok(destination)
}

pub fn run(
    history: &super::source::Source,
    args: &ShipOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let destination = &args.destination;
    let path = history.path().to_path_buf();
    let recording = Recording::open(&path, Mode::ReadOnly)?;
    let clusters = recording.clusters(None)?;
    let conn = recording.into_connection();
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    let newest = outbox::open_one_off(&conn).context("reading the recording")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let ttl = (args.retain > 0).then_some(args.retain / 1000);
    runtime.block_on(destination.prepare(args.create_schema, args.on_cluster.as_deref(), ttl))?;
    // NB: the file's clusters in the token, so two files never share one.
    let tag = clusters
        .iter()
        .map(|(_, uid, _)| uid.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let started = std::time::Instant::now();
    let (mut cursor, mut rows, mut batches) = (0i64, 0u64, 0u64);
    while let Some(batch) = destination.take(&conn, cursor, outbox::BATCH_KEYS)? {
        let mut failures = 0;
        loop {
            match runtime.block_on(destination.send(&tag, &batch)) {
                Ok(()) => break,
                // NB: a server that is briefly away is waited for, a few times;
                // a refusal is said at once.
                Err(e) if e.retry() && failures < 5 => {
                    writeln!(
                        err,
                        "warning: {e}; trying again in {} s",
                        e.wait(failures).as_secs()
                    )?;
                    std::thread::sleep(e.wait(failures));
                    failures += 1;
                }
                Err(e) => {
                    return Err(anyhow::anyhow!(
                        "{e}\n{rows} row(s) of {} were sent before this; running ship again sends them again, which changes nothing there",
                        path.display()
                    ));
                }
            }
        }
        rows += batch.rows() as u64;
        batches += 1;
        cursor = batch.last;
    }
    let secs = started.elapsed().as_secs_f64();
    writeln!(
        out,
        "shipped {rows} row(s) of {} cluster(s) in {batches} batch(es) ({newest} key(s)) to {} in {secs:.1} s",
        clusters.len(),
        destination.shown()
    )?;
    Ok(crate::exit::OK)
}
