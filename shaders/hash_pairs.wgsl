// Spatial hash, step 3: each entry pairs with the entries after it in its bucket that are
// in the same cell (a hashed bucket may hold several cells). A pair is emitted only in
// the lowest cell both boxes share (the cell of their overlap's lower corner), so exactly
// once; the entries' first-cell flags tell that cell without loading a box.
// An invocation tests at most HASH_CHUNK candidates: in mode 0 (one invocation per entry)
// the rest of a longer bucket is written to the spill list as items of HASH_CHUNK
// candidates each, and mode 1 (one invocation per spill item) tests them. A dense cell's
// work is then spread over many invocations, and no invocation loops for long (some
// software adapters stop an invocation's loops after 65535 iterations).
// CPU twin: passes::broadphase::hash_pairs_cpu.

#import bodies
#import broadphase
#import dispatch
#import pair_append

const WORKGROUP_SIZE: u32 = 256u;
const HASH_CHUNK: u32 = 256u;

@group(0) @binding(0) var<uniform> table: HashParams;
@group(0) @binding(1) var<uniform> work: HashPairsParams;
@group(0) @binding(2) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(3) var<storage, read> setup: BroadphaseSetup;
// Bucket ends (the fill pass's cursors).
@group(0) @binding(4) var<storage, read> ends: array<u32>;
@group(0) @binding(5) var<storage, read> cells: array<u32>;
@group(0) @binding(6) var<storage, read> bodies: array<u32>;
@group(0) @binding(7) var<storage, read_write> counter: PairCounter;
@group(0) @binding(8) var<storage, read_write> pairs: array<vec2<u32>>;
// (entry, first candidate) per spill item.
@group(0) @binding(9) var<storage, read_write> spill: array<vec2<u32>>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let w = linear_index(gid, groups, WORKGROUP_SIZE);
    let room = min(atomicLoad(&counter.entries), counter.entry_capacity);
    // (entry, first candidate) of this invocation's work, if any.
    var item = vec2<u32>(w, w + 1u);
    var has_work = w < room;
    if work.mode != 0u {
        has_work = w < min(atomicLoad(&counter.spill), counter.spill_capacity);
        if has_work {
            item = spill[w];
        }
    }
    if has_work {
        find_pairs(item.x, item.y, room, work.mode == 0u);
    }
    flush_pairs(local_index);
}

// Entry e against the candidates from `first` on, at most HASH_CHUNK of them; the rest of
// its bucket goes to the spill list when `may_spill`.
fn find_pairs(e: u32, first: u32, room: u32, may_spill: bool) {
    let key = cells[e];
    let a_word = bodies[e];
    let a = a_word & BODY_MASK;
    let a_flags = a_word >> BODY_BITS;
    let ba = aabbs[a];
    let end = min(ends[bucket_of(key, setup, table)], room);
    let last = min(end, first + HASH_CHUNK);
    var j = first;
    for (; j < last; j++) {
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
    note_cut(j < last);
    if may_spill && last < end {
        let items = (end - last + HASH_CHUNK - 1u) / HASH_CHUNK;
        // Past the room the count still grows, so the CPU re-runs with more.
        let base = atomicAdd(&counter.spill, items);
        note_wrap(base, items);
        var c = 0u;
        for (; c < items; c++) {
            if base + c < counter.spill_capacity {
                spill[base + c] = vec2<u32>(e, last + c * HASH_CHUNK);
            }
        }
        note_cut(c < items);
    }
}
