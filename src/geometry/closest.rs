//! Closest-point primitives on points, segments and planes, shared by the exact queries
//! and the brute-force references (neither imports the other).

use glam::DVec3;

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

/// Closest points of two segments (Ericson, Real-Time Collision Detection, 5.1.9).
pub fn segments_closest(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> (DVec3, DVec3) {
    let (s, t) = segments_closest_params(p0, p1, q0, q1);
    (p0 + (p1 - p0) * s, q0 + (q1 - q0) * t)
}

/// Parameters `(s, t)` in [0, 1] of the closest points of two segments.
pub fn segments_closest_params(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> (f64, f64) {
    let (d1, d2, r) = (p1 - p0, q1 - q0, p0 - q0);
    let (a, e, f) = (d1.length_squared(), d2.length_squared(), d2.dot(r));
    if a == 0.0 && e == 0.0 {
        return (0.0, 0.0);
    }
    if a == 0.0 {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e == 0.0 {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    let s = if denom > 0.0 {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let t = (b * s + f) / e;
    if t < 0.0 {
        ((-c / a).clamp(0.0, 1.0), 0.0)
    } else if t > 1.0 {
        (((b - c) / a).clamp(0.0, 1.0), 1.0)
    } else {
        (s, t)
    }
}
