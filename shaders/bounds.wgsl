// Bounds pass: the world AABB of every body from its pose and its shape's local bounds.
// CPU twin: src/passes/bounds.rs (bounds_cpu), which follows this file line by line.
//
// Per axis i the box is  p_i + (R c)_i ± min(Σ_j |R_ij| h_j, r)  inflated by
//   margin_i = margin_rel · (|p_i| + ‖c‖₁ + ‖h‖₁) + margin_abs,
// which bounds every f32 rounding on the way (about 20 u · (|p_i| + ‖c‖₁ + ‖h‖₁) with
// u = 2^-24, see the module comment of bounds.rs), so the box never shrinks below the
// exact one.

#import bodies
#import numeric
#import dispatch
#import status

struct BoundsParams {
    body_count: u32,
    shape_count: u32,
    margin_rel: f32,
    margin_abs: f32,
}

// Error kinds, or-ed into status.error_kinds. Rust twin: passes::bounds::ERROR_*.
const ERROR_POSE: u32 = 1u;
const ERROR_SHAPE: u32 = 2u;

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: BoundsParams;
@group(0) @binding(1) var<storage, read> bodies: array<Body>;
@group(0) @binding(2) var<storage, read> shapes: array<ShapeBounds>;
@group(0) @binding(3) var<storage, read_write> aabbs: array<Aabb>;
@group(0) @binding(4) var<storage, read_write> status: PassStatus;

fn report_error(index: u32, kind: u32) {
    atomicAdd(&status.error_count, 1u);
    atomicMin(&status.first_error, index);
    atomicOr(&status.error_kinds, kind);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_index(gid, groups, WORKGROUP_SIZE);
    if i >= params.body_count {
        return;
    }
    let body = bodies[i];
    let q = body.rotation;
    let n2 = dot(q, q);
    // A bad body gets the box of everything: it overlaps all others, so no pair is lost
    // while the error travels back to the caller.
    if !all_finite3(body.position) || !all_finite4(q) || !is_finite_f32(n2) || n2 < 1e-30 {
        report_error(i, ERROR_POSE);
        let inf = positive_infinity();
        aabbs[i] = Aabb(vec3<f32>(-inf), vec3<f32>(inf));
        return;
    }
    if body.shape >= params.shape_count {
        report_error(i, ERROR_SHAPE);
        let inf = positive_infinity();
        aabbs[i] = Aabb(vec3<f32>(-inf), vec3<f32>(inf));
        return;
    }
    let shape = shapes[body.shape];
    let r = quat_to_mat3(q * inverseSqrt(n2));
    let p = body.position;
    let c = shape.center;
    let h = shape.half_extents;

    let center = p + r * c;
    // |R| h, row by row: the half extents of the rotated box.
    let rt = transpose(r);
    let box_half = vec3<f32>(dot(abs(rt[0]), h), dot(abs(rt[1]), h), dot(abs(rt[2]), h));
    let half = min(box_half, vec3<f32>(shape.radius));

    let scale = abs(p) + vec3<f32>(dot(abs(c), vec3<f32>(1.0)) + dot(h, vec3<f32>(1.0)));
    let margin = scale * params.margin_rel + vec3<f32>(params.margin_abs);
    aabbs[i] = Aabb(center - half - margin, center + half + margin);
}
