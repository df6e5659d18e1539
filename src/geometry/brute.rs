//! Brute-force references, slow and simple, used as oracles by tests and benchmarks:
//! the closest feature of a polytope to a point by enumerating every feature, and the
//! Voronoi-region membership test written straight from the definition.

use glam::DVec3;

use super::{ConvexPolytope, FeatureId};

/// Closest point of a segment to `x`, with its parameter in [0, 1].
pub fn closest_on_segment(a: DVec3, b: DVec3, x: DVec3) -> (DVec3, f64) {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 == 0.0 {
        return (a, 0.0);
    }
    let t = ((x - a).dot(ab) / len2).clamp(0.0, 1.0);
    (a + ab * t, t)
}

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
        .iter()
        .all(|p| p.signed_distance(x) >= -tol);
    match feature {
        FeatureId::Face(f) => {
            let f = f as usize;
            sides && poly.face_normal(f).dot(x) - poly.face_offset(f) >= -tol
        }
        _ => sides,
    }
}
