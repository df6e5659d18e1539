//! Hulls, polytopes and their Voronoi regions against brute force, analytic counts and
//! parry3d-f64.

use glam::{DQuat, DVec3};
use proxima::Error;
use proxima::geometry::brute::{closest_feature, in_voronoi_region};
use proxima::geometry::generators::{self, random_points};
use proxima::geometry::hull::convex_hull;
use proxima::geometry::{ConvexPolytope, FeatureId};
use proxima::rng::Rng;

/// Brute-force checks of a hull of `points`: every point inside or on every face, every
/// hull vertex an input point and strictly extreme, the support of the hull equal to the
/// support of the input in random directions, V − E + F = 2.
fn check_hull(points: &[DVec3], poly: &ConvexPolytope, sample_every: usize) {
    let scale = points
        .iter()
        .fold(0.0f64, |m, p| m.max(p.abs().max_element()));
    let tol = 1e-9 * scale;
    let (v, e, f) = (poly.num_vertices(), poly.num_edges(), poly.num_faces());
    assert_eq!(v as i64 - e as i64 + f as i64, 2, "Euler");
    for (i, p) in points.iter().enumerate().step_by(sample_every) {
        for face in 0..f {
            let h = poly.face_normal(face).dot(*p) - poly.face_offset(face);
            assert!(h <= tol, "input point {i} is {h:e} outside face {face}");
        }
    }
    for (k, hv) in poly.vertices().iter().enumerate() {
        assert!(points.contains(hv), "hull vertex {k} is not an input point");
        // Extreme: unique maximum along the mean of its faces' normals.
        let mut dir = DVec3::ZERO;
        for face in 0..f {
            if poly.face_vertices(face).any(|x| x as usize == k) {
                dir += poly.face_normal(face);
            }
        }
        let dir = dir.normalize();
        for (j, w) in poly.vertices().iter().enumerate() {
            if j != k {
                assert!(dir.dot(*w) < dir.dot(*hv), "hull vertex {k} is not extreme");
            }
        }
    }
    let mut rng = Rng::new(99);
    for _ in 0..200 {
        let d = rng.unit_vector();
        let input = points
            .iter()
            .map(|p| d.dot(*p))
            .fold(f64::NEG_INFINITY, f64::max);
        let (_, hull) = poly.support_brute(d);
        assert!(
            (input - hull).abs() <= tol,
            "support differs along {d:?}: {input} vs {hull}"
        );
    }
}

fn lattice(n: i32, offset: DVec3, rotation: DQuat) -> Vec<DVec3> {
    let mut pts = Vec::new();
    for x in 0..n {
        for y in 0..n {
            for z in 0..n {
                let p =
                    DVec3::new(x.into(), y.into(), z.into()) - DVec3::splat(f64::from(n - 1) / 2.0);
                pts.push(rotation * p + offset);
            }
        }
    }
    pts
}

#[test]
fn hulls_of_random_clouds_pass_brute_force_checks() {
    let mut rng = Rng::new(1);
    for &(k, inner) in &[
        (4usize, 1.0),
        (5, 1.0),
        (50, 0.0),
        (200, 0.5),
        (2000, 0.9),
        (5000, 1.0),
    ] {
        let pts = random_points(&mut rng, k, 3.0, inner);
        let poly = ConvexPolytope::from_points(&pts).unwrap();
        check_hull(&pts, &poly, 1);
    }
}

#[test]
fn coplanar_points_merge_into_polygon_faces() {
    // A 5x5x5 lattice: 98 points on the surface, many coplanar and collinear.
    let pts = lattice(5, DVec3::ZERO, DQuat::IDENTITY);
    let cube = ConvexPolytope::from_points(&pts).unwrap();
    assert_eq!(
        (cube.num_vertices(), cube.num_edges(), cube.num_faces()),
        (8, 12, 6)
    );
    check_hull(&pts, &cube, 1);
    for f in 0..6 {
        assert_eq!(cube.face_vertices(f).count(), 4);
    }
    // Rotated (coordinates no longer exactly coplanar) and far from the origin.
    let q = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.7);
    for offset in [DVec3::ZERO, DVec3::new(1e9, -2e9, 5e8)] {
        let pts = lattice(4, offset, q);
        let poly = ConvexPolytope::from_points(&pts).unwrap();
        assert_eq!(
            (poly.num_vertices(), poly.num_edges(), poly.num_faces()),
            (8, 12, 6),
            "offset {offset}"
        );
        check_hull(&pts, &poly, 1);
    }
}

/// A hull vertex with a second point 1e-10 to 1e-8 beside it, outward: the sliver
/// triangles between them are faces of their own, and each loads with its corners on its
/// plane (Newell's normal of such a sliver was 1e-7 off, and the hull was refused: "face 6
/// is not planar: vertex 0 is 1.4e-8 off its plane").
#[test]
fn a_point_a_hair_beside_a_vertex_keeps_its_hull() {
    let mut rng = Rng::new(12);
    for k in 0..300 {
        let mut pts = random_points(&mut rng, 4 + (k % 12), 1.0, 0.5);
        let v = pts[rng.below(pts.len() as u64) as usize];
        let off =
            (rng.unit_vector() + v.normalize()).normalize() * 10f64.powf(rng.range(-10.0, -8.0));
        pts.push(v + off);
        let poly =
            ConvexPolytope::from_points(&pts).unwrap_or_else(|e| panic!("case {k}: {e}: {pts:?}"));
        // Every point on or inside every face, and the support along any direction the
        // points' (the vertices' extremeness is beyond a hair's rounding here).
        for f in 0..poly.num_faces() {
            for p in &pts {
                let h = poly.face_normal(f).dot(*p) - poly.face_offset(f);
                // Faces merge within 1e-10 of the extent.
                assert!(h <= 1e-10, "case {k}: a point {h:e} outside face {f}");
            }
        }
        // A point within the merge tolerance of a face leaves the hull (4 vertices of 5),
        // and the supports differ by about that much.
        for _ in 0..50 {
            let d = rng.unit_vector();
            let top = pts
                .iter()
                .map(|p| d.dot(*p))
                .fold(f64::NEG_INFINITY, f64::max);
            let gap = (poly.support_brute(d).1 - top).abs();
            assert!(gap <= 1e-9, "case {k}: the supports differ by {gap:e}");
        }
    }
}

#[test]
fn duplicates_and_thin_plates_are_handled() {
    let mut rng = Rng::new(2);
    let mut pts = random_points(&mut rng, 100, 1.0, 0.9);
    let copy = pts.clone();
    pts.extend(copy.iter().copied());
    pts.extend(copy.iter().take(10).copied());
    let poly = ConvexPolytope::from_points(&pts).unwrap();
    check_hull(&pts, &poly, 1);
    // A 1e-3 thick plate 10 wide: both layers are kept (a trap for epsilon hulls).
    let mut plate = Vec::new();
    for i in 0..20 {
        for j in 0..20 {
            for z in [0.0, 1e-3] {
                let (x, y) = (
                    f64::from(i) / 2.0 + rng.range(0.0, 0.1),
                    f64::from(j) / 2.0 + rng.range(0.0, 0.1),
                );
                plate.push(DVec3::new(x, y, z));
            }
        }
    }
    let poly = ConvexPolytope::from_points(&plate).unwrap();
    check_hull(&plate, &poly, 1);
    assert!(
        poly.vertices().iter().any(|v| v.z == 0.0) && poly.vertices().iter().any(|v| v.z == 1e-3)
    );
}

#[test]
fn a_million_points_and_coordinates_of_1e9() {
    let mut rng = Rng::new(3);
    let offset = DVec3::new(1e9, 1e9, -1e9);
    let pts: Vec<DVec3> = random_points(&mut rng, 1_000_000, 1e6, 0.0)
        .into_iter()
        .map(|p| p + offset)
        .collect();
    let poly = ConvexPolytope::from_points(&pts).unwrap();
    assert!(poly.num_vertices() > 100);
    check_hull(&pts, &poly, 997);
}

#[test]
fn degenerate_inputs_are_named_errors() {
    let p = |x: f64, y: f64, z: f64| DVec3::new(x, y, z);
    let cases: Vec<(Vec<DVec3>, &str)> = vec![
        (
            vec![p(0., 0., 0.), p(1., 0., 0.), p(0., 1., 0.)],
            "at least 4",
        ),
        (vec![p(1., 1., 1.); 10], "coincide"),
        (
            (0..10)
                .map(|i| p(f64::from(i), 2.0 * f64::from(i), 0.5))
                .collect(),
            "collinear",
        ),
        (
            (0..30)
                .map(|i| p(f64::from(i % 7), f64::from(i / 7), 3.0))
                .collect(),
            "coplanar",
        ),
        (
            vec![
                p(0., 0., 0.),
                p(1., 0., 0.),
                p(0., f64::NAN, 0.),
                p(0., 0., 1.),
            ],
            "not finite",
        ),
        (
            vec![
                p(0., 0., 0.),
                p(f64::INFINITY, 0., 0.),
                p(0., 1., 0.),
                p(0., 0., 1.),
            ],
            "not finite",
        ),
    ];
    for (pts, want) in cases {
        match convex_hull(&pts) {
            Err(Error::Geometry(m)) => assert!(m.contains(want), "`{m}` should say `{want}`"),
            other => panic!("expected a geometry error `{want}`, got {other:?}"),
        }
    }
}

/// Generator sizes past their limits are named errors whatever the number: an icosphere of
/// 40 or u32::MAX subdivisions (20·4^k triangles overflows any integer) and a torus whose
/// tube is wider than its ring say what was asked.
#[test]
fn oversized_generators_are_named_errors() {
    for k in [9, 40, u32::MAX] {
        match generators::icosphere(1.0, k) {
            Err(Error::Geometry(m)) => assert!(
                m.contains(&format!("subdivisions {k} > 8")) && m.contains(&format!("4^{k}")),
                "{m}"
            ),
            other => panic!("icosphere of {k} subdivisions: {other:?}"),
        }
    }
    match generators::torus(0.5, 1.0, 32, 16) {
        Err(Error::Geometry(m)) => assert!(m.contains("minor 1, major 0.5"), "{m}"),
        other => panic!("torus with minor > major: {other:?}"),
    }
}

#[test]
fn generators_have_the_analytic_counts() {
    let counts = |p: &ConvexPolytope| (p.num_vertices(), p.num_edges(), p.num_faces());
    assert_eq!(
        counts(&generators::cuboid(DVec3::new(1.0, 2.0, 3.0)).unwrap()),
        (8, 12, 6)
    );
    for n in [3u32, 8, 32] {
        let n_ = n as usize;
        assert_eq!(
            counts(&generators::cylinder(n, 1.0, 2.0).unwrap()),
            (2 * n_, 3 * n_, n_ + 2)
        );
        assert_eq!(
            counts(&generators::cone(n, 1.0, 2.0).unwrap()),
            (n_ + 1, 2 * n_, n_ + 1)
        );
    }
    for k in 0..4u32 {
        let s = generators::icosphere(2.0, k).unwrap();
        assert_eq!(s.num_faces(), 20 << (2 * k));
        assert!(
            s.vertices()
                .iter()
                .all(|v| (v.length() - 2.0).abs() < 1e-12)
        );
    }
    let torus = generators::torus(2.0, 0.5, 24, 12).unwrap();
    assert_eq!(torus.topology().euler_characteristic, 0);
    assert!(torus.non_convex_reason().unwrap().contains("not a sphere"));
    let bumpy = generators::bumpy_sphere(1.0, 3, 0.2, 5.0).unwrap();
    assert!(bumpy.non_convex_reason().unwrap().contains("concave"));
    let smooth = generators::icosphere_mesh(1.0, 2).unwrap();
    assert_eq!(smooth.non_convex_reason(), None);
    assert!(generators::cuboid(DVec3::new(1.0, 0.0, 1.0)).is_err());
    assert!(generators::cylinder(2, 1.0, 1.0).is_err());
    // A box thinner than the hull resolves says so, not only that its corners are
    // collinear or coplanar (which a user who wrote a box did not give); a box 2^-40 thin
    // and 1 across is within it and stays a box.
    for (h, shape) in [
        (DVec3::new(1e13, 1.0, 1.0), "collinear"),
        (DVec3::new(3.0, 2.0, 2f64.powi(-40)), "coplanar"),
    ] {
        let e = generators::cuboid(h).unwrap_err().to_string();
        assert!(
            e.contains("as thin as it is long") && e.contains("weld") && e.contains(shape),
            "{h}: {e}"
        );
    }
    let thin = generators::cuboid(DVec3::new(1.0, 1.0, 2f64.powi(-40))).unwrap();
    assert_eq!((thin.num_vertices(), thin.num_faces()), (8, 6));
}

#[test]
fn voronoi_regions_classify_points_like_brute_force() {
    let mut rng = Rng::new(4);
    let mut shapes = vec![
        generators::cuboid(DVec3::new(1.0, 0.5, 2.0)).unwrap(),
        generators::cylinder(7, 1.0, 0.5).unwrap(),
        generators::cone(5, 1.0, 1.0).unwrap(),
        generators::icosphere(1.0, 1).unwrap(),
    ];
    for k in [4usize, 12, 40] {
        shapes.push(generators::random_hull(&mut rng, k, 1.5).unwrap());
    }
    for (s, poly) in shapes.iter().enumerate() {
        let features: Vec<FeatureId> = poly.features().collect();
        for _ in 0..2000 {
            let x = rng.unit_vector() * rng.range(1.0, 6.0) * 2.0;
            if poly.face_normal(0).dot(x) <= poly.face_offset(0)
                && (0..poly.num_faces()).all(|f| poly.face_normal(f).dot(x) <= poly.face_offset(f))
            {
                continue; // inside
            }
            let (want, _, _) = closest_feature(poly, x);
            assert!(
                in_voronoi_region(poly, want, x, 1e-9),
                "shape {s}: {x:?} not in region of {want}"
            );
            for &g in &features {
                if g != want {
                    assert!(
                        !in_voronoi_region(poly, g, x, -1e-9),
                        "shape {s}: {x:?} is inside the regions of both {want} and {g}"
                    );
                }
            }
        }
    }
}

#[test]
fn voronoi_neighbours_are_adjacent_features() {
    let poly = generators::cylinder(6, 1.0, 1.0).unwrap();
    for feature in poly.features() {
        for plane in poly.voronoi_planes(feature) {
            assert!((plane.normal.length() - 1.0).abs() < 1e-12);
            let ok = match (feature, plane.neighbor) {
                (FeatureId::Vertex(v), FeatureId::Edge(e)) => {
                    poly.edge_vertices(e as usize).contains(&v)
                }
                (FeatureId::Edge(e), FeatureId::Vertex(v)) => {
                    poly.edge_vertices(e as usize).contains(&v)
                }
                (FeatureId::Edge(e), FeatureId::Face(f)) => {
                    poly.edge_faces(e as usize).contains(&f)
                }
                (FeatureId::Face(f), FeatureId::Edge(e)) => {
                    poly.edge_faces(e as usize).contains(&f)
                }
                _ => false,
            };
            assert!(ok, "{feature} lists {} as a neighbour", plane.neighbor);
        }
    }
}

#[test]
fn hill_climbing_support_matches_brute_force() {
    let mut rng = Rng::new(5);
    for k in [8usize, 20, 100, 2000] {
        let poly = generators::random_hull(&mut rng, k, 1.0).unwrap();
        for _ in 0..500 {
            let d = rng.unit_vector();
            let start = rng.below(poly.num_vertices() as u64) as u32;
            let (_, fast) = poly.support(d, start);
            let (_, slow) = poly.support_brute(d);
            assert_eq!(fast, slow, "k = {k}");
            // The scan-or-climb form: the same height, its vertex at that height.
            let (v, height) = poly.extreme(d, start);
            assert_eq!(height, slow, "k = {k}");
            assert_eq!(d.dot(poly.vertex(v)), height, "k = {k}");
        }
        // The climb's neighbour table: each vertex's neighbours are the other ends of its
        // edges, each once.
        let mut joined = vec![Vec::new(); poly.num_vertices()];
        for e in 0..poly.num_edges() {
            let [a, b] = poly.edge_vertices(e);
            joined[a as usize].push(b);
            joined[b as usize].push(a);
        }
        for (v, mut want) in joined.into_iter().enumerate() {
            let mut got = poly.neighbours(v).to_vec();
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "k = {k}, vertex {v}");
        }
    }
}

#[test]
fn gpu_bounds_contain_every_vertex() {
    let mut rng = Rng::new(6);
    for _ in 0..50 {
        let c = rng.point_in(DVec3::splat(-1e3), DVec3::splat(1e3));
        let radius = rng.range(1e-3, 1e2);
        let pts: Vec<DVec3> = random_points(&mut rng, 30, radius, 0.5)
            .into_iter()
            .map(|p| p + c)
            .collect();
        let poly = ConvexPolytope::from_points(&pts).unwrap();
        let b = poly.gpu_bounds();
        let center = glam::Vec3::from_array(b.center).as_dvec3();
        let half = glam::Vec3::from_array(b.half_extents).as_dvec3();
        for v in poly.vertices() {
            assert!(
                ((*v - center).abs() - half).max_element() <= 0.0,
                "{v:?} outside the box"
            );
            assert!(
                v.distance(center) <= f64::from(b.radius),
                "{v:?} outside the sphere"
            );
        }
    }
}

#[test]
fn hull_support_matches_parry() {
    use parry3d_f64::transformation::convex_hull as parry_hull;
    let mut rng = Rng::new(7);
    for k in [10usize, 100, 1000] {
        let pts = random_points(&mut rng, k, 2.0, 0.3);
        let ours = ConvexPolytope::from_points(&pts).unwrap();
        let (theirs, _) = parry_hull(&pts);
        for _ in 0..300 {
            let d = rng.unit_vector();
            let a = ours.support_brute(d).1;
            let b = theirs
                .iter()
                .map(|p| d.dot(*p))
                .fold(f64::NEG_INFINITY, f64::max);
            assert!((a - b).abs() < 1e-12, "k = {k}: {a} vs parry {b}");
        }
    }
}

#[test]
fn from_faces_rejects_open_and_non_convex_surfaces() {
    let cube = generators::cuboid(DVec3::ONE).unwrap();
    let faces: Vec<Vec<u32>> = (0..6).map(|f| cube.face_vertices(f).collect()).collect();
    let err = ConvexPolytope::from_faces(cube.vertices().to_vec(), &faces[..5]).unwrap_err();
    assert!(err.to_string().contains("open"), "{err}");
    // Push one vertex inward: the faces around it stop being planar / convex.
    let mut dented = cube.vertices().to_vec();
    dented[0] *= 0.5;
    assert!(ConvexPolytope::from_faces(dented, &faces).is_err());
}

#[test]
fn hulls_are_numbered_the_same_every_time() {
    // Feature numbers are part of query answers: no hash seed may change them.
    let pts = random_points(&mut Rng::new(8), 500, 1.0, 0.7);
    let faces = |p: &ConvexPolytope| -> Vec<Vec<u32>> {
        (0..p.num_faces())
            .map(|f| p.face_vertices(f).collect())
            .collect()
    };
    let first = ConvexPolytope::from_points(&pts).unwrap();
    for _ in 0..5 {
        let again = ConvexPolytope::from_points(&pts).unwrap();
        assert_eq!(first.vertices(), again.vertices());
        assert_eq!(faces(&first), faces(&again));
    }
}

/// `inv_mul` against composing the transforms point by point (the oracle: two
/// `transform_point` calls and one inverse), over random poses and points.
#[test]
fn pose_inv_mul_is_the_relative_pose() {
    use proxima::bodies::Pose;
    let mut rng = Rng::new(5);
    for _ in 0..1000 {
        let a = Pose::new(
            rng.point_in(DVec3::splat(-50.0), DVec3::splat(50.0)),
            rng.rotation(),
        );
        let b = Pose::new(
            rng.point_in(DVec3::splat(-50.0), DVec3::splat(50.0)),
            rng.rotation(),
        );
        let x = rng.point_in(DVec3::splat(-3.0), DVec3::splat(3.0));
        let relative = a.inv_mul(&b);
        let via_world = a.inverse_transform_point(b.transform_point(x));
        assert!(
            relative.transform_point(x).distance(via_world) < 1e-12,
            "{a:?} {b:?}"
        );
        assert!(a.inverse_transform_point(a.transform_point(x)).distance(x) < 1e-12);
        assert!(
            Pose::IDENTITY
                .inv_mul(&b)
                .transform_point(x)
                .distance(b.transform_point(x))
                < 1e-12
        );
    }
}

/// Every face once, each after a face it shares an edge with, and mostly right after
/// one (depth first: a loop carrying a support vertex from face to face climbs little;
/// breadth first put 12% of a 2,048-point hull's faces right after a neighbour).
#[test]
fn face_order_visits_every_face_once_each_after_a_neighbour() {
    use proxima::geometry::generators::{cuboid, icosphere, random_hull};
    let mut rng = Rng::new(3);
    for p in [
        cuboid(DVec3::new(1.0, 0.1, 2.0)).unwrap(),
        icosphere(1.0, 3).unwrap(),
        random_hull(&mut rng, 500, 1.0).unwrap(),
        random_hull(&mut rng, 2048, 1.0).unwrap(),
    ] {
        let order = p.face_order();
        let neighbours = |f: u32, g: u32| {
            p.face_half_edges(f as usize)
                .iter()
                .any(|&h| p.half_edge_face(h ^ 1) == g)
        };
        let right_after = order.windows(2).filter(|w| neighbours(w[0], w[1])).count();
        assert!(
            right_after * 5 >= (order.len() - 1) * 4,
            "{right_after} of {} faces right after a neighbour",
            order.len()
        );
        let mut seen = vec![false; p.num_faces()];
        for (k, &f) in order.iter().enumerate() {
            assert!(!seen[f as usize], "face {f} twice");
            seen[f as usize] = true;
            if k > 0 {
                // Some face already visited shares an edge with f.
                let touches_seen = p.face_half_edges(f as usize).iter().any(|&h| {
                    seen[p.half_edge_face(h ^ 1) as usize] && p.half_edge_face(h ^ 1) != f
                });
                assert!(touches_seen, "face {f} at {k} follows no neighbour");
            }
        }
        assert!(seen.iter().all(|&s| s), "a face is missing");
    }
}

/// A face's support along its own normal is a vertex of the face, at the face's offset
/// to the last bit, and no vertex of the body is higher (beyond rounding).
#[test]
fn a_face_supports_its_body_along_its_normal() {
    use proxima::geometry::generators::{cuboid, cylinder, icosphere, random_hull};
    let mut rng = Rng::new(17);
    let mut bodies = vec![
        cuboid(DVec3::new(1.0, 0.1, 2.0)).unwrap(),
        icosphere(1.0, 3).unwrap(),
        cylinder(24, 0.5, 2.0).unwrap(),
    ];
    for scale in [1e-6, 1.0, 1e6] {
        bodies.push(random_hull(&mut rng, 200, scale).unwrap());
    }
    for p in &bodies {
        for f in 0..p.num_faces() {
            let (v, h) = p.face_support(f);
            assert_eq!(h.to_bits(), p.face_offset(f).to_bits(), "face {f}");
            assert!(
                p.face_vertices(f).any(|w| w == v),
                "face {f}: vertex {v} not on it"
            );
            let (_, top) = p.support_brute(p.face_normal(f));
            assert!(top - h <= 1e-12 * p.reach(), "face {f}: {top} above {h}");
        }
    }
}

/// Points a few ulps apart (the same corner computed twice, as where a mesh was cut into
/// pieces) are welded: the hull keeps one, so it has no edge of length 1e-16 whose
/// Voronoi planes point wherever rounding sends them. The walk between such hulls then
/// never fails, and agrees with enumeration.
#[test]
fn near_duplicate_points_are_welded() {
    let mut rng = Rng::new(21);
    let base = random_points(&mut rng, 60, 1.0, 0.3);
    let mut points = base.clone();
    for p in &base {
        for k in 1..4 {
            let jitter = rng.unit_vector() * (f64::from(k) * 1e-16);
            points.push(*p + jitter);
        }
    }
    let poly = ConvexPolytope::from_points(&points).unwrap();
    let alone = ConvexPolytope::from_points(&base).unwrap();
    assert_eq!(poly.num_vertices(), alone.num_vertices());
    let shortest = (0..poly.num_edges())
        .map(|e| {
            let [a, b] = poly.edge_vertices(e);
            poly.vertex(a).distance(poly.vertex(b))
        })
        .fold(f64::INFINITY, f64::min);
    assert!(shortest > 1e-6, "shortest edge {shortest:e}");
    for _ in 0..200 {
        let pose_a = proxima::bodies::Pose::new(DVec3::ZERO, rng.rotation());
        let pose_b = proxima::bodies::Pose::new(rng.unit_vector() * 2.5, rng.rotation());
        let w = proxima::exact::walk::walk(&proxima::exact::walk::WalkInput::new(
            &poly, pose_a, &poly, pose_b,
        ));
        assert!(
            !matches!(w.state, proxima::exact::walk::WalkState::Failed(_)),
            "{w:?}"
        );
        if w.state == proxima::exact::walk::WalkState::Separated {
            let c = proxima::geometry::brute::polytope_closest_pair(&poly, &pose_a, &poly, &pose_b);
            assert!((w.distance - c.distance).abs() < 1e-12, "{w:?} vs {c:?}");
        }
    }
}

/// An edge's Gauss arc bounds a linear function over it exactly: `GaussArc::min` equals
/// the least of u·v over 4,001 points spread along the arc (it may only be lower, by
/// the samples' spacing), on random and nearly (anti)parallel ends, up to the samples'
/// own rounding.
#[test]
fn gauss_arcs_give_the_least_of_a_linear_function() {
    use proxima::geometry::polytope::GaussArc;
    let mut rng = Rng::new(31);
    for case in 0..3000 {
        let n0 = rng.unit_vector();
        let n1 = match case % 3 {
            0 => rng.unit_vector(),
            1 => (n0 + rng.unit_vector() * 1e-3).normalize(),
            _ => (-n0 + rng.unit_vector() * 0.05).normalize(),
        };
        let v = rng.unit_vector() * rng.range(0.1, 10.0);
        let arc = GaussArc::new(n0, n1);
        let angle = n0.angle_between(n1);
        let axis = n0.cross(n1).normalize_or_zero();
        let sampled = (0..=4000)
            .map(|k| {
                let t = f64::from(k) / 4000.0;
                let u = if axis == DVec3::ZERO {
                    if t < 0.5 { n0 } else { n1 }
                } else {
                    DQuat::from_axis_angle(axis, angle * t) * n0
                };
                u.dot(v)
            })
            .fold(f64::INFINITY, f64::min);
        let got = arc.min(v);
        let spacing = angle / 4000.0;
        assert!(
            // The sampled points carry the rounding of the angle (acos near 1).
            got <= sampled + 1e-9 * v.length()
                && got >= sampled - v.length() * (spacing * spacing + 1e-9),
            "case {case}: {got} vs sampled {sampled}"
        );
    }
}

/// The closest point of a triangle against a dense sampling of it (barycentric grid of
/// 200 steps a side: no sample is nearer than the answer, which lies in the triangle and is
/// within a grid step of the nearest sample), on random, long thin and nearly degenerate
/// triangles with points on every side.
#[test]
fn closest_points_on_triangles_match_sampling() {
    use proxima::geometry::closest::closest_on_triangle;
    let mut rng = Rng::new(0x7a1);
    for case in 0..300 {
        let a = rng.unit_vector();
        let (b, c) = match case % 3 {
            0 => (rng.unit_vector(), rng.unit_vector()),
            // Long and thin.
            1 => {
                let b = a + rng.unit_vector() * 3.0;
                (b, 0.5 * (a + b) + rng.unit_vector() * 1e-3)
            }
            // Nearly degenerate: c almost on ab.
            _ => {
                let b = rng.unit_vector();
                (
                    b,
                    a + (b - a) * rng.range(0.1, 0.9) + rng.unit_vector() * 1e-7,
                )
            }
        };
        let p = rng.unit_vector() * rng.range(0.0, 2.0);
        let q = closest_on_triangle(p, a, b, c);
        let steps = 200;
        let mut nearest = f64::INFINITY;
        for i in 0..=steps {
            for j in 0..=steps - i {
                let (u, v) = (
                    f64::from(i) / f64::from(steps),
                    f64::from(j) / f64::from(steps),
                );
                nearest = nearest.min(p.distance(a + (b - a) * u + (c - a) * v));
            }
        }
        let step = (b - a).length().max((c - a).length()) / f64::from(steps);
        let d = p.distance(q);
        assert!(
            d <= nearest + 1e-12,
            "case {case}: {d} above the sampled {nearest}"
        );
        assert!(
            d >= nearest - step,
            "case {case}: {d} far below the sampled {nearest}"
        );
        // The answer lies in the plane of a well-shaped triangle, inside it.
        let n = (b - a).cross(c - a);
        if n.length() > 1e-3 {
            let n = n.normalize();
            assert!(n.dot(q - a).abs() <= 1e-12, "case {case}: off the plane");
            for (x, y) in [(a, b), (b, c), (c, a)] {
                assert!(
                    n.dot((y - x).cross(q - x)) >= -1e-12,
                    "case {case}: outside an edge"
                );
            }
        }
    }
}

/// A cylinder of the most sides a scene or a query may ask for builds whole: its two rings
/// of points made the hull join them by long fans (quadratic: 65,536 sides took 12 GB and
/// 49 s, past what a test machine gives). Oracle: the prism's own faces, edges and
/// vertices.
#[test]
fn a_cylinder_of_the_most_sides_builds_whole() {
    use proxima::geometry::generators::{MAX_SIDES, cylinder};
    let n = MAX_SIDES as usize;
    let c = cylinder(MAX_SIDES, 1.0, 1.0).unwrap();
    assert_eq!(c.num_vertices(), 2 * n);
    assert_eq!(c.num_faces(), n + 2);
    assert_eq!(c.num_edges(), 3 * n);
    assert!(
        cylinder(MAX_SIDES + 1, 1.0, 1.0)
            .unwrap_err()
            .to_string()
            .contains("sides")
    );
}
