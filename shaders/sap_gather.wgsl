// Sort-and-sweep, step 2 (after sorting by lower bound): the boxes copied into sorted
// order with their body indices, so that the sweep reads its candidates contiguously.
// CPU twin: passes::broadphase::sap_gather_cpu.

#import bodies
#import broadphase
#import dispatch

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> order: array<u32>;
@group(0) @binding(3) var<storage, read_write> sorted: array<SortedBox>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = linear_index(gid, groups, WORKGROUP_SIZE);
    if s >= params.count {
        return;
    }
    let i = order[s];
    let b = aabbs[i];
    sorted[s] = SortedBox(b.min, i, b.max, 0u);
}
