//! Closest-point primitives on points, segments and planes, shared by the exact queries
//! and the brute-force references (neither imports the other).

use glam::DVec3;

/// |p − q|, also where its square sinks into the subnormals (below about 1.5e-154: a gap of
/// 1e-200 between valid shapes came out 0, and 1e-160 lost five digits); above that the
/// plain square root, to the last bit.
pub fn gap(p: DVec3, q: DVec3) -> f64 {
    let d = p - q;
    let squared = d.length_squared();
    if squared >= 1e-290 {
        return squared.sqrt();
    }
    let m = d.abs().max_element();
    if m == 0.0 { 0.0 } else { m * (d / m).length() }
}

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
///
/// The lines' closest point on the first is `s = ((q0 − p0) × d2)·n / |n|²` with
/// `n = d1 × d2`, the form of Ericson's `(b f − c e) / (a e − b²)` whose terms do not
/// cancel: for segments a hair from parallel `a e − b²` is `|n|²` less the rounding of
/// `a e`, and at an angle of 1e-8 between them it was all rounding (two plank edges 4 long,
/// tilted by 3.5e-8 and 6.5e-10 apart, came out 9.9e-9 apart). The cross products keep
/// `|n|` to a few ulps of itself, and a parameter off by `δ` moves the distance by only
/// `δ` times the angle.
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
    let n = d1.cross(d2);
    let denom = n.length_squared();
    let s = if denom > 0.0 {
        ((-r).cross(d2).dot(n) / denom).clamp(0.0, 1.0)
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

/// The point of triangle `abc` nearest `p` (Ericson, Real-Time Collision Detection 5.1.5).
pub fn closest_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}
