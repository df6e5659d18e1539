//! The CPU twin of the spatial hash: its grid, its table and its pairs.

use super::*;
use crate::bodies::{GpuAabb, MAX_BODIES};
use crate::memory::PairBudget;

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

/// The cell holding `p`, clamped into the grid. The floor of the cell coordinate is its
/// truncation, since it is clamped to `[0, dims − 1]` first (a cast rounds toward zero,
/// NaN to 0): the same cells as `floor` then clamp, without `floorf`, a libm call on
/// baseline x86-64 that took most of `choose_method`'s 5-8 ms over 100k boxes.
fn cell_of(p: [f32; 3], g: &GpuBroadphaseSetup) -> [u32; 3] {
    std::array::from_fn(|k| {
        ((p[k] - g.grid_min[k]) / g.cell).clamp(0.0, (g.dims[k] - 1) as f32) as u32
    })
}

fn cell_key(c: [u32; 3], g: &GpuBroadphaseSetup) -> u32 {
    (c[2] * g.dims[1] + c[1]) * g.dims[0] + c[0]
}

/// The cells box `b` covers in grid `g` (lower and upper corner), or `None` when it is
/// oversize (more than [`MAX_SPAN`] cells along an axis).
pub(super) fn cell_range(b: &GpuAabb, g: &GpuBroadphaseSetup) -> Option<([u32; 3], [u32; 3])> {
    let (lo, hi) = (cell_of(b.min, g), cell_of(b.max, g));
    (0..3).all(|k| hi[k] - lo[k] < MAX_SPAN).then_some((lo, hi))
}

/// Calls `f` with the index of every cell in `lo..=hi` and the entry's first-cell flags
/// (bit k set when the cell is the first along axis k; twin of `entry_flags`).
fn for_each_cell(lo: [u32; 3], hi: [u32; 3], g: &GpuBroadphaseSetup, mut f: impl FnMut(u32, u32)) {
    for z in lo[2]..=hi[2] {
        for y in lo[1]..=hi[1] {
            for x in lo[0]..=hi[0] {
                let flags =
                    u32::from(x == lo[0]) | u32::from(y == lo[1]) << 1 | u32::from(z == lo[2]) << 2;
                f(cell_key([x, y, z], g), flags);
            }
        }
    }
}

/// Bits of a hash entry's body word that hold the body (twin of `BODY_BITS`); the top
/// three hold the entry's first-cell flags.
pub const BODY_BITS: u32 = 29;

// A hash entry keeps the body in BODY_BITS bits: every body of a world must fit.
const _: () = assert!(MAX_BODIES < 1 << BODY_BITS);

const BODY_MASK: u32 = (1 << BODY_BITS) - 1;

/// The hash's table as the CPU twin of its count, scan and fill passes builds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HashTableCpu {
    /// Entries per bucket.
    pub bucket_counts: Vec<u32>,
    /// `[cell, body | flags << BODY_BITS]` per entry, by bucket, then cell, then body
    /// (the GPU's order within a bucket is whatever its atomics gave).
    pub entries: Vec<[u32; 2]>,
    /// Oversize bodies, ascending.
    pub oversize: Vec<u32>,
}

/// CPU twin of `hash_count.wgsl`, the scan and `hash_fill.wgsl`: the table for `aabbs`
/// on grid `g`.
pub fn hash_table_cpu(aabbs: &[GpuAabb], g: &GpuBroadphaseSetup) -> HashTableCpu {
    let table = GpuHashParams::for_bodies(aabbs.len() as u32);
    let mut bucket_counts = vec![0u32; table.buckets as usize];
    let mut entries = Vec::new();
    let mut oversize = Vec::new();
    for (i, b) in aabbs.iter().enumerate() {
        match cell_range(b, g) {
            None => oversize.push(i as u32),
            Some((lo, hi)) => for_each_cell(lo, hi, g, |key, flags| {
                bucket_counts[table.bucket_of(key, g) as usize] += 1;
                entries.push([key, i as u32 | flags << BODY_BITS]);
            }),
        }
    }
    entries.sort_unstable_by_key(|&[key, body]| (table.bucket_of(key, g), key, body));
    HashTableCpu {
        bucket_counts,
        entries,
        oversize,
    }
}

/// CPU twin of the spatial hash (same grid, same oversize rule, same lowest-cell rule;
/// entries grouped by a parallel sort rather than the GPU's bucket table, which costs a
/// CPU more in atomics than the sort). Multi-threaded; sorted output.
pub fn hash_pairs_cpu(aabbs: &[GpuAabb]) -> Vec<[u32; 2]> {
    hash_pairs_cpu_within(aabbs, &PairBudget::unlimited())
}

/// [`hash_pairs_cpu`] counting its pairs against `budget`: it stops early, with part of
/// the pairs, once they no longer fit (the caller reads the budget's error).
pub fn hash_pairs_cpu_within(aabbs: &[GpuAabb], budget: &PairBudget) -> Vec<[u32; 2]> {
    let g = hash_grid(aabbs);
    let g = &g;
    let ranges = parallel_ranges(aabbs.len(), |r| {
        r.map(|i| cell_range(&aabbs[i], g)).collect()
    });
    let ranges = &ranges;
    // [cell, body | flags], sorted: each cell's bodies are contiguous.
    let mut entries = parallel_ranges(aabbs.len(), |r| {
        let mut out = Vec::new();
        for i in r {
            if let Some((lo, hi)) = ranges[i] {
                for_each_cell(lo, hi, g, |key, flags| {
                    out.push([key, i as u32 | flags << BODY_BITS]);
                });
            }
        }
        out
    });
    sort_body_pairs(&mut entries);
    let entries = &entries;
    let mut pairs = parallel_ranges(entries.len(), |range| {
        let mut out = Vec::new();
        for e in range {
            let [key, a_word] = entries[e];
            let (a, a_flags) = (a_word & BODY_MASK, a_word >> BODY_BITS);
            let ba = &aabbs[a as usize];
            for &[k2, b_word] in &entries[e + 1..] {
                if k2 != key {
                    break;
                }
                // This cell is the lowest both share (see `entry_flags` in the WGSL).
                if a_flags | b_word >> BODY_BITS != 7 {
                    continue;
                }
                let b = b_word & BODY_MASK;
                if overlap(ba, &aabbs[b as usize]) {
                    out.push([a.min(b), a.max(b)]);
                    if out.len() % PairBudget::STRIDE == 0 && !budget.add(PairBudget::STRIDE) {
                        return out;
                    }
                }
            }
        }
        out
    });
    let oversize: Vec<u32> = (0..aabbs.len() as u32)
        .filter(|&i| ranges[i as usize].is_none())
        .collect();
    pairs.extend(oversize_pairs(aabbs, ranges, &oversize, budget));
    sort_body_pairs(&mut pairs);
    pairs
}

/// The overlapping pairs of an oversize body with any other, by a sweep along x: the
/// bodies that fit the grid sorted by their boxes' low x, an oversize box meets only those
/// starting no earlier than its own start less the widest of their x extents, and no later
/// than its end (the GPU's `hash_oversize.wgsl` tries every body, as this did: 50 million
/// tests a frame for the boulders' 500 rocks among 100,500 bodies, over half the CPU
/// twins' broadphase). The oversize bodies are tried against each other in full.
fn oversize_pairs(
    aabbs: &[GpuAabb],
    ranges: &[Option<([u32; 3], [u32; 3])>],
    oversize: &[u32],
    budget: &PairBudget,
) -> Vec<[u32; 2]> {
    if oversize.is_empty() {
        return Vec::new();
    }
    // In sort-and-sweep's order along x (`sortable_key`, `sap_gather_cpu`); a box whose
    // low x is NaN meets nothing (every comparison with it is false) and would break the
    // order's search.
    let mut order: Vec<u32> = (0..aabbs.len() as u32)
        .filter(|&j| ranges[j as usize].is_some() && !aabbs[j as usize].min[0].is_nan())
        .collect();
    order.sort_unstable_by_key(|&j| sortable_key(aabbs[j as usize].min[0]));
    let by_x = sap_gather_cpu(aabbs, &order);
    let reach = by_x
        .iter()
        .map(|b| f64::from(b.max[0]) - f64::from(b.min[0]))
        .fold(0.0, f64::max);
    let (by_x, oversize) = (&by_x, oversize);
    parallel_ranges(oversize.len(), |range| {
        let mut out = Vec::new();
        for i in range {
            let a = oversize[i];
            let box_a = &aabbs[a as usize];
            // A box meeting this one ends at or after its start, so starts at or after
            // its start less `reach`; a margin far above the rounding keeps the search
            // from cutting one off.
            let low = f64::from(box_a.min[0]);
            let from = low - reach - 1e-9 * (reach + low.abs());
            let first = by_x.partition_point(|b| f64::from(b.min[0]) < from);
            for b in &by_x[first..] {
                if b.min[0] > box_a.max[0] {
                    break;
                }
                if corners_overlap(box_a.min, box_a.max, b.min, b.max) {
                    out.push([a.min(b.body), a.max(b.body)]);
                    if out.len() % PairBudget::STRIDE == 0 && !budget.add(PairBudget::STRIDE) {
                        return out;
                    }
                }
            }
            for &b in &oversize[i + 1..] {
                if overlap(box_a, &aabbs[b as usize]) {
                    out.push([a.min(b), a.max(b)]);
                }
            }
        }
        out
    })
}
