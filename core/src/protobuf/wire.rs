//! The protobuf wire: keys, varints and length-delimited values, read from a slice
//! without copying and written into a `Vec` without a sizing pass.

/// A varint.
pub const VARINT: u8 = 0;
/// Eight little-endian bytes.
pub const FIXED64: u8 = 1;
/// A length, then that many bytes.
pub const LEN: u8 = 2;
/// Four little-endian bytes.
pub const FIXED32: u8 = 5;

/// Writes a field's key.
pub fn key(out: &mut Vec<u8>, number: u32, wire_type: u8) {
    put_varint(out, u64::from(number) << 3 | u64::from(wire_type));
}

/// Appends `value` as a varint, a byte at a time into the `Vec` (a list writes a key
/// and a length per item: through prost's `BufMut` that cost about 33 instructions a
/// varint, through a buffer on the stack and one copy 50, pushed here under 15;
/// callgrind).
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The varint at the start of `bytes`: its value and how many bytes it takes.
/// [`WireError::Truncated`] when the bytes end inside it, [`WireError::BadVarint`]
/// past ten bytes or 64 bits.
#[inline]
pub fn read_varint(bytes: &[u8]) -> Result<(u64, usize), WireError> {
    // Keys and short lengths take one byte.
    if let Some(&b) = bytes.first().filter(|&&b| b < 0x80) {
        return Ok((u64::from(b), 1));
    }
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(10).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            // The tenth byte holds only the 64th bit.
            if i == 9 && b > 1 {
                return Err(WireError::BadVarint);
            }
            return Ok((value, i + 1));
        }
    }
    Err(if bytes.len() < 10 {
        WireError::Truncated
    } else {
        WireError::BadVarint
    })
}

/// Writes a varint field.
pub fn varint_field(out: &mut Vec<u8>, number: u32, value: u64) {
    key(out, number, VARINT);
    put_varint(out, value);
}

/// Writes a length-delimited field.
pub fn bytes_field(out: &mut Vec<u8>, number: u32, value: &[u8]) {
    bytes_field_head(out, number, value.len());
    out.extend_from_slice(value);
}

/// Writes the key and length of a length-delimited field of `len` bytes, which the
/// caller writes next.
pub fn bytes_field_head(out: &mut Vec<u8>, number: u32, len: usize) {
    key(out, number, LEN);
    put_varint(out, len as u64);
}

/// How many bytes a length-delimited field of `len` bytes takes, key and length
/// included.
pub fn bytes_field_len(number: u32, len: usize) -> usize {
    prost::encoding::key_len(number) + prost::encoding::encoded_len_varint(len as u64) + len
}

/// Starts a length-delimited field whose bytes are written next; [`end_nested`] with the
/// returned mark writes its length. One byte is reserved for it, enough below 128 bytes;
/// longer values move once by the length's extra bytes.
pub fn begin_nested(out: &mut Vec<u8>, number: u32) -> usize {
    key(out, number, LEN);
    out.push(0);
    out.len()
}

/// Ends the field [`begin_nested`] started.
pub fn end_nested(out: &mut Vec<u8>, mark: usize) {
    let len = out.len() - mark;
    if len < 0x80 {
        out[mark - 1] = len as u8;
        return;
    }
    let mut prefix = Vec::with_capacity(10);
    put_varint(&mut prefix, len as u64);
    let extra = prefix.len() - 1;
    out.resize(out.len() + extra, 0);
    out.copy_within(mark..mark + len, mark + extra);
    out[mark - 1..mark - 1 + prefix.len()].copy_from_slice(&prefix);
}

/// Why bytes are not a protobuf message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The bytes end inside a key or value.
    Truncated,
    /// A varint longer than ten bytes, or past 64 bits.
    BadVarint,
    /// A wire type protobuf does not define (or the groups proto3 dropped).
    BadWireType(u8),
    /// Field number 0.
    BadFieldNumber,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Truncated => f.write_str("unexpected EOF"),
            WireError::BadVarint => f.write_str("proto: integer overflow"),
            WireError::BadWireType(t) => write!(f, "proto: illegal wireType {t}"),
            WireError::BadFieldNumber => f.write_str("proto: illegal tag 0 (wire type 0)"),
        }
    }
}

/// One field's value as read.
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    /// A varint.
    Varint(u64),
    /// Eight bytes.
    Fixed64(u64),
    /// Four bytes.
    Fixed32(u32),
    /// Length-delimited bytes.
    Len(&'a [u8]),
}

impl Value<'_> {
    /// Whether this is the zero of its wire type (`0`, empty bytes).
    pub fn is_zero(&self) -> bool {
        match self {
            Value::Varint(v) | Value::Fixed64(v) => *v == 0,
            Value::Fixed32(v) => *v == 0,
            Value::Len(b) => b.is_empty(),
        }
    }
}

/// Reads the fields of one message in order.
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let (value, len) = read_varint(self.rest)?;
        self.rest = &self.rest[len..];
        Ok(value)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.rest.len() < n {
            return Err(WireError::Truncated);
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    /// The next field's number and value, or `None` at the end.
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'a>)>, WireError> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let wire_type = (key & 7) as u8;
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(WireError::BadFieldNumber);
        }
        let value = match wire_type {
            VARINT => Value::Varint(self.varint()?),
            FIXED64 => Value::Fixed64(u64::from_le_bytes(self.take(8)?.try_into().unwrap())),
            LEN => {
                let len = self.varint()?;
                let len = usize::try_from(len).map_err(|_| WireError::Truncated)?;
                Value::Len(self.take(len)?)
            }
            FIXED32 => Value::Fixed32(u32::from_le_bytes(self.take(4)?.try_into().unwrap())),
            other => return Err(WireError::BadWireType(other)),
        };
        Ok(Some((number as u32, value)))
    }

    /// The varints of a packed repeated field.
    pub fn packed_varints(bytes: &'a [u8]) -> Result<Vec<u64>, WireError> {
        let mut r = Reader::new(bytes);
        let mut out = Vec::new();
        while !r.rest.is_empty() {
            out.push(r.varint()?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_nested_values_get_their_full_length() {
        for len in [0usize, 1, 127, 128, 300, 20_000] {
            let mut out = vec![9];
            let mark = begin_nested(&mut out, 2);
            out.extend(std::iter::repeat_n(7u8, len));
            end_nested(&mut out, mark);
            let mut r = Reader::new(&out[1..]);
            let Some((2, Value::Len(b))) = r.next_field().unwrap() else {
                panic!("not a length-delimited field 2");
            };
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 7));
            assert!(r.next_field().unwrap().is_none());
        }
    }

    #[test]
    fn varints_are_prosts() {
        let mut values = vec![0, 1, 127, 128, 300, 16_383, 16_384, u64::from(u32::MAX)];
        values.extend([u64::MAX - 1, u64::MAX, 1 << 63]);
        for value in values {
            let mut ours = Vec::new();
            put_varint(&mut ours, value);
            let mut theirs = Vec::new();
            prost::encoding::encode_varint(value, &mut theirs);
            assert_eq!(ours, theirs, "{value}");
            assert_eq!(read_varint(&ours), Ok((value, ours.len())));
            assert_eq!(
                read_varint(&ours[..ours.len() - 1]).unwrap_err(),
                WireError::Truncated
            );
        }
        // Eleven bytes, or a tenth byte past the 64th bit.
        assert_eq!(read_varint(&[0xff; 11]).unwrap_err(), WireError::BadVarint);
        let mut over = vec![0xff; 9];
        over.push(0x02);
        assert_eq!(read_varint(&over).unwrap_err(), WireError::BadVarint);
        assert!(prost::encoding::decode_varint(&mut &over[..]).is_err());
    }

    #[test]
    fn bad_bytes_are_errors() {
        assert_eq!(
            Reader::new(&[0x0a, 5, 1]).next_field().unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            Reader::new(&[0x08, 0xff, 0xff]).next_field().unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            Reader::new(
                &[0x08; 1]
                    .iter()
                    .chain([0xffu8; 11].iter())
                    .copied()
                    .collect::<Vec<_>>()
            )
            .next_field()
            .unwrap_err(),
            WireError::BadVarint
        );
        assert_eq!(
            Reader::new(&[0x0b]).next_field().unwrap_err(),
            WireError::BadWireType(3)
        );
        assert_eq!(
            Reader::new(&[0x00, 0]).next_field().unwrap_err(),
            WireError::BadFieldNumber
        );
    }
}
