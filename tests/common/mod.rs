//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::OnceLock;

use proxima::gpu::{ContextOptions, GpuContext};

/// True when CI demands a GPU: then a missing adapter fails the test instead of skipping it.
pub fn gpu_required() -> bool {
    std::env::var("PROXIMA_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// A fresh context, or `None` (with the reason printed) when no adapter exists and
/// `PROXIMA_REQUIRE_GPU` is not set. Under `PROXIMA_REQUIRE_GPU=1` a missing adapter panics.
pub fn fresh_gpu(test: &str) -> Option<GpuContext> {
    match GpuContext::new(&ContextOptions::default()) {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            if gpu_required() {
                panic!("{test}: PROXIMA_REQUIRE_GPU=1 but no GPU context: {e}");
            }
            eprintln!(
                "{test}: skipped, no GPU adapter ({e}); set PROXIMA_REQUIRE_GPU=1 to fail instead"
            );
            None
        }
    }
}

/// One context shared by the tests of a binary (device creation costs ~100 ms on lavapipe).
pub fn gpu(test: &str) -> Option<GpuContext> {
    static SHARED: OnceLock<Option<GpuContext>> = OnceLock::new();
    let ctx = SHARED.get_or_init(|| GpuContext::new(&ContextOptions::default()).ok());
    match ctx {
        Some(c) => Some(c.clone()),
        None => fresh_gpu(test),
    }
}

/// A device and queue opened with `limits` rather than the adapter's own (a renderer's
/// device, a device that binds little), with timestamps when the adapter has them, or
/// `None` without an adapter (as [`gpu`]). An adapter that cannot open such a device fails
/// the test.
pub fn device_with_limits(test: &str, limits: wgpu::Limits) -> Option<(wgpu::Device, wgpu::Queue)> {
    gpu(test)?;
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .expect("the adapter found above");
    let desc = wgpu::DeviceDescriptor {
        required_limits: limits,
        required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
        ..Default::default()
    };
    Some(pollster::block_on(adapter.request_device(&desc)).expect("a device with these limits"))
}

/// A context on a device whose storage bindings and buffers hold `bytes`, or `None`
/// without an adapter.
pub fn small_device(test: &str, bytes: u64) -> Option<GpuContext> {
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: bytes,
        max_buffer_size: bytes,
        ..wgpu::Limits::default()
    };
    let (device, queue) = device_with_limits(test, limits)?;
    Some(GpuContext::from_device(device, queue))
}

/// The same polytope for parry3d-f64, built from our own hull (DESIGN.md: parry's own hull
/// drops layers of thin plates) with fan-triangulated faces.
pub fn to_parry(poly: &proxima::geometry::ConvexPolytope) -> parry3d_f64::shape::ConvexPolyhedron {
    let mut tris = Vec::new();
    for f in 0..poly.num_faces() {
        let ring: Vec<u32> = poly.face_vertices(f).collect();
        for k in 1..ring.len() - 1 {
            tris.push([ring[0], ring[k], ring[k + 1]]);
        }
    }
    parry3d_f64::shape::ConvexPolyhedron::from_convex_mesh(poly.vertices().to_vec(), &tris)
        .expect("parry accepts our hull")
}

/// A pose for parry3d-f64.
pub fn parry_pose(p: &proxima::bodies::Pose) -> parry3d_f64::math::Pose {
    parry3d_f64::math::Pose::from_parts(p.translation, p.rotation)
}

/// Largest height of the world point `p` over `poly`'s face planes with `poly` at `pose`:
/// ≤ 0 inside, 0 on the surface.
pub fn height(
    poly: &proxima::geometry::ConvexPolytope,
    pose: &proxima::bodies::Pose,
    p: glam::DVec3,
) -> f64 {
    let local = pose.inverse_transform_point(p);
    (0..poly.num_faces())
        .map(|f| poly.face_normal(f).dot(local) - poly.face_offset(f))
        .fold(f64::NEG_INFINITY, f64::max)
}

/// `pose_b` moved along the line of the bodies' closest points (A at `pose_a`, the bodies
/// apart) so that they stand `gap` apart along it: in contact, then apart by a positive
/// gap or pressed into each other by a negative one.
pub fn at_gap(
    a: &proxima::geometry::ConvexPolytope,
    pose_a: &proxima::bodies::Pose,
    b: &proxima::geometry::ConvexPolytope,
    pose_b: proxima::bodies::Pose,
    gap: f64,
) -> proxima::bodies::Pose {
    let (distance, point_a, point_b) =
        proxima::geometry::brute::polytope_distance(a, pose_a, b, &pose_b);
    proxima::bodies::Pose {
        translation: pose_b.translation - (point_b - point_a) / distance * (distance - gap),
        ..pose_b
    }
}

/// Whether the origins of two bodies on screw motions come within `reach` of each other
/// during the step (their paths are segments; the closest approach of the two).
pub fn origins_within(
    ma: &proxima::motion::ScrewMotion,
    mb: &proxima::motion::ScrewMotion,
    reach: f64,
) -> bool {
    let p = mb.start().translation - ma.start().translation;
    let v = mb.linear() - ma.linear();
    let t = if v == glam::DVec3::ZERO {
        0.0
    } else {
        (-p.dot(v) / v.dot(v)).clamp(0.0, 1.0)
    };
    (p + v * t).length() <= reach
}

/// First contacts by advancing every pair on its own, without broadphase or queue: each
/// pair whose bounding spheres (radius about the origin, which moves on a segment) can meet
/// during the step, as (lower body, higher body, answer) for every answer but a miss, in
/// pair order. The reference for the wake-up queue.
pub fn all_pairs_first_contacts(
    shapes: &[proxima::geometry::ConvexPolytope],
    bodies: &[proxima::impacts::MovingBody],
) -> Vec<(u32, u32, proxima::exact::advance::ToiOutput)> {
    use proxima::exact::advance::{ToiInput, ToiState, time_of_impact};
    let mut found = Vec::new();
    for (i, bi) in bodies.iter().enumerate() {
        for (j, bj) in bodies.iter().enumerate().skip(i + 1) {
            let (a, b) = (&shapes[bi.shape as usize], &shapes[bj.shape as usize]);
            if !origins_within(&bi.motion, &bj.motion, a.radius() + b.radius()) {
                continue;
            }
            let out = time_of_impact(&ToiInput::new(a, bi.motion, b, bj.motion));
            if out.state != ToiState::Miss {
                found.push((i as u32, j as u32, out));
            }
        }
    }
    found
}

/// A crowd of `n` random hulls (eight shapes shared by all), each on a random screw
/// motion: about one body per 8 unit cells, moving up to 2 and turning up to 0.9π per step.
pub fn moving_crowd(
    n: usize,
    seed: u64,
) -> (
    Vec<proxima::geometry::ConvexPolytope>,
    Vec<proxima::impacts::MovingBody>,
) {
    use glam::{DQuat, DVec3};
    use proxima::bodies::Pose;
    let mut rng = proxima::rng::Rng::new(seed);
    let shapes: Vec<_> = (0..8)
        .map(|k| proxima::geometry::generators::random_hull(&mut rng, 6 + 2 * k, 0.5).unwrap())
        .collect();
    let side = (n as f64 * 8.0).cbrt();
    let bodies = (0..n)
        .map(|_| {
            let start = Pose::new(
                rng.point_in(DVec3::ZERO, DVec3::splat(side)),
                rng.rotation(),
            );
            let turn = DQuat::from_axis_angle(
                rng.unit_vector(),
                rng.range(0.0, 0.9 * std::f64::consts::PI),
            );
            let end = Pose::new(
                start.translation + rng.unit_vector() * rng.range(0.0, 2.0),
                turn * start.rotation,
            );
            proxima::impacts::MovingBody {
                shape: rng.below(shapes.len() as u64) as u32,
                motion: proxima::motion::ScrewMotion::between(start, end).unwrap(),
            }
        })
        .collect();
    (shapes, bodies)
}

/// The GPU tables of a set of spheres and capsules: each shape's round-shape entry (for
/// the contact pass) and its local bounds (for the bounds pass).
pub fn round_tables(
    shapes: &[proxima::geometry::rounded::Rounded],
) -> (
    Vec<proxima::passes::round_contacts::GpuRoundShape>,
    Vec<proxima::bodies::GpuShapeBounds>,
) {
    let table = shapes
        .iter()
        .map(|r| proxima::passes::round_contacts::GpuRoundShape::new(r).unwrap())
        .collect();
    let bounds = shapes
        .iter()
        .map(|r| {
            proxima::shape::ShapeGeometry::Rounded(std::sync::Arc::new(r.clone()))
                .gpu_bounds()
                .unwrap()
        })
        .collect();
    (table, bounds)
}

/// The volume a closed, consistently wound mesh encloses (negative when wound inward).
pub fn enclosed_volume(m: &proxima::geometry::TriMesh) -> f64 {
    m.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| m.vertices[v as usize]);
            a.dot(b.cross(c)) / 6.0
        })
        .sum()
}

/// A mesh from ../shared/meshes, or `None` with a printed reason when it is absent.
pub fn shared_mesh(name: &str) -> Option<proxima::geometry::TriMesh> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../shared/meshes/{name}"));
    if !path.exists() {
        eprintln!("skipping {name}: {} is absent", path.display());
        return None;
    }
    Some(proxima::geometry::mesh::load_obj(&path).unwrap())
}

/// The boundary of a union of unit cubes (the cells at integer corners), wound outward:
/// the shapes people build from blocks.
pub fn blocks(cells: &[[i32; 3]]) -> proxima::geometry::TriMesh {
    let filled: std::collections::HashSet<[i32; 3]> = cells.iter().copied().collect();
    let mut index = std::collections::HashMap::new();
    let (mut vertices, mut triangles) = (Vec::new(), Vec::new());
    let mut corner = |p: [i32; 3]| {
        *index.entry(p).or_insert_with(|| {
            vertices.push(glam::DVec3::new(p[0].into(), p[1].into(), p[2].into()));
            vertices.len() as u32 - 1
        })
    };
    for &cell in cells {
        for axis in 0..3 {
            for side in [0, 1] {
                let mut next = cell;
                next[axis] += 2 * side - 1;
                if filled.contains(&next) {
                    continue;
                }
                let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
                let at = |du: i32, dv: i32| {
                    let mut p = cell;
                    p[axis] += side;
                    p[u] += du;
                    p[v] += dv;
                    p
                };
                // (u, v, axis) is right-handed: counter-clockwise in (u, v) faces +axis.
                let mut quad = [at(0, 0), at(1, 0), at(1, 1), at(0, 1)].map(&mut corner);
                if side == 0 {
                    quad.reverse();
                }
                triangles.push([quad[0], quad[1], quad[2]]);
                triangles.push([quad[0], quad[2], quad[3]]);
            }
        }
    }
    proxima::geometry::TriMesh::new(vertices, triangles).unwrap()
}

/// The L's outline (counter-clockwise from +z) and its cap's triangles.
pub const L_OUTLINE: [[f64; 2]; 6] = [
    [0.0, 0.0],
    [2.0, 0.0],
    [2.0, 1.0],
    [1.0, 1.0],
    [1.0, 2.0],
    [0.0, 2.0],
];
// A fan from vertex 0 is not valid for the L (vertex 0 does not see vertex 3 inside), so
// the cap splits at the notch.
pub const L_CAP: [[u32; 3]; 4] = [[0, 1, 2], [0, 2, 3], [0, 3, 5], [3, 4, 5]];

/// A U's outline, 3 by 2 with a 1 by 1 notch, and its cap's triangles.
pub const U_OUTLINE: [[f64; 2]; 8] = [
    [0.0, 0.0],
    [3.0, 0.0],
    [3.0, 2.0],
    [2.0, 2.0],
    [2.0, 1.0],
    [1.0, 1.0],
    [1.0, 2.0],
    [0.0, 2.0],
];
pub const U_CAP: [[u32; 3]; 6] = [
    [0, 1, 4],
    [1, 2, 4],
    [2, 3, 4],
    [0, 4, 5],
    [0, 5, 7],
    [5, 6, 7],
];

/// A prism over `outline` (counter-clockwise from +z, `cap` its triangles) from z = 0 to
/// `height`, closed and consistently oriented (counter-clockwise from outside).
pub fn prism(outline: &[[f64; 2]], cap: &[[u32; 3]], height: f64) -> proxima::geometry::TriMesh {
    let mut vertices = Vec::new();
    for z in [0.0, height] {
        for &[x, y] in outline {
            vertices.push(glam::DVec3::new(x, y, z));
        }
    }
    let n = outline.len() as u32;
    let mut triangles = Vec::new();
    for &[a, b, c] in cap {
        triangles.push([a + n, b + n, c + n]);
        triangles.push([a, c, b]);
    }
    for i in 0..n {
        let j = (i + 1) % n;
        triangles.push([i, j, j + n]);
        triangles.push([i, j + n, i + n]);
    }
    proxima::geometry::TriMesh::new(vertices, triangles).unwrap()
}
