//! The host's memory against what a scene will take: a scene too large for the machine is
//! a named error before the work that would fill the memory, not a process the kernel
//! kills part way through.
//!
//! What a run takes grows with its bodies and with its pairs: measured on the CPU twins
//! (`proxima run --frames 2 --device cpu`, peak resident memory by `/usr/bin/time -v`,
//! differences between two sizes of one scene, so the program's own footprint cancels):
//! bodies spaced apart with no pairs 665 bytes a body (a grid of 100 x 100 x 5 and
//! x 20 crates 10 apart: 40.9 and 138.3 MB); crates touching in a grid, every pair with a
//! manifold, 679 bytes a pair beside that (100 x 100 x 10 and x 20: 0.59 and 2.48 M
//! pairs, 487 and 1,834 MB); the built-in crowd, about 1.09 pairs a body and 2% of them
//! with a manifold, 1,440 bytes a body in all (250k and 2M bodies: 401 and 2,925 MB). The
//! estimate takes [`BODY_BYTES`] and [`PAIR_BYTES`], below those, so that a scene it
//! refuses would not have fitted. Pairs deep in each other take about twice as much in
//! their first frame (their depth walks' warm starts and larger manifolds: 2,000 crates
//! at one point, 2M pairs, 2.54 GB at most resident) and 3.6 to 4.9 times from their
//! second (each keeps its depth certificate: 4.35 to 5.85 GB), and a frame of them near
//! the machine's memory may pass the check and still run out.
//!
//! What the machine can give is the kernel's estimate of memory available without
//! swapping (`MemAvailable` in `/proc/meminfo`) plus what the process holds already
//! (`VmRSS` in `/proc/self/status`), capped by the control group's limit where one is set
//! (`memory.max`, or `memory.limit_in_bytes` of version 1). Where none of these can be
//! read (not Linux), nothing is refused. `PROXIMA_MEMORY` (bytes) stands in for it: to
//! rehearse a smaller machine, and in tests.

use crate::{Error, Result};

/// Bytes a body takes at least (665 measured: see the module comment).
pub const BODY_BYTES: u64 = 600;

/// Bytes a pair from the broadphase takes at least (679 measured, with its manifold).
pub const PAIR_BYTES: u64 = 600;

/// Below this estimate nothing is read: small scenes pay nothing for the check.
const CHECK_ABOVE: u64 = 256 << 20;

/// The environment variable that stands in for the machine's memory, in bytes.
pub const OVERRIDE: &str = "PROXIMA_MEMORY";

/// About what `bodies` bodies and `pairs` pairs take, in bytes (a low estimate).
pub fn estimate(bodies: usize, pairs: usize) -> u64 {
    (bodies as u64)
        .saturating_mul(BODY_BYTES)
        .saturating_add((pairs as u64).saturating_mul(PAIR_BYTES))
}

/// The memory this process can have in all, in bytes: [`OVERRIDE`] when set, else what
/// the host has available plus what the process holds, capped by its control group's
/// limit; `None` where the host does not say.
pub fn capacity() -> Result<Option<u64>> {
    if let Ok(text) = std::env::var(OVERRIDE) {
        return text.trim().parse().map(Some).map_err(|_| {
            Error::Usage(format!(
                "{OVERRIDE}={text:?} is not a number of bytes (it stands in for the memory \
                 this machine has)"
            ))
        });
    }
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let Some(available) = read("/proc/meminfo").and_then(|t| kib(&t, "MemAvailable:")) else {
        return Ok(None);
    };
    let held = read("/proc/self/status")
        .and_then(|t| kib(&t, "VmRSS:"))
        .unwrap_or(0);
    let limit = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .filter_map(|p| read(p)?.trim().parse::<u64>().ok())
    .min();
    let all = available.saturating_add(held);
    Ok(Some(limit.map_or(all, |l| all.min(l))))
}

/// The most memory this process has held resident so far (`VmHWM`), where the host says.
pub fn peak() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    kib(&text, "VmHWM:")
}

/// The value of `key` (a line of `/proc/meminfo` or `/proc/self/status`, in kB) in bytes.
fn kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let value = line[key.len()..].trim().trim_end_matches("kB").trim();
    value.parse::<u64>().ok()?.checked_mul(1024)
}

/// An error naming `what` when about `needed` bytes exceed what the machine can give.
pub fn check(what: impl FnOnce() -> String, needed: u64) -> Result<()> {
    if below_checks(needed) {
        return Ok(());
    }
    match capacity()? {
        Some(capacity) if needed > capacity => Err(Error::Memory {
            what: what(),
            needed,
            capacity,
        }),
        _ => Ok(()),
    }
}

/// Whether `needed` bytes are too few to check (nothing is read for them), unless
/// [`OVERRIDE`] stands in for the machine.
fn below_checks(needed: u64) -> bool {
    needed < CHECK_ABOVE && std::env::var_os(OVERRIDE).is_none()
}

/// A frame's pairs counted as a broadphase finds them, against what the machine can hold
/// ([`estimate`] of the bodies and the pairs found so far against [`capacity`], read
/// once, when the estimate first passes the size below which nothing is checked): a
/// broadphase that would fill the memory stops and names the error instead of growing
/// its vectors until the kernel kills the process (100,000 crates of 1e-3 packed among
/// 512 of 1e3, every tiny box meeting every other, asked for 4 GB at once).
#[derive(Debug)]
pub struct PairBudget {
    bodies: usize,
    found: std::sync::atomic::AtomicUsize,
    /// What the machine can give, once read (`None`: the host does not say).
    capacity: std::sync::OnceLock<Option<u64>>,
    over: std::sync::atomic::AtomicBool,
}

impl PairBudget {
    /// Pairs found among `bodies` in the calls between: each adds [`Self::STRIDE`].
    pub const STRIDE: usize = 1 << 16;

    /// A budget for a frame of `bodies` bodies.
    pub fn new(bodies: usize) -> Self {
        PairBudget {
            bodies,
            found: 0.into(),
            capacity: std::sync::OnceLock::new(),
            over: false.into(),
        }
    }

    /// A budget that every pair fits.
    pub fn unlimited() -> Self {
        let budget = Self::new(0);
        budget.capacity.get_or_init(|| None);
        budget
    }

    /// Counts `n` more pairs found; false when the frame's pairs no longer fit.
    pub fn add(&self, n: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let found = self.found.fetch_add(n, Relaxed) + n;
        let needed = estimate(self.bodies, found);
        if self.capacity.get().is_none() && below_checks(needed) {
            return true;
        }
        let capacity = self.capacity.get_or_init(|| capacity().ok().flatten());
        if capacity.is_some_and(|c| needed > c) {
            self.over.store(true, Relaxed);
        }
        !self.over.load(Relaxed)
    }

    /// The error naming the frame, when its pairs did not fit: `what` names the frame
    /// given the pairs found when it stopped.
    pub fn check(&self, what: impl FnOnce(usize) -> String) -> Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        if !self.over.load(Relaxed) {
            return Ok(());
        }
        let found = self.found.load(Relaxed);
        let capacity = self.capacity.get().copied().flatten().unwrap_or(0);
        Err(Error::Memory {
            what: what(found),
            needed: estimate(self.bodies, found),
            capacity,
        })
    }
}

/// `bytes` in the unit that reads best (kB, MB, GB: powers of 1000).
pub fn human(bytes: u64) -> String {
    crate::error::bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_add_bodies_and_pairs_without_wrapping() {
        assert_eq!(estimate(1000, 0), 1000 * BODY_BYTES);
        assert_eq!(estimate(0, 7), 7 * PAIR_BYTES);
        assert_eq!(estimate(usize::MAX, usize::MAX), u64::MAX);
    }

    #[test]
    fn sizes_read_in_their_unit() {
        assert_eq!(human(12_345), "12 kB");
        assert_eq!(human(487_000_000), "487 MB");
        assert_eq!(human(90_400_000_000), "90.4 GB");
    }
}
