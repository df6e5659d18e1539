//! Queries: the exact separating-axis `collide` against analytic cases and parry3d-f64, and
//! the JSON Lines driver (order, errors that name the problem).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::sat::{AxisSource, max_separation};
use proxima::geometry::decompose::Cache;
use proxima::geometry::generators;
use proxima::query::QueryEngine;
use proxima::rng::Rng;
use serde_json::Value;

fn at(x: f64, y: f64, z: f64, q: DQuat) -> Pose {
    Pose {
        translation: DVec3::new(x, y, z),
        rotation: q,
    }
}

#[test]
fn analytic_box_cases() {
    let cube = generators::cuboid(DVec3::ONE).unwrap();
    let id = Pose::default();
    // Face to face: gap = x − 2.
    for (x, want) in [(2.5, 0.5), (2.0, 0.0), (1.5, -0.5)] {
        let s = max_separation(&cube, &id, &cube, &at(x, 0.3, -0.2, DQuat::IDENTITY));
        assert!((s.distance - want).abs() < 1e-12, "x = {x}: {s:?}");
        assert!((s.axis - DVec3::X).length() < 1e-12);
    }
    // Vertex to face: B turned so a corner points at A's +x face; corner reach √3.
    let q = DQuat::from_rotation_arc(DVec3::new(-1.0, -1.0, -1.0).normalize(), -DVec3::X);
    let s = max_separation(
        &cube,
        &id,
        &cube,
        &at(1.0 + 3f64.sqrt() + 0.25, 0.0, 0.0, q),
    );
    assert!((s.distance - 0.25).abs() < 1e-12, "{s:?}");
    // Edge to edge: A turned 45° about z reaches x = √2 with an edge along z; B turned 45°
    // about y reaches back to c − √2 with an edge along y. Gap c − 2√2, on an edge axis.
    let qa = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4);
    let qb = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_4);
    for delta in [0.3, 1e-9, -1e-9, -0.3] {
        let c = 2.0 * 2f64.sqrt() + delta;
        let s = max_separation(&cube, &at(0.0, 0.0, 0.0, qa), &cube, &at(c, 0.0, 0.0, qb));
        assert!((s.distance - delta).abs() < 1e-12, "delta {delta}: {s:?}");
        assert!(
            matches!(s.source, AxisSource::Edges(..)),
            "delta {delta}: {s:?}"
        );
    }
    // Identical bodies at identical poses overlap by their full width.
    let s = max_separation(&cube, &id, &cube, &id);
    assert!((s.distance + 2.0).abs() < 1e-12, "{s:?}");
}

/// The largest gap between the bodies' projections over every face normal and every
/// cross product of an edge of A with an edge of B (whether or not their Gauss arcs
/// cross), each projection taken over every vertex, and the gap along `axis` (from A to
/// B): the oracle for the separating-axis test, which tries only the edge pairs that span
/// a facet of the Minkowski difference.
fn brute_separation(
    a: &proxima::geometry::ConvexPolytope,
    pa: &Pose,
    b: &proxima::geometry::ConvexPolytope,
    pb: &Pose,
    axis: DVec3,
) -> (f64, f64) {
    let world = |p: &proxima::geometry::ConvexPolytope, pose: &Pose| -> Vec<DVec3> {
        p.vertices()
            .iter()
            .map(|v| pose.rotation * *v + pose.translation)
            .collect()
    };
    let (va, vb) = (world(a, pa), world(b, pb));
    let gap = |n: DVec3| {
        let top_a = va.iter().map(|v| v.dot(n)).fold(f64::MIN, f64::max);
        let low_b = vb.iter().map(|v| v.dot(n)).fold(f64::MAX, f64::min);
        let top_b = vb.iter().map(|v| v.dot(n)).fold(f64::MIN, f64::max);
        let low_a = va.iter().map(|v| v.dot(n)).fold(f64::MAX, f64::min);
        (low_b - top_a, low_a - top_b)
    };
    let mut axes: Vec<DVec3> = (0..a.num_faces())
        .map(|f| pa.rotation * a.face_normal(f))
        .chain((0..b.num_faces()).map(|f| pb.rotation * b.face_normal(f)))
        .collect();
    for ea in 0..a.num_edges() {
        let [a0, a1] = a.edge_vertices(ea);
        let da = pa.rotation * (a.vertex(a1) - a.vertex(a0));
        for eb in 0..b.num_edges() {
            let [b0, b1] = b.edge_vertices(eb);
            let db = pb.rotation * (b.vertex(b1) - b.vertex(b0));
            if let Some(n) = da.cross(db).try_normalize() {
                axes.push(n);
            }
        }
    }
    let most = axes
        .into_iter()
        .map(|n| {
            let (ahead, behind) = gap(n);
            ahead.max(behind)
        })
        .fold(f64::MIN, f64::max);
    (most, gap(axis).0)
}

#[test]
fn the_separating_axis_test_equals_every_axis_tried() {
    // Small bodies (their faces' gaps by a scan of every vertex), larger ones (by climbing,
    // and more than 64 edges of B: the crossing tests run 64 at a time), crates at one
    // point, touching and quarter-turned, and bodies apart.
    let mut rng = Rng::new(33);
    let quarter = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
    let crate_ = generators::cuboid(DVec3::splat(0.5)).unwrap();
    for k in 0..1500 {
        let (a, b) = match k % 5 {
            0 => (crate_.clone(), crate_.clone()),
            1 => (
                generators::random_hull(&mut rng, 8, 1.0).unwrap(),
                generators::random_hull(&mut rng, 8, 0.7).unwrap(),
            ),
            2 => (
                generators::random_hull(&mut rng, 20, 1.0).unwrap(),
                crate_.clone(),
            ),
            3 => (
                generators::cylinder(24, 0.5, 1.0).unwrap(),
                generators::random_hull(&mut rng, 60, 0.8).unwrap(),
            ),
            _ => (
                generators::random_hull(&mut rng, 40, 1.0).unwrap(),
                generators::random_hull(&mut rng, 40, 1.0).unwrap(),
            ),
        };
        let (pa, pb) = match k % 3 {
            // One point.
            0 => (
                at(0.0, 0.0, 0.0, rng.rotation()),
                at(0.0, 0.0, 0.0, rng.rotation()),
            ),
            // A grid: identity and quarter turns, touching or a hair apart.
            1 => {
                let q = if rng.below(2) == 0 {
                    quarter
                } else {
                    DQuat::IDENTITY
                };
                let x = [1.0, 1.0 - 1e-12, 1.0 + 1e-12, 0.5][rng.below(4) as usize];
                (at(0.0, 0.0, 0.0, DQuat::IDENTITY), at(x, 0.25, 0.0, q))
            }
            _ => {
                let d = rng.unit_vector() * rng.range(0.0, 3.0);
                (
                    at(0.3, -0.2, 0.1, rng.rotation()),
                    at(d.x, d.y, d.z, rng.rotation()),
                )
            }
        };
        assert_every_axis_agrees(k, (&a, &pa), (&b, &pb));
    }
}

/// The separating-axis test against [`brute_separation`] on one pair.
fn assert_every_axis_agrees(
    k: usize,
    (a, pa): (&proxima::geometry::ConvexPolytope, &Pose),
    (b, pb): (&proxima::geometry::ConvexPolytope, &Pose),
) {
    let ours = max_separation(a, pa, b, pb);
    let (truth, along) = brute_separation(a, pa, b, pb, ours.axis);
    if truth <= 0.0 {
        // Overlapping or touching: the least overlap is along a facet's normal of the
        // Minkowski difference, a candidate of the test.
        assert!(
            (ours.distance - truth).abs() <= 1e-12,
            "case {k}: the test says {}, every axis {truth}",
            ours.distance
        );
    } else {
        // Apart: some candidate separates them (the theorem), by what its axis shows;
        // the closest direction need not be a facet's normal, so more axes can show more.
        assert!(
            ours.distance > 0.0 && ours.distance <= truth + 1e-12,
            "case {k}: the test says {}, every axis {truth}",
            ours.distance
        );
    }
    assert!(
        (ours.distance - along).abs() <= 1e-12,
        "case {k}: the test says {} along its axis, the projections {along}",
        ours.distance
    );
}

#[test]
fn the_separating_axis_test_on_large_bodies_equals_every_axis_tried() {
    // Past 16,384 edge pairs the test pairs the edges whose Gauss arcs can cross on a grid
    // of their boxes (two icospheres of 10,242 vertices overlapping by rounding took 4.1 s
    // over every pair): round bodies (short arcs, a few to a cell), cylinders and crates
    // (right-angled arcs, whose boxes span half the grid and are tried against every
    // arc), round bodies resting pole to pole a hair into each other, at one point, and
    // apart.
    let mut rng = Rng::new(36);
    let ball = generators::icosphere(1.0, 2).unwrap();
    let fine_ball = generators::icosphere(0.7, 3).unwrap();
    let drum = generators::cylinder(64, 0.8, 0.6).unwrap();
    let crate_ = generators::cuboid(DVec3::new(0.9, 0.5, 0.3)).unwrap();
    let (mut large, mut overlapping) = (0, 0);
    for k in 0..48 {
        let (a, b) = match k % 4 {
            0 => (ball.clone(), ball.clone()),
            1 => (ball.clone(), drum.clone()),
            2 => (
                drum.clone(),
                generators::random_hull(&mut rng, 200, 1.0).unwrap(),
            ),
            _ => (crate_.clone(), fine_ball.clone()),
        };
        large += usize::from(a.num_edges() * b.num_edges() > 16_384);
        let (pa, pb) = match k % 3 {
            0 => {
                // Pole to pole along z, a hair apart or into each other.
                let top = a.vertices().iter().map(|v| v.z).fold(f64::MIN, f64::max);
                let low = b.vertices().iter().map(|v| v.z).fold(f64::MAX, f64::min);
                let hair = [1e-15, 0.0, -1e-15, -1e-12, -1e-6][rng.below(5) as usize];
                (
                    at(0.0, 0.0, 0.0, DQuat::IDENTITY),
                    at(0.0, 0.0, top - low + hair, DQuat::IDENTITY),
                )
            }
            1 => (
                at(0.0, 0.0, 0.0, rng.rotation()),
                at(0.0, 0.0, 0.0, rng.rotation()),
            ),
            _ => {
                let d = rng.unit_vector() * rng.range(1.0, 2.5);
                (
                    at(0.1, 0.2, -0.3, rng.rotation()),
                    at(d.x, d.y, d.z, rng.rotation()),
                )
            }
        };
        overlapping += usize::from(max_separation(&a, &pa, &b, &pb).distance <= 0.0);
        assert_every_axis_agrees(k, (&a, &pa), (&b, &pb));
    }
    assert_eq!(
        large, 48,
        "every pair has more edge pairs than the grid's threshold"
    );
    assert!(overlapping >= 24, "{overlapping} of 48 pairs overlap");
}

#[test]
fn collide_agrees_with_parry_on_random_pairs() {
    use parry3d_f64::query::{distance, intersection_test};
    let mut rng = Rng::new(21);
    let (mut pairs, mut hits, mut compared) = (0, 0, 0);
    while pairs < 3000 {
        let ka = 4 + rng.below(197) as usize;
        let kb = 4 + rng.below(197) as usize;
        let (ra, rb) = (rng.range(0.2, 2.0), rng.range(0.2, 2.0));
        let a = generators::random_hull(&mut rng, ka, ra).unwrap();
        let b = generators::random_hull(&mut rng, kb, rb).unwrap();
        let pa = at(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.rotation(),
        );
        let reach = a.vertices().iter().map(|v| v.length()).fold(0.0, f64::max)
            + b.vertices().iter().map(|v| v.length()).fold(0.0, f64::max);
        let pb_t = pa.translation + rng.unit_vector() * rng.range(0.0, 1.5 * reach);
        let pb = at(pb_t.x, pb_t.y, pb_t.z, rng.rotation());
        pairs += 1;
        let sep = max_separation(&a, &pa, &b, &pb);
        let (ga, gb) = (common::to_parry(&a), common::to_parry(&b));
        let (qa, qb) = (common::parry_pose(&pa), common::parry_pose(&pb));
        // parry says "intersecting" up to ~6e-8 of separation: compare outside that band.
        if sep.distance.abs() > 1e-6 {
            compared += 1;
            let theirs = intersection_test(&qa, &ga, &qb, &gb).unwrap().intersecting;
            assert_eq!(
                sep.distance <= 0.0,
                theirs,
                "pair {pairs}: separation {}",
                sep.distance
            );
        }
        if sep.distance <= 0.0 {
            hits += 1;
        } else {
            // A separating axis bounds the distance from below.
            let d = distance(&qa, &ga, &qb, &gb).unwrap().distance;
            assert!(
                d >= sep.distance - 1e-9,
                "pair {pairs}: distance {d} < axis gap {}",
                sep.distance
            );
        }
    }
    assert!(
        hits > 500 && hits < 2500,
        "{hits} of {pairs} intersect: the sample is lopsided"
    );
    assert!(compared > 2900, "{compared}");
}

fn answers(input: &str) -> Vec<Value> {
    answers_to_bytes(input.as_bytes())
}

#[test]
fn a_quaternion_written_to_four_decimals_reads_as_its_rotation() {
    // A box turned a quarter about z, written by hand and exactly, beside a box it nearly
    // touches at its turned long side: the answers agree to the writing's precision, and a
    // quaternion that is no rotation stays an error.
    let line = |id: u32, q: &str| {
        format!(
            r#"{{"id": {id}, "query": "distance", "a": {{"box": [2,0.5,0.5]}}, "pose_a": {{"rotation": {q}}}, "b": {{"box": [0.5,0.5,0.5]}}, "pose_b": {{"translation": [0, 2.6, 0]}}}}"#
        )
    };
    let exact = format!("[0, 0, {s}, {s}]", s = std::f64::consts::FRAC_1_SQRT_2);
    let input = [
        line(1, &exact),
        line(2, "[0, 0, 0.7071, 0.7071]"),
        line(3, "[0, 0, 0.7, 0.7]"),
    ]
    .join("\n");
    let a = answers(&input);
    let distance = |v: &Value| v["distance"].as_f64().unwrap_or_else(|| panic!("{v}"));
    // The turned box reaches y = 2, the other box starts at 2.1.
    assert!((distance(&a[0]) - 0.1).abs() < 1e-12, "{}", a[0]);
    assert!((distance(&a[1]) - 0.1).abs() < 1e-4, "{}", a[1]);
    let e = a[2]["error"].as_str().unwrap_or_else(|| panic!("{}", a[2]));
    assert!(e.contains("not a unit quaternion"), "{e}");
}

#[test]
fn jsonl_answers_in_order_and_bad_lines_do_not_stop_the_batch() {
    let input = r#"{"id": 1, "query": "collide", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [2.5, 0, 0]}}
{"id": "two", "query": "collide", "a": {"box": [1,1,1]}, "b": {"icosphere": {"radius": 1, "subdivisions": 2}}, "pose_b": {"translation": [1.9, 0, 0], "rotation": [0, 0, 0.7071067811865476, 0.7071067811865476]}}
this is not json

{"id": 4, "query": "collide", "a": {"points": [[0,0,0],[1,0,0],[0,1,0]]}, "b": {"box": [1,1,1]}}
{"id": 5, "query": "collide", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_a": {"rotation": [0, 0, 0, 2]}}
{"id": 6, "query": "toi", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}}
{"id": 7, "query": "explode", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}}
{"id": 8, "query": "collide", "a": {"blob": 1}, "b": {"box": [1,1,1]}}
{"id": [9], "query": "collide", "a": {"points": [[0,0,0],[1,0,0],[0,1,0],[0,0,1]]}, "b": {"box": [0.1,0.1,0.1]}, "pose_b": {"translation": [0.2, 0.2, 0.2]}}
{"id": 10, "query": "collide", "a": {"capsule": {"r": 1}}, "b": {"box": [1,1,1]}}
"#;
    let a = answers(input);
    assert_eq!(a.len(), 10, "one answer per non-blank line: {a:?}");
    assert_eq!(a[0], serde_json::json!({"id": 1, "intersecting": false}));
    assert_eq!(a[1], serde_json::json!({"id": "two", "intersecting": true}));
    assert_eq!(a[2]["id"], Value::Null);
    assert!(a[2]["error"].as_str().unwrap().contains("invalid JSON"));
    assert!(
        a[3]["error"].as_str().unwrap().contains("at least 4"),
        "{}",
        a[3]
    );
    assert!(
        a[4]["error"]
            .as_str()
            .unwrap()
            .contains("not a unit quaternion"),
        "{}",
        a[4]
    );
    // No end poses: both stand still at the identity, where the boxes overlap.
    assert_eq!(a[5]["hit"], true, "{}", a[5]);
    assert_eq!(a[5]["toi"], 0.0, "{}", a[5]);
    assert_eq!(a[5]["overlapping"], true, "{}", a[5]);
    assert!(
        a[6]["error"]
            .as_str()
            .unwrap()
            .contains("unknown query `explode`"),
        "{}",
        a[6]
    );
    assert!(
        a[7]["error"]
            .as_str()
            .unwrap()
            .contains("unknown variant `blob`"),
        "{}",
        a[7]
    );
    assert_eq!(a[8], serde_json::json!({"id": [9], "intersecting": true}));
    // A known shape written wrong: its name and the form it takes.
    let e = a[9]["error"].as_str().unwrap();
    assert!(
        e.contains("`capsule` takes { half_height, radius }") && e.contains("unknown field `r`"),
        "{e}"
    );
    for (k, ans) in a.iter().enumerate() {
        let answered = ans.get("intersecting").is_some() || ans.get("hit").is_some();
        assert!(answered ^ ans.get("error").is_some(), "line {k}: {ans}");
    }
    // A key given twice, at the top or inside a shape, is an error at its place (the last
    // was taken and the first dropped without a word); the id is echoed exactly up to
    // 64 bits.
    let twice = answers(
        r#"{"id": 1, "query": "collide", "query": "distance", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}}
{"id": 2, "query": "distance", "a": {"sphere": {"radius": 1, "radius": 2}}, "b": {"box": [1,1,1]}}
{"id": 18446744073709551615, "query": "collide", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}}
{"id": -9223372036854775808, "query": "collide", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}}"#,
    );
    for (k, key) in [(0, "query"), (1, "radius")] {
        let e = twice[k]["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", twice[k]));
        assert!(
            e.contains(&format!("line {}, column", k + 1))
                && e.contains(&format!("`{key}` is given twice")),
            "{e}"
        );
    }
    assert_eq!(twice[2]["id"].as_u64(), Some(u64::MAX), "{}", twice[2]);
    assert_eq!(twice[3]["id"].as_i64(), Some(i64::MIN), "{}", twice[3]);
}

#[test]
fn obj_shapes_load_once_and_non_convex_ones_are_refused() {
    let dir = std::env::temp_dir().join(format!("proxima-query-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tetra = dir.join("tetra.obj");
    std::fs::write(
        &tetra,
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
    )
    .unwrap();
    let open = dir.join("open.obj");
    std::fs::write(
        &open,
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\n",
    )
    .unwrap();
    let input = format!(
        "{{\"id\":1,\"query\":\"collide\",\"a\":{{\"obj\":{t:?}}},\"b\":{{\"box\":[0.1,0.1,0.1]}},\"pose_b\":{{\"translation\":[0.1,0.1,0.1]}}}}\n\
         {{\"id\":2,\"query\":\"collide\",\"a\":{{\"obj\":{t:?}}},\"b\":{{\"box\":[0.1,0.1,0.1]}},\"pose_b\":{{\"translation\":[1,1,1]}}}}\n\
         {{\"id\":3,\"query\":\"collide\",\"a\":{{\"obj\":{o:?}}},\"b\":{{\"box\":[1,1,1]}}}}\n",
        t = tetra.display().to_string(),
        o = open.display().to_string()
    );
    let a = answers(&input);
    assert_eq!(a[0]["intersecting"], true);
    assert_eq!(a[1]["intersecting"], false);
    assert!(
        a[2]["error"].as_str().unwrap().contains("not convex"),
        "{}",
        a[2]
    );
    // The same file under another spelling of its path is the same shape, built once.
    let mut engine = engine();
    let respelt = dir.join(".").join("tetra.obj");
    for path in [&tetra, &respelt] {
        let line = format!(
            "{{\"id\":1,\"query\":\"collide\",\"a\":{{\"obj\":{:?}}},\"b\":{{\"box\":[1,1,1]}}}}",
            path.display().to_string()
        );
        assert_eq!(engine.answer_line(&line)["intersecting"], true);
    }
    assert_eq!(engine.kept_shapes(), 2);
}

#[test]
fn the_binary_reads_stdin() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_proxima"))
        .arg("query")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"id\":7,\"query\":\"collide\",\"a\":{\"box\":[1,1,1]},\"b\":{\"box\":[1,1,1]}}\n{\"id\":8}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    // Every line is answered; one was an error, so the exit status says so.
    assert!(!out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], r#"{"id":7,"intersecting":true}"#);
    assert!(
        lines[1].contains("\"error\"") && lines[1].contains("missing `query`"),
        "{}",
        lines[1]
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 of 2 lines"));
}

#[test]
fn distance_answers_with_points_and_features_that_round_trip() {
    use proxima::exact::walk::{WalkInput, walk};
    let input = r#"{"id": "d", "query": "distance", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [3.1, 0.25, -0.125], "rotation": [0, 0, 0.25881904510252074, 0.9659258262890683]}}
{"id": "o", "query": "distance", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [1.5, 0, 0]}}
"#;
    let a = answers(input);
    // Oracle for the first line: the same walk, and brute force for the value.
    let cube = generators::cuboid(DVec3::ONE).unwrap();
    // The query normalises the rotation it reads; do the same for the oracle's pose.
    let q = DQuat::from_xyzw(0.0, 0.0, 0.258_819_045_102_520_74, 0.965_925_826_289_068_3);
    let pb = at(3.1, 0.25, -0.125, q / q.length());
    let w = walk(&WalkInput::new(&cube, Pose::default(), &cube, pb));
    let (brute, _, _) =
        proxima::geometry::brute::polytope_distance(&cube, &Pose::default(), &cube, &pb);
    let d = a[0]["distance"].as_f64().unwrap();
    assert_eq!(
        d.to_bits(),
        w.distance.to_bits(),
        "the printed distance reads back exactly"
    );
    assert!((d - brute).abs() < 1e-12, "{d} vs {brute}");
    let pa: Vec<f64> = a[0]["point_a"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(pa, w.point_a.to_array().to_vec());
    assert_eq!(a[0]["feature_a"], w.features.0.to_string());
    assert_eq!(a[0]["feature_b"], w.features.1.to_string());
    let keys: Vec<&String> = a[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "distance",
            "point_a",
            "point_b",
            "feature_a",
            "feature_b"
        ]
    );
    assert_eq!(
        a[1],
        serde_json::json!({"id": "o", "distance": 0.0, "intersecting": true})
    );
}

/// A query engine whose decompositions live in the build's scratch folder.
fn engine() -> QueryEngine {
    QueryEngine::new().with_cache(Cache::At(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"),
    ))
}

/// Answers to raw bytes: every answer line must be JSON.
fn answers_to_bytes(input: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    engine().run(input, &mut out).unwrap();
    parse_answers(out)
}

/// One JSON value per line of a batch's output.
fn parse_answers(out: Vec<u8>) -> Vec<Value> {
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Shapes are built once a batch and kept, within a bound: 6,000 lines over 5,000
/// distinct boxes (each fifth asked once more after the next) against a unit box answer
/// as the analytic distances say, and no more than 4,096 shapes are kept however many go by.
#[test]
fn a_batch_keeps_its_shapes_within_a_bound() {
    let mut engine = engine();
    let unit = r#"{"box": [1, 1, 1]}"#;
    let line = |k: usize| {
        let h = 0.5 + k as f64 * 1e-4;
        format!(
            r#"{{"id": {k}, "query": "distance", "a": {{"box": [{h}, {h}, {h}]}}, "b": {unit}, "pose_b": {{"translation": [10, 0, 0]}}}}"#
        )
    };
    let mut most = 0;
    for k in 0..5000usize {
        for j in [k, k.saturating_sub(1)] {
            if j == k || k % 5 == 0 {
                let a = engine.answer_line(&line(j));
                let h = 0.5 + j as f64 * 1e-4;
                // Face to face: the unit box's at x = 9, the other's at x = h.
                let d = a["distance"].as_f64().unwrap_or_else(|| panic!("{a}"));
                assert!((d - (9.0 - h)).abs() < 1e-12, "{j}: {a}");
            }
        }
        most = most.max(engine.kept_shapes());
    }
    assert!(most <= 4096 && most > 1000, "{most} shapes kept");
    // Large shapes are kept within a bound of their tables' bytes (4,096 icospheres of 5
    // subdivisions would have held 40 GB): 120 distinct icospheres of 4 subdivisions,
    // each answered as a fresh engine answers it.
    let mut engine = QueryEngine::new();
    let line = |k: usize| {
        let r = 1.0 + k as f64 * 1e-3;
        format!(
            r#"{{"id": {k}, "query": "distance", "a": {{"icosphere": {{"radius": {r}, "subdivisions": 4}}}}, "b": {unit}, "pose_b": {{"translation": [10, 0, 0]}}}}"#
        )
    };
    let (mut most, mut dropped) = (0, false);
    for k in 0..120 {
        let before = engine.kept_shapes();
        let a = engine.answer_line(&line(k));
        dropped |= engine.kept_shapes() <= before;
        most = most.max(engine.kept_bytes());
        if k % 40 == 0 {
            assert_eq!(a, QueryEngine::new().answer_line(&line(k)), "{k}");
        }
    }
    assert!(most <= 256 << 20 && dropped, "{most} bytes kept");
}

#[test]
fn lines_that_are_not_utf8_or_too_long_are_answered_and_the_batch_goes_on() {
    let good = br#"{"id":1,"query":"collide","a":{"box":[1,1,1]},"b":{"box":[1,1,1]}}"#;
    let mut input = Vec::new();
    input.extend_from_slice(b"\xff\xfe{\"id\":0}\n");
    input.extend_from_slice(good);
    input.push(b'\n');
    let a = answers_to_bytes(&input);
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(
        a[0]["error"]
            .as_str()
            .unwrap()
            .contains("line 1 is not UTF-8")
    );
    assert_eq!(a[1]["intersecting"], true);

    // A line past the limit is skipped as it streams by, not held whole.
    use std::io::Read;
    let long = std::io::repeat(b'x').take(proxima::query::MAX_LINE_BYTES as u64 + 10);
    let rest = [b"\n".as_slice(), good, b"\n"].concat();
    let mut out = Vec::new();
    let stats = QueryEngine::new()
        .run(
            std::io::BufReader::new(long.chain(rest.as_slice())),
            &mut out,
        )
        .unwrap();
    assert_eq!((stats.answered, stats.errors), (2, 1));
    let lines = parse_answers(out);
    assert!(
        lines[0]["error"]
            .as_str()
            .unwrap()
            .contains("line 1 is longer than")
    );
    assert_eq!(lines[1]["intersecting"], true);
}

#[test]
fn random_bytes_and_random_json_get_one_answer_per_line_and_no_panic() {
    let mut rng = Rng::new(77);
    let pieces = [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"id\"",
        "\"query\"",
        "\"collide\"",
        "\"distance\"",
        "\"a\"",
        "\"b\"",
        "\"box\"",
        "\"points\"",
        "\"sphere\"",
        "\"radius\"",
        "\"subdivisions\"",
        "\"pose_b\"",
        "\"translation\"",
        "\"rotation\"",
        "1",
        "-1",
        "0",
        "1e308",
        "1e-320",
        "1e155",
        "0.5",
        "null",
        "true",
        "\"x\"",
        "[1,1,1]",
        "[0,0,0,1]",
        "[[0,0,0],[1,0,0],[0,1,0],[0,0,1]]",
        "[[0,0,0],[1,0,0],[0,1,0],[0.3,0.3,1e-300]]",
    ];
    let mut input = Vec::new();
    let mut lines = 0;
    for k in 0..3000 {
        let mut line = Vec::new();
        if k % 3 == 0 {
            for _ in 0..rng.below(40) {
                line.push(rng.below(256) as u8);
            }
        } else {
            for _ in 0..rng.below(30) {
                line.extend_from_slice(pieces[rng.below(pieces.len() as u64) as usize].as_bytes());
            }
        }
        line.retain(|&b| b != b'\n');
        if !String::from_utf8_lossy(&line).trim().is_empty() {
            lines += 1;
        }
        input.extend_from_slice(&line);
        input.push(b'\n');
    }
    // A few well-formed queries with hostile numbers too.
    for shape in ["[1,1,1e-11]", "[1e-300,1,1]", "[1e200,1,1]", "[1,1,1]"] {
        for t in ["[0,0,1e155]", "[0,0,0.5]", "[1e-310,0,0]"] {
            let q = format!(
                r#"{{"id":0,"query":"distance","a":{{"box":{shape}}},"b":{{"box":[1,1,1]}},"pose_b":{{"translation":{t}}}}}"#
            );
            input.extend_from_slice(q.as_bytes());
            input.push(b'\n');
            lines += 1;
        }
    }
    let a = answers_to_bytes(&input);
    assert_eq!(a.len(), lines);
    for ans in &a {
        // serde_json writes NaN and infinities as null: a distance must be a number.
        if let Some(d) = ans.get("distance") {
            assert!(
                d.as_f64().is_some_and(|d| d.is_finite() && d >= 0.0),
                "{ans}"
            );
        }
    }
}

#[test]
fn thin_bodies_are_bodies_or_named_errors() {
    use proxima::geometry::{ConvexPolytope, generators};
    // A sheet 1e-11 thick is a box with 6 faces.
    let sheet = generators::cuboid(DVec3::new(1.0, 1.0, 1e-11)).expect("a sheet is a body");
    assert_eq!((sheet.num_vertices(), sheet.num_faces()), (8, 6));
    // Its distance to a box above it is exact.
    let b = generators::cuboid(DVec3::splat(0.5)).unwrap();
    let out = proxima::exact::walk::walk(&proxima::exact::walk::WalkInput::new(
        &sheet,
        Pose::default(),
        &b,
        at(0.0, 0.0, 1.0, DQuat::IDENTITY),
    ));
    assert!((out.distance - (0.5 - 1e-11)).abs() < 1e-15, "{out:?}");
    // A cylinder 1e-12 thick is a body; flat point sets are bodies or named errors.
    let disc = generators::cylinder(32, 1.0, 1e-12).expect("a thin disc is a body");
    assert_eq!(disc.num_faces(), 34);
    for h in [1e-9, 1e-12, 1e-15, 1e-300, 0.0] {
        let pts = [
            DVec3::ZERO,
            DVec3::X,
            DVec3::Y,
            DVec3::new(0.3, 0.3, h),
            DVec3::new(1.0, 1.0, 0.0),
        ];
        match ConvexPolytope::from_points(&pts) {
            Ok(p) => assert!(p.num_faces() >= 4, "height {h}"),
            Err(e) => assert!(
                e.to_string().contains("flat") || e.to_string().contains("coplanar"),
                "height {h}: {e}"
            ),
        }
    }
}

/// Queries and scenes read one shape vocabulary: every scene generator is a query shape
/// too, built the same way. Oracle: the same spec built through the library's scene path
/// (a one-body scene), compared by its distance to a unit box a known way off, and the
/// analytic gap for the shapes whose extent along x is known exactly.
#[test]
fn queries_take_every_scene_shape() {
    use proxima::scene::Scene;
    use proxima::shape::ShapeGeometry;
    let cases = [
        (
            r#"{"cylinder": {"radius": 1, "half_height": 0.5, "sides": 8}}"#,
            "{ cylinder = { radius = 1, half_height = 0.5, sides = 8 } }",
        ),
        (
            r#"{"cone": {"radius": 1, "half_height": 0.5}}"#,
            "{ cone = { radius = 1, half_height = 0.5 } }",
        ),
        (
            r#"{"icosphere": {"radius": 1}}"#,
            "{ icosphere = { radius = 1 } }",
        ),
        (
            r#"{"random_hull": {"points": 40, "radius": 1}}"#,
            "{ random_hull = { points = 40, radius = 1 } }",
        ),
        (
            r#"{"points": [[0,0,0],[1,0,0],[0,1,0],[0,0,1]]}"#,
            "{ points = [[0,0,0],[1,0,0],[0,1,0],[0,0,1]] }",
        ),
    ];
    for (json, toml) in cases {
        let scene_text = format!(
            "seed = 0\n[[group]]\nshape = {toml}\ncount = 1\nregion = {{ min = [0,0,0], max = [0,0,0] }}\nseed = 0\n"
        );
        let scene = Scene::parse(
            std::path::Path::new("t.toml"),
            std::path::Path::new("."),
            &scene_text,
        )
        .expect("scene");
        let ShapeGeometry::Convex(poly) = &scene.geometry[0] else {
            panic!("{toml} is convex");
        };
        // The body's largest x, from the scene's build: the box at 5 is 4 - reach away.
        let reach = poly.vertices().iter().map(|v| v.x).fold(f64::MIN, f64::max);
        let line = format!(
            r#"{{"id": 1, "query": "distance", "a": {json}, "b": {{"box": [1, 1, 1]}}, "pose_b": {{"translation": [5, 0, 0]}}}}"#
        );
        let a = answers(&line);
        let d = a[0]["distance"]
            .as_f64()
            .unwrap_or_else(|| panic!("{json}: {}", a[0]));
        assert!(
            (d - (4.0 - reach)).abs() < 1e-12,
            "{json}: distance {d}, reach {reach}"
        );
    }
}

/// Non-convex shapes answer `collide` and `distance` through their hull trees: a box
/// through the torus's hole does not touch it, one across its ring does; the distance to
/// a box beside the torus is the analytic one to within the decomposition's reach past
/// the mesh; `piece_a` names the piece; `penetration` answers the deepest piece pair.
#[test]
fn non_convex_shapes_answer_collide_and_distance() {
    let torus = r#"{"torus": {"major": 1, "minor": 0.25}}"#;
    let a = answers(&format!(
        "{{\"id\": 1, \"query\": \"collide\", \"a\": {torus}, \"b\": {{\"box\": [0.3, 0.3, 2]}}}}\n\
         {{\"id\": 2, \"query\": \"collide\", \"a\": {torus}, \"b\": {{\"box\": [0.3, 0.3, 2]}}, \"pose_b\": {{\"translation\": [1, 0, 0]}}}}\n\
         {{\"id\": 3, \"query\": \"distance\", \"a\": {torus}, \"b\": {{\"box\": [1, 1, 1]}}, \"pose_b\": {{\"translation\": [5, 0, 0]}}}}\n\
         {{\"id\": 4, \"query\": \"penetration\", \"a\": {torus}, \"b\": {{\"box\": [1, 1, 1]}}}}\n\
         {{\"id\": 5, \"query\": \"distance\", \"a\": {torus}, \"b\": {torus}, \"pose_b\": {{\"translation\": [1, 0, 0], \"rotation\": [0.7071067811865476, 0, 0, 0.7071067811865476]}}}}\n"
    ));
    assert_eq!(a[0]["intersecting"], false, "{}", a[0]);
    assert_eq!(a[1]["intersecting"], true, "{}", a[1]);
    // The torus reaches x = 1.25 (a vertex); its pieces cover every vertex, a simplified
    // piece scaled about its centroid to do so, so they reach at most a hundredth further.
    let d = a[2]["distance"].as_f64().unwrap();
    assert!(d <= 2.75 && d > 2.74, "{}", a[2]);
    let point_a = a[2]["point_a"].as_array().unwrap();
    let point_a: Vec<f64> = point_a.iter().map(|x| x.as_f64().unwrap()).collect();
    assert!(
        DVec3::from_slice(&point_a).distance(DVec3::new(1.25, 0.0, 0.0)) < 1e-2,
        "{}",
        a[2]
    );
    assert!(
        a[2]["piece_a"].is_u64() && a[2].get("piece_b").is_none(),
        "{}",
        a[2]
    );
    // The box sits across the ring: the deepest piece pair answers, with its piece.
    assert_eq!(a[3]["intersecting"], true, "{}", a[3]);
    assert!(
        a[3]["depth"].as_f64().unwrap() > 0.0 && a[3]["piece_a"].is_u64(),
        "{}",
        a[3]
    );
    // Two linked rings: the second torus turned a quarter turn about x and moved by the
    // major radius threads through the first one's hole without touching it.
    let d = a[4]["distance"]
        .as_f64()
        .unwrap_or_else(|| panic!("{}", a[4]));
    assert!(d > 0.0 && d < 0.75, "{}", a[4]);
}

/// `penetration` with a non-convex shape is the deepest penetration of any touching or
/// overlapping piece pair, with its pieces: against enumeration over every piece pair
/// (every candidate axis of each pair, `depth::enumerate`) for a torus against a box and
/// against a second torus, and against every piece's own rounded penetration for a torus
/// and a sphere (either side first), at 300 random poses, 1e-9 of the size.
#[test]
fn non_convex_penetration_is_the_deepest_piece_pair() {
    use proxima::exact::depth;
    use proxima::exact::rounded;
    use proxima::geometry::decompose::DecomposeParams;
    use proxima::geometry::rounded::Rounded;
    use proxima::geometry::{ConvexPolytope, HullTree};
    use proxima::shape::{ShapeGeometry, ShapeSpec};
    let torus_json = r#"{"torus": {"major": 1, "minor": 0.25}}"#;
    let spec: ShapeSpec = serde_json::from_str(torus_json).unwrap();
    let ShapeGeometry::Mesh(mesh) = spec
        .build(std::path::Path::new(""), &mut Rng::new(0))
        .unwrap()
    else {
        panic!("a torus is a mesh")
    };
    let tree =
        HullTree::decompose(&mesh, &DecomposeParams::default(), &Cache::Off, &mut |_| {}).unwrap();
    let cube = generators::cuboid(DVec3::splat(0.3)).unwrap();
    let sphere = Rounded::sphere(0.3).unwrap();
    let mut rng = Rng::new(0x9e7);
    let pose_json = |p: &Pose| {
        format!(
            r#"{{"translation": {:?}, "rotation": {:?}}}"#,
            p.translation.to_array(),
            p.rotation.to_array()
        )
    };
    let deepest_pair = |pieces_b: &[&ConvexPolytope], pa: &Pose, pb: &Pose| {
        tree.pieces()
            .flat_map(|x| pieces_b.iter().map(move |y| (x, *y)))
            .filter_map(|(x, y)| depth::enumerate(x, pa, y, pb).map(|p| p.depth))
            .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d))))
    };
    let (mut overlapping, mut checked) = (0, 0);
    for case in 0..300 {
        let pa = Pose::new(rng.unit_vector() * 0.2, rng.rotation());
        let pb = Pose::new(rng.unit_vector() * rng.range(0.0, 1.6), rng.rotation());
        let which = case % 4;
        let b_json = match which {
            0 => r#"{"box": [0.3, 0.3, 0.3]}"#.to_owned(),
            1 => torus_json.to_owned(),
            _ => r#"{"sphere": {"radius": 0.3}}"#.to_owned(),
        };
        let (a_side, b_side, pose_a, pose_b) = if which == 3 {
            (b_json.clone(), torus_json.to_owned(), pb, pa)
        } else {
            (torus_json.to_owned(), b_json.clone(), pa, pb)
        };
        let line = format!(
            r#"{{"id": {case}, "query": "penetration", "a": {a_side}, "pose_a": {}, "b": {b_side}, "pose_b": {}}}"#,
            pose_json(&pose_a),
            pose_json(&pose_b)
        );
        let answer = &answers(&line)[0];
        let truth = match which {
            0 => deepest_pair(&[&cube], &pa, &pb),
            1 => deepest_pair(&tree.pieces().map(|p| &**p).collect::<Vec<_>>(), &pa, &pb),
            _ => tree
                .pieces()
                .filter_map(|p| {
                    rounded::penetration(&rounded::plain(p.clone()), &pa, &sphere, &pb)
                        .map(|x| x.depth)
                })
                .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d)))),
        };
        checked += 1;
        match truth {
            None => assert_eq!(answer["intersecting"], false, "{case}: {answer}"),
            Some(depth) => {
                overlapping += 1;
                assert_eq!(answer["intersecting"], true, "{case}: {answer}");
                let got = answer["depth"].as_f64().unwrap();
                assert!(
                    (got - depth).abs() <= 1e-9 * 3.0,
                    "{case}: {got} vs {depth}"
                );
                let piece = if which == 3 { "piece_b" } else { "piece_a" };
                assert!(answer[piece].is_u64(), "{case}: {answer}");
                // The normal and points keep the convex contract for that piece pair.
                let v = |k: &str| {
                    DVec3::from_slice(
                        &answer[k]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_f64().unwrap())
                            .collect::<Vec<_>>(),
                    )
                };
                let (n, a_pt, b_pt) = (v("normal"), v("point_a"), v("point_b"));
                assert!((n.length() - 1.0).abs() < 1e-12, "{case}: {answer}");
                assert!(
                    ((a_pt - b_pt).dot(n) - got).abs() < 1e-9,
                    "{case}: {answer}"
                );
            }
        }
    }
    assert!(
        overlapping > 60 && overlapping < checked,
        "{overlapping} of {checked}"
    );
}

/// `toi` with a non-convex shape: an L modelled as two boxes (two objects of one OBJ
/// file, so its pieces are exact) under a falling cube: onto the L's top at the analytic
/// time, and through the notch without contact.
#[test]
fn non_convex_toi() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("l-two-boxes.obj");
    let mut obj = String::new();
    let parts = [
        ([0.0, 0.0, 0.0], [2.0, 1.0, 1.0]),
        ([0.0, 1.0, 0.0], [1.0, 2.0, 1.0]),
    ];
    for (k, (lo, hi)) in parts.into_iter().enumerate() {
        obj.push_str(&format!("o part{k}\n"));
        for c in 0..8 {
            let pick = |axis: usize| {
                if c >> axis & 1 == 0 {
                    lo[axis]
                } else {
                    hi[axis]
                }
            };
            obj.push_str(&format!("v {} {} {}\n", pick(0), pick(1), pick(2)));
        }
        let base = 8 * k + 1;
        // Quads, counter-clockwise seen from outside (corner bits: x, y, z).
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ];
        for f in quads {
            let f = f.map(|i| base + i);
            obj.push_str(&format!("f {} {} {} {}\n", f[0], f[1], f[2], f[3]));
        }
    }
    std::fs::write(&path, obj).unwrap();
    let l = format!("{{\"obj\": {:?}}}", path.display().to_string());
    let cube = r#"{"box": [0.2, 0.2, 0.2]}"#;
    let a = answers(&format!(
        "{{\"id\": 1, \"query\": \"toi\", \"a\": {l}, \"b\": {cube}, \"pose_b\": {{\"translation\": [0.5, 0.5, 3]}}, \"pose_b_end\": {{\"translation\": [0.5, 0.5, 0]}}}}\n\
         {{\"id\": 2, \"query\": \"toi\", \"a\": {l}, \"b\": {cube}, \"pose_b\": {{\"translation\": [1.5, 1.5, 3]}}, \"pose_b_end\": {{\"translation\": [1.5, 1.5, -3]}}}}\n"
    ));
    assert_eq!(a[0]["hit"], true, "{}", a[0]);
    // The cube's bottom (z − 0.2) meets the top (z = 1) at z = 1.2: t = 1.8 / 3.
    let t = a[0]["toi"].as_f64().unwrap();
    assert!(t <= 0.6 && t > 0.6 - 1e-8, "{}", a[0]);
    assert!(a[0]["piece_a"].is_u64(), "{}", a[0]);
    assert_eq!(a[1]["hit"], false, "{}", a[1]);
}

/// `penetration` answers: analytic boxes (the depth is the smallest per-axis overlap, the
/// normal that axis from a to b), the witness identity, touching and separated shapes.
#[test]
fn penetration_answers_boxes_exactly() {
    let input = r#"{"id": 1, "query": "penetration", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [1.5, 0.25, 0]}}
{"id": 2, "query": "penetration", "a": {"box": [1,1,1]}, "b": {"box": [0.5,2,1]}, "pose_b": {"translation": [0, 0, -1.75]}}
{"id": 3, "query": "penetration", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [2, 0.5, 0]}}
{"id": 4, "query": "penetration", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [2.5, 0, 0]}}
{"id": 5, "query": "penetration", "a": {"box": [1,0.1,0.1]}, "b": {"box": [1,0.1,0.1]}, "pose_b": {"translation": [0, 0, 0.15], "rotation": [0, 0, 0.7071067811865476, 0.7071067811865476]}}
"#;
    let a = answers(input);
    let want = [
        (true, 0.5, [1.0, 0.0, 0.0]),
        (true, 0.25, [0.0, 0.0, -1.0]),
        (true, 0.0, [1.0, 0.0, 0.0]),
        (false, 0.0, [0.0; 3]),
        (true, 0.05, [0.0, 0.0, 1.0]),
    ];
    for (ans, (intersecting, depth, normal)) in a.iter().zip(want) {
        assert_eq!(ans["intersecting"], Value::Bool(intersecting), "{ans}");
        let d = ans["depth"].as_f64().unwrap();
        assert!((d - depth).abs() < 1e-12, "{ans}");
        if !intersecting {
            assert!(ans.get("normal").is_none(), "{ans}");
            continue;
        }
        let v = |k: &str| DVec3::from_array(serde_json::from_value(ans[k].clone()).unwrap());
        assert!(
            v("normal").distance(DVec3::from_array(normal)) < 1e-12,
            "{ans}"
        );
        assert!(
            ((v("point_a") - v("point_b")).dot(v("normal")) - d).abs() < 1e-12,
            "{ans}"
        );
        assert!(
            ans["feature_a"].is_string() && ans["feature_b"].is_string(),
            "{ans}"
        );
    }
}

#[test]
fn toi_answers_the_first_contact_of_the_screw_motions() {
    let input = r#"{"id": 1, "query": "toi", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [0, 5, 0]}, "pose_b_end": {"translation": [0, -5, 0]}}
{"id": 2, "query": "toi", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [3, 5, 0]}, "pose_b_end": {"translation": [3, -5, 0]}}
{"id": 3, "query": "toi", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [0, 5, 0]}, "pose_b_end": {"translation": [0, 5, 0], "rotation": [1, 0, 0, 0]}}
{"id": 4, "query": "toi", "a": {"box": [1,1,1]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [0, 5, 0]}}
"#;
    let a = answers(input);
    // Box b (half sides 1) falls from y = 5 to y = -5 onto box a: the faces meet when b
    // is at y = 2, t = 0.3, never later.
    assert_eq!(a[0]["hit"], true, "{}", a[0]);
    let t = a[0]["toi"].as_f64().unwrap();
    assert!(t <= 0.3 && t > 0.3 - 1e-8, "{}", a[0]);
    let normal: Vec<f64> = serde_json::from_value(a[0]["normal"].clone()).unwrap();
    assert!((normal[1] - 1.0).abs() < 1e-12, "{}", a[0]);
    let point: Vec<f64> = serde_json::from_value(a[0]["point"].clone()).unwrap();
    assert!((point[1] - 1.0).abs() < 1e-8, "{}", a[0]);
    // Beside it: no contact.
    assert_eq!(a[1], serde_json::json!({"id": 2, "hit": false}));
    // Half a turn between the poses: ambiguous, named.
    let e = a[2]["error"].as_str().unwrap();
    assert!(e.contains("pose_b_end") && e.contains("half a turn"), "{e}");
    // A missing end pose is the start pose: b stands at y = 5, a at the origin.
    assert_eq!(a[3], serde_json::json!({"id": 4, "hit": false}));
    // a stands at x = 10 (no end pose) while b passes the origin: no contact; b passing
    // x = 10 meets a.
    let a = answers(
        r#"{"id": 1, "query": "toi", "a": {"box": [1,1,1]}, "pose_a": {"translation": [10, 0, 0]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [0, 5, 0]}, "pose_b_end": {"translation": [0, -5, 0]}}
{"id": 2, "query": "toi", "a": {"box": [1,1,1]}, "pose_a": {"translation": [10, 0, 0]}, "b": {"box": [1,1,1]}, "pose_b": {"translation": [10, 5, 0]}, "pose_b_end": {"translation": [10, -5, 0]}}
"#,
    );
    assert_eq!(a[0], serde_json::json!({"id": 1, "hit": false}));
    let t = a[1]["toi"].as_f64().unwrap();
    assert!(t <= 0.3 && t > 0.3 - 1e-8, "{}", a[1]);
}

/// Exact spheres and capsules, and `radius` beside a polytope's key: analytic distances and
/// depths, the arbitrary normal of concentric spheres, and named errors for bad radii.
#[test]
fn spheres_capsules_and_rounded_shapes() {
    let a = answers(
        r#"{"id": 1, "query": "distance", "a": {"sphere": {"radius": 1}}, "b": {"sphere": {"radius": 0.5}}, "pose_b": {"translation": [3, 0, 0]}}
{"id": 2, "query": "distance", "a": {"box": [1, 1, 1], "radius": 0.25}, "b": {"capsule": {"half_height": 1, "radius": 0.5}}, "pose_b": {"translation": [0, 0, 4]}}
{"id": 3, "query": "penetration", "a": {"sphere": {"radius": 1}}, "b": {"sphere": {"radius": 1}}, "pose_b": {"translation": [1.5, 0, 0]}}
{"id": 4, "query": "penetration", "a": {"sphere": {"radius": 1}}, "b": {"sphere": {"radius": 1}}}
{"id": 5, "query": "collide", "a": {"sphere": {"radius": 1}}, "b": {"box": [1, 1, 1]}, "pose_b": {"translation": [2, 0, 0]}}
{"id": 6, "query": "distance", "a": {"sphere": {"radius": -1}}, "b": {"box": [1, 1, 1]}}
{"id": 7, "query": "distance", "a": {"capsule": {"half_height": -1, "radius": 1}}, "b": {"box": [1, 1, 1]}}
{"id": 8, "query": "distance", "a": {"sphere": {"radius": 1}, "radius": 2}, "b": {"box": [1, 1, 1]}}
{"id": 9, "query": "toi", "a": {"sphere": {"radius": 1}}, "b": {"box": [1, 1, 1], "radius": 0.5}, "pose_b": {"translation": [0, 0, 6]}, "pose_b_end": {"translation": [0, 0, 0]}}
{"id": 10, "query": "penetration", "a": {"capsule": {"half_height": 1e80, "radius": 1}}, "b": {"box": [1, 1, 1]}}
{"id": 11, "query": "distance", "a": {"sphere": {"radius": 2e75}}, "b": {"box": [1, 1, 1]}}
"#,
    );
    assert_eq!(a[0]["distance"].as_f64(), Some(1.5), "{}", a[0]);
    assert_eq!(
        a[0]["point_b"],
        serde_json::json!([2.5, 0.0, 0.0]),
        "{}",
        a[0]
    );
    // The capsule's lower end (z = 4 − 1 − 0.5 = 2.5) over the rounded box's top (1.25).
    assert_eq!(a[1]["distance"].as_f64(), Some(1.25), "{}", a[1]);
    assert_eq!(a[2]["depth"].as_f64(), Some(0.5), "{}", a[2]);
    assert_eq!(
        a[2]["normal"],
        serde_json::json!([1.0, 0.0, 0.0]),
        "{}",
        a[2]
    );
    assert_eq!(a[3]["depth"].as_f64(), Some(2.0), "{}", a[3]);
    assert_eq!(a[3]["arbitrary_normal"], true, "{}", a[3]);
    assert_eq!(a[4]["intersecting"], true, "{}", a[4]);
    // Past ±1e75, like every coordinate: named, with the number as written.
    for (k, want) in [
        (5, "sphere radius"),
        (6, "half height"),
        (7, "own radius"),
        (
            9,
            "half height must be finite, non-negative and at most 1e75, got 1e80",
        ),
        (
            10,
            "sphere radius must be finite, non-negative and at most 1e75, got 2e75",
        ),
    ] {
        let e = a[k]["error"].as_str().unwrap_or_default();
        assert!(e.contains(want), "{}: {}", k + 1, a[k]);
    }
    // A torus (tube 0.25, hole 0.75) around a sphere: apart at radius 0.5, touching the
    // tube at radius 1.
    let b = answers(
        r#"{"id": 1, "query": "distance", "a": {"torus": {"major": 1, "minor": 0.25}}, "b": {"sphere": {"radius": 0.5}}}
{"id": 2, "query": "collide", "a": {"sphere": {"radius": 1}}, "b": {"torus": {"major": 1, "minor": 0.25}}}
"#,
    );
    let d = b[0]["distance"]
        .as_f64()
        .unwrap_or_else(|| panic!("{}", b[0]));
    assert!(d > 0.1 && d < 0.25, "{}", b[0]);
    assert!(b[0]["piece_a"].is_u64(), "{}", b[0]);
    assert_eq!(b[1]["intersecting"], true, "{}", b[1]);
    // A sphere dropped along the torus's axis falls through the hole; one dropped onto the
    // ring hits it.
    let c = answers(
        r#"{"id": 1, "query": "toi", "a": {"torus": {"major": 1, "minor": 0.25}}, "b": {"sphere": {"radius": 0.5}}, "pose_b": {"translation": [0, 0, 3]}, "pose_b_end": {"translation": [0, 0, -3]}}
{"id": 2, "query": "toi", "a": {"sphere": {"radius": 0.2}}, "b": {"torus": {"major": 1, "minor": 0.25}}, "pose_a": {"translation": [1, 0, 3]}, "pose_a_end": {"translation": [1, 0, -3]}}
"#,
    );
    assert_eq!(c[0]["hit"], false, "{}", c[0]);
    assert_eq!(c[1]["hit"], true, "{}", c[1]);
    // Contact near z = 0.25 + 0.2: t ≈ (3 − 0.45) / 6 (the pieces reach a little past the
    // mesh, so a little earlier).
    let t = c[1]["toi"].as_f64().unwrap();
    assert!(t <= 2.55 / 6.0 + 1e-9 && t > 2.5 / 6.0, "{}", c[1]);
    assert!(c[1]["piece_b"].is_u64(), "{}", c[1]);
    // The rounded box falls from z = 6 onto the unit sphere: contact
    // when its bottom (z − 1.5) reaches 1, at z = 2.5, t = 3.5 / 6.
    assert_eq!(a[8]["hit"], true, "{}", a[8]);
    let t = a[8]["toi"].as_f64().unwrap();
    assert!(t <= 3.5 / 6.0 && t > 3.5 / 6.0 - 1e-8, "{}", a[8]);
}

/// Shapes at the ends of the supported range (spans from 1e-69 to coordinates of 1e74)
/// answer what the unit-sized case answers, scaled: a distance, a penetration depth and
/// a time of impact are homogeneous in the units, and a normal is a unit vector. Past the
/// range (a 1e76 box, points spanning 1e-71) a line gets a named error; inside it a 1e-80
/// box once answered normals 2e-6 off unit length, and a 1e80 box "face 0 has zero area".
#[test]
fn the_ends_of_the_coordinate_range_answer_scaled_results() {
    let turn = DQuat::from_axis_angle(DVec3::new(0.3, 0.2, 0.9).normalize(), 0.7);
    let line = |s: f64, query: &str, t: [f64; 3]| {
        let pose = |p: [f64; 3], q: DQuat| {
            format!(
                r#"{{"translation":[{:e},{:e},{:e}],"rotation":[{},{},{},{}]}}"#,
                p[0] * s,
                p[1] * s,
                p[2] * s,
                q.x,
                q.y,
                q.z,
                q.w
            )
        };
        let extra = if query == "toi" {
            format!(
                r#","pose_a_end":{},"pose_b_end":{}"#,
                pose([0.0; 3], DQuat::IDENTITY),
                pose([-t[0], t[1], t[2]], turn * turn)
            )
        } else {
            String::new()
        };
        format!(
            r#"{{"id":0,"query":"{query}","a":{{"box":[{s:e},{s:e},{s:e}]}},"b":{{"box":[{s:e},{s:e},{s:e}]}},"pose_b":{}{extra}}}"#,
            pose(t, turn)
        )
    };
    let cases = [
        ("distance", [2.6, 0.4, 0.3], "distance"),
        ("penetration", [1.5, 0.4, 0.3], "depth"),
        ("toi", [4.0, 0.4, 0.3], "toi"),
    ];
    let unit: Vec<f64> = cases
        .iter()
        .map(|(q, t, key)| answers(&line(1.0, q, *t))[0][*key].as_f64().unwrap())
        .collect();
    for s in [1e-69, 1e-40, 1e40, 1e74] {
        for ((q, t, key), want) in cases.iter().zip(&unit) {
            let a = &answers(&line(s, q, *t))[0];
            let got = a[*key]
                .as_f64()
                .unwrap_or_else(|| panic!("{q} at {s:e}: {a}"));
            // The time is a ratio; lengths scale with the units.
            let want = if *key == "toi" { *want } else { want * s };
            assert!(
                (got - want).abs() <= 1e-9 * want.abs(),
                "{q} at {s:e}: {got:e} vs {want:e}"
            );
            if let Some(n) = a.get("normal") {
                let n: Vec<f64> = n
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                assert!((len - 1.0).abs() < 1e-12, "{q} at {s:e}: {a}");
            }
        }
    }
    let big = &answers(&line(1e76, "distance", [2.6, 0.4, 0.3]))[0];
    assert!(big["error"].as_str().unwrap().contains("1e75"), "{big}");
    let tiny = &answers(&line(1e-71, "distance", [2.6, 0.4, 0.3]))[0];
    assert!(tiny["error"].as_str().unwrap().contains("span"), "{tiny}");
}

/// An open mesh (a box without its lid) cannot be decomposed, and the error names the way
/// out: `obj_hull`, the convex hull of its vertices, which answers as the closed box of
/// the same corners given as points does.
#[test]
fn an_open_mesh_names_obj_hull_which_answers_as_its_points() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("obj-hull");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lidless.obj");
    let corners = [
        [-1.0, -1.0, -1.0],
        [1.0, -1.0, -1.0],
        [1.0, 1.0, -1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
        [1.0, -1.0, 1.0],
        [1.0, 1.0, 1.0],
        [-1.0, 1.0, 1.0],
    ];
    let mut text: String = corners
        .iter()
        .map(|c| format!("v {} {} {}\n", c[0], c[1], c[2]))
        .collect();
    // Bottom and four sides, no top.
    text += "f 1 3 2\nf 1 4 3\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";
    std::fs::write(&path, text).unwrap();
    let path = path.display().to_string().replace('\\', "/");
    let query = |shape: String| {
        format!(
            r#"{{"id":0,"query":"penetration","a":{shape},"b":{{"box":[0.5,0.5,0.5]}},"pose_b":{{"translation":[1.2,0.3,0.1]}}}}"#
        )
    };
    let open = &answers(&query(format!(r#"{{"obj":"{path}"}}"#)))[0];
    let err = open["error"].as_str().unwrap();
    assert!(err.contains("open") && err.contains("obj_hull"), "{err}");
    let hull = &answers(&query(format!(r#"{{"obj_hull":"{path}"}}"#)))[0];
    let points = serde_json::to_string(&corners).unwrap();
    let closed = &answers(&query(format!(r#"{{"points":{points}}}"#)))[0];
    assert_eq!(hull["depth"], closed["depth"], "{hull} vs {closed}");
    assert!(
        (hull["depth"].as_f64().unwrap() - 0.3).abs() < 1e-12,
        "{hull}"
    );
    assert_eq!(hull["normal"], closed["normal"]);
    // The hull of the file's vertices whatever its faces: the same corners with a face
    // on the bottom four only, or with none at all, answer as the box (a mesh's loader
    // keeps only the vertices its faces name: the top four were dropped, and a file of
    // vertices alone was "no faces in the file").
    let vertices: String = corners
        .iter()
        .map(|c| format!("v {} {} {}\n", c[0], c[1], c[2]))
        .collect();
    for (name, faces) in [("bottom.obj", "f 1 3 2\nf 1 4 3\n"), ("points.obj", "")] {
        let file = dir.join(name);
        std::fs::write(&file, format!("{vertices}{faces}")).unwrap();
        let file = file.display().to_string().replace('\\', "/");
        let hull = &answers(&query(format!(r#"{{"obj_hull":"{file}"}}"#)))[0];
        assert_eq!(hull["depth"], closed["depth"], "{name}: {hull} vs {closed}");
        assert_eq!(hull["normal"], closed["normal"], "{name}");
    }
    // A vertex line short of three finite coordinates is named by its line.
    let file = dir.join("short.obj");
    std::fs::write(&file, format!("{vertices}v 1 2\n")).unwrap();
    let file = file.display().to_string().replace('\\', "/");
    let bad = &answers(&query(format!(r#"{{"obj_hull":"{file}"}}"#)))[0];
    let err = bad["error"].as_str().unwrap();
    assert!(
        err.contains("line 9") && err.contains("three finite"),
        "{err}"
    );
    // The faces are not used, but a broken one is a broken file, named by its line (it
    // was passed over), and so is a coordinate past ±1e75 (it was named by its place
    // among the points).
    for (name, extra, needles) in [
        ("past.obj", "f 1 2 99\n", &["line 9", "vertex `99`"][..]),
        ("two.obj", "f 1 2\n", &["line 9", "a face needs 3 vertices"]),
        (
            "far.obj",
            "v 1e80 0 0\n",
            &["line 9", "`v 1e80 0 0`", "1e75"],
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, format!("{vertices}{extra}")).unwrap();
        let file = file.display().to_string().replace('\\', "/");
        for key in ["obj_hull", "obj"] {
            let bad = &answers(&query(format!(r#"{{"{key}":"{file}"}}"#)))[0];
            let err = bad["error"]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: {bad}"));
            for n in needles {
                assert!(err.contains(n), "{key} {name}: {n:?} in {err}");
            }
        }
    }
}

/// A torus written to OBJ with a few triangles wound the wrong way (and one inside out
/// throughout) answers as the well-wound file does: loading winds a closed mesh outward.
#[test]
fn a_mis_wound_obj_answers_as_the_well_wound_one() {
    let mesh = generators::torus(2.0, 0.5, 24, 12).unwrap();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mis-wound");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, turned: &dyn Fn(usize) -> bool| {
        let mut text: String = mesh
            .vertices
            .iter()
            .map(|v| format!("v {:e} {:e} {:e}\n", v.x, v.y, v.z))
            .collect();
        for (k, t) in mesh.triangles.iter().enumerate() {
            let [a, b, c] = t.map(|v| v + 1);
            text += &if turned(k) {
                format!("f {a} {c} {b}\n")
            } else {
                format!("f {a} {b} {c}\n")
            };
        }
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string().replace('\\', "/")
    };
    let good = write("good.obj", &|_| false);
    let some = write("some.obj", &|k| k % 37 == 5);
    let all = write("inside-out.obj", &|_| true);
    let query = |path: &str| {
        answers(&format!(
            r#"{{"id":0,"query":"distance","a":{{"obj":"{path}"}},"b":{{"sphere":{{"radius":0.2}}}},"pose_b":{{"translation":[0.3,0.4,1.5]}}}}"#
        ))[0]
            .clone()
    };
    let want = query(&good);
    assert!(want["distance"].as_f64().is_some(), "{want}");
    for path in [&some, &all] {
        assert_eq!(query(path), want, "{path}");
    }
}

/// A non-convex shape decomposes alike at every scale (the decomposition engine's own
/// tolerances are absolute; it sees the mesh scaled to unit size by a power of two): a
/// torus and a box 0.15 of the scale from its outer equator answer 0.15 of it at 1e-60 to
/// 1e60, and a tumbling box meets the turning torus at the same time. A torus decomposed
/// at 1e-20 answered 0.1706 before.
#[test]
fn non_convex_shapes_answer_alike_at_every_scale() {
    let q = DQuat::from_axis_angle(DVec3::new(2.0, 1.0, 0.0).normalize(), 0.45);
    let line = |s: f64, query: &str| {
        let extra = if query == "toi" {
            let turn = format!("[{},{},{},{}]", q.x, q.y, q.z, q.w);
            format!(
                r#","pose_a_end":{{"rotation":{turn}}},"pose_b_end":{{"translation":[{:e},{:e},{:e}],"rotation":{turn}}}"#,
                -s,
                0.1 * s,
                0.05 * s
            )
        } else {
            String::new()
        };
        let at = if query == "toi" {
            [3.0, 0.2, 0.1]
        } else {
            [1.75, 0.2, 0.1]
        };
        format!(
            r#"{{"id":0,"query":"{query}","a":{{"torus":{{"major":{s:e},"minor":{:e}}}}},"b":{{"box":[{:e},{:e},{:e}]}},"pose_b":{{"translation":[{:e},{:e},{:e}]}}{extra}}}"#,
            0.3 * s,
            0.3 * s,
            0.2 * s,
            0.1 * s,
            at[0] * s,
            at[1] * s,
            at[2] * s
        )
    };
    let toi = answers(&line(1.0, "toi"))[0]["toi"].as_f64().unwrap();
    assert!(toi > 0.0 && toi < 1.0, "{toi}");
    for s in [1e-60, 1e-20, 1.0, 1e20, 1e60] {
        let d = answers(&line(s, "distance"))[0]["distance"]
            .as_f64()
            .unwrap()
            / s;
        assert!(
            (d - 0.15).abs() < 1e-9,
            "scale {s:e}: distance {d} of the scale"
        );
        let t = answers(&line(s, "toi"))[0]["toi"].as_f64().unwrap();
        assert!((t - toi).abs() < 1e-6, "scale {s:e}: toi {t} against {toi}");
    }
}

/// A field the query does not read is an error naming it (a misspelt end pose answered a
/// body standing still, an end pose on `distance` was dropped), JSON that does not parse is
/// named by its line and column, JSON that is not an object by its line, a byte-order mark
/// before the first line is skipped, and null is an absent pose or part.
#[test]
fn unread_fields_and_bad_json_are_named() {
    let input = "\u{feff}{\"id\": 1, \"query\": \"collide\", \"a\": {\"box\": [1,1,1]}, \"b\": {\"box\": [1,1,1]}}
{\"id\": 2, \"query\": \"toi\", \"a\": {\"box\": [1,1,1]}, \"b\": {\"box\": [1,1,1]}, \"pose_b\": {\"translation\": [4,0,0]}, \"pose_b_ennd\": {\"translation\": [-5,0,0]}}

{\"id\": 4, \"query\": \"distance\", \"a\": {\"box\": [1,1,1]}, \"b\": {\"box\": [1,1,1]}, \"pose_b\": {\"translation\": [4,0,0]}, \"pose_b_end\": {\"translation\": [-5,0,0]}}
{\"id\": 5, \"query\": \"collide\", \"a\": {\"box\": [1,1,1]}, \"x\": NaN}
{\"id\": 6, \"query\": \"toi\", \"a\": {\"box\": [1,1,1]}, \"b\": {\"box\": [1,1,1]}, \"pose_b\": {\"translation\": [4,0,0]}, \"pose_b_end\": {\"translation\": [-5,0,0]}}
[1, 2, 3]
{\"id\": 8, \"query\": \"distance\", \"a\": {\"box\": [1,1,1]}, \"b\": {\"box\": [1,1,1]}, \"pose_a\": null, \"pose_b\": {\"translation\": [4,0,0], \"rotation\": null}}
";
    let a = answers(input);
    assert_eq!(a.len(), 7, "{a:?}");
    assert_eq!(a[0], serde_json::json!({"id": 1, "intersecting": true}));
    let error = |k: usize| a[k]["error"].as_str().unwrap_or_else(|| panic!("{}", a[k]));
    assert!(
        error(1).contains("unknown field `pose_b_ennd` for `toi`"),
        "{}",
        a[1]
    );
    assert!(
        error(2).contains("unknown field `pose_b_end` for `distance`"),
        "{}",
        a[2]
    );
    assert_eq!(a[3]["id"], Value::Null);
    assert!(
        error(3).contains("invalid JSON at line 5, column 59"),
        "{}",
        a[3]
    );
    // Two unit boxes 4 apart at the start, b moving to -5: they meet when b is at 2, a
    // third of the way.
    let toi = a[4]["toi"].as_f64().unwrap_or_else(|| panic!("{}", a[4]));
    assert!((toi - 2.0 / 9.0).abs() < 1e-6, "{}", a[4]);
    // JSON that is not an object names its line too (it has no id to be told by).
    assert!(error(5).contains("line 7 is not a JSON object"), "{}", a[5]);
    // null is absent, for a pose and for either of its parts alike.
    assert_eq!(a[6]["distance"], 2.0, "{}", a[6]);
    // A byte-order mark on a first line that is otherwise blank leaves a blank line,
    // skipped (it was answered as an error).
    let a = answers(&format!("\u{feff}\n{}", input.lines().nth(1).unwrap()));
    assert_eq!(a.len(), 1, "{a:?}");
    assert!(
        a[0]["error"].as_str().unwrap().contains("pose_b_ennd"),
        "{a:?}"
    );
}

/// Frames of blocks (3 × 3 with the middle missing, 4 × 4 with the middle 2 × 2) at a
/// thousandth and at a thousand units, decomposed, with a block-sized box in every empty
/// cell around them but the hole (each touching a block by a face, an edge or a corner,
/// exactly) and
/// one a tenth of a block clear: distance, collide and penetration answer alike. The
/// pieces' planes round otherwise than the box's: collide passed over an inner node pair
/// its walk put 1e-19 apart, and penetration answered apart where the depth walk found an
/// axis apart by the rounding, while distance said touching.
#[test]
fn a_box_touching_a_block_model_is_touching_for_every_query() {
    let dir = std::env::temp_dir().join(format!("proxima-blocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut lines = String::new();
    let mut expected = Vec::new();
    for (n, hole) in [(3, 1..2), (4, 1..3)] {
        let cells: Vec<[i32; 3]> = (0..n)
            .flat_map(|x| (0..n).map(move |y| [x, y, 0]))
            .filter(|&[x, y, _]| !(hole.contains(&x) && hole.contains(&y)))
            .collect();
        let frame = common::blocks(&cells);
        for scale in [1e-3, 1e3] {
            let path = dir.join(format!("frame{n}-{scale}.obj"));
            let mut obj = String::new();
            for v in &frame.vertices {
                obj += &format!("v {} {} {}\n", v.x * scale, v.y * scale, v.z * scale);
            }
            for t in &frame.triangles {
                obj += &format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
            }
            std::fs::write(&path, obj).unwrap();
            let mut probes: Vec<([f64; 3], bool)> = Vec::new();
            for x in -1..=n {
                for y in -1..=n {
                    for z in -1..=1 {
                        // Not in the hole: the pieces may bridge into it by the
                        // decomposition's deviation.
                        let in_hole = z == 0 && hole.contains(&x) && hole.contains(&y);
                        if !cells.contains(&[x, y, z]) && !in_hole {
                            let c = [x, y, z].map(|i| f64::from(i) + 0.5);
                            probes.push((c, true));
                        }
                    }
                }
            }
            probes.push(([f64::from(n) + 0.6, 0.5, 0.5], false));
            for (at, touch) in probes {
                for query in ["distance", "collide", "penetration"] {
                    lines += &format!(
                        "{{\"id\":{},\"query\":\"{query}\",\"a\":{{\"obj\":{:?}}},\"b\":{{\"box\":[{h},{h},{h}]}},\"pose_b\":{{\"translation\":[{},{},{}]}}}}\n",
                        expected.len(),
                        path.display().to_string(),
                        at[0] * scale,
                        at[1] * scale,
                        at[2] * scale,
                        h = 0.5 * scale,
                    );
                    expected.push((n, scale, at, query, touch));
                }
            }
        }
    }
    let a = answers(&lines);
    let wrong: Vec<String> = a
        .iter()
        .zip(&expected)
        .filter(|(answer, (.., query, touch))| {
            answer["intersecting"].as_bool().unwrap_or(false) != *touch
                || (*touch
                    && *query != "collide"
                    && answer
                        .get("distance")
                        .or(answer.get("depth"))
                        .and_then(Value::as_f64)
                        != Some(0.0))
        })
        .map(|(answer, (n, scale, at, query, _))| {
            format!("frame {n} × {scale}, {query} at {at:?}: {answer}")
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {}: {:#?}",
        wrong.len(),
        a.len(),
        &wrong[..wrong.len().min(6)]
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `toi` of balls overlapping at the start: concentric ones have no normal of their own
/// and say so as penetration does (`"arbitrary_normal": true`; toi said nothing), offset
/// ones do not.
#[test]
fn toi_of_concentric_balls_says_its_normal_is_arbitrary() {
    let a = answers(
        "{\"id\":1,\"query\":\"toi\",\"a\":{\"sphere\":{\"radius\":1}},\"b\":{\"sphere\":{\"radius\":0.5}},\"pose_b_end\":{\"translation\":[3,0,0]}}\n\
         {\"id\":2,\"query\":\"toi\",\"a\":{\"sphere\":{\"radius\":1}},\"b\":{\"sphere\":{\"radius\":0.5}},\"pose_b\":{\"translation\":[1,0,0]},\"pose_b_end\":{\"translation\":[3,0,0]}}\n\
         {\"id\":3,\"query\":\"penetration\",\"a\":{\"sphere\":{\"radius\":1}},\"b\":{\"sphere\":{\"radius\":0.5}}}\n",
    );
    for answer in &a[..2] {
        assert_eq!(
            (&answer["toi"], &answer["overlapping"]),
            (&Value::from(0.0), &Value::Bool(true)),
            "{answer}"
        );
    }
    assert_eq!(a[0]["arbitrary_normal"], true, "{}", a[0]);
    assert!(a[1].get("arbitrary_normal").is_none(), "{}", a[1]);
    assert_eq!(a[2]["arbitrary_normal"], true, "{}", a[2]);
}
