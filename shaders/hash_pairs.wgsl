// Spatial hash, step 3: each entry pairs with the entries after it in its bucket that are
// in the same cell (a hashed bucket may hold several cells). A pair is emitted only in
// the lowest cell both boxes share (the cell of their overlap's lower corner), so exactly
// once; the entries' first-cell flags tell that cell without loading a box. CPU twin: passes::broadphase::hash_pairs_cpu.

#import bodies
#import broadphase
#import dispatch
#import pair_append

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> table: HashParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> setup: BroadphaseSetup;
// Bucket ends (the fill pass's cursors).
@group(0) @binding(3) var<storage, read> ends: array<u32>;
@group(0) @binding(4) var<storage, read> cells: array<u32>;
@group(0) @binding(5) var<storage, read> bodies: array<u32>;
@group(0) @binding(6) var<storage, read_write> counter: PairCounter;
@group(0) @binding(7) var<storage, read_write> pairs: array<vec2<u32>>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let e = linear_index(gid, groups, WORKGROUP_SIZE);
    let room = min(atomicLoad(&counter.entries), counter.entry_capacity);
    if e < room {
        find_pairs(e, room);
    }
    flush_pairs(local_index);
}

fn find_pairs(e: u32, room: u32) {
    let key = cells[e];
    let a_word = bodies[e];
    let a = a_word & BODY_MASK;
    let a_flags = a_word >> BODY_BITS;
    let ba = aabbs[a];
    let end = min(ends[bucket_of(key, setup, table)], room);
    var j = e + 1u;
    for (; j < end; j++) {
        if cells[j] != key {
            continue;
        }
        let b_word = bodies[j];
        if (a_flags | (b_word >> BODY_BITS)) != 7u {
            continue;
        }
        let b = b_word & BODY_MASK;
        let bb = aabbs[b];
        if boxes_overlap(ba.min, ba.max, bb.min, bb.max) {
            emit_pair(a, b);
        }
    }
    note_cut(j < end);
}
