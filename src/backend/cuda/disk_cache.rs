//! The disk cache of compiled kernel images, and its trust model.
//!
//! An entry is one file named by the BLAKE3 hash of everything that went into the image (the
//! key: the translation unit, the name expression, NVRTC's version and options, the kernel
//! files). Its content is
//!
//! ```text
//! "DSQ2" | key hash (32 bytes) | name length (u32 LE) | mangled name | image | BLAKE3 of all before (32 bytes)
//! ```
//!
//! An entry is used only when its magic, its key hash and its checksum all verify; anything
//! else (a truncated file, a flipped bit, an entry copied under another name) is ignored, and
//! the kernel compiled again and the entry rewritten (logged under `DEVSEQ_LOG`).
//!
//! Trust: an image from the cache runs in this process's GPU context, so the cache is used
//! only where no other user can have written it. The directory is created private (0700); a
//! directory that is not owned by this user, or that its group or others may write, is not
//! used at all (neither read nor written), and an entry file not owned by this user is not
//! loaded. Entries are written to a temporary file unique to the process and the write, then
//! renamed into place, so readers see whole entries only and concurrent writers (threads or
//! processes) never share a temporary file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 4] = b"DSQ2";
pub(crate) const HASH: usize = 32;

/// The cache key of a kernel image: BLAKE3 over the parts, each framed by its length.
pub(crate) fn key(parts: &[&[u8]]) -> [u8; HASH] {
    let mut h = blake3::Hasher::new();
    h.update(b"devseq-jit-3");
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    *h.finalize().as_bytes()
}

/// The path of the entry of `key` in `dir`.
pub(crate) fn entry_path(dir: &Path, key: &[u8; HASH]) -> PathBuf {
    dir.join(format!("{}.bin", blake3::Hash::from(*key).to_hex()))
}

/// Why an entry was not used.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reject {
    /// No entry (the usual first-use case: not worth a log line).
    Missing,
    /// The file is not owned by this user.
    Owner,
    /// Too short, wrong magic, wrong key, or a checksum that does not match.
    Corrupt(&'static str),
}

impl Reject {
    /// The reason, for the log.
    pub fn reason(&self) -> &'static str {
        match self {
            Reject::Missing => "missing",
            Reject::Owner => "not owned by this user",
            Reject::Corrupt(why) => why,
        }
    }
}

/// The mangled name and the image stored under `key`, if its entry verifies.
pub(crate) fn read(path: &Path, key: &[u8; HASH]) -> Result<(String, Vec<u8>), Reject> {
    let file = std::fs::File::open(path).map_err(|_| Reject::Missing)?;
    if !owned_by_me(&file.metadata().map_err(|_| Reject::Missing)?) {
        return Err(Reject::Owner);
    }
    let data = {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut &file, &mut v).map_err(|_| Reject::Missing)?;
        v
    };
    parse(&data, key)
}

/// The name and image of an entry's bytes, if they verify against `key`.
pub(crate) fn parse(data: &[u8], key: &[u8; HASH]) -> Result<(String, Vec<u8>), Reject> {
    let head = 4 + HASH + 4;
    if data.len() < head + HASH {
        return Err(Reject::Corrupt("truncated"));
    }
    let (body, sum) = data.split_at(data.len() - HASH);
    if blake3::hash(body).as_bytes() != sum {
        return Err(Reject::Corrupt("checksum mismatch"));
    }
    if &body[..4] != MAGIC {
        return Err(Reject::Corrupt("not a devseq cache entry"));
    }
    if &body[4..4 + HASH] != key {
        return Err(Reject::Corrupt("entry of another key"));
    }
    let n = body
        .get(4 + HASH..head)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes)
        .ok_or(Reject::Corrupt("truncated"))? as usize;
    let name = body
        .get(head..head + n)
        .and_then(|b| String::from_utf8(b.to_vec()).ok())
        .ok_or(Reject::Corrupt("bad kernel name"))?;
    Ok((name, body[head + n..].to_vec()))
}

/// The bytes of the entry of `key` for `name` and `image`.
pub(crate) fn encode(key: &[u8; HASH], name: &str, image: &[u8]) -> Vec<u8> {
    let mut data = Vec::with_capacity(4 + 2 * HASH + 4 + name.len() + image.len());
    data.extend_from_slice(MAGIC);
    data.extend_from_slice(key);
    data.extend_from_slice(&(name.len() as u32).to_le_bytes());
    data.extend_from_slice(name.as_bytes());
    data.extend_from_slice(image);
    let sum = blake3::hash(&data);
    data.extend_from_slice(sum.as_bytes());
    data
}

/// Writes the entry through a temporary file unique to this process and this write, then a
/// rename; failures only cost a recompilation later.
pub(crate) fn write(path: &Path, key: &[u8; HASH], name: &str, image: &[u8]) {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let tmp = path.with_extension(format!("{}.{n}.tmp", std::process::id()));
    let data = encode(key, name, image);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let ok = opts
        .open(&tmp)
        .and_then(|mut f| f.write_all(&data))
        .and_then(|_| std::fs::rename(&tmp, path));
    if ok.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The entries of `dir` that verify and the names of the files that do not (entries with a
/// bad checksum, key or owner, and left-over temporary files).
pub(crate) fn verify_dir(dir: &Path) -> std::io::Result<(usize, Vec<String>)> {
    let (mut ok, mut bad) = (0, Vec::new());
    for e in std::fs::read_dir(dir)? {
        let path = e?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let key = name
            .strip_suffix(".bin")
            .and_then(|h| blake3::Hash::from_hex(h).ok());
        match key {
            Some(k) if read(&path, k.as_bytes()).is_ok() => ok += 1,
            _ => bad.push(name),
        }
    }
    Ok((ok, bad))
}

/// Creates `dir` private to this user if it does not exist, and says whether it may be used:
/// `Err` with the reason when it is not owned by this user or its group or others can write
/// it.
pub(crate) fn prepare_dir(dir: &Path) -> Result<(), String> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let meta = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if !owned_by_me(&meta) {
        return Err(format!("{} is not owned by this user", dir.display()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o022 != 0 {
            return Err(format!(
                "{} can be written by other users (mode {mode:o}; chmod 700 to use it)",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// Whether the file of `meta` belongs to this process's effective user (on Linux, the owner
/// of `/proc/self`; where that cannot be told, nothing is trusted). Other systems have no
/// owner check.
fn owned_by_me(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        static ME: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
        let me = ME.get_or_init(|| std::fs::metadata("/proc/self").ok().map(|m| m.uid()));
        *me == Some(meta.uid())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_frame_their_parts() {
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(key(&[b"x"]), key(&[b"x"]));
    }

    #[test]
    fn every_flipped_byte_is_rejected() {
        let k = key(&[b"kernel"]);
        let data = encode(&k, "_Z6kernelv", b"\x7fELF an image of some bytes");
        assert_eq!(
            parse(&data, &k),
            Ok((
                "_Z6kernelv".to_string(),
                b"\x7fELF an image of some bytes".to_vec()
            ))
        );
        for i in 0..data.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = data.clone();
                bad[i] ^= bit;
                assert!(
                    matches!(parse(&bad, &k), Err(Reject::Corrupt(_))),
                    "byte {i} bit {bit:#x} flipped, the entry still verified"
                );
            }
        }
        for n in 0..data.len() {
            assert!(parse(&data[..n], &k).is_err(), "truncated to {n} bytes");
        }
        assert_eq!(
            parse(&data, &key(&[b"other"])),
            Err(Reject::Corrupt("entry of another key"))
        );
    }

    #[test]
    fn entries_round_trip_through_a_private_directory() {
        let dir = std::env::temp_dir().join(format!("devseq-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        prepare_dir(&dir).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700);
        }
        let k = key(&[b"round trip"]);
        let p = entry_path(&dir, &k);
        assert_eq!(read(&p, &k), Err(Reject::Missing));
        write(&p, &k, "name", b"image");
        assert_eq!(read(&p, &k), Ok(("name".into(), b"image".to_vec())));
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o775)).unwrap();
            let why = prepare_dir(&dir).unwrap_err();
            assert!(why.contains("written by other users"), "{why}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
