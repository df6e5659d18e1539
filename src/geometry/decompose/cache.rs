//! The decomposition cache: one file per (mesh, parameters), named by a 64-bit FNV-1a hash
//! of the mesh's vertex bits, its triangles, the parameters and the format version, in a
//! folder the user can clear. A file holds the pieces' vertices (little-endian f64) and a
//! checksum; a file that is short, corrupt or of another version is ignored and rewritten,
//! never trusted. Files are written to a temporary name and renamed, so two processes
//! filling the same entry never read half a file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use glam::DVec3;

use super::DecomposeParams;
use crate::geometry::TriMesh;

/// Bumped whenever the decomposition or the file layout changes (9: the hull builder
/// takes its faces first in first out, so a piece's vertices come in another order, and a
/// file of the old order would number a body's features otherwise than a fresh
/// decomposition).
const VERSION: u32 = 9;
const MAGIC: &[u8; 8] = b"PROXHULL";

/// Where decompositions are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cache {
    /// No cache: every load decomposes.
    Off,
    /// This folder (created on the first write).
    At(PathBuf),
}

impl Cache {
    /// `PROXIMA_CACHE` (a folder, or `off`), else `$XDG_CACHE_HOME/proxima`, else
    /// `$HOME/.cache/proxima`, else off.
    pub fn from_env() -> Self {
        let var = |k| std::env::var_os(k).filter(|v| !v.is_empty());
        if let Some(v) = var("PROXIMA_CACHE") {
            return if v == "off" {
                Cache::Off
            } else {
                Cache::At(PathBuf::from(v))
            };
        }
        if let Some(v) = var("XDG_CACHE_HOME") {
            return Cache::At(PathBuf::from(v).join("proxima"));
        }
        match var("HOME") {
            Some(h) => Cache::At(PathBuf::from(h).join(".cache").join("proxima")),
            None => Cache::Off,
        }
    }

    /// The file an entry lives in.
    pub fn file(&self, key: u64) -> Option<PathBuf> {
        match self {
            Cache::Off => None,
            Cache::At(dir) => Some(dir.join(format!("{key:016x}.hulls"))),
        }
    }

    /// The pieces stored under `key`, if a sound file holds them.
    pub fn load(&self, key: u64) -> Option<Vec<Vec<DVec3>>> {
        let bytes = std::fs::read(self.file(key)?).ok()?;
        decode(&bytes)
    }

    /// Stores the pieces under `key`; returns the file written.
    pub fn store(&self, key: u64, pieces: &[Vec<DVec3>]) -> std::io::Result<Option<PathBuf>> {
        let Some(path) = self.file(key) else {
            return Ok(None);
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // A name no other writer uses, in this process or another.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
        std::fs::write(&tmp, encode(pieces))?;
        std::fs::rename(&tmp, &path)?;
        Ok(Some(path))
    }
}

/// 64-bit FNV-1a.
#[derive(Clone, Copy, Debug)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Mixes in bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash so far.
    pub fn finish(self) -> u64 {
        self.0
    }
}

/// The key of a mesh decomposed with `params`.
pub fn key(mesh: &TriMesh, params: &DecomposeParams) -> u64 {
    let mut h = Fnv::default();
    h.write(MAGIC);
    h.write(&VERSION.to_le_bytes());
    h.write(&params.resolution.to_le_bytes());
    h.write(&params.concavity.to_bits().to_le_bytes());
    h.write(&(params.max_piece_vertices as u64).to_le_bytes());
    h.write(&params.max_deviation.to_bits().to_le_bytes());
    h.write(&(mesh.vertices.len() as u64).to_le_bytes());
    for v in &mesh.vertices {
        for c in v.to_array() {
            h.write(&c.to_bits().to_le_bytes());
        }
    }
    for t in &mesh.triangles {
        for i in t {
            h.write(&i.to_le_bytes());
        }
    }
    h.finish()
}

fn encode(pieces: &[Vec<DVec3>]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(pieces.len() as u32).to_le_bytes());
    for piece in pieces {
        out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
        for p in piece {
            for c in p.to_array() {
                out.extend_from_slice(&c.to_le_bytes());
            }
        }
    }
    let mut h = Fnv::default();
    h.write(&out);
    out.extend_from_slice(&h.finish().to_le_bytes());
    out
}

fn decode(bytes: &[u8]) -> Option<Vec<Vec<DVec3>>> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    let mut h = Fnv::default();
    h.write(body);
    if h.finish().to_le_bytes() != sum {
        return None;
    }
    let mut r = Reader(body);
    if r.take(8)? != MAGIC || r.u32()? != VERSION {
        return None;
    }
    let count = r.u32()? as usize;
    let mut pieces = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let n = r.u32()? as usize;
        let mut piece = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            let p = DVec3::new(r.f64()?, r.f64()?, r.f64()?);
            if !p.is_finite() {
                return None;
            }
            piece.push(p);
        }
        pieces.push(piece);
    }
    r.0.is_empty().then_some(pieces)
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}
