//! `log.record.uid`: a UUIDv5 of what a record is, so that a batch sent twice is
//! the same records twice (a collector or a store can drop the copies).

/// RFC 9562's namespace for names that are URLs.
pub(super) const NAMESPACE_URL: [u8; 16] = [
    0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8,
];

/// UUID version 5 (SHA-1) of `name` in the URL namespace, as Python's
/// `uuid.uuid5(uuid.NAMESPACE_URL, name)` gives it.
pub fn uuid5(name: &str) -> String {
    uuid5_of(&[name.as_bytes()])
}

/// [`uuid5`] of the name the parts make, joined without a copy.
pub(super) fn uuid5_of(parts: &[&[u8]]) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(&NAMESPACE_URL);
    for p in parts {
        ctx.update(p);
    }
    let d = ctx.finish();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d.as_ref()[..16]);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    // NB: one allocation: this runs once a record (a format! a byte was a tenth of the shipper's CPU).
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(36);
    for (n, x) in b.iter().enumerate() {
        if matches!(n, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(x >> 4)]));
        out.push(char::from(HEX[usize::from(x & 0x0f)]));
    }
    out
}

/// The `log.record.uid` of an occurrence row: cluster uid, Event uid, the row's count.
pub fn occurrence_uid(cluster: &str, event_uid: &str, count: i64) -> String {
    // NB: no format!: this runs once a record (issue 32).
    let mut digits = [0u8; 20];
    uuid5_of(&[
        b"kubectl-diag:occurrence/",
        cluster.as_bytes(),
        b"/",
        event_uid.as_bytes(),
        b"/",
        decimal(count, &mut digits),
    ])
}

/// `n` in decimal, as `format!("{n}")` writes it, in `buf`.
pub(super) fn decimal(n: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    let mut m = n.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        // NB: i64::MIN has 19 digits; 20 bytes hold its sign too.
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// Of an object version: cluster uid, the object (its uid, or kind/namespace/name
/// when it has none), and its resourceVersion (or, when the version has none,
/// `at:` its time in ms and `:` the version's row id).
pub fn version_uid(
    cluster: &str,
    object: (&str, &str, &str, &str),
    resource_version: Option<&str>,
    at: i64,
    id: i64,
) -> String {
    let (uid, kind, namespace, name) = object;
    let who = if uid.is_empty() {
        format!("{kind}/{namespace}/{name}")
    } else {
        uid.to_string()
    };
    let which = match resource_version {
        Some(rv) if !rv.is_empty() => rv.to_string(),
        _ => format!("at:{at}:{id}"),
    };
    uuid5(&format!("kubectl-diag:version/{cluster}/{who}/{which}"))
}

/// Of a gap: cluster uid, resource, start (ms), reason.
pub fn gap_uid(cluster: &str, resource: &str, start: i64, reason: &str) -> String {
    uuid5(&format!(
        "kubectl-diag:gap/{cluster}/{resource}/{start}/{reason}"
    ))
}
