//! [`read_bounded`]: the one way munch reads a file it is given (a tokenizer, a grammar, a
//! schema, a text), so that a pipe (`<(cat tokenizer.json)`), a character device or an endless
//! input (`/dev/zero`) is read once and no further than a limit, never until memory runs out.

use std::fmt;
use std::io::Read;
use std::path::Path;

/// Why [`read_bounded`] returned no bytes.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// The file holds more than `limit` bytes (the rest was not read).
    TooLong {
        /// The most bytes the caller reads.
        limit: u64,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::TooLong { limit } => write!(f, "longer than {limit} bytes"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io(e) => Some(e),
            ReadError::TooLong { .. } => None,
        }
    }
}

/// The bytes of `path` — a regular file, a pipe or a character device — if it holds at most
/// `limit` of them; [`ReadError::TooLong`] after reading `limit + 1` otherwise.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLong { limit });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_no_further() {
        let dir = std::env::temp_dir().join(format!("munch-vocab-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("four");
        std::fs::write(&path, b"abcd").unwrap();
        assert_eq!(read_bounded(&path, 4).unwrap(), b"abcd");
        assert!(matches!(
            read_bounded(&path, 3),
            Err(ReadError::TooLong { limit: 3 })
        ));
        assert!(matches!(
            read_bounded(&dir.join("absent"), 3),
            Err(ReadError::Io(_))
        ));
        if Path::new("/dev/zero").exists() {
            let e = read_bounded(Path::new("/dev/zero"), 1 << 16).unwrap_err();
            assert_eq!(e.to_string(), "longer than 65536 bytes");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
