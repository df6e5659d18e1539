// Sort-and-sweep, step 4 (Lin 1993, ch. 5): the box at sorted position s sweeps forward
// while the next lower bound is not past its upper bound (up to ends[s], from
// sap_reach.wgsl), testing the other two axes. Each overlapping pair is found once, by the
// box that comes first in the sorted order. One invocation per work item: a chunk of
// params.chunk candidates of one box's sweep; offsets is the exclusive scan of the chunk
// counts, so the box of item w is the last s with offsets[s] <= w.
// CPU twin: passes::broadphase::sap_pairs_cpu.

#import bodies
#import broadphase
#import dispatch
#import pair_append

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: SweepParams;
@group(0) @binding(1) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(2) var<storage, read> sorted: array<SortedBox>;
@group(0) @binding(3) var<storage, read> ends: array<u32>;
@group(0) @binding(4) var<storage, read> offsets: array<u32>;
// [0]: the work items (the scan's total).
@group(0) @binding(5) var<storage, read> items: array<u32>;
@group(0) @binding(6) var<storage, read_write> counter: PairCounter;
@group(0) @binding(7) var<storage, read_write> pairs: array<vec2<u32>>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let w = linear_index(gid, groups, WORKGROUP_SIZE);
    if w < items[0] {
        sweep_chunk(w);
    }
    flush_pairs(local_index);
}

fn sweep_chunk(w: u32) {
    var lo = 0u;
    var hi = params.count;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if offsets[mid] <= w {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    let s = lo - 1u;
    let ba = sorted[s];
    let first = s + 1u + (w - offsets[s]) * params.chunk;
    let last = min(first + params.chunk, ends[s]);
    var t = first;
    for (; t < last; t++) {
        let bb = sorted[t];
        if boxes_overlap(ba.min, ba.max, bb.min, bb.max) {
            emit_pair(ba.body, bb.body);
        }
    }
    note_cut(t < last);
}
