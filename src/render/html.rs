//! `timeline -o html`: one self-contained HTML file (one inline script, no
//! external assets) with a swimlane picture — a lane per object, an owner's
//! lanes folded under it, its readiness as state bars, transitions as ticks,
//! Events as marks coloured by type, the recorder's gaps hatched across all
//! lanes; hover details on everything — and the same entries as a table below
//! it. Lanes, state bars and gaps are SVG; the marks, which can number tens of
//! thousands, are drawn on a canvas for the lanes on screen.

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

/// The state bars' colours with what the legend calls them: the one table
/// both read, so that no colour on the page goes unexplained (issue 27.3: a
/// Deployment's `progressing` bar was blue and the legend did not say so).
const STATE_COLOURS: &[(&str, &str, &str)] = &[
    ("ready", "#2e7d32", "ready / done"),
    ("done", "#2e7d32", "ready / done"),
    ("progressing", "#1e88e5", "progressing (rollout under way)"),
    ("pending", "#90a4ae", "pending"),
    ("terminating", "#616161", "terminating"),
    ("failed", "#c62828", "failed"),
    ("", NOT_READY, "not ready"),
];
const NOT_READY: &str = "#f9a825";

/// The marks' colours and what the legend calls them: (colour, label, round).
const MARK_COLOURS: &[(&str, &str, bool)] = &[
    ("#1565c0", "Normal event", true),
    ("#d84315", "Warning event", true),
    ("#263238", "change", false),
    ("#e65100", "change to a bad state", false),
];

fn state_colour(state: &str) -> &'static str {
    STATE_COLOURS
        .iter()
        .find(|(s, _, _)| *s == state)
        .map_or(NOT_READY, |(_, colour, _)| colour)
}

/// The legend: every state colour once, every mark colour, the gap hatch.
fn legend() -> String {
    let mut out = String::from(r#"<div class="legend">"#);
    let mut seen: Vec<&str> = Vec::new();
    for (_, colour, label) in STATE_COLOURS {
        if seen.contains(colour) {
            continue;
        }
        seen.push(colour);
        out.push_str(&format!(
            r#"<span><i style="background:{colour}"></i>{label}</span>"#
        ));
    }
    for (colour, label, round) in MARK_COLOURS {
        let shape = if *round {
            ";border-radius:6px"
        } else {
            ";width:3px"
        };
        out.push_str(&format!(
            r#"<span><i style="background:{colour}{shape}"></i>{label}</span>"#
        ));
    }
    out.push_str(r#"<span><i style="background:url(#);background:repeating-linear-gradient(45deg,#fff3e0,#fff3e0 3px,#f0a070 3px,#f0a070 6px)"></i>no data (recorder gap)</span></div>"#);
    out
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
        Some(Relation::Uses) => "uses",
        Some(Relation::Selects) => "selects",
        None => "",
    }
}

/// The lanes in tree order: each owner followed by what it owns (depth first),
/// everything else (Nodes, claims, owners of owners) in list order. Returns the
/// objects' indices in lane order and, per lane, its owner's lane.
fn lane_order(t: &Timeline) -> (Vec<usize>, Vec<Option<usize>>) {
    let n = t.objects.len();
    let by_uid: std::collections::HashMap<&str, usize> = t
        .objects
        .iter()
        .enumerate()
        .filter(|(_, o)| !o.uid.is_empty())
        .map(|(i, o)| (o.uid.as_str(), i))
        .collect();
    let owner: Vec<Option<usize>> = (0..n)
        .map(|i| {
            t.objects[i]
                .owner_uid
                .as_deref()
                .and_then(|u| by_uid.get(u).copied())
                .filter(|o| *o != i)
        })
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, o) in owner.iter().enumerate() {
        if let Some(o) = o {
            children[*o].push(i);
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    // NB: roots first, then whatever an ownership cycle left unplaced (uids are
    // unique, but a recording could still name each other as owners).
    let roots = (0..n)
        .filter(|i| owner[*i].is_none())
        .chain(0..n)
        .collect::<Vec<_>>();
    for root in roots {
        let mut stack = vec![root];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut placed[i], true) {
                continue;
            }
            order.push(i);
            stack.extend(children[i].iter().rev().filter(|c| !placed[**c]));
        }
    }
    let mut lane = vec![0; n];
    for (l, i) in order.iter().enumerate() {
        lane[*i] = l;
    }
    let parents = order
        .iter()
        .map(|i| owner[*i].map(|o| lane[o]).filter(|p| *p < lane[*i]))
        .collect();
    (order, parents)
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
    let axis = Axis {
        t0: first as f64 - span * 0.02,
        t1: last as f64 + span * 0.02,
    };
    let (order, parents) = lane_order(t);
    let lanes = t.objects.len().max(1) as f64;
    let height = TOP + lanes * LANE + 30.0;
    let mut svg = String::new();
    svg_axis(&mut svg, &axis, height);
    svg_lanes(&mut svg, t, (&order, &parents), &axis, last);
    let marks = marks(&mut svg, t, &order, &axis);
    svg.push_str("</svg>\n");
    let rows = rows(t);
    let summary = summary(t);
    let legend = legend();
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
table {{ border-collapse: collapse; font-size: 13px; }}
noscript table, #entries {{ margin-top: 20px; }}
td, th {{ border-bottom: 1px solid #eee; padding: 3px 8px; text-align: left; vertical-align: top; }}
td:nth-child(-n+4) {{ white-space: nowrap; }}
#entries .blk {{ content-visibility: auto; contain-intrinsic-size: auto {}px; }}
#entries table {{ table-layout: fixed; width: 100%; }}
#entries td {{ overflow-wrap: anywhere; white-space: normal; }}
#entries :is(td, th):nth-child(1) {{ width: 14em; }}
#entries :is(td, th):nth-child(2) {{ width: 17em; }}
#entries :is(td, th):nth-child(3) {{ width: 6em; }}
#entries :is(td, th):nth-child(4) {{ width: 10em; }}
#entries :is(td, th):nth-child(6) {{ width: 12em; }}
tr.warn td {{ background: #fff3e0; }}
tr.gap td {{ background: #ffebee; }}
dl.summary {{ display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0 16px; font-size: 14px; }}
dl.summary dt {{ font-weight: bold; }}
dl.summary dd {{ margin: 0; }}
.zoom {{ margin: 8px 0 4px; font-size: 13px; color: #616161; }}
.detail {{ min-height: 1.4em; font-size: 13px; padding: 2px 6px; background: #f5f5f5; white-space: pre-wrap; }}
#plot {{ position: relative; width: {WIDTH}px; }}
#plot canvas {{ position: absolute; left: {LABEL}px; top: 0; pointer-events: none; }}
svg {{ cursor: grab; user-select: none; display: block; }}
svg .tog {{ cursor: pointer; }}
</style></head><body>
<h1>{title}</h1>
<div class="sub">{} → {} · {} object(s) · {} entries · recorded by kubectl-diag</div>
{summary}{legend}
<div class="zoom"><button type="button" id="zin">+</button> <button type="button" id="zout">−</button> <button type="button" id="zreset">reset</button> <button type="button" id="unfoldall">unfold all</button> <button type="button" id="foldall">fold all</button> <span>wheel to zoom, drag to pan; ▸/▾ folds an owner's lanes; hover a mark for its details</span></div>
<div id="detail" class="detail">&nbsp;</div>
<div id="plot">{svg}<canvas id="cv" width="0" height="0"></canvas></div><pre id="marks" hidden>{marks}</pre><noscript id="rows"><table><thead><tr><th>time (UTC)</th><th>object</th><th>entry</th><th>reason</th><th>message</th><th>writer</th></tr></thead>
{rows}</table></noscript><script>{ZOOM_JS}</script></body></html>
"##,
        ROWS_A_BLOCK * 22,
        esc(&time(first)),
        esc(&time(last)),
        t.objects.len(),
        t.entries.len(),
        title = esc(title),
        ZOOM_JS = zoom_js(),
    )
}

/// Where a time falls on the picture: the plot spans `t0..t1` (ms).
struct Axis {
    t0: f64,
    t1: f64,
}

impl Axis {
    fn x(&self, ms: i64) -> f64 {
        let plot = WIDTH - LABEL - 20.0;
        LABEL + ((ms as f64 - self.t0) / (self.t1 - self.t0)).clamp(0.0, 1.0) * plot
    }
}

/// The picture's head and its time axis: five ticks.
fn svg_axis(svg: &mut String, axis: &Axis, height: f64) {
    let _ = writeln!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="system-ui, sans-serif" font-size="12">
<defs><pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#fff3e0"/><line x1="0" y1="0" x2="0" y2="8" stroke="#e65100" stroke-width="3" opacity="0.5"/></pattern><clipPath id="plotclip"><rect id="cliprect" x="{LABEL}" y="0" width="{}" height="{height}"/></clipPath></defs>"##,
        WIDTH - LABEL
    );
    // Time axis: five ticks.
    for i in 0..=4 {
        let ms = (axis.t0 + (axis.t1 - axis.t0) * i as f64 / 4.0) as i64;
        let px = axis.x(ms);
        let anchor = match i {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        let _ = writeln!(
            svg,
            r##"<line class="z tick" x1="{px:.1}" y1="{}" x2="{px:.1}" y2="{:.1}" stroke="#e0e0e0"/><text class="z" x="{px:.1}" y="{}" text-anchor="{anchor}" fill="#555">{}</text>"##,
            TOP - 6.0,
            height - 24.0,
            TOP - 12.0,
            esc(&axis_label(ms, (axis.t1 - axis.t0) / 4.0))
        );
    }
}

/// One group a lane, with its label, its life line and its states.
fn svg_lanes(
    svg: &mut String,
    t: &Timeline,
    (order, parents): (&[usize], &[Option<usize>]),
    axis: &Axis,
    last: i64,
) {
    let mid = LANE / 2.0;
    // One group a lane, in lane-local coordinates, so that folding moves whole lanes.
    for (l, i) in order.iter().enumerate() {
        let o = &t.objects[*i];
        let fill = if l % 2 == 0 { "#fafafa" } else { "#ffffff" };
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
            r##"<g class="lane" data-parent="{}" transform="translate(0,{:.1})"><rect class="bg" x="0" y="0" width="{WIDTH}" height="{LANE}" fill="{fill}"/><text x="8" y="{:.1}" fill="#212121" xml:space="preserve"{}>{}<title>{}</title></text><text class="tog" x="{:.1}" y="{:.1}" text-anchor="end" fill="#1565c0"></text>"##,
            parents[l].map_or(-1, |p| p as i64),
            TOP + l as f64 * LANE,
            mid + 4.0,
            if o.relation == Some(Relation::Target) {
                r#" font-weight="bold""#
            } else {
                ""
            },
            esc(&label),
            esc(&format!(
                "{} {}/{} uid {}",
                o.api_version, o.namespace, o.name, o.uid
            )),
            LABEL - 6.0,
            mid + 4.0,
        );
        if let Some(created) = o.created_ms {
            let end = o.deleted_ms.unwrap_or(last);
            let _ = writeln!(
                svg,
                r##"<line class="z" x1="{:.1}" y1="{mid:.1}" x2="{:.1}" y2="{mid:.1}" stroke="#bdbdbd" stroke-width="1"/>"##,
                axis.x(created),
                axis.x(end),
            );
        }
        for (from, to, state) in &o.states {
            let (x1, x2) = (axis.x(*from), axis.x(*to));
            let _ = writeln!(
                svg,
                r##"<rect class="z zw" x="{x1:.1}" y="{:.1}" width="{:.1}" height="10" fill="{}" opacity="0.85"><title>{}</title></rect>"##,
                mid - 5.0,
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
        svg.push_str("</g>\n");
    }
}

/// The gaps (drawn in the picture) and the lines of the marks the script
/// draws: one per transition or Event.
fn marks(svg: &mut String, t: &Timeline, order: &[usize], axis: &Axis) -> String {
    let lanes = t.objects.len().max(1) as f64;
    let lane_by_key: std::collections::HashMap<(&str, &str), usize> = order
        .iter()
        .enumerate()
        .rev()
        .map(|(l, i)| {
            (
                (t.objects[*i].kind.as_str(), t.objects[*i].name.as_str()),
                l,
            )
        })
        .collect();
    let lane_of = |kind: &str, name: &str| lane_by_key.get(&(kind, name)).copied().unwrap_or(0);
    // NB: transitions and Events are not SVG elements but lines of a hidden <pre>
    // that the script draws on a canvas, only for the lanes on screen: 50,000
    // SVG marks took Chromium seconds to lay out and every zoom step to move
    // (docs/performance.md). A line, fields apart by one space (a tab would be
    // a control character in a page that must stay inert to `cat`): lane, kind
    // (t/e), x, x of the last occurrence or empty, colour, hover text.
    let mut marks = String::new();
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
        let warning = e.type_ == "Warning";
        match e.entry {
            EntryKind::Gap => {
                let (x1, x2) = (axis.x(e.at_ms), axis.x(e.until_ms.unwrap_or(e.at_ms)));
                let _ = writeln!(
                    svg,
                    r##"<rect class="z zw gap" x="{x1:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="url(#hatch)" opacity="0.8"><title>{hover}</title></rect>"##,
                    (x2 - x1).max(3.0),
                    lanes * LANE
                );
            }
            EntryKind::Transition | EntryKind::Event => {
                let (kind, colour) = match (e.entry, warning) {
                    (EntryKind::Transition, true) => ('t', MARK_COLOURS[3].0),
                    (EntryKind::Transition, false) => ('t', MARK_COLOURS[2].0),
                    (_, true) => ('e', MARK_COLOURS[1].0),
                    (_, false) => ('e', MARK_COLOURS[0].0),
                };
                let until = match (e.entry, e.until_ms) {
                    (EntryKind::Event, Some(until)) => format!("{:.1}", axis.x(until)),
                    _ => String::new(),
                };
                let _ = writeln!(
                    marks,
                    "{} {kind} {:.1} {until} {colour} {hover}",
                    lane_of(&e.object.kind, &e.object.name),
                    axis.x(e.at_ms),
                );
            }
        }
    }
    marks
}

/// The entries' table rows, a `<tbody>` every [`ROWS_A_BLOCK`].
fn rows(t: &Timeline) -> String {
    // NB: a table of 50,000 rows took Chromium three seconds to parse, the
    // picture waiting behind it, and more to lay out. With scripts on, a
    // <noscript> is read as plain text, so the script puts the rows in itself,
    // a block (`<tbody>`) at a time between the user's own events, each block
    // its own fixed-layout table in a `<div>` that is not laid out while off
    // screen (`content-visibility`, which a `<tbody>` ignores). Without
    // scripts the browser shows the one table as is.
    let mut rows = String::new();
    for (i, e) in t.entries.iter().enumerate() {
        if i % ROWS_A_BLOCK == 0 {
            rows.push_str(if i == 0 { "<tbody>" } else { "</tbody><tbody>" });
        }
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
    if !t.entries.is_empty() {
        rows.push_str("</tbody>");
    }
    rows
}

/// The summary as a definition list, or nothing.
fn summary(t: &Timeline) -> String {
    let mut summary = String::new();
    if let Some(sm) = &t.summary {
        summary.push_str("<dl class=\"summary\">");
        for (label, text) in crate::timeline::summary::lines(sm) {
            let _ = write!(summary, "<dt>{}</dt><dd>{}</dd>", esc(label), esc(&text));
        }
        summary.push_str("</dl>\n");
    }
    summary
}

/// Rows of the entries' table put in and laid out together (a `<tbody>`).
const ROWS_A_BLOCK: usize = 200;

/// Zoom and pan on the time axis, folding lanes by owner, the marks drawn on a
/// canvas for the lanes on screen, and a details line for the hovered mark:
/// inline, no network, no libraries. SVG marks (`class="z"`) move with the
/// axis; spans (`class="z zw"`) also stretch; lane labels stay put. Redraws
/// are batched per frame. When it has drawn, `<html>` gets `data-drawn-ms`
/// (`performance.now()`), `data-lanes` (lanes shown), `data-marks` (marks on
/// screen) and `data-frame-ms` (how long that first frame took: each zoom or
/// pan step redraws the same way); later `data-loaded-ms` (the load event) and
/// `data-table-ms` (the table's last row is in). The benchmark and the
/// screenshot test read them back.
fn zoom_js() -> String {
    format!(
        r#"(function(){{
var svg=document.querySelector('svg'),plotEl=document.getElementById('plot'),cv=document.getElementById('cv'),ctx=cv.getContext('2d');
var L={LABEL},P={plot},W={WIDTH},T={TOP},H={LANE},k=1,tx=0,queued=false;
var lanes=[].slice.call(svg.querySelectorAll('g.lane')),n=lanes.length,li=new Map();lanes.forEach(function(g,i){{li.set(g,i);}});
var els=[].slice.call(svg.querySelectorAll('.z')).map(function(e){{
  var g=e.closest('g.lane'),o={{e:e,w:e.classList.contains('zw'),l:g?li.get(g):-1}};
  ['x','x1','x2','cx','width'].forEach(function(a){{if(e.hasAttribute(a))o[a]=parseFloat(e.getAttribute(a));}});
  e.setAttribute('clip-path','url(#plotclip)');return o;}});
var par=lanes.map(function(g){{return parseInt(g.getAttribute('data-parent'),10);}});
var kids=par.map(function(){{return 0;}});par.forEach(function(p){{if(p>=0)kids[p]++;}});
var unfold=location.hash==='#unfold';
var folded=kids.map(function(c){{return c>5&&!unfold;}});
var marks=lanes.map(function(){{return [];}});
document.getElementById('marks').textContent.split('\n').forEach(function(line){{
  if(!line)return;var f=line.split(' '),l=+f[0];
  if(marks[l])marks[l].push({{k:f[1],x:+f[2],x2:f[3]===''?null:+f[3],c:f[4],h:f.slice(5).join(' ')}});}});
var vis=[],row=[];
function layout(){{
  var hidden=[];vis=[];row=[];
  for(var i=0;i<n;i++){{
    hidden[i]=par[i]>=0&&(folded[par[i]]||hidden[par[i]]);
    var g=lanes[i];
    if(hidden[i]){{g.style.display='none';row[i]=-1;continue;}}
    row[i]=vis.length;g.style.display='';
    g.setAttribute('transform','translate(0,'+(T+vis.length*H)+')');
    g.querySelector('.bg').setAttribute('fill',vis.length%2?'#ffffff':'#fafafa');
    g.querySelector('.tog').textContent=kids[i]?(folded[i]?'▸ '+kids[i]:'▾'):'';
    vis.push(i);}}
  var h=T+Math.max(vis.length,1)*H+30;
  svg.setAttribute('height',h);svg.setAttribute('viewBox','0 0 '+W+' '+h);
  document.getElementById('cliprect').setAttribute('height',h);
  [].forEach.call(svg.querySelectorAll('.tick'),function(e){{e.setAttribute('y2',h-24);}});
  [].forEach.call(svg.querySelectorAll('.gap'),function(e){{e.setAttribute('height',Math.max(vis.length,1)*H);}});
  document.documentElement.setAttribute('data-lanes',vis.length);}}
function X(v){{return L+(v-L)*k+tx;}}
function paint(){{
  var r=plotEl.getBoundingClientRect(),top=Math.max(T,-r.top),bottom=Math.min(T+vis.length*H,window.innerHeight-r.top);
  if(bottom<=top){{cv.style.display='none';shown(0);return;}}
  var dpr=window.devicePixelRatio||1,w=W-L,h=Math.ceil(bottom-top);
  cv.style.display='';cv.style.top=top+'px';cv.style.width=w+'px';cv.style.height=h+'px';
  if(cv.width!==Math.round(w*dpr)||cv.height!==Math.round(h*dpr)){{cv.width=Math.round(w*dpr);cv.height=Math.round(h*dpr);}}
  ctx.setTransform(dpr,0,0,dpr,0,0);ctx.clearRect(0,0,w,h);ctx.translate(-L,-top);
  ctx.save();ctx.beginPath();ctx.rect(L,top,w,h);ctx.clip();
  var c=0;
  for(var v=Math.max(0,Math.floor((top-T)/H));v<vis.length&&T+v*H<bottom;v++){{
    var y=T+v*H+H/2,ms=marks[vis[v]];
    for(var j=0;j<ms.length;j++){{var m=ms[j],px=X(m.x);
      if(m.k==='t'){{if(px<L-2||px>W+2)continue;ctx.fillStyle=m.c;ctx.fillRect(px-1.5,y-11,3,22);c++;continue;}}
      if(m.x2!==null){{var p2=X(m.x2);if(p2>=L&&px<=W){{ctx.globalAlpha=0.6;ctx.strokeStyle=m.c;ctx.lineWidth=2;ctx.beginPath();ctx.moveTo(px,y-9);ctx.lineTo(p2,y-9);ctx.stroke();ctx.globalAlpha=1;}}}}
      if(px<L-6||px>W+6)continue;
      ctx.fillStyle=m.c;ctx.beginPath();ctx.arc(px,y-9,5,0,6.2832);ctx.fill();c++;}}}}
  ctx.restore();shown(c);}}
function shown(c){{document.documentElement.setAttribute('data-marks',c);}}
function draw(){{queued=false;els.forEach(function(o){{var e=o.e;if(o.l>=0&&row[o.l]<0)return;
  ['x','x1','x2','cx'].forEach(function(a){{if(a in o)e.setAttribute(a,X(o[a]).toFixed(1));}});
  if(o.w&&'width' in o)e.setAttribute('width',Math.max(o.width*k,1.5).toFixed(1));}});paint();}}
function later(){{if(!queued){{queued=true;requestAnimationFrame(draw);}}}}
function clamp(){{tx=Math.min(0,Math.max(tx,P-P*k));}}
function zoom(f,at){{var nk=Math.min(Math.max(k*f,1),5000);tx=at-L-(at-L-tx)*nk/k;k=nk;clamp();later();}}
function pt(ev){{var r=svg.getBoundingClientRect();return (ev.clientX-r.left)*W/r.width;}}
plotEl.addEventListener('wheel',function(ev){{ev.preventDefault();zoom(ev.deltaY<0?1.25:0.8,Math.max(pt(ev),L));}},{{passive:false}});
var drag=null,moved=false;
svg.addEventListener('mousedown',function(ev){{drag={{x:pt(ev),tx:tx}};moved=false;svg.style.cursor='grabbing';}});
window.addEventListener('mousemove',function(ev){{if(drag){{if(Math.abs(pt(ev)-drag.x)>2)moved=true;tx=drag.tx+pt(ev)-drag.x;clamp();later();}}}});
window.addEventListener('mouseup',function(){{drag=null;svg.style.cursor='';}});
window.addEventListener('scroll',later);window.addEventListener('resize',later);
svg.addEventListener('click',function(ev){{var g=ev.target.closest&&ev.target.closest('g.lane');
  if(moved||pt(ev)>=L||!g||!kids[li.get(g)])return;var i=li.get(g);folded[i]=!folded[i];layout();later();}});
function all(f){{for(var i=0;i<n;i++)if(kids[i])folded[i]=f;layout();later();}}
document.getElementById('unfoldall').onclick=function(){{all(false);}};
document.getElementById('foldall').onclick=function(){{all(true);}};
document.getElementById('zin').onclick=function(){{zoom(2,L+P/2);}};
document.getElementById('zout').onclick=function(){{zoom(0.5,L+P/2);}};
document.getElementById('zreset').onclick=function(){{k=1;tx=0;later();}};
var detail=document.getElementById('detail');
svg.addEventListener('mousemove',function(ev){{
  var r=svg.getBoundingClientRect(),px=pt(ev),v=Math.floor((ev.clientY-r.top-T)/H),best=null,d=6;
  if(px>=L&&v>=0&&v<vis.length)marks[vis[v]].forEach(function(m){{var e=Math.abs(X(m.x)-px);if(e<d){{d=e;best=m;}}}});
  if(best){{detail.textContent=best.h;return;}}
  var t=ev.target.querySelector&&ev.target.querySelector('title');if(t)detail.textContent=t.textContent;}});
layout();plotEl.getBoundingClientRect();var f0=performance.now();draw();
document.documentElement.setAttribute('data-frame-ms',(performance.now()-f0).toFixed(1));
document.documentElement.setAttribute('data-drawn-ms',performance.now().toFixed(0));
window.addEventListener('load',function(){{document.documentElement.setAttribute('data-loaded-ms',performance.now().toFixed(0));}});
var nos=document.getElementById('rows'),text=nos.textContent,box=document.createElement('div'),cut=text.indexOf('<tbody>'),end=text.lastIndexOf('</table>');
box.id='entries';box.innerHTML='<table>'+text.slice(text.indexOf('<table>')+7,cut<0?end:cut)+'</table>';nos.parentNode.insertBefore(box,nos);
var blocks=cut<0?[]:text.slice(cut,end).split('</tbody>'),b=0;
(function more(){{var t=performance.now();
  while(b<blocks.length&&performance.now()-t<30){{if(blocks[b].trim())box.insertAdjacentHTML('beforeend','<div class="blk"><table>'+blocks[b]+'</tbody></table></div>');b++;}}
  if(b<blocks.length)setTimeout(more,0);else document.documentElement.setAttribute('data-table-ms',performance.now().toFixed(0));}})();
}})();"#,
        plot = WIDTH - LABEL - 20.0
    )
}

#[cfg(test)]
mod tests {

    /// Issue 27.3: a blue `progressing` bar the legend did not explain.
    #[test]
    fn every_colour_the_page_draws_is_in_the_legend() {
        let legend = legend();
        for state in [
            "ready",
            "done",
            "progressing",
            "pending",
            "terminating",
            "failed",
            "odd",
        ] {
            let colour = state_colour(state);
            assert!(
                legend.contains(colour),
                "{state} ({colour}) is not in the legend"
            );
        }
        for (colour, label, _) in MARK_COLOURS {
            assert!(legend.contains(colour) && legend.contains(label), "{label}");
        }
    }

    use super::*;

    #[test]
    fn a_short_window_labels_its_axis_to_the_millisecond() {
        let at = 1_795_000_000_123; // 2026-11-18T…:…:00.123Z
        assert_eq!(axis_label(at, 500.0).len(), "14:13:45.123".len());
        assert!(axis_label(at, 500.0).ends_with(".123"));
        assert_eq!(axis_label(at, 60_000.0).len(), "14:13:45".len());
    }

    fn line(kind: &str, name: &str, uid: &str, owner: Option<&str>) -> crate::timeline::ObjectLine {
        crate::timeline::ObjectLine {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: "shop".into(),
            name: name.into(),
            uid: uid.into(),
            relation: None,
            depth: 0,
            created: None,
            deleted: None,
            deleted_after: None,
            created_ms: None,
            deleted_ms: None,
            states: Vec::new(),
            owner_uid: owner.map(Into::into),
        }
    }

    fn timeline(objects: Vec<crate::timeline::ObjectLine>) -> Timeline {
        Timeline {
            since: String::new(),
            until: String::new(),
            since_ms: 0,
            until_ms: 1,
            objects,
            entries: Vec::new(),
            summary: None,
        }
    }

    #[test]
    fn lanes_follow_their_owner_in_list_order() {
        // As the store lists them: owners, the target, then each level down, then Nodes.
        let t = timeline(vec![
            line("Deployment", "web", "d", None),
            line("ReplicaSet", "web-1", "r1", Some("d")),
            line("ReplicaSet", "web-2", "r2", Some("d")),
            line("Pod", "web-2-a", "p2a", Some("r2")),
            line("Pod", "web-1-a", "p1a", Some("r1")),
            line("Pod", "web-1-b", "p1b", Some("r1")),
            line("Node", "n1", "n", None),
            line("Pod", "orphan", "o", Some("gone")),
        ]);
        let (order, parents) = lane_order(&t);
        let names: Vec<&str> = order.iter().map(|i| t.objects[*i].name.as_str()).collect();
        assert_eq!(
            names,
            [
                "web", "web-1", "web-1-a", "web-1-b", "web-2", "web-2-a", "n1", "orphan"
            ]
        );
        assert_eq!(
            parents,
            [
                None,
                Some(0),
                Some(1),
                Some(1),
                Some(0),
                Some(4),
                None,
                None
            ]
        );
    }

    #[test]
    fn an_ownership_cycle_still_places_every_lane_once() {
        let t = timeline(vec![
            line("ReplicaSet", "a", "a", Some("b")),
            line("ReplicaSet", "b", "b", Some("a")),
            line("Pod", "self", "s", Some("s")),
        ]);
        let (mut order, parents) = lane_order(&t);
        assert_eq!(parents.len(), 3);
        order.sort();
        assert_eq!(order, [0, 1, 2]);
        // An owner's lane always comes before its own: the script folds in one pass.
        for (lane, parent) in parents.iter().enumerate() {
            assert!(parent.is_none_or(|p| p < lane), "{parents:?}");
        }
    }

    #[test]
    fn every_lane_names_its_owners_lane_for_the_script() {
        let t = timeline(vec![
            line("ReplicaSet", "web-1", "r1", None),
            line("Pod", "web-1-a", "p1a", Some("r1")),
        ]);
        let mut out = Vec::new();
        page(&t, "t", &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        assert_eq!(
            html.matches("<g class=\"lane\" data-parent=\"-1\"").count(),
            1
        );
        assert_eq!(
            html.matches("<g class=\"lane\" data-parent=\"0\"").count(),
            1
        );
        assert!(
            html.contains("kids[p]++") && html.contains("c>5"),
            "folded over 5 children"
        );
    }
}
