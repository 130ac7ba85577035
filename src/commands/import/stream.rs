//! JSON dumps read as a stream: a List's items one at a time, JSON Lines one
//! document at a time, so that memory does not grow with the file. Each item
//! becomes an Event observation and goes to a sink (which stores it) before
//! the next one is read; only the item being read is held as a JSON tree.

use std::io::{BufRead, Read};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::ImportError;
use crate::k8s::event::WireEvent;
use crate::model::EventObservation;

/// What the sink was given, and why reading stopped early.
pub struct Ctx<'a> {
    file: &'a str,
    now: i64,
    doc: usize,
    pub events: usize,
    pub clamped: usize,
    pub untimed: usize,
    sink: &'a mut dyn FnMut(EventObservation) -> anyhow::Result<()>,
    /// Set when an item was refused, or the sink failed: the reason reading stopped.
    stop: Option<Stop>,
}

/// Why a stream stopped before its end.
pub enum Stop {
    /// The file is not what import reads (a Pod, a broken Event).
    Bad(ImportError),
    /// Storing failed.
    Sink(anyhow::Error),
}

impl Ctx<'_> {
    fn place(&self, i: Option<usize>) -> String {
        match i {
            Some(i) => format!("document {} item {}", self.doc, i + 1),
            None => format!("document {}", self.doc),
        }
    }

    /// One item of a List (or a document of its own): an Event, to the sink.
    fn item(&mut self, i: Option<usize>, item: Value) -> Result<(), Stop> {
        let kind = item.get("kind").and_then(Value::as_str).unwrap_or("Event");
        if kind != "Event" {
            return Err(Stop::Bad(ImportError::NotAnEvent {
                file: self.file.into(),
                place: self.place(i),
                what: format!("a {kind}"),
            }));
        }
        let wire: WireEvent = serde_json::from_value(item).map_err(|e| {
            Stop::Bad(ImportError::BadEvent {
                file: self.file.into(),
                place: self.place(i),
                reason: e.to_string(),
            })
        })?;
        self.clamped += usize::from(wire.count_too_high());
        let untimed = wire.has_no_time();
        let Some(mut o) = wire.into_observation() else {
            return Err(Stop::Bad(ImportError::BadEvent {
                file: self.file.into(),
                place: self.place(i),
                reason: "it has neither metadata.uid nor metadata.name".into(),
            }));
        };
        // NB: left alone it would be stored at 1970-01-01, and dropped by
        // the first retention.
        if untimed {
            (o.first, o.last) = (self.now, self.now);
            self.untimed += 1;
        }
        self.events += 1;
        (self.sink)(o).map_err(Stop::Sink)
    }

    fn stop<E: de::Error>(&mut self, stop: Stop) -> E {
        self.stop = Some(stop);
        E::custom("stopped")
    }
}

/// One document: a List (its items streamed), an array of Events, an Event.
struct Doc<'c, 'a>(&'c mut Ctx<'a>);

impl<'de> DeserializeSeed<'de> for Doc<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Doc<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a List of Events, an array of Events or an Event")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut fields = Map::new();
        let mut list = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                list = true;
                map.next_value_seed(Items(&mut *self.0))?;
            } else {
                fields.insert(key, map.next_value()?);
            }
        }
        if list {
            return Ok(());
        }
        self.0
            .item(None, Value::Object(fields))
            .map_err(|s| self.0.stop(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Items(self.0).visit_seq(seq)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.0
            .item(None, Value::from(v))
            .map_err(|s| self.0.stop(s))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.0
            .item(None, Value::from(v))
            .map_err(|s| self.0.stop(s))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.0
            .item(None, Value::from(v))
            .map_err(|s| self.0.stop(s))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.0
            .item(None, Value::from(v))
            .map_err(|s| self.0.stop(s))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0
            .item(None, Value::from(v))
            .map_err(|s| self.0.stop(s))
    }
}

/// A List's `items` (anything but an array is ignored, as before).
struct Items<'c, 'a>(&'c mut Ctx<'a>);

impl<'de> DeserializeSeed<'de> for Items<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Items<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of Events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while let Some(item) = seq.next_element::<Value>()? {
            self.0.item(Some(i), item).map_err(|s| self.0.stop(s))?;
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
}

/// A reader that counts the lines it has handed out, so that an error in
/// the third document of JSON Lines names the line of the file.
struct Lines<R> {
    inner: R,
    newlines: usize,
}

impl<R: Read> Read for Lines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.newlines += buf[..n].iter().filter(|&&b| b == b'\n').count();
        Ok(n)
    }
}

/// Skips white space; false at the end of the input.
fn more<R: BufRead>(r: &mut Lines<R>) -> std::io::Result<bool> {
    loop {
        let buf = r.inner.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        let blank = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let newlines = buf[..blank].iter().filter(|&&b| b == b'\n').count();
        let done = blank < buf.len();
        r.inner.consume(blank);
        r.newlines += newlines;
        if done {
            return Ok(true);
        }
    }
}

/// Reads one JSON document or JSON Lines from `reader`, giving each Event to
/// `sink` as it is read. Returns the counts; a file that is not what import
/// reads stops at the first bad item, with the sink given what came before
/// (the caller rolls that back).
pub fn read<R: BufRead>(
    file: &str,
    reader: R,
    now: i64,
    sink: &mut dyn FnMut(EventObservation) -> anyhow::Result<()>,
) -> Result<Counts, Stop> {
    let mut ctx = Ctx {
        file,
        now,
        doc: 0,
        events: 0,
        clamped: 0,
        untimed: 0,
        sink,
        stop: None,
    };
    let mut src = Lines {
        inner: reader,
        newlines: 0,
    };
    let read_error = |e: std::io::Error| {
        Stop::Bad(ImportError::Read {
            file: file.into(),
            reason: e.to_string(),
        })
    };
    while more(&mut src).map_err(read_error)? {
        ctx.doc += 1;
        let before = src.newlines;
        // NB: a Deserializer a document: serde_json reads no byte past a
        // document's closing bracket, so the next one starts where it ended.
        let mut de = serde_json::Deserializer::from_reader(&mut src);
        if let Err(e) = Doc(&mut ctx).deserialize(&mut de) {
            if let Some(stop) = ctx.stop.take() {
                return Err(stop);
            }
            return Err(Stop::Bad(ImportError::Json {
                file: file.into(),
                line: before + e.line(),
                column: e.column(),
                reason: e.to_string(),
            }));
        }
    }
    if ctx.events == 0 {
        return Err(Stop::Bad(ImportError::Empty { file: file.into() }));
    }
    Ok(Counts {
        events: ctx.events,
        clamped: ctx.clamped,
        untimed: ctx.untimed,
    })
}

/// How many Events a stream held, and what was changed to store them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub events: usize,
    pub clamped: usize,
    pub untimed: usize,
}
