// Spatial hash, step 4: every body against every oversize body. A pair of two oversize
// bodies is emitted once, by the one with the smaller index. CPU twin:
// passes::broadphase::hash_pairs_cpu.

#import bodies
#import broadphase
#import dispatch
#import pair_append

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> table: HashParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(3) var<storage, read> oversize: array<u32>;
@group(0) @binding(4) var<storage, read_write> counter: PairCounter;
@group(0) @binding(5) var<storage, read_write> pairs: array<vec2<u32>>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let j = linear_index(gid, groups, WORKGROUP_SIZE);
    if j < table.bodies {
        test_oversize(j);
    }
    flush_pairs(local_index);
}

fn test_oversize(j: u32) {
    let n = oversize[0];
    if n == 0u {
        return;
    }
    let bj = aabbs[j];
    let j_oversize = is_oversize(cell_of(bj.min, setup), cell_of(bj.max, setup));
    var o = 0u;
    for (; o < n; o++) {
        let a = oversize[o + 1u];
        if a == j || (j_oversize && j < a) {
            continue;
        }
        let ba = aabbs[a];
        if boxes_overlap(ba.min, ba.max, bj.min, bj.max) {
            emit_pair(a, j);
        }
    }
    note_cut(o < n);
}
