// Shared by the broadphase passes. Rust twins: passes::broadphase::{GpuCountParams,
// GpuBroadphaseSetup, GpuStatsPartial, GpuPairCounter, GpuHashParams, GpuSortedBox}.

// Item count of a pass, and its number of workgroups where that matters.
struct CountParams {
    count: u32,
    groups: u32,
    _pad0: u32,
    _pad1: u32,
}

// The sweep's size: boxes, and candidates per work item (see sap_reach.wgsl).
struct SweepParams {
    count: u32,
    chunk: u32,
    _pad0: u32,
    _pad1: u32,
}

// Which work a hash_pairs dispatch does: 0 = one invocation per entry, 1 = one per spill
// item.
struct HashPairsParams {
    mode: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// The oversize pass's work: bodies, and bodies per work item (chunks of them per
// oversize body).
struct OversizeParams {
    bodies: u32,
    chunk: u32,
    chunks: u32,
    _pad0: u32,
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

// A box gathered into sort-and-sweep order, with the body it belongs to.
struct SortedBox {
    min: vec3<f32>,
    body: u32,
    max: vec3<f32>,
    _pad0: u32,
}

// Pair output: an atomic count and the capacity of the pair buffer. A pass that finds
// more pairs than fit keeps counting; the CPU sees count > capacity and re-runs larger.
struct PairCounter {
    count: atomic<u32>,
    capacity: u32,
    // Hash entries (box × cell) the table needs, and the room in the entry buffer
    // (same rule: entries past the room are not written, the CPU re-runs larger).
    entries: atomic<u32>,
    entry_capacity: u32,
    // Nonzero when a pass's loop ended before its own condition did. Some software
    // adapters stop every loop of an invocation after a fixed number of iterations
    // (llvmpipe: 65535 in all); the CPU then reports it instead of returning the pairs
    // found so far.
    cut: atomic<u32>,
    // Work items for the rest of long hash buckets (see hash_pairs.wgsl), and the room
    // in their buffer (same rule as the pairs).
    spill: atomic<u32>,
    spill_capacity: u32,
    // Nonzero when an add to `count`, `entries` or `spill` passed 2^32 - 1: the u32 wrapped
    // and the CPU names the error (no buffer could hold that many anyway).
    wrapped: atomic<u32>,
}

// The spatial hash's table: bodies, buckets (a power of two) and 32 - log2(buckets).
struct HashParams {
    bodies: u32,
    buckets: u32,
    shift: u32,
    _pad0: u32,
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

// Linear cell index: exact, below 2^30.
fn cell_key(c: vec3<u32>, setup: BroadphaseSetup) -> u32 {
    return (c.z * setup.dims.y + c.y) * setup.dims.x + c.x;
}

// The table bucket of a cell: the cell index itself when the grid has no more cells than
// the table has buckets (no collisions), else a Fibonacci hash of it.
fn bucket_of(key: u32, setup: BroadphaseSetup, table: HashParams) -> u32 {
    let cells = setup.dims.x * setup.dims.y * setup.dims.z;
    if cells <= table.buckets {
        return key;
    }
    return (key * 2654435769u) >> table.shift;
}

// A hash entry's body word: the body index in the low 29 bits, and in the top 3 one flag
// per axis, set when the entry's cell is the first the box covers along that axis. The
// lowest cell two boxes share is, per axis, the larger of their first cells (cell_of is
// monotone), so a cell is that cell exactly when along every axis it is the first cell of
// one of the two: (flags_a | flags_b) == 7. Pairs are told apart from that alone, before
// any box is loaded.
const BODY_BITS: u32 = 29u;
const BODY_MASK: u32 = 0x1fffffffu;
fn entry_flags(c: vec3<u32>, lo: vec3<u32>) -> u32 {
    return select(0u, 1u, c.x == lo.x) | select(0u, 2u, c.y == lo.y) | select(0u, 4u, c.z == lo.z);
}

// Whether a box spans more than MAX_SPAN cells along some axis (then it has no cells and
// is tested against every body instead).
const MAX_SPAN: u32 = 4u;
fn is_oversize(lo: vec3<u32>, hi: vec3<u32>) -> bool {
    return any(hi - lo >= vec3<u32>(MAX_SPAN));
}
