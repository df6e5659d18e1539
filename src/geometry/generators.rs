//! Shape generators shared by tests, benchmarks and scenes. Convex ones return a
//! [`ConvexPolytope`]; the non-convex ones (torus, bumpy sphere) a [`TriMesh`].

use std::collections::HashMap;
use std::f64::consts::TAU;

use glam::DVec3;

use super::{ConvexPolytope, TriMesh};
use crate::rng::Rng;
use crate::{Error, Result};

fn positive(name: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::Geometry(format!(
            "{name} must be finite and positive, got {v}"
        )))
    }
}

/// A box with half extents `h`, centered on the origin.
pub fn cuboid(h: DVec3) -> Result<ConvexPolytope> {
    for (name, v) in [("hx", h.x), ("hy", h.y), ("hz", h.z)] {
        positive(name, v)?;
    }
    let points: Vec<DVec3> = (0..8)
        .map(|k| {
            DVec3::new(
                if k & 1 == 0 { -h.x } else { h.x },
                if k & 2 == 0 { -h.y } else { h.y },
                if k & 4 == 0 { -h.z } else { h.z },
            )
        })
        .collect();
    // A box far thinner than it is long welds into a plane or a line in the hull: say so
    // (it was "all hull input points are collinear", of a box the user wrote).
    ConvexPolytope::from_points(&points).map_err(|e| {
        let ratio = h.min_element() / h.max_element();
        match e {
            Error::Geometry(why) if ratio < 1e-9 => {
                let short = |x: f64| match x {
                    x if (1e-3..1e6).contains(&x) => format!("{x}"),
                    x => format!("{x:e}"),
                };
                Error::Geometry(format!(
                    "a box of half extents [{}, {}, {}] is {ratio:.1e} as thin as it is long, \
                     past what a hull resolves (corners within 1e-12 of its extent weld into \
                     one): {why}",
                    short(h.x),
                    short(h.y),
                    short(h.z)
                ))
            }
            e => e,
        }
    })
}

/// A unit icosahedron subdivided `subdivisions` times with vertices pushed onto the
/// sphere of `radius`, as a triangle mesh (20·4^k triangles).
pub fn icosphere_mesh(radius: f64, subdivisions: u32) -> Result<TriMesh> {
    positive("radius", radius)?;
    if subdivisions > 8 {
        // The count in words, not worked out: 20·4^k passes u64::MAX from k = 30.
        return Err(Error::Geometry(format!(
            "icosphere subdivisions {subdivisions} > 8 (20·4^{subdivisions} triangles; 8 \
             makes 1,310,720)"
        )));
    }
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let mut vertices: Vec<DVec3> = [
        (-1.0, t, 0.0),
        (1.0, t, 0.0),
        (-1.0, -t, 0.0),
        (1.0, -t, 0.0),
        (0.0, -1.0, t),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (0.0, 1.0, -t),
        (t, 0.0, -1.0),
        (t, 0.0, 1.0),
        (-t, 0.0, -1.0),
        (-t, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| DVec3::new(x, y, z).normalize())
    .collect();
    let mut tris: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..subdivisions {
        let mut mid: HashMap<(u32, u32), u32> = HashMap::new();
        let mut midpoint = |a: u32, b: u32, vertices: &mut Vec<DVec3>| {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                vertices.push((vertices[a as usize] + vertices[b as usize]).normalize());
                vertices.len() as u32 - 1
            })
        };
        let mut next = Vec::with_capacity(tris.len() * 4);
        for [a, b, c] in tris {
            let ab = midpoint(a, b, &mut vertices);
            let bc = midpoint(b, c, &mut vertices);
            let ca = midpoint(c, a, &mut vertices);
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        tris = next;
    }
    TriMesh::new(vertices.into_iter().map(|v| v * radius).collect(), tris)
}

/// The convex icosphere.
pub fn icosphere(radius: f64, subdivisions: u32) -> Result<ConvexPolytope> {
    ConvexPolytope::from_points(&icosphere_mesh(radius, subdivisions)?.vertices)
}

fn ring(n: u32, radius: f64, z: f64) -> impl Iterator<Item = DVec3> {
    (0..n).map(move |k| {
        let a = TAU * f64::from(k) / f64::from(n);
        DVec3::new(radius * a.cos(), radius * a.sin(), z)
    })
}

/// Most sides of a generated cylinder or cone: a cylinder of 65,536 builds in under a
/// second in 91 MB, where its two rings of points are a hull's hard case (262,144 sides
/// took 20 s and 660 MB; the limit was 2^20, where the hull took 12 GB and 49 s at 65,536
/// sides before its faces were taken first in first out).
pub const MAX_SIDES: u32 = 1 << 16;
/// Most points of a generated random hull.
pub const MAX_RANDOM_POINTS: usize = 1 << 22;

/// A cylinder along z with `n ≥ 3` sides.
pub fn cylinder(n: u32, radius: f64, half_height: f64) -> Result<ConvexPolytope> {
    positive("radius", radius)?;
    positive("half_height", half_height)?;
    if !(3..=MAX_SIDES).contains(&n) {
        return Err(Error::Geometry(format!(
            "a cylinder has 3 to {MAX_SIDES} sides, got {n}"
        )));
    }
    let points: Vec<DVec3> = ring(n, radius, -half_height)
        .chain(ring(n, radius, half_height))
        .collect();
    ConvexPolytope::from_points(&points)
}

/// A cone along z (apex at +half_height) with an `n ≥ 3`-gon base.
pub fn cone(n: u32, radius: f64, half_height: f64) -> Result<ConvexPolytope> {
    positive("radius", radius)?;
    positive("half_height", half_height)?;
    if !(3..=MAX_SIDES).contains(&n) {
        return Err(Error::Geometry(format!(
            "a cone has 3 to {MAX_SIDES} sides, got {n}"
        )));
    }
    let points: Vec<DVec3> = ring(n, radius, -half_height)
        .chain(std::iter::once(DVec3::new(0.0, 0.0, half_height)))
        .collect();
    ConvexPolytope::from_points(&points)
}

/// `k` random points: directions uniform on the sphere, radii uniform in
/// `[inner·radius, radius]` (so some points fall inside the hull).
pub fn random_points(rng: &mut Rng, k: usize, radius: f64, inner: f64) -> Vec<DVec3> {
    (0..k)
        .map(|_| rng.unit_vector() * radius * rng.range(inner, 1.0))
        .collect()
}

/// The hull of `k ≥ 4` random points (see [`random_points`]), retried until it is not flat.
pub fn random_hull(rng: &mut Rng, k: usize, radius: f64) -> Result<ConvexPolytope> {
    if !(4..=MAX_RANDOM_POINTS).contains(&k) {
        return Err(Error::Geometry(format!(
            "a random hull takes 4 to {MAX_RANDOM_POINTS} points, got {k}"
        )));
    }
    ConvexPolytope::from_points(&random_points(rng, k, radius, 0.5))
}

/// A torus around z: major radius `major`, tube radius `minor`, `n_major × n_minor` quads
/// split into triangles. Non-convex.
pub fn torus(major: f64, minor: f64, n_major: u32, n_minor: u32) -> Result<TriMesh> {
    positive("major", major)?;
    positive("minor", minor)?;
    if minor >= major || n_major < 3 || n_minor < 3 {
        return Err(Error::Geometry(format!(
            "torus needs minor < major and at least 3 segments each way (got minor {minor}, \
             major {major}, {n_major} × {n_minor} segments)"
        )));
    }
    // As a cylinder's sides: 65,536 × 65,536 segments asked for 4.3e9 vertices (100 GB),
    // past the triangles' 32-bit indices too.
    if u64::from(n_major) * u64::from(n_minor) > u64::from(MAX_SIDES) * 16 {
        return Err(Error::Geometry(format!(
            "a torus has at most {} vertices (segments around times across), got {n_major} × \
             {n_minor}",
            u64::from(MAX_SIDES) * 16
        )));
    }
    let mut vertices = Vec::new();
    for i in 0..n_major {
        let u = TAU * f64::from(i) / f64::from(n_major);
        for j in 0..n_minor {
            let v = TAU * f64::from(j) / f64::from(n_minor);
            let r = major + minor * v.cos();
            vertices.push(DVec3::new(r * u.cos(), r * u.sin(), minor * v.sin()));
        }
    }
    let id = |i: u32, j: u32| (i % n_major) * n_minor + (j % n_minor);
    let mut tris = Vec::new();
    for i in 0..n_major {
        for j in 0..n_minor {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            tris.extend([[a, b, c], [a, c, d]]);
        }
    }
    TriMesh::new(vertices, tris)
}

/// An icosphere whose vertices are pushed in and out radially by
/// `1 + amplitude · sin(f x) sin(f y) sin(f z)`. Non-convex for amplitude > 0.
pub fn bumpy_sphere(
    radius: f64,
    subdivisions: u32,
    amplitude: f64,
    frequency: f64,
) -> Result<TriMesh> {
    if !(amplitude.is_finite() && (0.0..1.0).contains(&amplitude)) {
        return Err(Error::Geometry(format!(
            "bump amplitude must be in [0, 1), got {amplitude}"
        )));
    }
    // A negative radius turned the sphere inside out, and a NaN one or frequency made NaN
    // vertices, named later as a shape too large.
    positive("bumpy sphere radius", radius)?;
    if !frequency.is_finite() {
        return Err(Error::Geometry(format!(
            "bump frequency must be finite, got {frequency}"
        )));
    }
    let mut mesh = icosphere_mesh(1.0, subdivisions)?;
    for v in &mut mesh.vertices {
        let s = 1.0
            + amplitude
                * (frequency * v.x).sin()
                * (frequency * v.y).sin()
                * (frequency * v.z).sin();
        *v *= radius * s;
    }
    Ok(mesh)
}
