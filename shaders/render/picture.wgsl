// The picture: every body's mesh drawn at its pose, read from the body table the frame
// uploads (vertex pulling: no vertex buffers), flat-shaded from screen-space derivatives;
// bodies that touch another drawn in a warm colour; contact normals as lines.
// Rust side: src/picture.rs.

#import bodies

struct Camera {
    view_proj: mat4x4<f32>,
    // Direction towards the light (xyz).
    light: vec4<f32>,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<storage, read> bodies: array<Body>;
// Body indices grouped by shape: a draw per shape takes a range of them as instances.
@group(0) @binding(2) var<storage, read> order: array<u32>;
// Per body: 1 when it touches another body, else 0.
@group(0) @binding(3) var<storage, read> touching: array<u32>;
// Every shape's triangles, body frame (xyz), shape after shape.
@group(0) @binding(4) var<storage, read> vertices: array<vec4<f32>>;

struct Surface {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) @interpolate(flat) colour: vec3<f32>,
}

@vertex
fn vs_body(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> Surface {
    let body = bodies[order[i]];
    let p = body.position + quat_to_mat3(normalize(body.rotation)) * vertices[v].xyz;
    var out: Surface;
    out.clip = camera.view_proj * vec4<f32>(p, 1.0);
    out.world = p;
    // 2: touching or overlapping another body; 1: within the speculative distance of one.
    let contact = touching[order[i]];
    if contact == 2u {
        out.colour = vec3<f32>(0.95, 0.45, 0.15);
    } else if contact == 1u {
        out.colour = vec3<f32>(0.92, 0.80, 0.25);
    } else {
        out.colour = vec3<f32>(0.55, 0.62, 0.75);
    }
    return out;
}

@fragment
fn fs_body(s: Surface) -> @location(0) vec4<f32> {
    let n = normalize(cross(dpdx(s.world), dpdy(s.world)));
    let shade = 0.3 + 0.7 * abs(dot(n, normalize(camera.light.xyz)));
    return vec4<f32>(s.colour * shade, 1.0);
}

struct Line {
    @builtin(position) clip: vec4<f32>,
}

// Contact normals: pairs of world points.
@group(0) @binding(5) var<storage, read> lines: array<vec4<f32>>;

@vertex
fn vs_line(@builtin(vertex_index) v: u32) -> Line {
    var out: Line;
    out.clip = camera.view_proj * vec4<f32>(lines[v].xyz, 1.0);
    return out;
}

@fragment
fn fs_line() -> @location(0) vec4<f32> {
    return vec4<f32>(0.1, 0.85, 0.3, 1.0);
}
