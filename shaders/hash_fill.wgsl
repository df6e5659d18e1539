// Spatial hash, step 2 (after an exclusive scan of the bucket counts): every body writes
// (cell, body | first-cell flags) for each cell its box covers into its bucket's range, taking slots with an
// atomic cursor that starts at the bucket's offset. Afterwards cursor[b] is the end of
// bucket b (and so the start of bucket b + 1). Slots past the entry buffer's room are not
// written; the CPU sees entries > room and re-runs. CPU twin: hash_table_cpu.

#import bodies
#import broadphase
#import dispatch

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> table: HashParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(3) var<storage, read_write> cursor: array<atomic<u32>>;
// Entries as two arrays (cell, body): each stays within a storage binding for twice as
// many entries as one array of pairs would.
@group(0) @binding(4) var<storage, read_write> cells: array<u32>;
@group(0) @binding(5) var<storage, read_write> bodies: array<u32>;
@group(0) @binding(6) var<storage, read_write> counter: PairCounter;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_index(gid, groups, WORKGROUP_SIZE);
    if i >= table.bodies {
        return;
    }
    let s = setup;
    let b = aabbs[i];
    let lo = cell_of(b.min, s);
    let hi = cell_of(b.max, s);
    if is_oversize(lo, hi) {
        return;
    }
    let room = counter.entry_capacity;
    for (var z = lo.z; z <= hi.z; z++) {
        for (var y = lo.y; y <= hi.y; y++) {
            for (var x = lo.x; x <= hi.x; x++) {
                let c = vec3<u32>(x, y, z);
                let key = cell_key(c, s);
                let slot = atomicAdd(&cursor[bucket_of(key, s, table)], 1u);
                if slot < room {
                    cells[slot] = key;
                    bodies[slot] = i | (entry_flags(c, lo) << BODY_BITS);
                }
            }
        }
    }
}
