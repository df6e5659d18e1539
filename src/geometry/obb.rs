//! Oriented bounding boxes: a body-frame box around a point set, its axes the principal
//! axes of the points' covariance (Jacobi's eigenvalue iteration; the widest spread
//! first), its extents the points' projections on them. Every node of a hull tree has one (`HullTree::obb`), for the
//! dynamic "may these collide during this step" filter (`exact::dynamic_obb`).

use glam::{DMat3, DVec3};

/// A box: `center + axes · u` for `|u_i| ≤ half_i`, in its owner's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obb {
    /// Centre.
    pub center: DVec3,
    /// Orthonormal axes, as the columns of a rotation.
    pub axes: DMat3,
    /// Half extents along the axes.
    pub half: DVec3,
}

impl Obb {
    /// The box around `points` (at least one) along their principal axes.
    pub fn fit(points: &[DVec3]) -> Obb {
        let n = points.len().max(1) as f64;
        let mean = points.iter().sum::<DVec3>() / n;
        let mut cov = [[0.0f64; 3]; 3];
        for p in points {
            let d = (*p - mean).to_array();
            for (i, row) in cov.iter_mut().enumerate() {
                for (j, c) in row.iter_mut().enumerate() {
                    *c += d[i] * d[j] / n;
                }
            }
        }
        let axes = orthonormal(principal_axes(cov));
        let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
        for p in points {
            let u = axes.transpose() * *p;
            lo = lo.min(u);
            hi = hi.max(u);
        }
        if points.is_empty() {
            (lo, hi) = (DVec3::ZERO, DVec3::ZERO);
        }
        // Padded by a few ulps of the coordinates, so that rounding in the projections
        // leaves no point outside.
        let pad = 1e-14 * (lo.abs().max(hi.abs()).max_element());
        Obb {
            center: axes * (0.5 * (lo + hi)),
            axes,
            half: 0.5 * (hi - lo) + DVec3::splat(pad),
        }
    }

    /// The eight corners.
    pub fn corners(&self) -> [DVec3; 8] {
        let mut out = [DVec3::ZERO; 8];
        for (k, c) in out.iter_mut().enumerate() {
            let s = DVec3::new(
                if k & 1 == 0 { -1.0 } else { 1.0 },
                if k & 2 == 0 { -1.0 } else { 1.0 },
                if k & 4 == 0 { -1.0 } else { 1.0 },
            );
            *c = self.center + self.axes * (s * self.half);
        }
        out
    }

    /// Half the box's extent along unit direction `d` (in the box's frame of reference).
    pub fn radius_along(&self, d: DVec3) -> f64 {
        (self.axes.transpose() * d).abs().dot(self.half)
    }
}

/// Eigenvectors of a symmetric 3×3 matrix (cyclic Jacobi rotations), as columns, largest
/// eigenvalue first.
fn principal_axes(mut a: [[f64; 3]; 3]) -> DMat3 {
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _sweep in 0..32 {
        let off = a[0][1].abs() + a[0][2].abs() + a[1][2].abs();
        let diag = a[0][0].abs() + a[1][1].abs() + a[2][2].abs();
        if off <= 1e-15 * diag || off == 0.0 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            // A ← Jᵀ A J, V ← V J, J the rotation in the (p, q) plane.
            for row in &mut a {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (row_p, row_q) = (a[p], a[q]);
            for k in 0..3 {
                a[p][k] = c * row_p[k] - s * row_q[k];
                a[q][k] = s * row_p[k] + c * row_q[k];
            }
            for row in &mut v {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    let mut order = [0, 1, 2];
    order.sort_by(|&i, &j| a[j][j].total_cmp(&a[i][i]));
    let column = |k: usize| DVec3::new(v[0][k], v[1][k], v[2][k]);
    DMat3::from_cols(column(order[0]), column(order[1]), column(order[2]))
}

/// The columns made exactly orthonormal and right-handed (Gram–Schmidt, third = cross).
fn orthonormal(m: DMat3) -> DMat3 {
    let x = m.x_axis.try_normalize().unwrap_or(DVec3::X);
    let y = (m.y_axis - x * x.dot(m.y_axis))
        .try_normalize()
        .unwrap_or_else(|| x.any_orthonormal_vector());
    DMat3::from_cols(x, y, x.cross(y))
}
