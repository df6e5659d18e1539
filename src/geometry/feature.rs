//! Names of the features of a polytope: vertices, edges and faces, written `V3`, `E7`, `F2`.

use std::fmt;

/// A vertex, edge or face of a [`super::ConvexPolytope`], by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FeatureId {
    /// Vertex index.
    Vertex(u32),
    /// Edge index (its half-edges are `2e` and `2e + 1`).
    Edge(u32),
    /// Face index.
    Face(u32),
}

impl fmt::Display for FeatureId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeatureId::Vertex(i) => write!(f, "V{i}"),
            FeatureId::Edge(i) => write!(f, "E{i}"),
            FeatureId::Face(i) => write!(f, "F{i}"),
        }
    }
}
