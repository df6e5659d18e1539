// Sort-and-sweep, step 3 (Lin 1993, ch. 5): the box at sorted position s sweeps forward
// while the next lower bound is not past its upper bound, testing the other two axes.
// Each overlapping pair is found once, by the box that comes first in the sorted order.
// CPU twin: passes::broadphase::sap_pairs_cpu.

#import bodies
#import broadphase
#import dispatch
#import pair_append

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(2) var<storage, read> sorted: array<SortedBox>;
@group(0) @binding(3) var<storage, read_write> counter: PairCounter;
@group(0) @binding(4) var<storage, read_write> pairs: array<vec2<u32>>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let s = linear_index(gid, groups, WORKGROUP_SIZE);
    if s < params.count {
        sweep(s);
    }
    flush_pairs(local_index);
}

fn sweep(s: u32) {
    let axis = setup.axis;
    let ba = sorted[s];
    let reach = ba.max[axis];
    var t = s + 1u;
    for (; t < params.count; t++) {
        let bb = sorted[t];
        if bb.min[axis] > reach {
            break;
        }
        if boxes_overlap(ba.min, ba.max, bb.min, bb.max) {
            emit_pair(ba.body, bb.body);
        }
    }
    note_cut(t < params.count && sorted[t].min[axis] <= reach);
}
