//! The closest point of a convex polytope to a point or a segment outside it, by walking
//! the polytope's Voronoi regions (Lin 1993, ch. 3, one side a point or a segment): the
//! features visited, where enumeration (`geometry::brute`) tries all `V + E + F`.
//!
//! Point: at a feature, the plane of its region that the point violates most (beyond the
//! tolerance) leads to the feature behind it, which is nearer the point; a feature whose
//! region holds the point (a face's, with the point above its plane) holds the closest
//! point. Segment: the segment's closest point to the current feature, then that point's
//! closest feature, until the feature stays. Then the feature's closest point lies in the
//! region of the segment's feature that holds the other (an end, or the middle when the
//! pair is square to the segment) and the other in the feature's region, which makes them
//! the closest pair (Lin's theorem, with the segment a polytope of two vertices and an
//! edge); the distance never grows from one round to the next.
//!
//! The closest points are taken by the formulas enumeration uses (a vertex, the closest
//! point of an edge's segment, a face's projection), so where both pick the same feature
//! they answer the same bits. Ties within the tolerance (a point on a region's boundary)
//! may end at either neighbour, whose closest points agree to rounding. A walk that finds
//! the point below a face's plane inside its prism (the start was not above the face it
//! should be), or runs past its step bound, gives up: `None`, and the caller enumerates.

use glam::DVec3;

use crate::geometry::closest::{closest_on_segment, segments_closest_params};
use crate::geometry::{ConvexPolytope, FeatureId, VoronoiPlane};

/// The feature of `poly` closest to the body-frame point `x` (outside the polytope) and
/// its closest point, walking from `start`; signed distances within `tol` of a plane count
/// as on it.
pub fn closest_to_point(
    poly: &ConvexPolytope,
    x: DVec3,
    start: FeatureId,
    tol: f64,
) -> Option<(FeatureId, DVec3)> {
    let mut f = start;
    for _ in 0..step_bound(poly) {
        if let Some(next) = VoronoiPlane::most_violated(poly.voronoi_planes(f), x, tol) {
            f = next;
            continue;
        }
        return match f {
            FeatureId::Vertex(v) => Some((f, poly.vertex(v))),
            FeatureId::Edge(e) => {
                let [a, b] = poly.edge_vertices(e as usize);
                Some((f, closest_on_segment(poly.vertex(a), poly.vertex(b), x).0))
            }
            FeatureId::Face(k) => {
                let n = poly.face_normal(k as usize);
                let h = n.dot(x) - poly.face_offset(k as usize);
                (h >= -tol).then(|| (f, x - n * h))
            }
        };
    }
    None
}

/// The closest pair of the body-frame segment `t`–`h` (which does not meet the polytope)
/// and `poly`: the parameter of the segment's point (0 at `t`, 1 at `h`), the polytope's
/// feature and its point, walking from `start`.
pub fn closest_to_segment(
    poly: &ConvexPolytope,
    t: DVec3,
    h: DVec3,
    start: FeatureId,
    tol: f64,
) -> Option<(f64, FeatureId, DVec3)> {
    let (mut f, _) = closest_to_point(poly, t, start, tol)?;
    for _ in 0..step_bound(poly) {
        let (s, q) = segment_to_feature(poly, t, h, f);
        let (g, _) = closest_to_point(poly, t + (h - t) * s, f, tol)?;
        if g == f {
            return Some((s, f, q));
        }
        f = g;
    }
    None
}

/// More steps than a walk that never revisits a feature can take.
fn step_bound(poly: &ConvexPolytope) -> usize {
    2 * (poly.num_vertices() + poly.num_edges() + poly.num_faces()) + 8
}

/// The closest pair of the segment `t`–`h` and one feature (a face as the polygon it
/// bounds): the segment's parameter and the feature's point.
fn segment_to_feature(poly: &ConvexPolytope, t: DVec3, h: DVec3, f: FeatureId) -> (f64, DVec3) {
    match f {
        FeatureId::Vertex(v) => {
            let p = poly.vertex(v);
            (closest_on_segment(t, h, p).1, p)
        }
        FeatureId::Edge(e) => {
            let [a, b] = poly.edge_vertices(e as usize);
            let (a, b) = (poly.vertex(a), poly.vertex(b));
            let (s, u) = segments_closest_params(t, h, a, b);
            (s, a + (b - a) * u)
        }
        FeatureId::Face(k) => {
            // An end over the face, or the segment against a side of it.
            let (n, d) = (poly.face_normal(k as usize), poly.face_offset(k as usize));
            let inside = |x: DVec3| poly.voronoi_planes(f).all(|p| p.signed_distance(x) >= 0.0);
            let mut best = (f64::INFINITY, 0.0, DVec3::ZERO);
            for (s, x) in [(0.0, t), (1.0, h)] {
                let height = n.dot(x) - d;
                if height.abs() < best.0 && inside(x) {
                    best = (height.abs(), s, x - n * height);
                }
            }
            for e in poly.face_edges(k as usize) {
                let [a, b] = poly.edge_vertices(e as usize);
                let (a, b) = (poly.vertex(a), poly.vertex(b));
                let (s, u) = segments_closest_params(t, h, a, b);
                let q = a + (b - a) * u;
                let gap = (t + (h - t) * s).distance(q);
                if gap < best.0 {
                    best = (gap, s, q);
                }
            }
            (best.1, best.2)
        }
    }
}
