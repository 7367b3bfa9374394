//! The FMU archive: a ZIP file of stored (uncompressed) entries (PKWARE
//! APPNOTE 6.3.x, §4.3: local file headers, the central directory, its
//! end record), each with its CRC-32. An FMU is read once by an importer
//! and is mostly the runtime library, which deflate would shrink by about
//! two thirds; stored entries keep the writer small and dependency-free.
//! Every entry is dated 1980-01-01 00:00 (the earliest DOS date), so an
//! archive is a function of its entries.

/// The CRC-32 (IEEE 802.3, reflected polynomial `0xEDB88320`) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        t
    });
    let mut c = !0u32;
    for &b in bytes {
        c = table[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

/// Why an archive cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZipError {
    /// The archive would need ZIP64 (an entry or the whole beyond 4 GiB,
    /// or more than 65 535 entries), which this writer does not write.
    TooLarge,
    /// An entry name is empty, absolute, has a backslash or a `..`
    /// component, or is longer than 65 535 bytes.
    BadName(String),
}

impl std::fmt::Display for ZipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ZipError::TooLarge => write!(f, "the FMU would exceed 4 GiB or 65535 files"),
            ZipError::BadName(n) => write!(f, "`{n}` is not a relative path for a ZIP entry"),
        }
    }
}

impl std::error::Error for ZipError {}

fn u16le(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn u32le(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// DOS date of 1980-01-01 (day 1, month 1, year 0).
const DOS_DATE: u16 = (1 << 5) | 1;

/// The fields the local header and the central directory share
/// (APPNOTE §4.4.3–4.4.11): version needed 2.0, UTF-8 names (bit 11),
/// stored, date, CRC-32 and sizes, name length.
fn common_fields(out: &mut Vec<u8>, crc: u32, size: u32, name_len: u16) {
    u16le(out, 20);
    u16le(out, 1 << 11);
    u16le(out, 0);
    u16le(out, 0);
    u16le(out, DOS_DATE);
    u32le(out, crc);
    u32le(out, size);
    u32le(out, size);
    u16le(out, name_len);
    u16le(out, 0);
}

/// A ZIP archive of the `entries` (name, contents), stored, in order.
pub fn write_zip(entries: &[(&str, &[u8])]) -> Result<Vec<u8>, ZipError> {
    let count = u16::try_from(entries.len()).map_err(|_| ZipError::TooLarge)?;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in entries {
        let bad = name.is_empty()
            || name.starts_with('/')
            || name.contains('\\')
            || name.split('/').any(|c| c == "..");
        let name_len = u16::try_from(name.len()).map_err(|_| ZipError::BadName(name.to_string()));
        let name_len = match name_len {
            Ok(n) if !bad => n,
            _ => return Err(ZipError::BadName(name.to_string())),
        };
        let size = u32::try_from(data.len()).map_err(|_| ZipError::TooLarge)?;
        let offset = u32::try_from(out.len()).map_err(|_| ZipError::TooLarge)?;
        let crc = crc32(data);
        u32le(&mut out, 0x0403_4b50);
        common_fields(&mut out, crc, size, name_len);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        u32le(&mut central, 0x0201_4b50);
        u16le(&mut central, 0x031E); // made by: Unix, 3.0
        common_fields(&mut central, crc, size, name_len);
        u16le(&mut central, 0); // comment length
        u16le(&mut central, 0); // disk number
        u16le(&mut central, 0); // internal attributes
        u32le(&mut central, 0o100_644 << 16); // external: a regular file, rw-r--r--
        u32le(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
    }
    let dir_offset = u32::try_from(out.len()).map_err(|_| ZipError::TooLarge)?;
    let dir_size = u32::try_from(central.len()).map_err(|_| ZipError::TooLarge)?;
    out.extend_from_slice(&central);
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    u16le(&mut out, count);
    u16le(&mut out, count);
    u32le(&mut out, dir_size);
    u32le(&mut out, dir_offset);
    u16le(&mut out, 0);
    u32::try_from(out.len()).map_err(|_| ZipError::TooLarge)?;
    Ok(out)
}

/// The entries of an archive [`write_zip`] wrote, read by its central
/// directory, each checked against its CRC-32; `None` for anything else.
pub fn read_zip(bytes: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let u16at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let u32at = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let end = bytes.len().checked_sub(22)?;
    if u32at(end)? != 0x0605_4b50 {
        return None;
    }
    let count = usize::from(u16at(end + 10)?);
    let mut at = u32at(end + 16)? as usize;
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        if u32at(at)? != 0x0201_4b50 || u16at(at + 10)? != 0 {
            return None;
        }
        let crc = u32at(at + 16)?;
        let size = u32at(at + 20)? as usize;
        let name_len = usize::from(u16at(at + 28)?);
        let local = u32at(at + 42)? as usize;
        let name = String::from_utf8(bytes.get(at + 46..at + 46 + name_len)?.to_vec()).ok()?;
        let local_name_len = usize::from(u16at(local + 26)?);
        let extra = usize::from(u16at(local + 28)?);
        let start = local + 30 + local_name_len + extra;
        let data = bytes.get(start..start + size)?.to_vec();
        if crc32(&data) != crc {
            return None;
        }
        entries.push((name, data));
        at += 46 + name_len;
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_of_the_check_string() {
        // the CRC-32 check value (the catalogue of parametrised CRCs)
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn an_archive_reads_back_entry_by_entry() {
        let big: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let entries: [(&str, &[u8]); 3] = [
            ("modelDescription.xml", b"<x/>"),
            ("binaries/linux64/m.so", &big),
            ("resources/empty", b""),
        ];
        let zip = write_zip(&entries).unwrap();
        let back = read_zip(&zip).unwrap();
        assert_eq!(back.len(), 3);
        for ((n, d), (rn, rd)) in entries.iter().zip(&back) {
            assert_eq!(n, rn);
            assert_eq!(*d, &rd[..]);
        }
        // the same entries give the same bytes
        assert_eq!(write_zip(&entries).unwrap(), zip);
        // a flipped byte of contents fails its CRC
        let mut bad = zip.clone();
        bad[51] ^= 1;
        assert!(read_zip(&bad).is_none());
    }

    #[test]
    fn names_that_escape_the_archive_are_refused() {
        for name in ["", "/etc/x", "a/../../x", "a\\b"] {
            assert_eq!(
                write_zip(&[(name, b"x")]),
                Err(ZipError::BadName(name.to_string()))
            );
        }
    }
}
