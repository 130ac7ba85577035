//! `timeline -o html`: one self-contained HTML file (no scripts, no external
//! assets) with an SVG swimlane picture — a lane per object, its readiness as
//! state bars, transitions as ticks, Events as marks coloured by type, the
//! recorder's gaps hatched across all lanes; hover text on everything — and
//! the same entries as a table below it.

use std::fmt::Write as _;
use std::io::Write;

use crate::timeline::{EntryKind, Relation, Timeline};

const WIDTH: f64 = 1280.0;
const LABEL: f64 = 300.0;
const LANE: f64 = 34.0;
const TOP: f64 = 40.0;

/// HTML-escapes stored text, after making its control characters visible
/// (`\x1b`): a browser ignores most of them, but the page is also read with
/// `cat` and `less`, where they would act.
fn esc(s: &str) -> String {
    super::escape(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn state_colour(state: &str) -> &'static str {
    match state {
        "ready" | "done" => "#2e7d32",
        "progressing" => "#1e88e5",
        "pending" => "#90a4ae",
        "terminating" => "#616161",
        "failed" => "#c62828",
        _ => "#f9a825",
    }
}

fn time(ms: i64) -> String {
    crate::units::rfc3339(ms)
}

/// A time-axis label: the time of day, to the millisecond when ticks are
/// under 2 s apart (a window of a few seconds printed the same second
/// three times).
fn axis_label(ms: i64, step_ms: f64) -> String {
    let t = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms).unwrap_or_default();
    let format = if step_ms < 2_000.0 {
        "%H:%M:%S%.3f"
    } else {
        "%H:%M:%S"
    };
    t.format(format).to_string()
}

fn relation(r: Option<Relation>) -> &'static str {
    match r {
        Some(Relation::Target) => "",
        Some(Relation::Owner) => "owner",
        Some(Relation::Owned) => "owned",
        Some(Relation::Node) => "node",
        Some(Relation::Claim) => "claim",
        None => "",
    }
}

/// Writes the page.
pub fn page(t: &Timeline, title: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let first = t
        .entries
        .iter()
        .map(|e| e.at_ms)
        .min()
        .unwrap_or(t.since_ms);
    let last = t
        .entries
        .iter()
        .map(|e| e.until_ms.unwrap_or(e.at_ms))
        .max()
        .unwrap_or(t.until_ms);
    let span = ((last - first) as f64).max(1000.0);
    let (t0, t1) = (first as f64 - span * 0.02, last as f64 + span * 0.02);
    let plot = WIDTH - LABEL - 20.0;
    let x = |ms: i64| LABEL + ((ms as f64 - t0) / (t1 - t0)).clamp(0.0, 1.0) * plot;
    let lanes = t.objects.len().max(1) as f64;
    let height = TOP + lanes * LANE + 30.0;
    let lane_of = |kind: &str, name: &str| {
        t.objects
            .iter()
            .position(|o| o.kind == kind && o.name == name)
            .unwrap_or(0) as f64
    };
    let mid = |lane: f64| TOP + lane * LANE + LANE / 2.0;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="system-ui, sans-serif" font-size="12">
<defs><pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#fff3e0"/><line x1="0" y1="0" x2="0" y2="8" stroke="#e65100" stroke-width="3" opacity="0.5"/></pattern><clipPath id="plotclip"><rect x="{LABEL}" y="0" width="{}" height="{height}"/></clipPath></defs>"##,
        WIDTH - LABEL
    );
    // Time axis: five ticks.
    for i in 0..=4 {
        let ms = (t0 + (t1 - t0) * i as f64 / 4.0) as i64;
        let px = x(ms);
        let anchor = match i {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        let _ = writeln!(
            svg,
            r##"<line class="z" x1="{px:.1}" y1="{}" x2="{px:.1}" y2="{:.1}" stroke="#e0e0e0"/><text class="z" x="{px:.1}" y="{}" text-anchor="{anchor}" fill="#555">{}</text>"##,
            TOP - 6.0,
            height - 24.0,
            TOP - 12.0,
            esc(&axis_label(ms, (t1 - t0) / 4.0))
        );
    }
    for (i, o) in t.objects.iter().enumerate() {
        let y = TOP + i as f64 * LANE;
        let fill = if i % 2 == 0 { "#fafafa" } else { "#ffffff" };
        let rel = relation(o.relation);
        let label = format!(
            "{}{}/{}{}",
            "  ".repeat(o.depth.min(6) as usize),
            o.kind,
            o.name,
            if rel.is_empty() {
                String::new()
            } else {
                format!(" ({rel})")
            }
        );
        let _ = writeln!(
            svg,
            r##"<rect x="0" y="{y:.1}" width="{WIDTH}" height="{LANE}" fill="{fill}"/><text x="8" y="{:.1}" fill="#212121" xml:space="preserve"{}>{}<title>{}</title></text>"##,
            mid(i as f64) + 4.0,
            if o.relation == Some(Relation::Target) {
                r#" font-weight="bold""#
            } else {
                ""
            },
            esc(&label),
            esc(&format!(
                "{} {}/{} uid {}",
                o.api_version, o.namespace, o.name, o.uid
            ))
        );
        if let Some(created) = o.created_ms {
            let end = o.deleted_ms.unwrap_or(last);
            let _ = writeln!(
                svg,
                r##"<line class="z" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#bdbdbd" stroke-width="1"/>"##,
                x(created),
                mid(i as f64),
                x(end),
                mid(i as f64)
            );
        }
        for (from, to, state) in &o.states {
            let (x1, x2) = (x(*from), x(*to));
            let _ = writeln!(
                svg,
                r##"<rect class="z zw" x="{x1:.1}" y="{:.1}" width="{:.1}" height="10" fill="{}" opacity="0.85"><title>{}</title></rect>"##,
                mid(i as f64) - 5.0,
                (x2 - x1).max(1.5),
                state_colour(state),
                esc(&format!(
                    "{}/{}: {state} from {} to {}",
                    o.kind,
                    o.name,
                    time(*from),
                    time(*to)
                ))
            );
        }
    }
    for e in &t.entries {
        let hover = esc(&format!(
            "{} {} {}{}: {}{}",
            time(e.at_ms),
            e.type_,
            e.reason,
            if e.count > 1 {
                format!(" ×{}", e.count)
            } else {
                String::new()
            },
            e.message,
            if e.writers.is_empty() {
                String::new()
            } else {
                format!(" (by {})", e.writers.join(", "))
            }
        ));
        match e.entry {
            EntryKind::Gap => {
                let (x1, x2) = (x(e.at_ms), x(e.until_ms.unwrap_or(e.at_ms)));
                let _ = writeln!(
                    svg,
                    r##"<rect class="z zw" x="{x1:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="url(#hatch)" opacity="0.8"><title>{hover}</title></rect>"##,
                    (x2 - x1).max(3.0),
                    lanes * LANE
                );
            }
            EntryKind::Transition => {
                let y = mid(lane_of(&e.object.kind, &e.object.name));
                let colour = if e.type_ == "Warning" {
                    "#e65100"
                } else {
                    "#263238"
                };
                let _ = writeln!(
                    svg,
                    r##"<rect class="z" x="{:.1}" y="{:.1}" width="3" height="22" fill="{colour}"><title>{hover}</title></rect>"##,
                    x(e.at_ms) - 1.5,
                    y - 11.0
                );
            }
            EntryKind::Event => {
                let y = mid(lane_of(&e.object.kind, &e.object.name)) - 9.0;
                let colour = if e.type_ == "Warning" {
                    "#d84315"
                } else {
                    "#1565c0"
                };
                if let Some(until) = e.until_ms {
                    let _ = writeln!(
                        svg,
                        r##"<line class="z" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="2" opacity="0.6"><title>{hover}</title></line>"##,
                        x(e.at_ms),
                        x(until)
                    );
                }
                let _ = writeln!(
                    svg,
                    r##"<circle class="z" cx="{:.1}" cy="{y:.1}" r="5" fill="{colour}"><title>{hover}</title></circle>"##,
                    x(e.at_ms)
                );
            }
        }
    }
    svg.push_str("</svg>\n");

    let mut rows = String::new();
    for e in &t.entries {
        let class = match (e.entry, e.type_.as_str()) {
            (EntryKind::Gap, _) => "gap",
            (_, "Warning") => "warn",
            _ => "",
        };
        let _ = writeln!(
            rows,
            "<tr class=\"{class}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&time(e.at_ms)),
            esc(&format!("{}/{}", e.object.kind, e.object.name)),
            esc(&format!("{:?}", e.entry).to_lowercase()),
            esc(&e.reason),
            esc(&if e.count > 1 {
                format!("×{} {}", e.count, e.message)
            } else {
                e.message.clone()
            }),
            esc(&e.writers.join(", "))
        );
    }
    let mut summary = String::new();
    if let Some(sm) = &t.summary {
        summary.push_str("<dl class=\"summary\">");
        for (label, text) in crate::timeline::summary::lines(sm) {
            let _ = write!(summary, "<dt>{}</dt><dd>{}</dd>", esc(label), esc(&text));
        }
        summary.push_str("</dl>\n");
    }
    write!(
        out,
        r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 24px; color: #212121; }}
h1 {{ font-size: 20px; margin: 0 0 4px; }}
.sub {{ color: #616161; margin-bottom: 12px; }}
.legend span {{ display: inline-block; margin-right: 14px; }}
.legend i {{ display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -2px; }}
table {{ border-collapse: collapse; margin-top: 20px; font-size: 13px; }}
td, th {{ border-bottom: 1px solid #eee; padding: 3px 8px; text-align: left; vertical-align: top; }}
tr.warn td {{ background: #fff3e0; }}
tr.gap td {{ background: #ffebee; }}
dl.summary {{ display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0 16px; font-size: 14px; }}
dl.summary dt {{ font-weight: bold; }}
dl.summary dd {{ margin: 0; }}
.zoom {{ margin: 8px 0 4px; font-size: 13px; color: #616161; }}
.detail {{ min-height: 1.4em; font-size: 13px; padding: 2px 6px; background: #f5f5f5; white-space: pre-wrap; }}
svg {{ cursor: grab; user-select: none; }}
</style></head><body>
<h1>{title}</h1>
<div class="sub">{} → {} · {} object(s) · {} entries · recorded by kubectl-diag</div>
{summary}<div class="legend"><span><i style="background:#2e7d32"></i>ready</span><span><i style="background:#f9a825"></i>not ready</span><span><i style="background:#90a4ae"></i>pending</span><span><i style="background:#616161"></i>terminating</span><span><i style="background:#1565c0;border-radius:6px"></i>Normal event</span><span><i style="background:#d84315;border-radius:6px"></i>Warning event</span><span><i style="background:#263238;width:3px"></i>change</span><span><i style="background:url(#);background:repeating-linear-gradient(45deg,#fff3e0,#fff3e0 3px,#f0a070 3px,#f0a070 6px)"></i>no data (recorder gap)</span></div>
<div class="zoom"><button type="button" id="zin">+</button> <button type="button" id="zout">−</button> <button type="button" id="zreset">reset</button> <span>wheel to zoom, drag to pan; hover a mark for its details</span></div>
<div id="detail" class="detail">&nbsp;</div>
{svg}<script>{ZOOM_JS}</script><table><tr><th>time (UTC)</th><th>object</th><th>entry</th><th>reason</th><th>message</th><th>writer</th></tr>
{rows}</table></body></html>
"##,
        esc(&time(first)),
        esc(&time(last)),
        t.objects.len(),
        t.entries.len(),
        title = esc(title),
        ZOOM_JS = zoom_js(),
    )
}

/// Zoom and pan on the time axis, and a details line for the hovered mark: inline,
/// no network, no libraries. Marks (`class="z"`) move with the axis; spans
/// (`class="z zw"`) also stretch; lane labels stay put. Redraws are batched per frame.
fn zoom_js() -> String {
    format!(
        r#"(function(){{
var svg=document.querySelector('svg'),L={LABEL},P={plot},W={WIDTH},k=1,tx=0,queued=false;
var els=[].slice.call(svg.querySelectorAll('.z')).map(function(e){{
  var o={{e:e,w:e.classList.contains('zw')}};
  ['x','x1','x2','cx','width'].forEach(function(a){{if(e.hasAttribute(a))o[a]=parseFloat(e.getAttribute(a));}});
  e.setAttribute('clip-path','url(#plotclip)');return o;}});
function X(v){{return L+(v-L)*k+tx;}}
function draw(){{queued=false;els.forEach(function(o){{var e=o.e;
  ['x','x1','x2','cx'].forEach(function(a){{if(a in o)e.setAttribute(a,X(o[a]).toFixed(1));}});
  if(o.w&&'width' in o)e.setAttribute('width',Math.max(o.width*k,1.5).toFixed(1));}});}}
function later(){{if(!queued){{queued=true;requestAnimationFrame(draw);}}}}
function clamp(){{tx=Math.min(0,Math.max(tx,P-P*k));}}
function zoom(f,at){{var nk=Math.min(Math.max(k*f,1),5000);tx=at-L-(at-L-tx)*nk/k;k=nk;clamp();later();}}
function pt(ev){{var r=svg.getBoundingClientRect();return (ev.clientX-r.left)*W/r.width;}}
svg.addEventListener('wheel',function(ev){{ev.preventDefault();zoom(ev.deltaY<0?1.25:0.8,Math.max(pt(ev),L));}},{{passive:false}});
var drag=null;
svg.addEventListener('mousedown',function(ev){{drag={{x:pt(ev),tx:tx}};svg.style.cursor='grabbing';}});
window.addEventListener('mousemove',function(ev){{if(drag){{tx=drag.tx+pt(ev)-drag.x;clamp();later();}}}});
window.addEventListener('mouseup',function(){{drag=null;svg.style.cursor='';}});
document.getElementById('zin').onclick=function(){{zoom(2,L+P/2);}};
document.getElementById('zout').onclick=function(){{zoom(0.5,L+P/2);}};
document.getElementById('zreset').onclick=function(){{k=1;tx=0;later();}};
var detail=document.getElementById('detail');
svg.addEventListener('mouseover',function(ev){{var t=ev.target.querySelector&&ev.target.querySelector('title');if(t)detail.textContent=t.textContent;}});
}})();"#,
        plot = WIDTH - LABEL - 20.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_window_labels_its_axis_to_the_millisecond() {
        let at = 1_795_000_000_123; // 2026-11-18T…:…:00.123Z
        assert_eq!(axis_label(at, 500.0).len(), "14:13:45.123".len());
        assert!(axis_label(at, 500.0).ends_with(".123"));
        assert_eq!(axis_label(at, 60_000.0).len(), "14:13:45".len());
    }
}
