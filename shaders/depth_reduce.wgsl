// Sampled penetration depth, step 2: one invocation per pair takes the least of the
// partials its work items' workgroups left (the first on ties), and attaches the
// estimate's bound and rounding allowance: R, the largest |x| over A - B, is bounded by
// the shapes' reaches about the midpoint of the two body origins. CPU twin: passes::depth::depth_estimate_cpu.

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
@group(0) @binding(6) var<storage, read> partials: array<DepthPartial>;
@group(0) @binding(7) var<storage, read_write> estimates: array<DepthEstimate>;
@group(0) @binding(8) var<storage, read_write> cut: atomic<u32>;

// (largest |R v + shift|, largest |v|) over the shape's vertices v.
fn reaches(shape: DepthShape, r: mat3x3<f32>, shift: vec3<f32>) -> vec2<f32> {
    var out = vec2<f32>(0.0);
    var i = 0u;
    for (; i < shape.vertex_count; i++) {
        let v = vertices[shape.vertex_offset + i].xyz;
        out = max(out, vec2<f32>(length(r * v + shift), length(v)));
    }
    if i < shape.vertex_count {
        atomicOr(&cut, 1u);
    }
    return out;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let p = linear_index(gid, groups, WORKGROUP_SIZE);
    if p >= params.pairs {
        return;
    }
    // The partials the pair's workgroups left, in item order.
    let base = p * params.slots_per_pair;
    let count = pair_slots(p, params.chunks_per_pair).y;
    var best = partials[base];
    var c = 1u;
    for (; c < count; c++) {
        let q = partials[base + c];
        if q.s < best.s {
            best = q;
        }
    }
    if c < count {
        atomicOr(&cut, 1u);
    }
    let pair = pairs[p];
    let body_a = bodies[pair.x];
    let body_b = bodies[pair.y];
    let sa = shapes[body_a.shape];
    let sb = shapes[body_b.shape];
    let ra = rotation_of(body_a.rotation);
    let rb = rotation_of(body_b.rotation);
    let offset = body_a.position - body_b.position;
    let half = 0.5 * offset;
    let reach_a = reaches(sa, ra, half);
    let reach_b = reaches(sb, rb, -half);
    let d = direction_of(best.direction, params.k, sa, sb, ra, rb);
    let slack = params.slack_rel * (reach_a.y + reach_b.y + length(offset));
    var e: DepthEstimate;
    e.normal = d;
    e.depth = best.s;
    e.bound = 2.0 * (reach_a.x + reach_b.x) * params.sin_half_theta;
    e.slack = slack;
    e.witness_a = best.witness_a;
    e.witness_b = best.witness_b;
    e.separated = select(0u, 1u, best.s < -slack);
    estimates[p] = e;
}
