//! Broadphase: every pair of bodies whose world boxes overlap, exactly once. Two GPU
//! methods and their CPU twins, and a brute-force oracle:
//!
//! - spatial hash: cell size = twice the mean of the boxes' largest sides (a typical box
//!   covers ≤ 2 cells per axis), grown until the grid has < 2^30 cells so cell keys are
//!   exact (no hash collisions); each box goes into every cell it covers, boxes spanning
//!   more than 4 cells on an axis go to an oversize list tested against every body;
//!   entries are radix-sorted by cell; a pair is emitted only in the lowest cell both
//!   boxes share (the cell of their overlap's lower corner).
//! - sort-and-sweep (Lin 1993, ch. 5): the axis along which box centers vary most; boxes
//!   radix-sorted by their lower bound on it; each sweeps forward while the next lower
//!   bound is not past its upper bound, testing the other two axes.
//!
//! Both append pairs through an atomic counter. A pass that finds more pairs (or hash
//! entries) than fit keeps counting without writing; the caller sees count > capacity and
//! re-runs with exactly enough room: no pair is ever dropped.
//!
//! Every method uses the same closed-box f32 test, so all of them report the same set.

use crate::bodies::GpuAabb;
use crate::gpu::shaders::ShaderId;
use crate::gpu::sizes::{BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X, dispatch_grid};
use crate::graph::{BufferProxy, Recording};
use crate::wgsl_twin;

use super::radix::record_sort_pairs;
use super::scan::record_exclusive_scan;

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
        /// Room in the entry buffers.
        pub entry_capacity: u32,
        /// Largest cell key the hash's sort handles.
        pub key_limit: u32,
        /// Raised when a cell key was larger.
        pub key_overflow: u32,
        /// Padding.
        pub _pad0: u32,
        /// Padding.
        pub _pad1: u32,
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

/// Room reserved for pairs and hash entries, and the key bits the hash sorts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacities {
    /// Pairs.
    pub pairs: u32,
    /// Hash entries (box × cell).
    pub entries: u32,
    /// Low key bits the hash's radix sort orders (4 per pass): 32 until a frame has shown
    /// how many cells the grid has.
    pub key_bits: u32,
}

impl Capacities {
    /// A first guess for `n` bodies: 4 pairs and 8 cells per body, full 32-bit keys.
    pub fn guess(n: usize) -> Self {
        Capacities {
            pairs: (4 * n).clamp(1024, u32::MAX as usize) as u32,
            entries: (8 * n).clamp(1024, u32::MAX as usize) as u32,
            key_bits: 32,
        }
    }

    /// Room for what a run reported, with a quarter spare; all key bits when a key was
    /// past the limit.
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
            key_bits: if counter.key_overflow != 0 {
                32
            } else {
                self.key_bits
            },
        }
    }

    /// Room for the next frame after a run that fit: what it used plus a quarter, so a
    /// coherent scene neither overflows nor sorts mostly empty hash entries; key bits for
    /// twice the grid's cells (a grid that grows past that raises the overflow flag).
    pub fn fitted_to(counter: &GpuPairCounter, setup: &GpuBroadphaseSetup) -> Self {
        let fit = |used: u32| used.saturating_add(used / 4).max(1024);
        let cells = setup
            .dims
            .iter()
            .map(|&d| u64::from(d.max(1)))
            .product::<u64>();
        let bits = 64 - (2 * cells + 1).leading_zeros();
        Capacities {
            pairs: fit(counter.count),
            entries: fit(counter.entries),
            key_bits: bits.clamp(4, 32),
        }
    }

    /// The largest key the sort orders correctly (it sorts whole 4-bit digits).
    pub fn key_limit(self) -> u32 {
        let sorted_bits = self.key_bits.div_ceil(4) * 4;
        if sorted_bits >= 32 {
            u32::MAX
        } else {
            (1u32 << sorted_bits) - 1
        }
    }

    /// True when the run found more than it had room for, or a key past the limit.
    pub fn overflowed(self, counter: &GpuPairCounter) -> bool {
        counter.count > self.pairs || counter.entries > self.entries || counter.key_overflow != 0
    }
}

/// Buffers the broadphase leaves behind.
#[derive(Clone, Copy, Debug)]
pub struct BroadphaseOutputs {
    /// `[u32; 2]` per pair, `count.min(capacity)` of them valid.
    pub pairs: BufferProxy,
    /// One [`GpuPairCounter`].
    pub counter: BufferProxy,
    /// One [`GpuBroadphaseSetup`].
    pub setup: BufferProxy,
}

fn count_params(rec: &mut Recording, count: u32, groups: u32, label: &'static str) -> BufferProxy {
    let p = rec.buffer(size_of::<GpuCountParams>() as u64, label);
    rec.upload(
        p,
        &[GpuCountParams {
            count,
            groups,
            _pad0: 0,
            _pad1: 0,
        }],
    );
    p
}

/// Frees the input pair of a sort and, when different, the pair holding its result.
fn free_sorted(
    rec: &mut Recording,
    input: (BufferProxy, BufferProxy),
    output: (BufferProxy, BufferProxy),
) {
    rec.free(input.0);
    rec.free(input.1);
    if output.0 != input.0 {
        rec.free(output.0);
        rec.free(output.1);
    }
}

fn body_grid(n: u32) -> [u32; 3] {
    dispatch_grid(n, BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X)
}

/// Records the broadphase over `n` boxes in `aabbs` with `method` and room `caps`.
pub fn record_broadphase(
    rec: &mut Recording,
    aabbs: BufferProxy,
    n: u32,
    method: Method,
    caps: Capacities,
) -> BroadphaseOutputs {
    // Setup: statistics, sweep axis, grid.
    let groups = n.div_ceil(1024).max(1);
    let stats_params = count_params(rec, n, groups, "stats params");
    let partials = rec.array_buffer::<GpuStatsPartial>(groups as usize, "stats partials");
    rec.dispatch(
        ShaderId::AabbStats,
        dispatch_grid(groups, 1, DEFAULT_MAX_GROUPS_X),
        &[stats_params, aabbs, partials],
    );
    let setup = rec.buffer(size_of::<GpuBroadphaseSetup>() as u64, "broadphase setup");
    rec.dispatch(
        ShaderId::BroadphaseSetup,
        [1, 1, 1],
        &[stats_params, partials, setup],
    );
    rec.free(partials);
    rec.free(stats_params);

    let counter = rec.buffer(size_of::<GpuPairCounter>() as u64, "pair counter");
    rec.upload(
        counter,
        &[GpuPairCounter {
            capacity: caps.pairs,
            entry_capacity: caps.entries,
            key_limit: caps.key_limit(),
            ..Default::default()
        }],
    );
    let pairs = rec.array_buffer::<[u32; 2]>(caps.pairs as usize, "pairs");
    let params = count_params(rec, n, 0, "broadphase params");
    match method {
        Method::Sweep => {
            let keys = rec.array_buffer::<u32>(n as usize, "sweep keys");
            let values = rec.array_buffer::<u32>(n as usize, "sweep order");
            rec.dispatch(
                ShaderId::SapKeys,
                body_grid(n),
                &[params, aabbs, setup, keys, values],
            );
            let (sk, order) = record_sort_pairs(rec, keys, values, n, 32);
            rec.dispatch(
                ShaderId::SapSweep,
                body_grid(n),
                &[params, aabbs, setup, order, counter, pairs],
            );
            free_sorted(rec, (keys, values), (sk, order));
        }
        Method::Hash => {
            let cell_counts = rec.array_buffer::<u32>(n as usize, "cell counts");
            let oversize = rec.array_buffer::<u32>(n as usize + 1, "oversize bodies");
            rec.clear(oversize);
            rec.dispatch(
                ShaderId::HashCount,
                body_grid(n),
                &[params, aabbs, setup, cell_counts, oversize],
            );
            let offsets = rec.array_buffer::<u32>(n as usize, "cell offsets");
            rec.copy(cell_counts, 0, offsets, 0, 4 * u64::from(n));
            let total = record_exclusive_scan(rec, offsets, n);
            rec.free(total);
            let e = caps.entries;
            let keys = rec.array_buffer::<u32>(e as usize, "hash keys");
            let values = rec.array_buffer::<u32>(e as usize, "hash bodies");
            rec.clear(keys);
            rec.dispatch(
                ShaderId::HashFill,
                body_grid(n),
                &[
                    params,
                    aabbs,
                    setup,
                    cell_counts,
                    offsets,
                    keys,
                    values,
                    counter,
                ],
            );
            rec.free(offsets);
            let (sk, sv) = record_sort_pairs(rec, keys, values, e, caps.key_bits);
            let entry_params = count_params(rec, e, 0, "hash entry params");
            rec.dispatch(
                ShaderId::HashPairs,
                body_grid(e),
                &[entry_params, aabbs, setup, sk, sv, counter, pairs],
            );
            rec.free(entry_params);
            free_sorted(rec, (keys, values), (sk, sv));
            rec.dispatch(
                ShaderId::HashOversize,
                body_grid(n),
                &[params, aabbs, cell_counts, oversize, counter, pairs],
            );
            rec.free(cell_counts);
            rec.free(oversize);
        }
    }
    rec.free(params);
    BroadphaseOutputs {
        pairs,
        counter,
        setup,
    }
}

/// Checks boxes before a broadphase: every bound finite and `min ≤ max`. A NaN would make
/// every comparison false and silently drop pairs; an infinite box would break the grid.
pub fn validate_boxes(aabbs: &[GpuAabb]) -> crate::Result<()> {
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
    (0..3).all(|k| a.min[k] <= b.max[k] && b.min[k] <= a.max[k])
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |t| t.get())
}

/// Splits `0..n` into one contiguous range per thread and concatenates what `work`
/// returns for each.
fn parallel_ranges<T: Send>(
    n: usize,
    work: impl Fn(std::ops::Range<usize>) -> Vec<T> + Sync,
) -> Vec<T> {
    let t = threads().max(1);
    let chunk = n.div_ceil(t).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|start| {
                let work = &work;
                scope.spawn(move || work(start..(start + chunk).min(n)))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("broadphase worker panicked"))
            .collect()
    })
}

/// Brute force: every pair tested (the oracle). Multi-threaded; sorted output.
pub fn brute_pairs(aabbs: &[GpuAabb]) -> Vec<[u32; 2]> {
    let n = aabbs.len();
    // Rows are uneven (row i has n − i − 1 tests): interleave them over the threads.
    let t = threads().max(1);
    let mut pairs: Vec<[u32; 2]> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..t)
            .map(|k| {
                scope.spawn(move || {
                    let mut out = Vec::new();
                    for i in (k..n).step_by(t) {
                        for j in i + 1..n {
                            if overlap(&aabbs[i], &aabbs[j]) {
                                out.push([i as u32, j as u32]);
                            }
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("brute worker panicked"))
            .collect()
    });
    pairs.sort_unstable();
    pairs
}

/// Variance of the box centers per axis, taken relative to the first box's center (as the
/// GPU's statistics are, so large coordinates do not cancel). Zero for no boxes.
pub fn center_variance(aabbs: &[GpuAabb]) -> [f64; 3] {
    let Some(first) = aabbs.first() else {
        return [0.0; 3];
    };
    let center = |b: &GpuAabb| -> [f32; 3] { std::array::from_fn(|k| (b.min[k] + b.max[k]) * 0.5) };
    let r = center(first);
    let (mut sum, mut sq) = ([0f64; 3], [0f64; 3]);
    for b in aabbs {
        let c = center(b);
        for k in 0..3 {
            let d = f64::from(c[k] - r[k]);
            sum[k] += d;
            sq[k] += d * d;
        }
    }
    let n = aabbs.len() as f64;
    std::array::from_fn(|k| sq[k] / n - (sum[k] / n).powi(2))
}

/// Sweep axis (largest variance of centers, ties broken as the GPU does), used by the CPU
/// twin of sort-and-sweep.
pub fn sweep_axis(aabbs: &[GpuAabb]) -> usize {
    let var = center_variance(aabbs);
    if var[1] > var[0] && var[1] >= var[2] {
        1
    } else if var[2] > var[0] && var[2] > var[1] {
        2
    } else {
        0
    }
}

/// Order-preserving map of f32 to u32 (twin of `sortable_key`).
pub fn sortable_key(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// CPU twin of sort-and-sweep. Multi-threaded sweep; sorted output.
pub fn sap_pairs_cpu(aabbs: &[GpuAabb]) -> Vec<[u32; 2]> {
    let axis = sweep_axis(aabbs);
    let mut order: Vec<u32> = (0..aabbs.len() as u32).collect();
    order.sort_by_key(|&i| sortable_key(aabbs[i as usize].min[axis]));
    let order = &order;
    let mut pairs = parallel_ranges(aabbs.len(), |range| {
        let mut out = Vec::new();
        for s in range {
            let a = order[s] as usize;
            let ba = &aabbs[a];
            for &b in &order[s + 1..] {
                let bb = &aabbs[b as usize];
                if bb.min[axis] > ba.max[axis] {
                    break;
                }
                if overlap(ba, bb) {
                    out.push([a.min(b as usize) as u32, a.max(b as usize) as u32]);
                }
            }
        }
        out
    });
    pairs.sort_unstable();
    pairs
}

/// The grid the hash uses, computed as `broadphase_setup.wgsl` does.
pub fn hash_grid(aabbs: &[GpuAabb]) -> GpuBroadphaseSetup {
    let mut lo = [f32::MAX; 3];
    let mut hi = [f32::MIN; 3];
    let mut ext = 0f64;
    for b in aabbs {
        for k in 0..3 {
            lo[k] = lo[k].min(b.min[k]);
            hi[k] = hi[k].max(b.max[k]);
        }
        let e: [f32; 3] = std::array::from_fn(|k| b.max[k] - b.min[k]);
        ext += f64::from(e[0].max(e[1]).max(e[2]));
    }
    let count = aabbs.len().max(1) as f64;
    let (grid_min, size) = if aabbs.is_empty() {
        ([0f32; 3], [0f32; 3])
    } else {
        (lo, std::array::from_fn(|k| (hi[k] - lo[k]).max(0.0)))
    };
    let scale = grid_min
        .iter()
        .map(|v| v.abs())
        .chain(size.iter().copied())
        .fold(0f32, f32::max);
    let mut cell = ((2.0 * ext / count) as f32).max(1e-6 * scale).max(1e-30);
    let volume_cells: f32 = size.iter().map(|s| s / cell + 1.0).product();
    if volume_cells > 1.0e9 {
        cell *= (volume_cells / 1.0e9).powf(1.0 / 3.0) * 1.01;
    }
    let dims = std::array::from_fn(|k| {
        (((size[k] / cell).floor() + 1.0).min(1024.0 * 1024.0) as u32).max(1)
    });
    GpuBroadphaseSetup {
        grid_min,
        axis: sweep_axis(aabbs) as u32,
        dims,
        cell,
    }
}

fn cell_of(p: [f32; 3], g: &GpuBroadphaseSetup) -> [u32; 3] {
    std::array::from_fn(|k| {
        ((p[k] - g.grid_min[k]) / g.cell)
            .floor()
            .clamp(0.0, (g.dims[k] - 1) as f32) as u32
    })
}

fn cell_key(c: [u32; 3], g: &GpuBroadphaseSetup) -> u32 {
    (c[2] * g.dims[1] + c[1]) * g.dims[0] + c[0] + 1
}

/// CPU twin of `hash_count.wgsl`: the number of cells each box covers in grid `g`, 0 for
/// an oversize box (more than [`MAX_SPAN`] cells along an axis).
pub fn hash_cell_counts(aabbs: &[GpuAabb], g: &GpuBroadphaseSetup) -> Vec<u32> {
    aabbs
        .iter()
        .map(|b| {
            let (lo, hi) = (cell_of(b.min, g), cell_of(b.max, g));
            let span: [u32; 3] = std::array::from_fn(|k| hi[k] - lo[k] + 1);
            if span.iter().any(|&s| s > MAX_SPAN) {
                0
            } else {
                span.iter().product()
            }
        })
        .collect()
}

/// CPU twin of the spatial hash (same grid, same oversize rule, same lowest-cell rule).
/// Multi-threaded; sorted output.
pub fn hash_pairs_cpu(aabbs: &[GpuAabb]) -> Vec<[u32; 2]> {
    let g = hash_grid(aabbs);
    let counts = hash_cell_counts(aabbs, &g);
    let oversize: Vec<u32> = (0..aabbs.len() as u32)
        .filter(|&i| counts[i as usize] == 0)
        .collect();
    let is_oversize: Vec<bool> = counts.iter().map(|&c| c == 0).collect();
    let mut entries: Vec<(u32, u32)> = Vec::new();
    for (i, b) in aabbs.iter().enumerate() {
        if is_oversize[i] {
            continue;
        }
        let (lo, hi) = (cell_of(b.min, &g), cell_of(b.max, &g));
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    entries.push((cell_key([x, y, z], &g), i as u32));
                }
            }
        }
    }
    entries.sort_unstable();
    let entries = &entries;
    let mut pairs = parallel_ranges(entries.len(), |range| {
        let mut out = Vec::new();
        for e in range {
            let (key, a) = entries[e];
            let ba = &aabbs[a as usize];
            for &(k2, b) in &entries[e + 1..] {
                if k2 != key {
                    break;
                }
                let bb = &aabbs[b as usize];
                if !overlap(ba, bb) {
                    continue;
                }
                let corner: [f32; 3] = std::array::from_fn(|k| ba.min[k].max(bb.min[k]));
                if cell_key(cell_of(corner, &g), &g) == key {
                    out.push([a.min(b), a.max(b)]);
                }
            }
        }
        out
    });
    let (oversize, is_oversize) = (&oversize, &is_oversize);
    pairs.extend(parallel_ranges(aabbs.len(), |range| {
        let mut out = Vec::new();
        for j in range {
            for &a in oversize {
                let a_ = a as usize;
                if a_ == j || (is_oversize[j] && j < a_) {
                    continue;
                }
                if overlap(&aabbs[a_], &aabbs[j]) {
                    out.push([a.min(j as u32), a.max(j as u32)]);
                }
            }
        }
        out
    }));
    pairs.sort_unstable();
    pairs
}

/// Picks a method from the boxes: sort-and-sweep when the spread is dominated by one axis
/// (variance along it over 16 times the next) or when sizes vary widely (largest box over
/// 16 times the mean: the hash would put many boxes in its oversize list); the hash
/// otherwise.
pub fn choose_method(aabbs: &[GpuAabb]) -> Method {
    if aabbs.len() < 2 {
        return Method::Sweep;
    }
    let n = aabbs.len() as f64;
    let (mut ext_sum, mut ext_max) = (0f64, 0f64);
    for b in aabbs {
        let e = (0..3)
            .map(|k| f64::from(b.max[k] - b.min[k]))
            .fold(0.0, f64::max);
        ext_sum += e;
        ext_max = ext_max.max(e);
    }
    let mut var = center_variance(aabbs).map(|v| v.max(0.0));
    var.sort_by(|a, b| b.total_cmp(a));
    if var[0] > 16.0 * var[1] || ext_max > 16.0 * ext_sum / n {
        Method::Sweep
    } else {
        Method::Hash
    }
}
