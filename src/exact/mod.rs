//! Exact CPU algorithms on convex polytopes, separate from the per-query entry points
//! that use them (`crate::query`).

pub mod advance;
pub mod depth;
pub mod dynamic_obb;
pub mod envelope;
pub mod manifold;
pub mod placement;
pub mod point_walk;
pub mod rounded;
pub mod rounded_toi;
pub mod sat;
pub mod touch;
pub mod tree;
pub mod tree_toi;
pub mod walk;
