// Bodies, shape bounds and world boxes: the WGSL side of src/bodies.rs.
// Rust twins: GpuBody, GpuShapeBounds, GpuAabb (offsets checked by tests/shaders.rs).

// A body: position of the body frame's origin, shape index, unit quaternion (x, y, z, w).
struct Body {
    position: vec3<f32>,
    shape: u32,
    rotation: vec4<f32>,
}

// Local bounds of a shape: box center ± half_extents, and a sphere of `radius` about
// `center` that also contains the shape.
struct ShapeBounds {
    center: vec3<f32>,
    radius: f32,
    half_extents: vec3<f32>,
    _pad: u32,
}

// World-space axis-aligned box.
struct Aabb {
    min: vec3<f32>,
    max: vec3<f32>,
}

// Rotation matrix of a unit quaternion q = (x, y, z, w); columns are the rotated axes.
fn quat_to_mat3(q: vec4<f32>) -> mat3x3<f32> {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    return mat3x3<f32>(
        vec3<f32>(1.0 - (yy + zz), xy + wz, xz - wy),
        vec3<f32>(xy - wz, 1.0 - (xx + zz), yz + wx),
        vec3<f32>(xz + wy, yz - wx, 1.0 - (xx + yy)),
    );
}
