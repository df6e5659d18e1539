// Spatial hash, step 3 (after sorting the entries by cell key): each entry pairs with the
// entries after it in the same cell. A pair is emitted only in the lowest cell both boxes
// share (the cell of their overlap's lower corner), so exactly once.
// CPU twin: passes::broadphase::hash_pairs_cpu.

#import bodies
#import broadphase
#import dispatch

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(3) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read> values: array<u32>;
@group(0) @binding(5) var<storage, read_write> counter: PairCounter;
@group(0) @binding(6) var<storage, read_write> pairs: array<vec2<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let e = linear_index(gid, groups, WORKGROUP_SIZE);
    if e >= params.count {
        return;
    }
    let key = keys[e];
    if key == 0u {
        return;
    }
    let s = setup;
    let a = values[e];
    let ba = aabbs[a];
    for (var j = e + 1u; j < params.count; j++) {
        if keys[j] != key {
            break;
        }
        let b = values[j];
        let bb = aabbs[b];
        if !boxes_overlap(ba.min, ba.max, bb.min, bb.max) {
            continue;
        }
        if cell_key(cell_of(max(ba.min, bb.min), s), s) != key {
            continue;
        }
        let k = atomicAdd(&counter.count, 1u);
        if k < counter.capacity {
            pairs[k] = vec2<u32>(min(a, b), max(a, b));
        }
    }
}
