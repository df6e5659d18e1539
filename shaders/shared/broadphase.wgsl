// Shared by the broadphase passes. Rust twins: passes::broadphase::{GpuCountParams,
// GpuBroadphaseSetup, GpuStatsPartial, GpuPairCounter}.

// Item count of a pass, and its number of workgroups where that matters.
struct CountParams {
    count: u32,
    groups: u32,
    _pad0: u32,
    _pad1: u32,
}

// Statistics of a block of boxes; centers are taken relative to body 0's center so that
// f32 sums of squares do not cancel catastrophically.
struct StatsPartial {
    sum: vec3<f32>,
    count: u32,
    sum_sq: vec3<f32>,
    extent_sum: f32,
    lo: vec3<f32>,
    _pad0: u32,
    hi: vec3<f32>,
    _pad1: u32,
}

// What the setup pass derives for the broadphase passes.
struct BroadphaseSetup {
    // Lower corner of the hash grid.
    grid_min: vec3<f32>,
    // Sort-and-sweep axis: the one along which box centers vary most.
    axis: u32,
    // Cells per axis of the hash grid (product below 2^30).
    dims: vec3<u32>,
    // Hash cell edge length.
    cell: f32,
}

// Pair output: an atomic count and the capacity of the pair buffer. A pass that finds
// more pairs than fit keeps counting; the CPU sees count > capacity and re-runs larger.
struct PairCounter {
    count: atomic<u32>,
    capacity: u32,
    // Hash entries written, and the capacity of the entry buffers (same rule).
    entries: atomic<u32>,
    entry_capacity: u32,
    // Largest cell key the sort is set up for (it sorts only the bits this needs), and a
    // flag raised when a key is larger: the CPU then re-runs with all 32 bits.
    key_limit: u32,
    key_overflow: atomic<u32>,
    _pad0: u32,
    _pad1: u32,
}

// Same overlap test as the CPU twins: closed boxes, f32, inclusive.
fn boxes_overlap(a_min: vec3<f32>, a_max: vec3<f32>, b_min: vec3<f32>, b_max: vec3<f32>) -> bool {
    return all(a_min <= b_max) && all(b_min <= a_max);
}

// Order-preserving map of f32 to u32 (negative floats reversed).
fn sortable_key(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    if (bits & 0x80000000u) != 0u {
        return ~bits;
    }
    return bits | 0x80000000u;
}

// Cell coordinates of a point (clamped to the grid).
fn cell_of(p: vec3<f32>, setup: BroadphaseSetup) -> vec3<u32> {
    let c = floor((p - setup.grid_min) / setup.cell);
    let hi = vec3<f32>(setup.dims - vec3<u32>(1u));
    return vec3<u32>(clamp(c, vec3<f32>(0.0), hi));
}

fn cell_key(c: vec3<u32>, setup: BroadphaseSetup) -> u32 {
    // +1: key 0 marks an empty entry.
    return (c.z * setup.dims.y + c.y) * setup.dims.x + c.x + 1u;
}
