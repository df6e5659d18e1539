// Spatial hash, step 1: cells per body. A box spanning more than MAX_SPAN cells along an
// axis is oversize: it gets no cells and goes to the oversize list, which is tested
// against every body. CPU twin: passes::broadphase::hash_pairs_cpu.

#import bodies
#import broadphase
#import dispatch

const MAX_SPAN: u32 = 4u;
const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(3) var<storage, read_write> cell_counts: array<u32>;
// oversize[0] is the number of oversize bodies, their indices follow.
@group(0) @binding(4) var<storage, read_write> oversize: array<atomic<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_index(gid, groups, WORKGROUP_SIZE);
    if i >= params.count {
        return;
    }
    let s = setup;
    let b = aabbs[i];
    let span = cell_of(b.max, s) - cell_of(b.min, s) + vec3<u32>(1u);
    if any(span > vec3<u32>(MAX_SPAN)) {
        cell_counts[i] = 0u;
        let slot = atomicAdd(&oversize[0], 1u);
        atomicStore(&oversize[slot + 1u], i);
    } else {
        cell_counts[i] = span.x * span.y * span.z;
    }
}
