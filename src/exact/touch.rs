//! Exact contact predicates: do two features (vertex, segment, planar polygon) share a
//! point? Decided by Shewchuk's adaptive exact `orient2d` / `orient3d` (the `robust`
//! crate) on the coordinates as given, so faces that touch exactly (crates stacked on a
//! dyadic grid, a quarter-turned plank resting on another) are told apart from faces
//! 1e-17 apart, which floating-point distances cannot do.
//!
//! The callers (the walk's terminal pairs) already know the features are the closest pair
//! and within rounding of each other; these predicates only settle "exactly zero".

use glam::DVec3;

use crate::geometry::hull::orient3d;

/// Exact orientation of `a, b, c` projected by dropping coordinate `axis`.
fn orient2d_dropping(axis: usize, a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let (i, j) = ((axis + 1) % 3, (axis + 2) % 3);
    let p = |v: DVec3| robust::Coord { x: v[i], y: v[j] };
    robust::orient2d(p(a), p(b), p(c))
}

/// True when `a`, `b`, `c` lie exactly on one line.
pub fn collinear(a: DVec3, b: DVec3, c: DVec3) -> bool {
    (0..3).all(|axis| orient2d_dropping(axis, a, b, c) == 0.0)
}

/// True when `u` lies exactly in the plane of the planar polygon `ring` (its first three
/// vertices, which a polytope face never has collinear: vertices in the middle of an edge
/// are dropped when faces are built).
pub fn on_plane(ring: &[DVec3], u: DVec3) -> bool {
    ring.len() >= 3 && orient3d(ring[0], ring[1], ring[2], u) == 0.0
}

/// True when the segments `p0p1` and `q0q1` share a point.
pub fn segments_touch(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> bool {
    if orient3d(p0, p1, q0, q1) != 0.0 {
        return false;
    }
    // Coplanar: decide in a projection that keeps the plane non-degenerate (drop the axis
    // of the normal's largest component).
    let mut normal = (p1 - p0).cross(q1 - q0);
    if normal.length_squared() == 0.0 {
        normal = (p1 - p0).cross(q0 - p0);
    }
    if normal.length_squared() == 0.0 {
        normal = (q1 - q0).cross(p0 - q0);
    }
    if normal.length_squared() == 0.0 {
        // All four on one line: they touch where their ranges overlap.
        return ranges_overlap(p0, p1, q0, q1);
    }
    let a = normal.abs();
    let axis = if a.x >= a.y && a.x >= a.z {
        0
    } else if a.y >= a.z {
        1
    } else {
        2
    };
    let o = |a, b, c| sign(orient2d_dropping(axis, a, b, c));
    let (o1, o2) = (o(p0, p1, q0), o(p0, p1, q1));
    let (o3, o4) = (o(q0, q1, p0), o(q0, q1, p1));
    if o1 == 0.0 && o2 == 0.0 && o3 == 0.0 && o4 == 0.0 {
        return ranges_overlap(p0, p1, q0, q1);
    }
    o1 * o2 <= 0.0 && o3 * o4 <= 0.0
}

/// For four collinear points: do the ranges `p0p1` and `q0q1` overlap on their line?
fn ranges_overlap(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> bool {
    // Compare along the axis where the line moves most; coordinates compare exactly.
    let d = (p1 - p0) + (q1 - q0);
    let k = if d.x.abs() >= d.y.abs() && d.x.abs() >= d.z.abs() {
        0
    } else if d.y.abs() >= d.z.abs() {
        1
    } else {
        2
    };
    let (plo, phi) = (p0[k].min(p1[k]), p0[k].max(p1[k]));
    let (qlo, qhi) = (q0[k].min(q1[k]), q0[k].max(q1[k]));
    plo <= qhi && qlo <= phi
}

/// -1, 0 or 1 (`f64::signum` gives ±1 for ±0).
fn sign(x: f64) -> f64 {
    if x == 0.0 { 0.0 } else { x.signum() }
}
