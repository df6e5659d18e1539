// Spatial hash, step 1: count the table's entries per bucket (one per cell a box covers).
// A box spanning more than MAX_SPAN cells along an axis is oversize: it gets no cells and
// goes to the oversize list, which is tested against every body.
// The workgroup's entries are also summed into counter.entries: the table's entry count
// (the sum of the bucket counts), and a table of 2^32 entries or more sets
// counter.wrapped instead of wrapping silently.
// CPU twin: passes::broadphase::hash_table_cpu.

#import bodies
#import broadphase
#import dispatch

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> table: HashParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(3) var<storage, read_write> bucket_counts: array<atomic<u32>>;
// oversize[0] is the number of oversize bodies, their indices follow.
@group(0) @binding(4) var<storage, read_write> oversize: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> counter: PairCounter;

// At most 256 boxes × MAX_SPAN³ cells: no wrap.
var<workgroup> group_entries: atomic<u32>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = linear_index(gid, groups, WORKGROUP_SIZE);
    if i < table.bodies {
        count_cells(i);
    }
    workgroupBarrier();
    if local_index == 0u {
        let added = atomicLoad(&group_entries);
        if added > 0u {
            let old = atomicAdd(&counter.entries, added);
            if old > 0xffffffffu - added {
                atomicOr(&counter.wrapped, 1u);
            }
        }
    }
}

fn count_cells(i: u32) {
    let s = setup;
    let b = aabbs[i];
    let lo = cell_of(b.min, s);
    let hi = cell_of(b.max, s);
    if is_oversize(lo, hi) {
        let slot = atomicAdd(&oversize[0], 1u);
        atomicStore(&oversize[slot + 1u], i);
        return;
    }
    for (var z = lo.z; z <= hi.z; z++) {
        for (var y = lo.y; y <= hi.y; y++) {
            for (var x = lo.x; x <= hi.x; x++) {
                atomicAdd(&bucket_counts[bucket_of(cell_key(vec3<u32>(x, y, z), s), s, table)], 1u);
            }
        }
    }
    let span = hi - lo + vec3<u32>(1u);
    atomicAdd(&group_entries, span.x * span.y * span.z);
}
