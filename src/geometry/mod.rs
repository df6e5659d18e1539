//! Exact convex geometry in f64: polytopes with their Voronoi regions, the convex hull,
//! triangle meshes from OBJ files, shape generators, and brute-force references.

use glam::DVec3;

pub mod brute;
pub mod closest;
pub mod decompose;
pub mod feature;
pub mod generators;
pub mod hull;
pub mod hull_tree;
pub mod mesh;
pub mod obb;
pub mod polytope;
pub mod rounded;

pub use feature::FeatureId;
pub use hull_tree::HullTree;
pub use mesh::TriMesh;
pub use polytope::{ConvexPolytope, VoronoiPlane, VoronoiPlanes};

/// How far a shape's points may lie from their own origin, in multiples of their extent
/// (the largest side of their box).
pub const MAX_OFFSET_RATIO: f64 = 1e4;

/// Why points given in their shape's own frame lie too far from its origin for their size
/// (farther than [`MAX_OFFSET_RATIO`] times their extent), or `None`. The hull's and the
/// queries' tolerances are relative to a shape's coordinates (the hull merges points within
/// 1e-10 of them), so a shape 1e9 from its origin and 1 across is resolved to a tenth of
/// its size: an L-shaped mesh there was read as convex, and a box 1e-4 across refused as
/// points that coincide. Placed near its origin and moved by its pose, it is exact.
pub fn far_from_origin(points: &[DVec3]) -> Option<String> {
    let first = *points.first()?;
    let (lo, hi, far) = points
        .iter()
        .fold((first, first, 0.0f64), |(lo, hi, far), p| {
            (lo.min(*p), hi.max(*p), far.max(p.abs().max_element()))
        });
    let extent = (hi - lo).max_element();
    (extent > 0.0 && far > MAX_OFFSET_RATIO * extent).then(|| {
        format!(
            "its points lie {far:.3e} from its origin, {:.1e} times its size {extent:.3e} (at most \
             {MAX_OFFSET_RATIO:e}): the geometry's tolerances are relative to its coordinates; \
             give its points about its own origin and place it with the pose",
            far / extent
        )
    })
}
