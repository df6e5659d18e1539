// Sort-and-sweep, step 3: where each box's sweep ends (the first sorted box whose lower
// bound is past its upper bound, by binary search over the sorted lower bounds) and how
// many work items of params.chunk candidates the sweep makes. The sweep then runs one
// invocation per item: a huge box's long sweep is spread over many invocations instead of
// holding one for the whole of it, and no invocation loops longer than a chunk (some
// software adapters stop an invocation's loops after 65535 iterations).
// CPU twin: passes::broadphase::sap_reach_cpu.

#import broadphase
#import dispatch

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: SweepParams;
@group(0) @binding(1) var<storage, read> setup: BroadphaseSetup;
@group(0) @binding(2) var<storage, read> sorted: array<SortedBox>;
@group(0) @binding(3) var<storage, read_write> ends: array<u32>;
@group(0) @binding(4) var<storage, read_write> chunks: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = linear_index(gid, groups, WORKGROUP_SIZE);
    if s >= params.count {
        return;
    }
    let axis = setup.axis;
    let reach = sorted[s].max[axis];
    var lo = s + 1u;
    var hi = params.count;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if sorted[mid].min[axis] <= reach {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    ends[s] = lo;
    let candidates = lo - s - 1u;
    chunks[s] = candidates / params.chunk + select(0u, 1u, candidates % params.chunk != 0u);
}
