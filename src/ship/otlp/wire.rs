//! Protobuf written straight from the records, as prost writes the
//! `opentelemetry-proto` messages (fields in tag order, defaults left out), and the body of
//! one request built with it.

use super::*;

use prost::encoding::encoded_len_varint;

// The wire types this writer uses.
pub(super) const VARINT: u32 = 0;
pub(super) const FIXED64: u32 = 1;
pub(super) const LEN: u32 = 2;

/// NB: prost's `encode_varint` goes through `BufMut` a byte at a time,
/// with a capacity check each; it was a tenth of the record writer (issue 32).
#[inline]
pub(super) fn encode_varint(mut n: u64, out: &mut Vec<u8>) {
    out.reserve(10);
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

#[inline]
pub(super) fn encode_key(tag: u32, wire: u32, out: &mut Vec<u8>) {
    encode_varint(u64::from(tag << 3 | wire), out);
}

pub fn bytes_field(tag: u32, bytes: &[u8], out: &mut Vec<u8>) {
    encode_key(tag, LEN, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

pub(super) fn field_len(len: usize) -> usize {
    1 + encoded_len_varint(len as u64) + len
}

pub(super) fn any_len(v: &Val<'_>) -> usize {
    match v {
        Val::S(s) => field_len(s.len()),
        Val::I(n) => 1 + encoded_len_varint(*n as u64),
    }
}

/// An AnyValue as field `tag`.
pub fn any(tag: u32, v: &Val<'_>, out: &mut Vec<u8>) {
    encode_key(tag, LEN, out);
    encode_varint(any_len(v) as u64, out);
    match v {
        Val::S(s) => bytes_field(1, s.as_bytes(), out),
        Val::I(n) => {
            encode_key(3, VARINT, out);
            encode_varint(*n as u64, out);
        }
    }
}

/// A KeyValue as field `tag`.
pub fn key_value(tag: u32, key: &str, v: &Val<'_>, out: &mut Vec<u8>) {
    let key_len = if key.is_empty() {
        0
    } else {
        field_len(key.len())
    };
    encode_key(tag, LEN, out);
    encode_varint((key_len + field_len(any_len(v))) as u64, out);
    if !key.is_empty() {
        bytes_field(1, key.as_bytes(), out);
    }
    any(2, v, out);
}

pub fn fixed64(tag: u32, n: u64, out: &mut Vec<u8>) {
    if n != 0 {
        encode_key(tag, FIXED64, out);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

pub fn varint(tag: u32, n: u64, out: &mut Vec<u8>) {
    if n != 0 {
        encode_key(tag, VARINT, out);
        encode_varint(n, out);
    }
}

/// The framing of a length-delimited field of `len` bytes.
pub fn frame(tag: u32, len: usize, out: &mut Vec<u8>) {
    encode_key(tag, LEN, out);
    encode_varint(len as u64, out);
}

pub fn framed_len(len: usize) -> usize {
    field_len(len)
}

/// The body of one ExportLogsServiceRequest, written record by record: each
/// record's resource is written once as the key of its group, each record
/// once into its group, and both copied once more into the body.
///
/// NB: before, records were built as `opentelemetry-proto` messages (a String
/// per attribute, from a copy of the row read back from a copy of the SQLite
/// row) and encoded by prost; at 1,000 records a second that made the
/// shipper cost a third more CPU than recording alone (issue 32).
pub struct Body {
    groups: Vec<(Vec<u8>, Vec<u8>)>,
    index: HashMap<Vec<u8>, usize, foldhash::fast::RandomState>,
    key: Vec<u8>,
    scratch: Vec<u8>,
    scope: Vec<u8>,
    /// Buffers of groups already written, emptied, for the next groups.
    /// NB: a batch of 5,000 records has some 500 groups; fresh buffers each
    /// batch were page faults and frees (issue 32).
    spare: Vec<Vec<u8>>,
    /// What [`Body::finish`] writes.
    out: Vec<u8>,
    /// Records written since the last [`Body::finish`].
    pub records: usize,
}

impl Default for Body {
    fn default() -> Body {
        Body {
            groups: Vec::new(),
            index: HashMap::default(),
            key: Vec::new(),
            scratch: Vec::new(),
            scope: scope().encode_to_vec(),
            spare: Vec::new(),
            out: Vec::new(),
            records: 0,
        }
    }
}

impl Body {
    fn buffer(&mut self, from: &[u8]) -> Vec<u8> {
        let mut b = self.spare.pop().unwrap_or_default();
        b.extend_from_slice(from);
        b
    }

    pub fn push(&mut self, r: &Rec<'_>) {
        self.key.clear();
        for (k, v) in &r.resource {
            key_value(1, k, v, &mut self.key);
        }
        let at = match self.index.get(self.key.as_slice()) {
            Some(at) => *at,
            None => {
                let next = self.buffer(&[]);
                let key = std::mem::replace(&mut self.key, next);
                let (index_key, records) = (self.buffer(&key), self.buffer(&[]));
                self.index.insert(index_key, self.groups.len());
                self.groups.push((key, records));
                self.groups.len() - 1
            }
        };
        let out = &mut self.scratch;
        out.clear();
        fixed64(1, r.time_unix_nano, out);
        varint(2, r.severity_number as u64, out);
        if !r.severity_text.is_empty() {
            bytes_field(3, r.severity_text.as_bytes(), out);
        }
        any(5, &Val::S(Cow::Borrowed(&r.body)), out);
        for (k, v) in &r.attributes {
            key_value(6, k, v, out);
        }
        fixed64(11, r.observed_time_unix_nano, out);
        bytes_field(2, out, &mut self.groups[at].1);
        self.records += 1;
    }

    /// The request body of what was pushed since the last call; starts over.
    /// NB: written into a buffer kept for the next call (a fresh megabyte per
    /// request was page faults, issue 32).
    pub fn finish(&mut self) -> &[u8] {
        let scope_len = framed_len(self.scope.len());
        let size: usize = self
            .groups
            .iter()
            .map(|(res, recs)| res.len() + recs.len() + scope_len + 16)
            .sum();
        let out = &mut self.out;
        out.clear();
        out.reserve(size);
        for (mut resource, mut records) in self.groups.drain(..) {
            let scope_logs = scope_len + records.len();
            let resource_logs = framed_len(resource.len()) + framed_len(scope_logs);
            frame(1, resource_logs, out);
            frame(1, resource.len(), out);
            out.extend_from_slice(&resource);
            frame(2, scope_logs, out);
            bytes_field(1, &self.scope, out);
            out.extend_from_slice(&records);
            resource.clear();
            records.clear();
            self.spare.extend([resource, records]);
        }
        for (mut key, _) in self.index.drain() {
            key.clear();
            self.spare.push(key);
        }
        self.records = 0;
        &self.out
    }
}
