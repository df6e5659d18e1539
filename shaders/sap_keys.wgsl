// Sort-and-sweep, step 1: sort keys = the boxes' lower bounds on the sweep axis, as
// order-preserving u32; values = body indices. CPU twin: passes::broadphase::sap_pairs_cpu.

#import bodies
#import broadphase
#import dispatch

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: CountParams;
@group(0) @binding(1) var<storage, read> aabbs: array<Aabb>;
@group(0) @binding(2) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> values: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_index(gid, groups, WORKGROUP_SIZE);
    if i >= params.count {
        return;
    }
    keys[i] = sortable_key(aabbs[i].min[setup.axis]);
    values[i] = i;
}
