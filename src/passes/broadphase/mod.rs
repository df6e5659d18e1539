//! Broadphase: every pair of bodies whose world boxes overlap, exactly once. Two GPU
//! methods and their CPU twins, and a brute-force oracle:
//!
//! - spatial hash: cell size = twice the mean of the boxes' largest sides (a typical box
//!   covers ≤ 2 cells per axis), grown until the grid has < 2^30 cells so cell indices
//!   are exact; boxes spanning more than 4 cells on an axis go to an oversize list tested
//!   against every body. The other boxes go into every cell they cover, through a table
//!   of 2^k ≥ 2n buckets filled by a counting sort (count per bucket, scan, scatter with
//!   atomic cursors: three passes where a radix sort of the entries would take dozens).
//!   A cell's bucket is its index when the grid has no more cells than the table has
//!   buckets, else a Fibonacci hash of it; entries keep their cell, so a shared bucket
//!   costs a comparison, never a false pair. A pair is emitted only in the lowest cell
//!   both boxes share (the cell of their overlap's lower corner). An invocation tests at
//!   most 256 candidates; the rest of a long bucket spills into work items.
//! - sort-and-sweep (Lin 1993, ch. 5): the axis along which box centers vary most; boxes
//!   radix-sorted by their lower bound on it; each sweeps forward while the next lower
//!   bound is not past its upper bound, testing the other two axes. On the GPU a binary
//!   search finds where each sweep ends and the sweeps run as work items of a bounded
//!   number of candidates, as the oversize tests and long hash buckets do, so no
//!   invocation loops for long.
//!
//! Both append pairs through a workgroup stage and an atomic counter. A pass that finds
//! more pairs (or hash entries) than fit keeps counting without writing; the caller sees
//! count > capacity and re-runs with exactly enough room: no pair is ever dropped. A loop
//! the adapter stopped short (llvmpipe ends an invocation's loops after 65535 iterations)
//! sets the counter's `cut` word, and the caller reports it.
//!
//! Every method uses the same closed-box f32 test, so all of them report the same set.
//!
//! Files: this one holds the twins of the shaders' structs, the method and capacity
//! types, the input checks and the box test; `record` the GPU recording; `hash` and
//! `sweep` the CPU twins; `brute` the oracle; `pairs` the pair sort; `choose` the `auto`
//! rule.

mod brute;
mod choose;
mod hash;
mod pairs;
mod record;
mod sweep;

pub use brute::brute_pairs;
pub use choose::{CHOOSE_SAMPLE, center_variance, choose_method, sweep_axis};
pub use hash::{
    BODY_BITS, HashTableCpu, hash_grid, hash_pairs_cpu, hash_pairs_cpu_within, hash_table_cpu,
};
pub use pairs::sort_body_pairs;
pub use record::{
    BroadphaseOutputs, HashTable, record_broadphase, record_broadphase_counting_from,
    record_hash_table,
};
pub use sweep::{sap_gather_cpu, sap_pairs_cpu, sap_pairs_cpu_within, sap_reach_cpu, sortable_key};

use crate::bodies::{GpuAabb, MAX_BODIES};
use crate::gpu::sizes::items_in_binding;
use crate::parallel::{chunk_len, on_threads, threads};
use crate::wgsl_twin;

/// A box spanning more cells than this along an axis is oversize (twin of `MAX_SPAN`).
pub const MAX_SPAN: u32 = 4;

wgsl_twin! {
    /// Twin of `CountParams` in `shaders/shared/broadphase.wgsl`.
    pub struct GpuCountParams as "CountParams" {
        /// Items.
        pub count: u32,
        /// Workgroups.
        pub groups: u32,
        /// Padding.
        pub _pad0: u32,
        /// Padding.
        pub _pad1: u32,
    }
}

wgsl_twin! {
    /// Twin of `SweepParams`: boxes, and sweep candidates per work item.
    pub struct GpuSweepParams as "SweepParams" {
        /// Boxes.
        pub count: u32,
        /// Candidates per work item ([`sweep_chunk`]).
        pub chunk: u32,
        /// Padding.
        pub _pad0: u32,
        /// Padding.
        pub _pad1: u32,
    }
}

/// Tests per GPU work item when a pass may make `worst` tests in all: 256, or more where
/// that many would make over 2^31 items, so their u32 count cannot overflow. A short
/// chunk spreads a long loop over many invocations.
fn work_chunk(worst: u64) -> u32 {
    worst.div_ceil(1 << 31).max(256).min(u64::from(u32::MAX)) as u32
}

/// Sweep candidates per GPU work item for `n` boxes (`work_chunk` of the longest
/// possible sweeps, n(n − 1)/2 candidates in all).
pub fn sweep_chunk(n: u32) -> u32 {
    work_chunk(u64::from(n) * u64::from(n.saturating_sub(1)) / 2)
}

wgsl_twin! {
    /// Twin of `HashPairsParams`: 0 for one invocation per entry, 1 per spill item.
    pub struct GpuHashPairsParams as "HashPairsParams" {
        /// The dispatch's work.
        pub mode: u32,
        /// Padding.
        pub _pad0: u32,
        /// Padding.
        pub _pad1: u32,
        /// Padding.
        pub _pad2: u32,
    }
}

wgsl_twin! {
    /// Twin of `OversizeParams`: bodies, and bodies per work item of the oversize pass.
    pub struct GpuOversizeParams as "OversizeParams" {
        /// Bodies.
        pub bodies: u32,
        /// Bodies per work item.
        pub chunk: u32,
        /// Work items per oversize body.
        pub chunks: u32,
        /// Padding.
        pub _pad0: u32,
    }
}

impl GpuOversizeParams {
    /// The work of `n` bodies: chunks of `work_chunk` bodies for up to n² tests (every
    /// body oversize), so oversize bodies × chunks stays within a u32.
    pub fn for_bodies(n: u32) -> Self {
        let chunk = work_chunk(u64::from(n) * u64::from(n));
        GpuOversizeParams {
            bodies: n,
            chunk,
            chunks: n.div_ceil(chunk),
            _pad0: 0,
        }
    }
}

wgsl_twin! {
    /// Twin of `StatsPartial`.
    pub struct GpuStatsPartial as "StatsPartial" {
        /// Sum of centers (relative to body 0's).
        pub sum: [f32; 3],
        /// Boxes counted.
        pub count: u32,
        /// Sum of squared centers.
        pub sum_sq: [f32; 3],
        /// Sum of largest sides.
        pub extent_sum: f32,
        /// Lower bound.
        pub lo: [f32; 3],
        /// Padding.
        pub _pad0: u32,
        /// Upper bound.
        pub hi: [f32; 3],
        /// Padding.
        pub _pad1: u32,
    }
}

wgsl_twin! {
    /// Twin of `BroadphaseSetup`.
    pub struct GpuBroadphaseSetup as "BroadphaseSetup" {
        /// Grid origin.
        pub grid_min: [f32; 3],
        /// Sweep axis.
        pub axis: u32,
        /// Grid cells per axis.
        pub dims: [u32; 3],
        /// Cell edge.
        pub cell: f32,
    }
}

wgsl_twin! {
    /// Twin of `PairCounter`.
    pub struct GpuPairCounter as "PairCounter" {
        /// Pairs found (may exceed the capacity).
        pub count: u32,
        /// Room in the pair buffer.
        pub capacity: u32,
        /// Hash entries needed (may exceed the capacity).
        pub entries: u32,
        /// Room in each entry buffer.
        pub entry_capacity: u32,
        /// Nonzero when a pass's loop was stopped short by the adapter.
        pub cut: u32,
        /// Spill items for long hash buckets (may exceed the capacity).
        pub spill: u32,
        /// Room in the spill buffer.
        pub spill_capacity: u32,
        /// Nonzero when `count`, `entries` or `spill` passed 2^32 − 1 (and wrapped).
        pub wrapped: u32,
    }
}

wgsl_twin! {
    /// Twin of `SortedBox`: a box in sort-and-sweep order, with its body.
    pub struct GpuSortedBox as "SortedBox" {
        /// Lower corner.
        pub min: [f32; 3],
        /// Body index.
        pub body: u32,
        /// Upper corner.
        pub max: [f32; 3],
        /// Padding.
        pub _pad0: u32,
    }
}

wgsl_twin! {
    /// Twin of `HashParams`: the spatial hash's table.
    pub struct GpuHashParams as "HashParams" {
        /// Bodies.
        pub bodies: u32,
        /// Buckets (a power of two).
        pub buckets: u32,
        /// 32 − log2(buckets): the Fibonacci hash's shift.
        pub shift: u32,
        /// Padding.
        pub _pad0: u32,
    }
}

impl GpuHashParams {
    /// The table for `n` bodies: the smallest power of two ≥ 2n buckets, at least 1024.
    pub fn for_bodies(n: u32) -> Self {
        let buckets = (2 * u64::from(n)).next_power_of_two().clamp(1024, 1 << 31) as u32;
        GpuHashParams {
            bodies: n,
            buckets,
            shift: 32 - buckets.trailing_zeros(),
            _pad0: 0,
        }
    }

    /// The bucket of cell `key` in grid `g` (twin of `bucket_of`).
    pub fn bucket_of(&self, key: u32, g: &GpuBroadphaseSetup) -> u32 {
        let cells = g.dims[0] * g.dims[1] * g.dims[2];
        if cells <= self.buckets {
            key
        } else {
            key.wrapping_mul(2_654_435_769) >> self.shift
        }
    }
}

/// Which algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Uniform-grid spatial hash.
    Hash,
    /// Sort-and-sweep.
    Sweep,
}

impl Method {
    /// Name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Hash => "hash",
            Method::Sweep => "sweep",
        }
    }
}

/// Room reserved for pairs and hash entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacities {
    /// Pairs.
    pub pairs: u32,
    /// Hash entries (box × cell).
    pub entries: u32,
    /// Spill items: chunks of a long hash bucket's candidates.
    pub spill: u32,
}

impl Capacities {
    /// A first guess for `n` bodies: 4 pairs and 8 cells per body, 1024 spill items.
    pub fn guess(n: usize) -> Self {
        Capacities {
            pairs: (4 * n).clamp(1024, u32::MAX as usize) as u32,
            entries: (8 * n).clamp(1024, u32::MAX as usize) as u32,
            spill: 1024,
        }
    }

    /// Room for what a run reported, with a quarter spare.
    pub fn grown_for(self, counter: &GpuPairCounter) -> Self {
        let grow = |need: u32, have: u32| {
            if need > have {
                need.saturating_add(need / 4)
            } else {
                have
            }
        };
        Capacities {
            pairs: grow(counter.count, self.pairs),
            entries: grow(counter.entries, self.entries),
            spill: grow(counter.spill, self.spill),
        }
    }

    /// The pairs a frame with these capacities is expected to find: what the last frame
    /// found, and a little more (capacities keep a quarter of room over it, see
    /// [`Capacities::fitted_to`]; this keeps a ninth). Readbacks copy that many with the
    /// frame and any more after it.
    pub fn expected_pairs(self) -> u32 {
        self.pairs - self.pairs / 8
    }

    /// Room for the next frame after a run that fit: what it used plus a quarter, so a
    /// coherent scene neither overflows nor scans mostly empty hash entries.
    pub fn fitted_to(counter: &GpuPairCounter) -> Self {
        let fit = |used: u32| used.saturating_add(used / 4).max(1024);
        Capacities {
            pairs: fit(counter.count),
            entries: fit(counter.entries),
            spill: fit(counter.spill),
        }
    }

    /// The room kept within `max` (the device's binding limit), but never below what a
    /// run reported `need`ing: a need past the limit then meets the engine's named
    /// buffer-limit error instead of overflowing for ever.
    pub fn capped(self, max: Capacities, need: Option<&GpuPairCounter>) -> Self {
        let (pairs, entries, spill) = need.map_or((0, 0, 0), |c| (c.count, c.entries, c.spill));
        Capacities {
            pairs: self.pairs.min(max.pairs.max(pairs)),
            entries: self.entries.min(max.entries.max(entries)),
            spill: self.spill.min(max.spill.max(spill)),
        }
    }

    /// The most pairs and spill items (8 bytes each) and hash entries (4 bytes in each of
    /// two buffers) a device with `limits` can bind.
    pub fn device_max(limits: &wgpu::Limits) -> Self {
        Capacities {
            pairs: items_in_binding(limits, 8),
            entries: items_in_binding(limits, 4),
            spill: items_in_binding(limits, 8),
        }
    }

    /// `self` with no more pairs than a buffer of `per_pair` bytes a pair binds on a device
    /// with `limits` (a stage after the broadphase that keeps an entry per pair: depth
    /// estimates, gathered contacts).
    pub fn pairs_within(self, limits: &wgpu::Limits, per_pair: u64) -> Self {
        Capacities {
            pairs: self.pairs.min(items_in_binding(limits, per_pair)),
            ..self
        }
    }

    /// True when the run found more than it had room for.
    pub fn overflowed(self, counter: &GpuPairCounter) -> bool {
        counter.count > self.pairs || counter.entries > self.entries || counter.spill > self.spill
    }
}

/// Errors past [`MAX_BODIES`] bodies.
pub fn check_body_count(n: usize) -> crate::Result<()> {
    if n > MAX_BODIES {
        return Err(crate::Error::Usage(format!(
            "{n} bodies: the broadphase takes at most {MAX_BODIES} (2^28)"
        )));
    }
    Ok(())
}

/// Checks boxes before a broadphase: every bound finite and `min ≤ max`. A NaN would make
/// every comparison false and silently drop pairs; an infinite box would break the grid.
pub fn validate_boxes(aabbs: &[GpuAabb]) -> crate::Result<()> {
    check_body_count(aabbs.len())?;
    for (i, b) in aabbs.iter().enumerate() {
        let finite = b.min.iter().chain(&b.max).all(|v| v.is_finite());
        if !finite || (0..3).any(|k| b.min[k] > b.max[k]) {
            return Err(crate::Error::InvalidShape {
                body: i as u32,
                what: format!(
                    "box {:?}..{:?} is not a finite box with min ≤ max; the broadphase needs one",
                    b.min, b.max
                ),
            });
        }
    }
    Ok(())
}

/// The closed-box test every method shares.
pub fn overlap(a: &GpuAabb, b: &GpuAabb) -> bool {
    corners_overlap(a.min, a.max, b.min, b.max)
}

fn corners_overlap(a_min: [f32; 3], a_max: [f32; 3], b_min: [f32; 3], b_max: [f32; 3]) -> bool {
    (0..3).all(|k| a_min[k] <= b_max[k] && b_min[k] <= a_max[k])
}

/// Splits `0..n` into one contiguous range per thread and concatenates what `work`
/// returns for each.
fn parallel_ranges<T: Send + Clone>(
    n: usize,
    work: impl Fn(std::ops::Range<usize>) -> Vec<T> + Sync + Send,
) -> Vec<T> {
    let chunk = chunk_len(n, 1);
    let ranges: Vec<_> = (0..n)
        .step_by(chunk)
        .map(|start| start..(start + chunk).min(n))
        .collect();
    // Joined into one allocation of the right size (an element-wise collect grew it by
    // doubling).
    on_threads(ranges, work).concat()
}
