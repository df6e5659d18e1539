// Spatial hash, step 4: every body against every oversize body. One invocation per work
// item: an oversize body against a chunk of params.chunk bodies (params.chunks chunks per
// oversize body), so no invocation loops over more than a chunk however many bodies are
// oversize. A pair of two oversize bodies is emitted once, by the item of the one with
// the smaller index. CPU twin: passes::broadphase::hash_pairs_cpu.

#import bodies
#import broadphase
#import dispatch
#import pair_append

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: OversizeParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> setup: BroadphaseSetup;
// oversize[0] is the number of oversize bodies, their indices follow.
@group(0) @binding(3) var<storage, read> oversize: array<u32>;
@group(0) @binding(4) var<storage, read_write> counter: PairCounter;
@group(0) @binding(5) var<storage, read_write> pairs: array<vec2<u32>>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let w = linear_index(gid, groups, WORKGROUP_SIZE);
    if w < oversize[0] * params.chunks {
        test_chunk(w);
    }
    flush_pairs(local_index);
}

fn test_chunk(w: u32) {
    let a = oversize[w / params.chunks + 1u];
    let ba = aabbs[a];
    let first = (w % params.chunks) * params.chunk;
    let last = min(first + params.chunk, params.bodies);
    var j = first;
    for (; j < last; j++) {
        if j == a {
            continue;
        }
        let bj = aabbs[j];
        if !boxes_overlap(ba.min, ba.max, bj.min, bj.max) {
            continue;
        }
        if j < a && is_oversize(cell_of(bj.min, setup), cell_of(bj.max, setup)) {
            continue;
        }
        emit_pair(a, j);
    }
    note_cut(j < last);
}
