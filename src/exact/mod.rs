//! Exact CPU algorithms on convex polytopes, separate from the per-query entry points
//! that use them (`crate::query`).
//!
//! These take poses and motions as given, for speed: a pose here must have passed
//! [`Pose::checked`](crate::bodies::Pose::checked) (finite, within ±1e75, a unit
//! quaternion), as the world, scenes and `proxima query` check every pose on the way in.
//! A NaN pose answers nonsense here (two boxes one of them NaN "intersect"), not an error.

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
