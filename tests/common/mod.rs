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
