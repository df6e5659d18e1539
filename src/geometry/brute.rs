//! Brute-force references, slow and simple, used as oracles by tests and benchmarks:
//! the closest feature of a polytope to a point by enumerating every feature, and the
//! Voronoi-region membership test written straight from the definition.

use glam::DVec3;

use super::closest::{closest_on_segment, segments_closest};
use super::{ConvexPolytope, FeatureId};
use crate::bodies::Pose;

/// The feature of `poly` holding the point of its surface closest to `x` in its relative
/// interior, by enumeration: a face counts when the projection of `x` falls strictly inside
/// it, an edge when the closest point is strictly between its ends. Returns the feature,
/// the distance and the closest point. Meant for `x` outside the polytope.
pub fn closest_feature(poly: &ConvexPolytope, x: DVec3) -> (FeatureId, f64, DVec3) {
    let mut best = (FeatureId::Vertex(0), f64::INFINITY, DVec3::ZERO);
    for v in 0..poly.num_vertices() as u32 {
        let p = poly.vertex(v);
        let d = p.distance(x);
        if d < best.1 {
            best = (FeatureId::Vertex(v), d, p);
        }
    }
    for e in 0..poly.num_edges() {
        let [a, b] = poly.edge_vertices(e);
        let (p, t) = closest_on_segment(poly.vertex(a), poly.vertex(b), x);
        if t > 0.0 && t < 1.0 {
            let d = p.distance(x);
            if d < best.1 {
                best = (FeatureId::Edge(e as u32), d, p);
            }
        }
    }
    for f in 0..poly.num_faces() {
        let n = poly.face_normal(f);
        let h = n.dot(x) - poly.face_offset(f);
        let p = x - n * h;
        let ring: Vec<DVec3> = poly.face_vertices(f).map(|v| poly.vertex(v)).collect();
        let inside = (0..ring.len()).all(|k| {
            let (a, b) = (ring[k], ring[(k + 1) % ring.len()]);
            n.cross(b - a).dot(p - a) > 0.0
        });
        if inside && h >= 0.0 && h < best.1 {
            best = (FeatureId::Face(f as u32), h, p);
        }
    }
    best
}

/// True when `x` lies in the Voronoi region of `feature`, every plane satisfied to within
/// `tol` (for a face, its own plane too).
pub fn in_voronoi_region(poly: &ConvexPolytope, feature: FeatureId, x: DVec3, tol: f64) -> bool {
    let sides = poly
        .voronoi_planes(feature)
        .all(|p| p.signed_distance(x) >= -tol);
    match feature {
        FeatureId::Face(f) => {
            let f = f as usize;
            sides && poly.face_normal(f).dot(x) - poly.face_offset(f) >= -tol
        }
        _ => sides,
    }
}

/// Closest point of the polygon face `f` of `poly` (placed by `pose`) to `x`: the projection
/// when it falls inside, else the closest point of the boundary.
pub fn closest_on_face(poly: &ConvexPolytope, pose: &Pose, f: usize, x: DVec3) -> DVec3 {
    let n = pose.rotation * poly.face_normal(f);
    let ring: Vec<DVec3> = poly
        .face_vertices(f)
        .map(|v| pose.transform_point(poly.vertex(v)))
        .collect();
    let h = n.dot(x - ring[0]);
    let p = x - n * h;
    let inside = (0..ring.len()).all(|k| {
        let (a, b) = (ring[k], ring[(k + 1) % ring.len()]);
        n.cross(b - a).dot(p - a) >= 0.0
    });
    if inside {
        return p;
    }
    (0..ring.len())
        .map(|k| closest_on_segment(ring[k], ring[(k + 1) % ring.len()], x).0)
        .min_by(|a, b| a.distance_squared(x).total_cmp(&b.distance_squared(x)))
        .expect("a face has vertices")
}

/// The closest pair of two disjoint convex polytopes by enumeration (see
/// [`polytope_closest_pair`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosestPair {
    /// Distance between the bodies.
    pub distance: f64,
    /// Closest point on A, world space.
    pub point_a: DVec3,
    /// Closest point on B, world space.
    pub point_b: DVec3,
    /// The features the points were found on: (vertex, face), (face, vertex) or (edge, edge).
    pub features: (FeatureId, FeatureId),
}

/// Distance between two disjoint convex polytopes by enumeration: the minimum over every
/// vertex of one against every face of the other, and every edge pair. (For overlapping
/// bodies the result is meaningless.) Returns the distance and the closest points.
pub fn polytope_distance(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
) -> (f64, DVec3, DVec3) {
    let c = polytope_closest_pair(a, pose_a, b, pose_b);
    (c.distance, c.point_a, c.point_b)
}

/// [`polytope_distance`] with the features. O(V_A·F_B + V_B·F_A + E_A·E_B): the exact
/// fallback of the distance query, and an oracle for tests.
pub fn polytope_closest_pair(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
) -> ClosestPair {
    let mut best = ClosestPair {
        distance: f64::INFINITY,
        point_a: DVec3::ZERO,
        point_b: DVec3::ZERO,
        features: (FeatureId::Vertex(0), FeatureId::Vertex(0)),
    };
    for (p, pp, q, pq, swap) in [(a, pose_a, b, pose_b, false), (b, pose_b, a, pose_a, true)] {
        for (v, local) in p.vertices().iter().enumerate() {
            let x = pp.transform_point(*local);
            for f in 0..q.num_faces() {
                let y = closest_on_face(q, pq, f, x);
                let d = x.distance(y);
                if d < best.distance {
                    let (vf, ff) = (FeatureId::Vertex(v as u32), FeatureId::Face(f as u32));
                    best = if swap {
                        ClosestPair {
                            distance: d,
                            point_a: y,
                            point_b: x,
                            features: (ff, vf),
                        }
                    } else {
                        ClosestPair {
                            distance: d,
                            point_a: x,
                            point_b: y,
                            features: (vf, ff),
                        }
                    };
                }
            }
        }
    }
    for ea in 0..a.num_edges() {
        let [a0, a1] = a.edge_vertices(ea);
        let (p0, p1) = (
            pose_a.transform_point(a.vertex(a0)),
            pose_a.transform_point(a.vertex(a1)),
        );
        for eb in 0..b.num_edges() {
            let [b0, b1] = b.edge_vertices(eb);
            let (q0, q1) = (
                pose_b.transform_point(b.vertex(b0)),
                pose_b.transform_point(b.vertex(b1)),
            );
            let (x, y) = segments_closest(p0, p1, q0, q1);
            let d = x.distance(y);
            if d < best.distance {
                best = ClosestPair {
                    distance: d,
                    point_a: x,
                    point_b: y,
                    features: (FeatureId::Edge(ea as u32), FeatureId::Edge(eb as u32)),
                };
            }
        }
    }
    best
}
