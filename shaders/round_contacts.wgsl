// Sphere and capsule contacts for every pair: one invocation per pair, dispatched
// indirectly from the GPU-side pair count (straight after the broadphase, no readback).
// `params.gather` picks what is written: 0, each pair's contact to its slot of `contacts`
// (the standalone pass); 1, only those within `params.within` (the contacts a user asks
// for), gathered into `touching` and counted in `touch_count` (a workgroup claims its run
// of slots with one global atomic; the order is the GPU's, the CPU sorts by pair), so a
// frame writes and reads back only those. The buffer not written may be one entry. A shape is a
// segment along its body's z axis (half length h; 0 for a sphere) swept by a radius; the
// contact is the segments' closest points (Ericson, Real-Time Collision Detection 5.1.9),
// their distance less both radii (negative: the depth), and the unit normal from A to B
// (zero where the cores share a point and any direction would do).
// CPU twin: passes::round_contacts::round_contacts_cpu (the same f32 operations).

#import bodies
#import dispatch

struct RoundShape {
    half_height: f32,
    radius: f32,
    _pad0: u32,
    _pad1: u32,
}

struct RoundContact {
    normal: vec3<f32>,
    distance: f32,
}

struct RoundParams {
    within: f32,
    gather: u32,
    _pad1: u32,
    _pad2: u32,
}

struct TouchContact {
    pair: vec2<u32>,
    distance: f32,
    normal: array<f32, 3>,
}

const WORKGROUP_SIZE: u32 = 64u;

// The pair count and the room in `pairs` (a broadphase PairCounter's first two words,
// or a runner's upload): the pairs are the first min(count, room).
@group(0) @binding(0) var<storage, read> counter: array<u32>;
@group(0) @binding(1) var<storage, read> bodies: array<Body>;
@group(0) @binding(2) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> shapes: array<RoundShape>;
@group(0) @binding(4) var<storage, read_write> contacts: array<RoundContact>;
@group(0) @binding(5) var<uniform> params: RoundParams;
// When gathering, as many slots as pairs: no more pairs than that can be within.
@group(0) @binding(6) var<storage, read_write> touching: array<TouchContact>;
@group(0) @binding(7) var<storage, read_write> touch_count: array<atomic<u32>>;

var<workgroup> group_kept: atomic<u32>;
var<workgroup> group_base: u32;

// The body's z axis scaled by its shape's full segment length.
fn segment_of(body: Body, shape: RoundShape) -> vec3<f32> {
    let r = quat_to_mat3(body.rotation * inverseSqrt(dot(body.rotation, body.rotation)));
    return r[2] * (shape.half_height + shape.half_height);
}

// Parameters of the closest points of segments p0 + s d1 and q0 + t d2, s, t in [0, 1].
fn closest_params(p0: vec3<f32>, d1: vec3<f32>, q0: vec3<f32>, d2: vec3<f32>) -> vec2<f32> {
    let r = p0 - q0;
    let a = dot(d1, d1);
    let e = dot(d2, d2);
    let f = dot(d2, r);
    if a == 0.0 && e == 0.0 {
        return vec2<f32>(0.0, 0.0);
    }
    if a == 0.0 {
        return vec2<f32>(0.0, clamp(f / e, 0.0, 1.0));
    }
    let c = dot(d1, r);
    if e == 0.0 {
        return vec2<f32>(clamp(-c / a, 0.0, 1.0), 0.0);
    }
    let b = dot(d1, d2);
    let denom = a * e - b * b;
    var s = 0.0;
    if denom != 0.0 {
        s = clamp((b * f - c * e) / denom, 0.0, 1.0);
    }
    var t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = clamp(-c / a, 0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = clamp((b - c) / a, 0.0, 1.0);
    }
    return vec2<f32>(s, t);
}

fn contact_of(pair: vec2<u32>) -> RoundContact {
    let body_a = bodies[pair.x];
    let body_b = bodies[pair.y];
    let sa = shapes[body_a.shape];
    let sb = shapes[body_b.shape];
    let d1 = segment_of(body_a, sa);
    let d2 = segment_of(body_b, sb);
    let p0 = body_a.position - d1 * 0.5;
    let q0 = body_b.position - d2 * 0.5;
    let st = closest_params(p0, d1, q0, d2);
    let gap = (q0 + d2 * st.y) - (p0 + d1 * st.x);
    let len = sqrt(dot(gap, gap));
    var normal = vec3<f32>(0.0);
    if len > 0.0 {
        normal = gap / len;
    }
    return RoundContact(normal, len - (sa.radius + sb.radius));
}

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = linear_index(gid, groups, WORKGROUP_SIZE);
    // No early return: every invocation reaches the barriers below.
    var kept = false;
    var slot = 0u;
    var touch: TouchContact;
    if i < min(counter[0], counter[1]) {
        let pair = pairs[i];
        let c = contact_of(pair);
        if params.gather == 0u {
            contacts[i] = c;
        } else if c.distance <= params.within {
            kept = true;
            touch = TouchContact(pair, c.distance, array<f32, 3>(c.normal.x, c.normal.y, c.normal.z));
            slot = atomicAdd(&group_kept, 1u);
        }
    }
    workgroupBarrier();
    if lid == 0u {
        let n = atomicLoad(&group_kept);
        if n > 0u {
            group_base = atomicAdd(&touch_count[0], n);
        }
    }
    workgroupBarrier();
    if kept {
        touching[group_base + slot] = touch;
    }
}
