//! ClickHouse's RowBinary format for the columns of [`super::tables`]: rows
//! read from SQLite are written as the ClickHouse table declares them, and
//! rows read back (`--store`) are turned into SQLite values again.

use rusqlite::types::{Value, ValueRef};

use super::tables::Ty;

/// Why a row could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum RowBinaryError {
    #[error("column {column}: expected {expected}, found {found}")]
    Type {
        column: &'static str,
        expected: &'static str,
        found: &'static str,
    },
    #[error("the reply ends inside a row (column {column})")]
    Truncated { column: &'static str },
}

fn kind(v: ValueRef<'_>) -> &'static str {
    match v {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "an integer",
        ValueRef::Real(_) => "a real",
        ValueRef::Text(_) => "text",
        ValueRef::Blob(_) => "a blob",
    }
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Appends one value of column `column` (type `ty`) to `out`.
pub fn write(
    out: &mut Vec<u8>,
    column: &'static str,
    ty: Ty,
    value: &Value,
) -> Result<(), RowBinaryError> {
    write_ref(out, column, ty, ValueRef::from(value))
}

/// [`write`] of a value borrowed from SQLite's row (no copy of its text).
pub fn write_ref(
    out: &mut Vec<u8>,
    column: &'static str,
    ty: Ty,
    value: ValueRef<'_>,
) -> Result<(), RowBinaryError> {
    let nullable = matches!(ty, Ty::NStr | Ty::NInt | Ty::NTime);
    if matches!(ty, Ty::Id | Ty::NId | Ty::Uid) {
        // NB: an id written as its digits would be sent as if it were the text.
        return Err(RowBinaryError::Type {
            column,
            expected: "a value the outbox reader resolved",
            found: kind(value),
        });
    }
    if nullable {
        if matches!(value, ValueRef::Null) {
            out.push(1);
            return Ok(());
        }
        out.push(0);
    }
    let wrong = |expected| RowBinaryError::Type {
        column,
        expected,
        found: kind(value),
    };
    match ty {
        Ty::Str | Ty::NStr => {
            let digits;
            let bytes: &[u8] = match value {
                ValueRef::Text(b) | ValueRef::Blob(b) => b,
                // NB: its digits, not an error: SQLite keeps a number given to
                // an untyped column (an Event's name, a uid) as an integer.
                ValueRef::Integer(i) => {
                    digits = i.to_string();
                    digits.as_bytes()
                }
                _ => return Err(wrong("text")),
            };
            varint(out, bytes.len() as u64);
            out.extend_from_slice(bytes);
        }
        Ty::Int | Ty::NInt | Ty::Time | Ty::NTime | Ty::Ver => {
            let ValueRef::Integer(i) = value else {
                return Err(wrong("an integer"));
            };
            out.extend_from_slice(&i.to_le_bytes());
        }
        Ty::Flag => {
            let ValueRef::Integer(i) = value else {
                return Err(wrong("an integer"));
            };
            out.push(u8::from(i != 0));
        }
        // Refused above.
        Ty::Id | Ty::NId | Ty::Uid => {}
    }
    Ok(())
}

/// Reads one `String` at `*at` as the bytes it holds (a row that
/// `formatRowNoNewline('RowBinary', …)` made, say), moving `*at` past it.
pub fn read_bytes<'a>(
    bytes: &'a [u8],
    at: &mut usize,
    column: &'static str,
) -> Result<&'a [u8], RowBinaryError> {
    let short = || RowBinaryError::Truncated { column };
    let (mut len, mut shift) = (0u64, 0);
    loop {
        let b = *bytes.get(*at).ok_or_else(short)?;
        *at += 1;
        len |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 63 {
            return Err(short());
        }
    }
    let end = at.checked_add(len as usize).ok_or_else(short)?;
    let s = bytes.get(*at..end).ok_or_else(short)?;
    *at = end;
    Ok(s)
}

/// Reads one value of type `ty` at `*at`, moving `*at` past it, borrowing
/// its text from `bytes` (no copy until the caller makes one).
pub fn read_ref<'a>(
    bytes: &'a [u8],
    at: &mut usize,
    column: &'static str,
    ty: Ty,
) -> Result<ValueRef<'a>, RowBinaryError> {
    let short = || RowBinaryError::Truncated { column };
    let ty = ty.wire();
    let nullable = matches!(ty, Ty::NStr | Ty::NInt | Ty::NTime);
    if nullable {
        let flag = *bytes.get(*at).ok_or_else(short)?;
        *at += 1;
        if flag == 1 {
            return Ok(ValueRef::Null);
        }
    }
    match ty {
        Ty::Str | Ty::NStr => Ok(ValueRef::Text(read_bytes(bytes, at, column)?)),
        Ty::Int | Ty::NInt | Ty::Time | Ty::NTime | Ty::Ver => {
            let s = bytes.get(*at..*at + 8).ok_or_else(short)?;
            *at += 8;
            Ok(ValueRef::Integer(i64::from_le_bytes(
                s.try_into().unwrap_or([0; 8]),
            )))
        }
        Ty::Flag => {
            let b = *bytes.get(*at).ok_or_else(short)?;
            *at += 1;
            Ok(ValueRef::Integer(i64::from(b)))
        }
        // NB: never: `wire()` above made them Str or NStr.
        Ty::Id | Ty::NId | Ty::Uid => Ok(ValueRef::Null),
    }
}

/// Reads one value of type `ty` at `*at`, moving `*at` past it.
pub fn read(
    bytes: &[u8],
    at: &mut usize,
    column: &'static str,
    ty: Ty,
) -> Result<Value, RowBinaryError> {
    Ok(match read_ref(bytes, at, column, ty)? {
        ValueRef::Text(s) => Value::Text(String::from_utf8_lossy(s).into_owned()),
        ValueRef::Integer(i) => Value::Integer(i),
        // NB: read_ref gives nothing else.
        _ => Value::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_the_same() {
        let cols: &[(&'static str, Ty)] = &[
            ("a", Ty::Str),
            ("b", Ty::NStr),
            ("c", Ty::NStr),
            ("d", Ty::Int),
            ("e", Ty::NTime),
            ("f", Ty::Flag),
            ("g", Ty::Ver),
        ];
        let long = "x".repeat(300);
        let row = [
            Value::Text("héllo".into()),
            Value::Null,
            Value::Text(long.clone()),
            Value::Integer(-5),
            Value::Integer(1_700_000_000_123),
            Value::Integer(1),
            Value::Integer(7),
        ];
        let mut out = Vec::new();
        for ((n, t), v) in cols.iter().zip(&row) {
            write(&mut out, n, *t, v).unwrap();
        }
        // 300 takes two bytes of varint: 0xac 0x02.
        assert!(out.windows(2).any(|w| w == [0xac, 0x02]));
        let mut at = 0;
        let back: Vec<_> = cols
            .iter()
            .map(|(n, t)| read(&out, &mut at, n, *t).unwrap())
            .collect();
        assert_eq!(back, row);
        assert_eq!(at, out.len());
        let mut at = 0;
        assert!(read(&out[..3], &mut at, "a", Ty::Str).is_err());
        let mut at = 0;
        let borrowed: Vec<Value> = cols
            .iter()
            .map(|(n, t)| Value::try_from(read_ref(&out, &mut at, n, *t).unwrap()).unwrap())
            .collect();
        assert_eq!(borrowed, row);
    }

    #[test]
    fn a_text_column_holding_a_number_is_sent_as_its_digits() {
        let mut out = Vec::new();
        write(&mut out, "name", Ty::Str, &Value::Integer(1234)).unwrap();
        assert_eq!(out, b"\x041234");
        assert!(write(&mut out, "t", Ty::Time, &Value::Text("x".into())).is_err());
    }
}
