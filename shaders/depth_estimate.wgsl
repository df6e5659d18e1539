// Sampled penetration depth, step 1: one work item per (pair, chunk of directions) finds
// the least s(d) = h_A(d) + h_B(-d) over its directions. A pair's directions are the
// 6 k^2 cube-map cell centres, then A's face normals, then B's negated face normals (all
// in world space), `chunk` of them per item, so a pair of large hulls is spread over many
// invocations and none loops for long. Each workgroup then leaves one partial for each pair
// its items serve (the first least in item order), so a pair of large hulls keeps a
// partial per 64 items, not per item. CPU twin: passes::depth::depth_estimate_cpu.

#import bodies
#import numeric
#import dispatch
#import depth

const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<uniform> params: DepthParams;
@group(0) @binding(1) var<storage, read> bodies: array<Body>;
@group(0) @binding(2) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> shapes: array<DepthShape>;
@group(0) @binding(4) var<storage, read> vertices: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> normals: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> partials: array<DepthPartial>;
// Nonzero when the adapter stopped a loop short (see PairCounter.cut).
@group(0) @binding(7) var<storage, read_write> cut: atomic<u32>;

struct Support {
    value: f32,
    index: u32,
}

// The largest v . dir over the shape's vertices, first index on ties.
fn support(shape: DepthShape, dir: vec3<f32>) -> Support {
    var best = Support(dot(vertices[shape.vertex_offset].xyz, dir), 0u);
    var i = 1u;
    for (; i < shape.vertex_count; i++) {
        let h = dot(vertices[shape.vertex_offset + i].xyz, dir);
        if h > best.value {
            best = Support(h, i);
        }
    }
    if i < shape.vertex_count {
        atomicOr(&cut, 1u);
    }
    return best;
}

// The workgroup's items' least s, by lane.
var<workgroup> lanes: array<DepthPartial, WORKGROUP_SIZE>;

// The least s over one item's directions.
fn item_least(item: u32) -> DepthPartial {
    let pair = pairs[item / params.chunks_per_pair];
    let chunk = item % params.chunks_per_pair;
    let body_a = bodies[pair.x];
    let body_b = bodies[pair.y];
    let sa = shapes[body_a.shape];
    let sb = shapes[body_b.shape];
    let ra = rotation_of(body_a.rotation);
    let rb = rotation_of(body_b.rotation);
    let offset = body_a.position - body_b.position;
    let cube = 6u * params.k * params.k;
    let total = cube + sa.normal_count + sb.normal_count;
    let first = min(chunk * params.chunk, total);
    let last = min(first + params.chunk, total);
    var best = DepthPartial(positive_infinity(), NO_DIRECTION, 0u, 0u);
    var index = first;
    for (; index < last; index++) {
        let d = direction_of(index, params.k, sa, sb, ra, rb);
        let a = support(sa, d * ra);
        let b = support(sb, -(d * rb));
        let s = a.value + b.value + dot(offset, d);
        if s < best.s {
            best = DepthPartial(s, index, a.index, b.index);
        }
    }
    if index < last {
        atomicOr(&cut, 1u);
    }
    return best;
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let group = workgroup_index(wid, groups);
    let item = group * WORKGROUP_SIZE + lane;
    // The runner keeps pairs * chunks_per_pair within a u32.
    let items = params.pairs * params.chunks_per_pair;
    let valid = item < items;
    if valid {
        lanes[lane] = item_least(item);
    }
    workgroupBarrier();
    // The lane holding a pair's first item in this workgroup takes the least of that
    // pair's items here, in lane order (the first least on ties, as the twin's order).
    if !valid || (lane > 0u && item % params.chunks_per_pair != 0u) {
        return;
    }
    let pair = item / params.chunks_per_pair;
    // The pair's items end within the item count; this workgroup's lanes end at 64.
    let end = min((pair + 1u) * params.chunks_per_pair - group * WORKGROUP_SIZE, WORKGROUP_SIZE);
    var best = lanes[lane];
    var l = lane + 1u;
    for (; l < end; l++) {
        let q = lanes[l];
        if q.s < best.s {
            best = q;
        }
    }
    if l < end {
        atomicOr(&cut, 1u);
    }
    let slots = pair_slots(pair, params.chunks_per_pair);
    partials[pair * params.slots_per_pair + group - slots.x] = best;
}
