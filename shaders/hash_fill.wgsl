// Spatial hash, step 2 (after an exclusive scan of the cell counts): every body writes
// (cell key, body) for each cell its box covers. Entries past the capacity are counted
// but not written; the CPU then re-runs with room for all. Unwritten entries keep key 0
// (empty) and sort first. CPU twin: passes::broadphase::hash_pairs_cpu.

#import bodies
#import broadphase
#import dispatch

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(3) var<storage, read> cell_counts: array<u32>;
@group(0) @binding(4) var<storage, read> offsets: array<u32>;
@group(0) @binding(5) var<storage, read_write> keys: array<u32>;
@group(0) @binding(6) var<storage, read_write> values: array<u32>;
@group(0) @binding(7) var<storage, read_write> counter: PairCounter;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_index(gid, groups, WORKGROUP_SIZE);
    if i >= params.count {
        return;
    }
    let n = cell_counts[i];
    if n == 0u {
        return;
    }
    let s = setup;
    let b = aabbs[i];
    let lo = cell_of(b.min, s);
    let hi = cell_of(b.max, s);
    atomicAdd(&counter.entries, n);
    var slot = offsets[i];
    for (var z = lo.z; z <= hi.z; z++) {
        for (var y = lo.y; y <= hi.y; y++) {
            for (var x = lo.x; x <= hi.x; x++) {
                let key = cell_key(vec3<u32>(x, y, z), s);
                if key > counter.key_limit {
                    atomicMax(&counter.key_overflow, 1u);
                }
                if slot < counter.entry_capacity {
                    keys[slot] = key;
                    values[slot] = i;
                }
                slot += 1u;
            }
        }
    }
}
