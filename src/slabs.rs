//! Scenes larger than one frame's buffers: the bodies cut into slabs along one axis, each
//! slab a frame of its own on the GPU, the pairs merged.
//!
//! Every per-body buffer of a frame (the body table, the boxes, the sweep's sorted boxes:
//! at most [`BODY_BYTES`] a body) is one storage binding, so a device binds at most
//! `min(max_storage_buffer_binding_size, max_buffer_size) / 32` bodies a frame: 4,194,304
//! on wgpu's default limits. A larger scene runs as slabs of at most that many bodies.
//!
//! Membership: a body belongs to every slab its box meets along the axis (its extent
//! grown by 2^−20 of its coordinates: the GPU's box may differ from the CPU twin's, which
//! places it, in the last bits), so its slabs are a run `[first, last]`. Two overlapping
//! boxes both contain the point where their overlap begins along the axis, so they share
//! the slab holding it, and the broadphase of every slab they share finds them; a pair is
//! kept only from the first slab both are in (the later of their first slabs): exactly
//! once, none dropped, whatever straddles a cut.
//!
//! Cuts: the axis's range in [`BINS`] equal bins; a slab is a run of bins, grown while the
//! bodies meeting it (those starting in a bin up to its end, less those ending before its
//! start: two prefix sums) stay within the cap. Each axis is tried; the one with fewest
//! slabs wins. A bin met by more bodies than the cap on every axis (a pile denser than
//! the device can bind, or bodies as long as the scene) is a named error.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::bodies::GpuAabb;
use crate::gpu::sizes::largest_binding;
use crate::{Error, Result};

/// Bytes of the largest per-body element a frame binds (`GpuBody`, `GpuAabb`).
pub const BODY_BYTES: u64 = 32;

/// The fewest bodies a slab is cut down to before a frame that still does not fit is the
/// device's named limit error.
pub const MIN_SLAB: usize = 1024;

/// Bins the axis's range is cut into.
pub const BINS: usize = 4096;

/// The most bodies a frame binds on a device with `limits`.
pub fn frame_capacity(limits: &wgpu::Limits) -> usize {
    usize::try_from(largest_binding(limits) / BODY_BYTES).unwrap_or(usize::MAX)
}

/// A scene cut into slabs.
#[derive(Clone, Debug, PartialEq)]
pub struct Slabs {
    /// The axis the cuts are square to (0 x, 1 y, 2 z).
    pub axis: usize,
    /// Each slab's bodies: global ids, ascending.
    pub members: Vec<Vec<u32>>,
    /// Each body's first slab.
    first: Vec<u32>,
}

impl Slabs {
    /// Cuts the bodies whose boxes are `boxes` into slabs of at most `cap` bodies each.
    pub fn new(boxes: &[GpuAabb], cap: usize) -> Result<Slabs> {
        let mut best: Option<Slabs> = None;
        let mut densest = 0;
        for axis in 0..3 {
            match cut(boxes, cap, axis) {
                Ok(s) => {
                    if best.as_ref().is_none_or(|b| s.len() < b.len()) {
                        best = Some(s);
                    }
                }
                Err(bin) => densest = densest.max(bin),
            }
        }
        best.ok_or_else(|| {
            Error::Usage(format!(
                "{} bodies are more than one frame binds ({cap}), and no cut along x, y or z \
                 leaves at most {cap} in a slab: {densest} boxes meet one 1/{BINS} of the \
                 scene's extent on every axis (a pile denser than the device's storage \
                 bindings hold; a device with larger limits binds more)",
                boxes.len()
            ))
        })
    }

    /// Number of slabs.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// True when there are none (no bodies).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Slab `k`'s pairs (its own body indices, `a < b`, sorted, each with what came with
    /// it) that belong to it (see the module comment), as global ids, still sorted.
    pub fn keep<T>(&self, k: usize, local: PairRun<T>) -> PairRun<T> {
        let members = &self.members[k];
        local
            .into_iter()
            .filter_map(|([a, b], t)| {
                let (ga, gb) = (members[a as usize], members[b as usize]);
                let first = self.first[ga as usize].max(self.first[gb as usize]);
                (first as usize == k).then_some(([ga, gb], t))
            })
            .collect()
    }
}

/// Runs `part` on each slab of the bodies with `boxes` (at most `cap` a slab, fewer
/// while a slab's frame needs more than the device binds: a dense slab's hash entries,
/// pairs, depth estimates or contacts), keeping each pair from its first shared slab; the
/// pairs merged, sorted. `part` gets a slab's members (global ids, ascending) and returns
/// its pairs in its own numbering.
pub fn run<T>(
    boxes: &[GpuAabb],
    mut cap: usize,
    mut part: impl FnMut(&[u32]) -> Result<PairRun<T>>,
) -> Result<PairRun<T>> {
    'cut: loop {
        let slabs = Slabs::new(boxes, cap)?;
        let mut runs = Vec::with_capacity(slabs.len());
        for (k, members) in slabs.members.iter().enumerate() {
            let found = match part(members) {
                // A slab's buffer past the device's limit: slabs that much smaller (less
                // a quarter: density varies between slabs), and cut again.
                Err(Error::BufferLimit { needed, limit, .. }) if cap > MIN_SLAB => {
                    let shrink = limit as f64 / needed as f64 * 0.75;
                    cap = ((cap as f64 * shrink) as usize).max(MIN_SLAB);
                    continue 'cut;
                }
                r => r?,
            };
            runs.push(slabs.keep(k, found));
        }
        return Ok(merge(runs));
    }
}

/// Pairs, sorted, each with what came with it.
pub type PairRun<T> = Vec<([u32; 2], T)>;

/// Merges sorted runs into one sorted run.
pub fn merge<T>(runs: Vec<PairRun<T>>) -> PairRun<T> {
    let total = runs.iter().map(Vec::len).sum();
    let mut iters: Vec<_> = runs.into_iter().map(|r| r.into_iter().peekable()).collect();
    let mut heap: BinaryHeap<Reverse<([u32; 2], usize)>> = iters
        .iter_mut()
        .enumerate()
        .filter_map(|(k, it)| it.peek().map(|(p, _)| Reverse((*p, k))))
        .collect();
    let mut out = Vec::with_capacity(total);
    while let Some(Reverse((_, k))) = heap.pop() {
        let item = iters[k].next().expect("a run in the heap has an item");
        out.push(item);
        if let Some((p, _)) = iters[k].peek() {
            heap.push(Reverse((*p, k)));
        }
    }
    out
}

/// The slabs along `axis`, or the most bodies meeting one bin when a bin alone is over
/// the cap.
fn cut(boxes: &[GpuAabb], cap: usize, axis: usize) -> std::result::Result<Slabs, usize> {
    // Extents grown by the rounding between the CPU twin's boxes and the GPU's.
    let extent = |b: &GpuAabb| {
        let (lo, hi) = (f64::from(b.min[axis]), f64::from(b.max[axis]));
        let grow = (lo.abs() + hi.abs()) / f64::from(1u32 << 20) + f64::from(f32::MIN_POSITIVE);
        (lo - grow, hi + grow)
    };
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for b in boxes {
        let (l, h) = extent(b);
        lo = lo.min(l);
        hi = hi.max(h);
    }
    let width = (hi - lo).max(f64::MIN_POSITIVE);
    let bin = |x: f64| (((x - lo) / width * BINS as f64) as usize).min(BINS - 1);
    let bins: Vec<[u32; 2]> = boxes
        .iter()
        .map(|b| {
            let (l, h) = extent(b);
            [bin(l) as u32, bin(h) as u32]
        })
        .collect();
    // starts[k]: bodies whose run of bins begins at k; ends[k]: ends at k.
    let (mut starts, mut ends) = (vec![0usize; BINS], vec![0usize; BINS]);
    for &[s, e] in &bins {
        starts[s as usize] += 1;
        ends[e as usize] += 1;
    }
    let mut started = vec![0usize; BINS + 1]; // bodies starting in bins < k
    let mut ended = vec![0usize; BINS + 1]; // bodies ending in bins < k
    for k in 0..BINS {
        started[k + 1] = started[k] + starts[k];
        ended[k + 1] = ended[k] + ends[k];
    }
    // Bodies meeting bins s..=e.
    let meeting = |s: usize, e: usize| started[e + 1] - ended[s];
    let mut ranges = Vec::new();
    let mut s = 0;
    while s < BINS {
        if meeting(s, s) > cap {
            let densest = (0..BINS).map(|k| meeting(k, k)).max().unwrap_or(0);
            return Err(densest);
        }
        let mut e = s;
        while e + 1 < BINS && meeting(s, e + 1) <= cap {
            e += 1;
        }
        ranges.push((s, e));
        s = e + 1;
    }
    // Slab of each bin, then each slab's members in body order.
    let mut slab_of = vec![0u32; BINS];
    for (k, &(s, e)) in ranges.iter().enumerate() {
        slab_of[s..=e].fill(k as u32);
    }
    let mut members: Vec<Vec<u32>> = ranges
        .iter()
        .map(|&(s, e)| Vec::with_capacity(meeting(s, e)))
        .collect();
    for (i, &[s, e]) in bins.iter().enumerate() {
        let (from, to) = (slab_of[s as usize], slab_of[e as usize]);
        for m in &mut members[from as usize..=to as usize] {
            m.push(i as u32);
        }
    }
    // Runs of bins no box meets (gaps in the scene) make empty slabs: dropped, and each
    // body's first slab counted among those left.
    members.retain(|m| !m.is_empty());
    let mut first = vec![u32::MAX; boxes.len()];
    for (k, m) in members.iter().enumerate().rev() {
        for &i in m {
            first[i as usize] = k as u32;
        }
    }
    Ok(Slabs {
        axis,
        members,
        first,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(lo: f32, hi: f32) -> GpuAabb {
        GpuAabb {
            min: [lo, 0.0, 0.0],
            max: [hi, 1.0, 1.0],
            ..Default::default()
        }
    }

    #[test]
    fn a_pair_straddling_cuts_is_kept_once_in_its_first_shared_slab() {
        // 40 unit boxes in a row along x, one long box over all of them.
        let mut boxes: Vec<GpuAabb> = (0..40).map(|i| boxed(i as f32, i as f32 + 0.9)).collect();
        boxes.push(boxed(0.0, 40.0));
        let slabs = Slabs::new(&boxes, 12).unwrap();
        assert!(slabs.len() >= 4, "{}", slabs.len());
        assert!(slabs.members.iter().all(|m| m.len() <= 12));
        // Brute force pairs per slab, kept, merged: each overlapping pair once.
        let runs: Vec<PairRun<()>> = (0..slabs.len())
            .map(|k| {
                let m = &slabs.members[k];
                let mut local = Vec::new();
                for a in 0..m.len() {
                    for b in a + 1..m.len() {
                        let (x, y) = (&boxes[m[a] as usize], &boxes[m[b] as usize]);
                        if x.min[0] <= y.max[0] && y.min[0] <= x.max[0] {
                            local.push(([a as u32, b as u32], ()));
                        }
                    }
                }
                slabs.keep(k, local)
            })
            .collect();
        let pairs: Vec<[u32; 2]> = merge(runs).into_iter().map(|(p, _)| p).collect();
        let want: Vec<[u32; 2]> = (0..40).map(|i| [i, 40]).collect();
        assert_eq!(pairs, want);
    }

    #[test]
    fn a_pile_denser_than_the_cap_is_named() {
        let boxes: Vec<GpuAabb> = (0..50).map(|_| boxed(0.0, 1.0)).collect();
        let e = Slabs::new(&boxes, 10).unwrap_err().to_string();
        assert!(e.contains("50 boxes meet one"), "{e}");
    }
}
