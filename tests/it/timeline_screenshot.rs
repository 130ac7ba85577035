//! The HTML timeline in a real browser: headless Chromium (`/usr/bin/chromium`,
//! Debian's `chromium` package; `.ci/run` installs it) loads the page of the
//! recorded rollout (`timeline_recordings`), its script must run to the end
//! (the page marks `<html data-drawn-ms=…>` only then) and draw, and its
//! screenshot must be a real picture; hovering a mark shows its details and
//! clicking an owner's label folds its lanes. Another page, with an owner of
//! eight Pods, must open folded and unfold. Without Chromium these tests fail,
//! saying how to install it: they never skip.
//!
//! The page and its screenshot stay in `target/timeline-screenshot.html` and
//! `.png`, to look at.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::timeline_recordings;
use timeline_recordings::{recording, timeline};

/// The browser: `DIAG_CHROMIUM` (scripts/test sets it), else Debian's.
fn chromium_path() -> String {
    std::env::var("DIAG_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())
}

/// Runs Chromium headless on `url` with `args`; its stdout. Fails the test when
/// Chromium is missing, fails or takes over a minute.
fn chromium(args: &[&str], url: &str) -> String {
    let browser = chromium_path();
    assert!(
        Path::new(&browser).exists(),
        "{browser} is missing: install it (`apt-get install -y chromium`; scripts/test does)"
    );
    let mut child = Command::new(&browser)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1400,900",
        ])
        .args(args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{browser}: {e}"));
    // NB: stdout is read on another thread, so a large DOM cannot fill the pipe
    // while this one waits for Chromium to exit.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{browser} {args:?} {url}: still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        status.success(),
        "{browser} {args:?} {url}: {status}\n{stderr}"
    );
    reader.join().unwrap()
}

fn url(page: &Path) -> String {
    format!("file://{}", page.display())
}

/// The number in `name="…"` of a dumped DOM.
fn attribute(dom: &str, name: &str) -> Option<u64> {
    let key = format!("{name}=\"");
    let at = dom.find(&key)? + key.len();
    dom[at..].split('"').next()?.parse().ok()
}

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(
        png.len() > 24 && png.starts_with(b"\x89PNG\r\n\x1a\n") && &png[12..16] == b"IHDR",
        "not a PNG"
    );
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

/// The compressed image data (all IDAT chunks) of a PNG.
fn png_data(png: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    let mut at = 8;
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]) as usize;
        let end = (at + 8 + len).min(png.len());
        if &png[at + 4..at + 8] == b"IDAT" {
            data.extend_from_slice(&png[at + 8..end]);
        }
        at = end + 4;
    }
    data
}

fn screenshot(page: &Path, png: &Path) -> Vec<u8> {
    let _ = std::fs::remove_file(png);
    chromium(&[&format!("--screenshot={}", png.display())], &url(page));
    std::fs::read(png).unwrap_or_else(|e| panic!("no screenshot {}: {e}", png.display()))
}

#[test]
fn the_rollout_page_runs_its_script_and_draws_a_real_picture() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    // Kept, with its screenshot, for a human to look at.
    let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&kept).unwrap();
    let page = kept.join("timeline-screenshot.html");
    std::fs::write(&page, timeline(&db, "html")).unwrap();

    let dom = chromium(&["--dump-dom"], &url(&page));
    assert!(
        attribute(&dom, "data-drawn-ms").is_some(),
        "the page's script did not run to the end (no data-drawn-ms on <html>)"
    );
    // Deployment, its two ReplicaSets, three Pods and their Node: nothing to fold.
    assert_eq!(attribute(&dom, "data-lanes"), Some(7), "lanes shown");
    let marks = attribute(&dom, "data-marks").expect("data-marks");
    assert!(
        marks >= 20,
        "{marks} transitions and Events drawn on the canvas"
    );
    // NB: the dump holds the <noscript>'s text too; the script puts the table
    // right before it.
    let table = &dom[..dom.find("<noscript").expect("<noscript id=\"rows\">")];
    assert!(
        table.contains("Error: ImagePullBackOff</td>")
            && table.ends_with("</tbody></table></div></div>"),
        "the script put the table in"
    );

    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><title>blank</title>").unwrap();
    let blank = screenshot(&blank, &dir.path().join("blank.png"));
    let png = kept.join("timeline-screenshot.png");
    let shot = screenshot(&page, &png);
    assert_eq!(png_size(&shot), (1400, 900), "{}", png.display());
    assert_eq!(png_size(&blank), (1400, 900));
    // NB: a PNG of one colour deflates to a few KiB of repeats (the blank page's
    // is the yardstick); text, bars and marks make tens of KiB of varied bytes.
    assert!(
        shot.len() > 20_000 && shot.len() > 5 * blank.len(),
        "{}: {} bytes, a blank page {} bytes",
        png.display(),
        shot.len(),
        blank.len()
    );
    let mut seen = [false; 256];
    for b in png_data(&shot) {
        seen[b as usize] = true;
    }
    let variety = seen.iter().filter(|s| **s).count();
    assert!(variety > 200, "{variety} distinct bytes in the image data");
}

/// The value of `name="…"` of a dumped DOM, as text.
fn text_attribute<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("{name}=\"");
    let at = dom.find(&key)? + key.len();
    dom[at..].split('"').next()
}

#[test]
fn hovering_a_mark_shows_its_details_and_clicking_an_owner_folds_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    // A second script after the page's, as a user would: the pointer on the first
    // mark of lane 5 (Pod web-5f6b4c-x9y8z), then a click on lane 4's label
    // (ReplicaSet web-5f6b4c, owner of two Pods).
    let probe = r#"<script>(function(){var svg=document.querySelector('svg'),r=svg.getBoundingClientRect(),html=document.documentElement;
var f=document.getElementById('marks').textContent.split('\n').filter(function(l){return l.split(' ')[0]==='4';})[0].split(' ');
svg.dispatchEvent(new MouseEvent('mousemove',{clientX:r.left+(+f[2]),clientY:r.top+40+4*34+17-9,bubbles:true}));
html.setAttribute('data-hover',document.getElementById('detail').textContent);
var label=svg.querySelectorAll('g.lane')[3].querySelector('text'),b=label.getBoundingClientRect(),at={clientX:b.left+5,clientY:b.top+5,bubbles:true};
label.dispatchEvent(new MouseEvent('mousedown',at));window.dispatchEvent(new MouseEvent('mouseup',{}));label.dispatchEvent(new MouseEvent('click',at));
html.setAttribute('data-clicked',html.getAttribute('data-lanes'));})();</script></body>"#;
    let page = dir.path().join("probe.html");
    std::fs::write(&page, timeline(&db, "html").replace("</body>", probe)).unwrap();
    let dom = chromium(&["--dump-dom"], &url(&page));
    assert!(attribute(&dom, "data-drawn-ms").is_some(), "script ran");
    let hover = text_attribute(&dom, "data-hover").expect("the probe ran");
    assert!(
        hover.contains("owned by ReplicaSet web-5f6b4c"),
        "details line: {hover:?}"
    );
    assert_eq!(
        attribute(&dom, "data-clicked"),
        Some(5),
        "the ReplicaSet's two Pods folded under it"
    );
    assert!(dom.contains("▸ 2"), "its toggle says so");
}

/// A page of one ReplicaSet owning eight Pods, through the renderer.
fn owner_of_eight(dir: &Path) -> PathBuf {
    use kubectl_diag::timeline::{ObjectLine, Relation, Timeline};
    let line = |kind: &str, name: &str, owner: Option<&str>| ObjectLine {
        api_version: "v1".into(),
        kind: kind.into(),
        namespace: "shop".into(),
        name: name.into(),
        uid: name.into(),
        relation: Some(if owner.is_some() {
            Relation::Owned
        } else {
            Relation::Target
        }),
        depth: u32::from(owner.is_some()),
        created: None,
        deleted: None,
        deleted_after: None,
        created_ms: Some(1_795_921_200_000),
        deleted_ms: None,
        states: Vec::new(),
        owner_uid: owner.map(Into::into),
    };
    let mut objects = vec![line("ReplicaSet", "web-1", None)];
    objects.extend((0..8).map(|i| line("Pod", &format!("web-1-{i}"), Some("web-1"))));
    let t = Timeline {
        since: String::new(),
        until: String::new(),
        since_ms: 1_795_921_200_000,
        until_ms: 1_795_921_800_000,
        objects,
        entries: Vec::new(),
        summary: None,
    };
    let mut html = Vec::new();
    kubectl_diag::render::html::page(&t, "ReplicaSet/web-1", &mut html).unwrap();
    let page = dir.join("owner.html");
    std::fs::write(&page, html).unwrap();
    page
}

#[test]
fn an_owner_of_more_than_five_opens_folded_and_unfolds() {
    let dir = tempfile::tempdir().unwrap();
    let page = owner_of_eight(dir.path());
    let dom = chromium(&["--dump-dom"], &url(&page));
    assert!(attribute(&dom, "data-drawn-ms").is_some(), "script ran");
    assert_eq!(
        attribute(&dom, "data-lanes"),
        Some(1),
        "folded under the owner"
    );
    assert!(dom.contains("▸ 8"), "the toggle says how many are folded");
    let dom = chromium(&["--dump-dom"], &format!("{}#unfold", url(&page)));
    assert_eq!(
        attribute(&dom, "data-lanes"),
        Some(9),
        "#unfold shows them all"
    );
}
