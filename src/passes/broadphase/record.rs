//! The broadphase's GPU recording: setup, then the hash's table and pairs or the sweep's
//! sort and sweep, in named stages.

use crate::gpu::sizes::{BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X, dispatch_grid};
use crate::graph::{BufferProxy, Recording};
use crate::shaders::ShaderId;

use super::*;
use crate::passes::dispatch_args::{record_dispatch_args, record_dispatch_args_per_item};
use crate::passes::radix::record_sort_pairs_best;
use crate::passes::scan::record_exclusive_scan;

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

/// Records the broadphase over `n` boxes in `aabbs` with `method` and room `caps`, in
/// stages `broadphase/setup` (statistics, sweep axis, grid), then `broadphase/table` and
/// `broadphase/pairs` (hash) or `broadphase/sort` and `broadphase/sweep` (sweep).
pub fn record_broadphase(
    rec: &mut Recording,
    aabbs: BufferProxy,
    n: u32,
    method: Method,
    caps: Capacities,
) -> BroadphaseOutputs {
    record_broadphase_counting_from(rec, aabbs, n, method, caps, GpuPairCounter::default())
}

/// [`record_broadphase`] with the counter's words starting at `start`'s (its capacities are
/// `caps`'): a test starts them near 2^32 to see a wrap flagged.
pub fn record_broadphase_counting_from(
    rec: &mut Recording,
    aabbs: BufferProxy,
    n: u32,
    method: Method,
    caps: Capacities,
    start: GpuPairCounter,
) -> BroadphaseOutputs {
    rec.stage("broadphase/setup");
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
            spill_capacity: caps.spill,
            ..start
        }],
    );
    let pairs = rec.array_buffer::<[u32; 2]>(caps.pairs as usize, "pairs");
    match method {
        Method::Sweep => {
            rec.stage("broadphase/sort");
            let params = count_params(rec, n, 0, "broadphase params");
            let keys = rec.array_buffer::<u32>(n as usize, "sweep keys");
            let values = rec.array_buffer::<u32>(n as usize, "sweep order");
            rec.dispatch(
                ShaderId::SapKeys,
                body_grid(n),
                &[params, aabbs, setup, keys, values],
            );
            let (sk, order) = record_sort_pairs_best(rec, keys, values, n, 32);
            let sorted = rec.array_buffer::<GpuSortedBox>(n as usize, "sorted boxes");
            rec.dispatch(
                ShaderId::SapGather,
                body_grid(n),
                &[params, aabbs, order, sorted],
            );
            free_sorted(rec, (keys, values), (sk, order));
            rec.free(params);
            rec.stage("broadphase/sweep");
            let params = rec.buffer(size_of::<GpuSweepParams>() as u64, "sweep params");
            rec.upload(
                params,
                &[GpuSweepParams {
                    count: n,
                    chunk: sweep_chunk(n),
                    _pad0: 0,
                    _pad1: 0,
                }],
            );
            let ends = rec.array_buffer::<u32>(n as usize, "sweep ends");
            let chunks = rec.array_buffer::<u32>(n as usize, "sweep chunks");
            rec.dispatch(
                ShaderId::SapReach,
                body_grid(n),
                &[params, setup, sorted, ends, chunks],
            );
            let items = record_exclusive_scan(rec, chunks, n);
            let args =
                record_dispatch_args(rec, items, 0, BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X);
            rec.dispatch_indirect(
                ShaderId::SapSweep,
                args,
                0,
                &[params, setup, sorted, ends, chunks, items, counter, pairs],
            );
            for b in [sorted, params, ends, chunks, items, args] {
                rec.free(b);
            }
        }
        Method::Hash => record_hash(rec, aabbs, n, setup, counter, pairs, caps),
    }
    BroadphaseOutputs {
        pairs,
        counter,
        setup,
    }
}

/// The spatial hash's buffers after its table is built.
#[derive(Clone, Copy, Debug)]
pub struct HashTable {
    /// One [`GpuHashParams`] (uniform).
    pub params: BufferProxy,
    /// Bucket ends: bucket `b` holds entries `ends[b − 1]..ends[b]` (from 0 for `b = 0`).
    pub ends: BufferProxy,
    /// The cell of each entry, entries grouped by bucket.
    pub cells: BufferProxy,
    /// The body of each entry.
    pub bodies: BufferProxy,
    /// Oversize bodies: the count, then their indices.
    pub oversize: BufferProxy,
}

/// Records the hash's table for `n` boxes on grid `setup`: counts per bucket (their sum,
/// the entry count, added into `counter`), their scan, and the scatter of the entries.
/// The counts' pass sums the entries itself, so the scan's total is not copied into the
/// counter: the table's dispatches follow one another in one compute pass.
pub fn record_hash_table(
    rec: &mut Recording,
    aabbs: BufferProxy,
    n: u32,
    setup: BufferProxy,
    counter: BufferProxy,
    entry_capacity: u32,
) -> HashTable {
    let table = GpuHashParams::for_bodies(n);
    let params = rec.buffer(size_of::<GpuHashParams>() as u64, "hash params");
    rec.upload(params, &[table]);
    let ends = rec.array_buffer::<u32>(table.buckets as usize, "hash buckets");
    rec.clear(ends);
    let oversize = rec.array_buffer::<u32>(n as usize + 1, "oversize bodies");
    rec.clear(oversize);
    rec.dispatch(
        ShaderId::HashCount,
        body_grid(n),
        &[params, aabbs, setup, ends, oversize, counter],
    );
    let total = record_exclusive_scan(rec, ends, table.buckets);
    rec.free(total);
    let cells = rec.array_buffer::<u32>(entry_capacity as usize, "hash entry cells");
    let bodies = rec.array_buffer::<u32>(entry_capacity as usize, "hash entry bodies");
    rec.dispatch(
        ShaderId::HashFill,
        body_grid(n),
        &[params, aabbs, setup, ends, cells, bodies, counter],
    );
    HashTable {
        params,
        ends,
        cells,
        bodies,
        oversize,
    }
}

fn record_hash(
    rec: &mut Recording,
    aabbs: BufferProxy,
    n: u32,
    setup: BufferProxy,
    counter: BufferProxy,
    pairs: BufferProxy,
    caps: Capacities,
) {
    rec.stage("broadphase/table");
    let t = record_hash_table(rec, aabbs, n, setup, counter, caps.entries);
    rec.stage("broadphase/pairs");
    let spill = rec.array_buffer::<[u32; 2]>(caps.spill as usize, "hash spill items");
    let mode = |rec: &mut Recording, mode: u32| {
        let p = rec.buffer(size_of::<GpuHashPairsParams>() as u64, "hash pairs mode");
        rec.upload(
            p,
            &[GpuHashPairsParams {
                mode,
                ..Default::default()
            }],
        );
        p
    };
    let per_entry = mode(rec, 0);
    let bindings = |work| {
        [
            t.params, work, aabbs, setup, t.ends, t.cells, t.bodies, counter, pairs, spill,
        ]
    };
    rec.dispatch(
        ShaderId::HashPairs,
        body_grid(caps.entries),
        &bindings(per_entry),
    );
    // The rest of long buckets: one invocation per spill item, as many as were written.
    let per_item = mode(rec, 1);
    let spill_at = (std::mem::offset_of!(GpuPairCounter, spill) / 4) as u32;
    let args = record_dispatch_args(
        rec,
        counter,
        spill_at,
        BODY_WORKGROUP_SIZE,
        DEFAULT_MAX_GROUPS_X,
    );
    rec.dispatch_indirect(ShaderId::HashPairs, args, 0, &bindings(per_item));
    for b in [per_entry, per_item, args, spill] {
        rec.free(b);
    }
    rec.free(t.ends);
    rec.free(t.cells);
    rec.free(t.bodies);
    let work = GpuOversizeParams::for_bodies(n);
    let params = rec.buffer(size_of::<GpuOversizeParams>() as u64, "oversize params");
    rec.upload(params, &[work]);
    let args = record_dispatch_args_per_item(
        rec,
        t.oversize,
        0,
        work.chunks,
        BODY_WORKGROUP_SIZE,
        DEFAULT_MAX_GROUPS_X,
    );
    rec.dispatch_indirect(
        ShaderId::HashOversize,
        args,
        0,
        &[params, aabbs, setup, t.oversize, counter, pairs],
    );
    rec.free(params);
    rec.free(args);
    rec.free(t.oversize);
    rec.free(t.params);
}
