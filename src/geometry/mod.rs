//! Exact convex geometry in f64: polytopes with their Voronoi regions, the convex hull,
//! triangle meshes from OBJ files, shape generators, and brute-force references.

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
