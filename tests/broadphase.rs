//! Broadphase: GPU hash, GPU sweep, both CPU twins and brute force must report exactly the
//! same sorted pair set, on scenes built to break them.

mod common;

use glam::{DVec3, Vec3};
use proxima::bodies::GpuAabb;
use proxima::broadphase::{GpuBroadphase, cpu_pairs};
use proxima::gpu::Engine;
use proxima::passes::broadphase::{Method, brute_pairs};
use proxima::rng::Rng;

fn cube(c: Vec3, h: f32) -> GpuAabb {
    GpuAabb::new(c - Vec3::splat(h), c + Vec3::splat(h))
}

fn uniform(n: usize, seed: u64) -> Vec<GpuAabb> {
    let mut rng = Rng::new(seed);
    let side = (n as f64 * 8.0).cbrt();
    (0..n)
        .map(|_| {
            let c = rng.point_in(DVec3::ZERO, DVec3::splat(side)).as_vec3();
            let h = rng.point_in(DVec3::splat(0.2), DVec3::splat(0.8)).as_vec3();
            GpuAabb::new(c - h, c + h)
        })
        .collect()
}

fn clustered(n: usize, seed: u64) -> Vec<GpuAabb> {
    let mut rng = Rng::new(seed);
    let centers: Vec<DVec3> = (0..8)
        .map(|_| rng.point_in(DVec3::splat(-200.0), DVec3::splat(200.0)))
        .collect();
    (0..n)
        .map(|_| {
            let c = centers[rng.below(8) as usize] + rng.unit_vector() * rng.range(0.0, 6.0);
            cube(c.as_vec3(), rng.range(0.1, 0.6) as f32)
        })
        .collect()
}

/// All methods against each other (and brute force when `brute`).
fn check_all(label: &str, aabbs: &[GpuAabb], brute: bool) -> usize {
    check_methods(label, aabbs, brute, &[Method::Hash, Method::Sweep])
}

/// Both CPU twins against each other (and brute force when `brute`), and the GPU
/// `gpu_methods` against them.
fn check_methods(label: &str, aabbs: &[GpuAabb], brute: bool, gpu_methods: &[Method]) -> usize {
    let want = if brute {
        brute_pairs(aabbs)
    } else {
        cpu_pairs(aabbs, Method::Sweep).expect("valid boxes")
    };
    assert_eq!(
        cpu_pairs(aabbs, Method::Sweep).expect("valid boxes"),
        want,
        "{label}: cpu sweep"
    );
    assert_eq!(
        cpu_pairs(aabbs, Method::Hash).expect("valid boxes"),
        want,
        "{label}: cpu hash"
    );
    if let Some(ctx) = common::gpu(label) {
        let mut engine = Engine::new(ctx);
        for &method in gpu_methods {
            let mut bp = GpuBroadphase::default();
            let got = bp
                .run(&mut engine, aabbs, method)
                .unwrap_or_else(|e| panic!("{label}: gpu {}: {e}", method.name()));
            assert_eq!(
                got.pairs.len(),
                want.len(),
                "{label}: gpu {} pair count",
                method.name()
            );
            assert_eq!(got.pairs, want, "{label}: gpu {}", method.name());
        }
    }
    for w in want.windows(2) {
        assert!(w[0] < w[1], "{label}: duplicate or unsorted pair");
    }
    want.len()
}

#[test]
fn uniform_random_scenes() {
    let n1 = check_all("uniform 1k", &uniform(1000, 1), true);
    let n2 = check_all("uniform 100k", &uniform(100_000, 2), true);
    assert!(n1 > 100 && n2 > 10_000, "{n1} {n2}");
}

#[test]
fn clustered_scene() {
    assert!(check_all("clustered 20k", &clustered(20_000, 3), true) > 10_000);
}

#[test]
fn everything_overlapping_one_point_forces_overflow() {
    let mut rng = Rng::new(4);
    let n = 2000;
    let boxes: Vec<GpuAabb> = (0..n)
        .map(|_| {
            let c = rng
                .point_in(DVec3::splat(-0.1), DVec3::splat(0.1))
                .as_vec3();
            cube(c, 1.0)
        })
        .collect();
    assert_eq!(check_all("one point", &boxes, true), n * (n - 1) / 2);
    if let Some(ctx) = common::gpu("one point runs") {
        let mut engine = Engine::new(ctx);
        let run = GpuBroadphase::default()
            .run(&mut engine, &boxes, Method::Hash)
            .unwrap();
        assert!(
            run.runs > 1,
            "a first guess of 4 pairs per body cannot hold N(N-1)/2"
        );
    }
}

#[test]
fn one_huge_body_among_small_ones() {
    let mut boxes = uniform(5000, 5);
    boxes[1234] = cube(Vec3::splat(20.0), 15.0);
    boxes.push(cube(Vec3::splat(5.0), 30.0));
    check_all("huge bodies", &boxes, true);
}

/// The CPU hash finds an oversize box's partners by a sweep along x from its start less
/// the widest small box: boxes that touch it exactly at either x face, the widest small
/// boxes reaching it from far to the left, and oversize boxes touching each other, near
/// the origin and a million away (where an f32 step is 1/16), all as brute force has them.
#[test]
fn oversize_boxes_meet_every_box_they_touch() {
    for offset in [0.0f32, 1.0e6] {
        let mut rng = Rng::new(41);
        let o = Vec3::splat(offset);
        let mut boxes: Vec<GpuAabb> = (0..3000)
            .map(|_| {
                let c = Vec3::new(
                    rng.range(-40.0, 40.0) as f32,
                    rng.range(-40.0, 40.0) as f32,
                    rng.range(-40.0, 40.0) as f32,
                );
                cube(o + c, rng.range(0.2, 0.6) as f32)
            })
            .collect();
        // Oversize boxes, two touching at a face.
        let big = |lo: Vec3, hi: Vec3| GpuAabb::new(o + lo, o + hi);
        boxes.push(big(
            Vec3::new(-10.0, -10.0, -10.0),
            Vec3::new(10.0, 10.0, 10.0),
        ));
        boxes.push(big(Vec3::new(10.0, -30.0, -5.0), Vec3::new(30.0, 0.0, 5.0)));
        boxes.push(big(
            Vec3::new(-35.0, 12.0, -35.0),
            Vec3::new(-15.0, 30.0, 35.0),
        ));
        // Small boxes touching the first exactly at its x faces, and the widest small
        // boxes (long along x) ending exactly at its start.
        for k in 0..20 {
            let (y, z) = (-9.0 + k as f32, 9.0 - k as f32);
            boxes.push(big(
                Vec3::new(10.0, y, z),
                Vec3::new(10.5, y + 0.5, z + 0.5),
            ));
            boxes.push(big(
                Vec3::new(-10.5, y, z),
                Vec3::new(-10.0, y + 0.5, z + 0.5),
            ));
            boxes.push(big(
                Vec3::new(-14.0, y, z),
                Vec3::new(-10.0, y + 0.3, z + 0.3),
            ));
            boxes.push(big(
                Vec3::new(-14.0, y, z),
                Vec3::new(-10.0625, y + 0.3, z + 0.3),
            ));
        }
        let n = check_all(&format!("oversize touches at {offset}"), &boxes, true);
        assert!(n > 100, "{n} pairs");
    }
}

#[test]
fn many_huge_bodies_overflow_the_workgroup_pair_stage() {
    // Every small body overlaps all 40 huge ones: a GPU workgroup of 256 finds some 10k
    // pairs, far past its 1024-pair stage, in the hash's oversize pass and in the sweep;
    // the pairs past the stage take the direct path and none may be lost.
    let mut boxes = uniform(3000, 11);
    for i in 0..40 {
        boxes.push(cube(Vec3::splat(14.0 + 0.05 * i as f32), 40.0));
    }
    let pairs = check_all("many huge bodies", &boxes, true);
    assert!(pairs > 3000 * 40, "{pairs}");
}

#[test]
fn the_boulders_scene_agrees_across_methods() {
    // Real input with a few huge bodies: scenes/boulders.toml at 100k bodies (500 rocks
    // 10-20x the crowd's size), boxes from the bounds pass.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/boulders.toml");
    let scene = proxima::scene::Scene::load_resized(&path, Some(100_000)).expect("scene");
    let boxes = proxima::frame::cpu(&scene.crowd.bodies, &scene.crowd.shapes, None)
        .expect("bounds")
        .aabbs;
    assert!(check_all("boulders", &boxes, false) > 100_000);
}

#[test]
fn bodies_exactly_on_cell_boundaries() {
    // Unit cubes on an integer lattice touch their neighbours face to face: closed boxes
    // overlap, so every lattice neighbour (26 of them) is a pair.
    let mut boxes = Vec::new();
    for x in 0..12 {
        for y in 0..12 {
            for z in 0..12 {
                boxes.push(GpuAabb::new(
                    Vec3::new(x as f32, y as f32, z as f32),
                    Vec3::new(x as f32 + 1.0, y as f32 + 1.0, z as f32 + 1.0),
                ));
            }
        }
    }
    let pairs = check_all("lattice", &boxes, true);
    // Neighbour pairs of a 12³ lattice in 26 directions, each counted once.
    let n = 12i64;
    let expected: i64 = (-1..=1)
        .flat_map(|dx| (-1..=1).flat_map(move |dy| (-1..=1).map(move |dz| (dx, dy, dz))))
        .filter(|&d| d != (0, 0, 0))
        .map(|(dx, dy, dz): (i64, i64, i64)| (n - dx.abs()) * (n - dy.abs()) * (n - dz.abs()))
        .sum::<i64>()
        / 2;
    assert_eq!(pairs as i64, expected);
}

#[test]
fn empty_and_single_body_scenes() {
    assert_eq!(check_all("empty", &[], true), 0);
    assert_eq!(check_all("single", &[cube(Vec3::ZERO, 1.0)], true), 0);
    assert_eq!(
        check_all("two", &[cube(Vec3::ZERO, 1.0), cube(Vec3::X, 1.0)], true),
        1
    );
}

#[test]
fn a_million_bodies_match_the_cpu_twin() {
    // The GPU sweep of a uniform crowd grows as N^(5/3) (auto picks the hash there): at 1M
    // it takes half a minute on a software adapter, which is a benchmark's business
    // (`proxima bench broadphase`), not a test's. A hardware adapter runs both.
    let software = common::gpu("uniform 1M").is_some_and(|ctx| ctx.is_software());
    let methods: &[Method] = if software {
        &[Method::Hash]
    } else {
        &[Method::Hash, Method::Sweep]
    };
    check_methods("uniform 1M", &uniform(1_000_000, 6), false, methods);
}

/// A device with wgpu's default limits (128 MiB storage bindings), however large the
/// adapter's are.
fn default_limits_engine() -> Option<Engine> {
    let (device, queue) = common::device_with_limits("default limits", wgpu::Limits::default())?;
    Some(Engine::new(proxima::gpu::GpuContext::from_device(
        device, queue,
    )))
}

#[test]
fn four_million_bodies_fit_the_default_limits() {
    let Some(mut engine) = default_limits_engine() else {
        return;
    };
    assert_eq!(
        engine.context().limits().max_storage_buffer_binding_size,
        128 << 20
    );
    let boxes = uniform(4_000_000, 7);
    let got = GpuBroadphase::default()
        .run(&mut engine, &boxes, Method::Hash)
        .expect("4M bodies");
    assert_eq!(
        got.pairs,
        cpu_pairs(&boxes, Method::Hash).expect("valid boxes")
    );
}

#[test]
fn a_scene_larger_than_the_device_is_a_named_error() {
    let Some(mut engine) = default_limits_engine() else {
        return;
    };
    // 4.5M boxes of 32 bytes: 144 MB, past the 128 MiB binding limit.
    let boxes = vec![cube(Vec3::ZERO, 1.0); 4_500_000];
    match GpuBroadphase::default().run(&mut engine, &boxes, Method::Hash) {
        Err(proxima::Error::BufferLimit {
            label, limit_name, ..
        }) => {
            assert_eq!(label, "aabbs");
            assert_eq!(limit_name, "max_storage_buffer_binding_size");
        }
        other => panic!(
            "expected a buffer-limit error, got {:?}",
            other.map(|r| r.pairs.len())
        ),
    }
}

/// The same boxes spread over a grid with far more cells than the hash table has buckets:
/// cells share buckets, which must cost comparisons, never pairs.
#[test]
fn a_sparse_grid_with_shared_buckets_loses_no_pair() {
    use proxima::passes::broadphase::{GpuHashParams, hash_grid};
    let small = uniform(2000, 8);
    let wide: Vec<GpuAabb> = small
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let shift = Vec3::new((i % 2) as f32, (i / 2 % 2) as f32, 0.0) * 1000.0;
            GpuAabb::new(
                Vec3::from_array(b.min) + shift,
                Vec3::from_array(b.max) + shift,
            )
        })
        .collect();
    let g = hash_grid(&wide);
    let cells: u64 = g.dims.iter().map(|&d| u64::from(d)).product();
    let buckets = GpuHashParams::for_bodies(wide.len() as u32).buckets;
    assert!(
        cells > 100 * u64::from(buckets),
        "{cells} cells, {buckets} buckets"
    );
    let n = check_all("sparse grid", &wide, true);
    assert!(n > 100, "{n} pairs");
    // A coherent frame after a dense one: the capacities learned there still serve.
    if let Some(ctx) = common::gpu("sparse after dense") {
        let mut engine = Engine::new(ctx);
        let mut bp = GpuBroadphase::default();
        for boxes in [&small, &wide, &small] {
            let run = bp.run(&mut engine, boxes, Method::Hash).unwrap();
            assert_eq!(run.pairs, brute_pairs(boxes));
        }
    }
}

#[test]
fn boxes_that_are_not_boxes_are_named_errors() {
    let mut boxes = uniform(100, 9);
    boxes[42].max[1] = f32::NAN;
    let err = cpu_pairs(&boxes, Method::Hash).unwrap_err();
    assert!(err.to_string().contains("body 42"), "{err}");
    boxes[42] = GpuAabb::new(Vec3::ONE, Vec3::ZERO);
    assert!(
        cpu_pairs(&boxes, Method::Sweep)
            .unwrap_err()
            .to_string()
            .contains("body 42")
    );
    if let Some(ctx) = common::gpu("bad boxes") {
        let mut engine = Engine::new(ctx);
        let err = GpuBroadphase::default()
            .run(&mut engine, &boxes, Method::Hash)
            .unwrap_err();
        assert!(err.to_string().contains("body 42"), "{err}");
    }
}

#[test]
fn gpu_setup_pass_matches_its_cpu_twin() {
    use proxima::graph::Recording;
    use proxima::passes::broadphase::{
        Capacities, GpuBroadphaseSetup, hash_grid, record_broadphase,
    };
    let Some(ctx) = common::gpu("setup twin") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let mut rng = Rng::new(10);
    // Spread 1 : 3 : 9 along x, y, z, so the sweep axis is clear (z), over 50k boxes.
    let boxes: Vec<GpuAabb> = (0..50_000)
        .map(|_| {
            let c = rng
                .point_in(DVec3::ZERO, DVec3::new(10.0, 30.0, 90.0))
                .as_vec3();
            cube(c, rng.range(0.1, 0.9) as f32)
        })
        .collect();
    let mut rec = Recording::new();
    let b = rec.array_buffer::<GpuAabb>(boxes.len(), "aabbs");
    rec.upload(b, &boxes);
    let out = record_broadphase(
        &mut rec,
        b,
        boxes.len() as u32,
        Method::Sweep,
        Capacities::guess(boxes.len()),
    );
    let rb = rec.readback(out.setup);
    let gpu: GpuBroadphaseSetup = engine
        .run(&rec, &[])
        .unwrap()
        .values::<GpuBroadphaseSetup>(rb)[0];
    let cpu = hash_grid(&boxes);
    assert_eq!(gpu.axis, 2);
    assert_eq!(gpu.axis, cpu.axis);
    assert_eq!(
        gpu.grid_min, cpu.grid_min,
        "the lower corner is a minimum: exact"
    );
    // Sums in another order differ in the last bits: the cell size by a few ulps, and a
    // cell count by at most one where size / cell lands on an integer.
    assert!(
        (gpu.cell - cpu.cell).abs() <= 1e-5 * cpu.cell,
        "{} vs {}",
        gpu.cell,
        cpu.cell
    );
    for k in 0..3 {
        assert!(
            gpu.dims[k].abs_diff(cpu.dims[k]) <= 1,
            "{:?} vs {:?}",
            gpu.dims,
            cpu.dims
        );
    }
}

#[test]
fn gpu_hash_table_passes_match_their_cpu_twin_on_the_same_grid() {
    use proxima::graph::Recording;
    use proxima::passes::broadphase::{
        Capacities, GpuBroadphaseSetup, GpuPairCounter, hash_table_cpu, record_broadphase,
        record_hash_table,
    };
    let Some(ctx) = common::gpu("hash table twin") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let dense = {
        let mut boxes = uniform(30_000, 11);
        boxes[7] = cube(Vec3::splat(10.0), 12.0); // oversize
        boxes[9] = cube(Vec3::splat(20.0), 15.0); // oversize
        boxes
    };
    // Spread wide: more cells than buckets, so buckets are hashed and shared.
    let sparse: Vec<GpuAabb> = dense
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let shift = Vec3::new((i % 53) as f32, (i % 97) as f32, 0.0) * 300.0;
            GpuAabb::new(
                Vec3::from_array(b.min) + shift,
                Vec3::from_array(b.max) + shift,
            )
        })
        .collect();
    for (label, boxes) in [("dense", &dense), ("sparse", &sparse)] {
        let n = boxes.len() as u32;
        // The setup on the GPU, then the table's passes alone on the same grid.
        let mut rec = Recording::new();
        let b = rec.array_buffer::<GpuAabb>(boxes.len(), "aabbs");
        rec.upload(b, boxes);
        let out = record_broadphase(&mut rec, b, n, Method::Sweep, Capacities::guess(0));
        let counter = rec.buffer(size_of::<GpuPairCounter>() as u64, "counter");
        let room = 8 * n;
        rec.upload(
            counter,
            &[GpuPairCounter {
                entry_capacity: room,
                ..Default::default()
            }],
        );
        let t = record_hash_table(&mut rec, b, n, out.setup, counter, room);
        let rb_setup = rec.readback(out.setup);
        let rb_counter = rec.readback(counter);
        let rb_ends = rec.readback(t.ends);
        let rb_cells = rec.readback(t.cells);
        let rb_bodies = rec.readback(t.bodies);
        let rb_over = rec.readback(t.oversize);
        let frame = engine.run(&rec, &[]).unwrap();
        let setup: GpuBroadphaseSetup = frame.values::<GpuBroadphaseSetup>(rb_setup)[0];
        let want = hash_table_cpu(boxes, &setup);
        let cells: u64 = setup.dims.iter().map(|&d| u64::from(d)).product();
        let hashed = cells > want.bucket_counts.len() as u64;
        assert_eq!(hashed, label == "sparse", "{label}: {cells} cells");
        let counter: GpuPairCounter = frame.values::<GpuPairCounter>(rb_counter)[0];
        assert_eq!(counter.entries as usize, want.entries.len(), "{label}");
        // Bucket ends are the running sums of the twin's bucket counts.
        let ends: Vec<u32> = frame.values(rb_ends);
        let mut sum = 0;
        let want_ends: Vec<u32> = want
            .bucket_counts
            .iter()
            .map(|&c| {
                sum += c;
                sum
            })
            .collect();
        assert!(ends == want_ends, "{label}: bucket ends differ");
        // Entries: the same multiset in every bucket.
        let cells: Vec<u32> = frame.values(rb_cells);
        let bodies: Vec<u32> = frame.values(rb_bodies);
        let mut entries: Vec<[u32; 2]> = (0..want.entries.len())
            .map(|e| [cells[e], bodies[e]])
            .collect();
        let mut start = 0;
        for &end in &ends {
            entries[start..end as usize].sort_unstable();
            start = end as usize;
        }
        assert!(entries == want.entries, "{label}: entries differ");
        let over: Vec<u32> = frame.values(rb_over);
        let mut listed: Vec<u32> = over[1..=over[0] as usize].to_vec();
        listed.sort_unstable();
        assert_eq!(listed, want.oversize, "{label}");
        assert_eq!(want.oversize, [7, 9], "{label}");
    }
}

#[test]
fn gpu_sweep_gather_pass_matches_its_cpu_twin() {
    use proxima::gpu::sizes::{BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X, dispatch_grid};
    use proxima::graph::Recording;
    use proxima::passes::broadphase::{GpuCountParams, GpuSortedBox, sap_gather_cpu};
    use proxima::shaders::ShaderId;
    let Some(ctx) = common::gpu("gather twin") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let boxes = uniform(5000, 12);
    // Any permutation will do: a shuffled order.
    let mut rng = Rng::new(13);
    let mut order: Vec<u32> = (0..boxes.len() as u32).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let n = boxes.len() as u32;
    let mut rec = Recording::new();
    let params = rec.buffer(16, "params");
    rec.upload(
        params,
        &[GpuCountParams {
            count: n,
            groups: 0,
            _pad0: 0,
            _pad1: 0,
        }],
    );
    let b = rec.array_buffer::<GpuAabb>(boxes.len(), "aabbs");
    rec.upload(b, &boxes);
    let o = rec.array_buffer::<u32>(order.len(), "order");
    rec.upload(o, &order);
    let sorted = rec.array_buffer::<GpuSortedBox>(boxes.len(), "sorted");
    rec.dispatch(
        ShaderId::SapGather,
        dispatch_grid(n, BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X),
        &[params, b, o, sorted],
    );
    let rb = rec.readback(sorted);
    let got: Vec<GpuSortedBox> = engine.run(&rec, &[]).unwrap().values(rb);
    assert!(
        got == sap_gather_cpu(&boxes, &order),
        "gathered boxes differ"
    );
}

#[test]
fn gpu_sweep_reach_pass_matches_its_cpu_twin() {
    use proxima::gpu::sizes::{BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X, dispatch_grid};
    use proxima::graph::Recording;
    use proxima::passes::broadphase::{
        GpuBroadphaseSetup, GpuSweepParams, hash_grid, sap_gather_cpu, sap_reach_cpu,
    };
    use proxima::shaders::ShaderId;
    let Some(ctx) = common::gpu("reach twin") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    // Huge boxes make sweeps of many chunks; lattice cubes make lower bounds equal to
    // upper bounds (closed boxes: a sweep reaches a box that only touches it).
    let mut boxes = uniform(5000, 14);
    for i in 0..5 {
        boxes[i * 700] = cube(Vec3::splat(12.0 + i as f32), 10.0);
    }
    for x in 0..20 {
        boxes.push(cube(Vec3::new(x as f32 + 0.5, 30.5, 30.5), 0.5));
    }
    let setup = hash_grid(&boxes);
    let axis = setup.axis as usize;
    let mut order: Vec<u32> = (0..boxes.len() as u32).collect();
    order.sort_by(|&a, &b| boxes[a as usize].min[axis].total_cmp(&boxes[b as usize].min[axis]));
    let sorted = sap_gather_cpu(&boxes, &order);
    let n = boxes.len() as u32;
    for chunk in [1, 7, 256] {
        let mut rec = Recording::new();
        let params = rec.buffer(size_of::<GpuSweepParams>() as u64, "params");
        rec.upload(
            params,
            &[GpuSweepParams {
                count: n,
                chunk,
                _pad0: 0,
                _pad1: 0,
            }],
        );
        let g = rec.buffer(size_of::<GpuBroadphaseSetup>() as u64, "setup");
        rec.upload(g, &[setup]);
        let s = rec.array_buffer::<proxima::passes::broadphase::GpuSortedBox>(sorted.len(), "s");
        rec.upload(s, &sorted);
        let ends = rec.array_buffer::<u32>(sorted.len(), "ends");
        let chunks = rec.array_buffer::<u32>(sorted.len(), "chunks");
        rec.dispatch(
            ShaderId::SapReach,
            dispatch_grid(n, BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X),
            &[params, g, s, ends, chunks],
        );
        let (rb_ends, rb_chunks) = (rec.readback(ends), rec.readback(chunks));
        let out = engine.run(&rec, &[]).unwrap();
        let (want_ends, want_chunks) = sap_reach_cpu(&sorted, axis, chunk);
        assert_eq!(out.values::<u32>(rb_ends), want_ends, "chunk {chunk}: ends");
        assert_eq!(
            out.values::<u32>(rb_chunks),
            want_chunks,
            "chunk {chunk}: items"
        );
        assert!(
            want_chunks.iter().any(|&c| c > 1),
            "chunk {chunk}: some sweep spans items"
        );
    }
}

#[test]
fn a_long_sweep_is_spread_over_work_items_and_loses_no_pair() {
    // One huge box among 200k: its sweep passes over some 100k boxes, more than one
    // invocation may loop on a software adapter; split into items, nothing is lost.
    let mut boxes = uniform(200_000, 15);
    boxes[0] = GpuAabb::new(Vec3::splat(10.0), Vec3::splat(60.0));
    check_all("long sweep", &boxes, false);
}

#[test]
fn a_hash_bucket_longer_than_an_adapter_loop_limit_loses_no_pair() {
    // 70k tiny boxes in one cell (the cell size follows the mean box, set by 70k larger
    // boxes far away): each entry of that cell has up to 70k candidates. An invocation
    // tests at most 256 and spills the rest as work items, so llvmpipe's limit (65535
    // loop iterations per invocation) is never reached and the items (about 9.5M) overflow
    // their first guess of room, forcing a re-run.
    let mut rng = Rng::new(16);
    let mut boxes: Vec<GpuAabb> = (0..70_000)
        .map(|_| {
            cube(
                rng.point_in(DVec3::splat(0.1), DVec3::splat(1.9)).as_vec3(),
                0.0005,
            )
        })
        .collect();
    boxes.extend((0..70_000).map(|_| {
        cube(
            rng.point_in(DVec3::splat(100.0), DVec3::splat(400.0))
                .as_vec3(),
            2.0,
        )
    }));
    let want = cpu_pairs(&boxes, Method::Sweep).expect("valid boxes");
    let Some(ctx) = common::gpu("long bucket") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let run = GpuBroadphase::default()
        .run(&mut engine, &boxes, Method::Hash)
        .expect("no loop cut short");
    assert_eq!(run.pairs, want);
    assert!(run.runs > 1, "the spill items fit their first guess");
}

#[test]
fn auto_picks_the_sweep_only_for_one_axis_crowds_or_many_oversize_boxes() {
    use proxima::passes::broadphase::choose_method;
    let crowd = uniform(20_000, 17);
    assert_eq!(choose_method(&crowd), Method::Hash, "uniform crowd");
    // A few huge boxes: the hash tests them against everything, cheaply.
    let mut few = crowd.clone();
    for i in 0..5 {
        few[i * 1000] = cube(Vec3::splat(20.0), 15.0 + i as f32);
    }
    assert_eq!(choose_method(&few), Method::Hash, "5 huge boxes");
    // 3 % of the boxes 20× larger: the oversize list would be long.
    let mut many = crowd;
    for b in many.iter_mut().step_by(33) {
        let c = (Vec3::from(b.min) + Vec3::from(b.max)) * 0.5;
        *b = cube(c, 12.0);
    }
    assert_eq!(choose_method(&many), Method::Sweep, "3 % huge boxes");
    // A corridor: spread along x only.
    let mut rng = Rng::new(18);
    let corridor: Vec<GpuAabb> = (0..20_000)
        .map(|_| {
            let c = rng.point_in(DVec3::ZERO, DVec3::new(2000.0, 10.0, 10.0));
            cube(c.as_vec3(), 0.5)
        })
        .collect();
    assert_eq!(choose_method(&corridor), Method::Sweep, "corridor");
}

#[test]
fn room_stays_within_the_binding_limit_unless_a_run_needs_more() {
    use proxima::passes::broadphase::{Capacities, GpuPairCounter};
    let max = Capacities::device_max(&wgpu::Limits::default());
    assert_eq!(max.pairs, (128 << 20) / 8);
    assert_eq!(max.entries, (128 << 20) / 4);
    assert_eq!(max.spill, (128 << 20) / 8);
    // A first guess for 100M bodies is cut to what can be bound (spill items start small:
    // only long hash buckets make them).
    let guess = Capacities::guess(100_000_000).capped(max, None);
    assert_eq!(guess, Capacities { spill: 1024, ..max });
    // A run that needs a little less than the limit: the quarter spare is cut, the need kept.
    let near = GpuPairCounter {
        count: max.pairs - 10,
        entries: max.entries - 10,
        ..Default::default()
    };
    let grown = guess.grown_for(&near).capped(max, Some(&near));
    assert_eq!(grown, Capacities { spill: 1024, ..max });
    assert!(!grown.overflowed(&near));
    // A run that needs more than the limit keeps its need, so the engine names the limit.
    let past = GpuPairCounter {
        count: max.pairs + 10,
        entries: 5,
        ..Default::default()
    };
    let grown = guess.grown_for(&past).capped(max, Some(&past));
    assert_eq!(grown.pairs, max.pairs + 10);
    assert!(!grown.overflowed(&past));
}

#[test]
fn more_bodies_than_the_limit_is_a_named_error() {
    use proxima::bodies::MAX_BODIES;
    use proxima::passes::broadphase::check_body_count;
    assert!(check_body_count(MAX_BODIES).is_ok());
    let err = check_body_count(MAX_BODIES + 1).unwrap_err().to_string();
    assert!(
        err.contains("268435457 bodies") && err.contains("2^28"),
        "{err}"
    );
}

/// Runs `method` over `boxes` with the counter's words starting at `start`; the counter
/// afterwards.
fn counter_after(
    engine: &mut Engine,
    boxes: &[GpuAabb],
    method: Method,
    start: proxima::passes::broadphase::GpuPairCounter,
) -> proxima::passes::broadphase::GpuPairCounter {
    use proxima::graph::Recording;
    use proxima::passes::broadphase::{Capacities, record_broadphase_counting_from};
    let mut rec = Recording::new();
    let b = rec.array_buffer::<GpuAabb>(boxes.len(), "aabbs");
    rec.upload(b, boxes);
    let caps = Capacities::guess(boxes.len());
    let out = record_broadphase_counting_from(&mut rec, b, boxes.len() as u32, method, caps, start);
    let rb = rec.readback(out.counter);
    engine.run(&rec, &[]).unwrap().values(rb)[0]
}

#[test]
fn counters_that_pass_two_to_the_32_are_flagged_not_wrapped() {
    use proxima::passes::broadphase::GpuPairCounter;
    let Some(ctx) = common::gpu("counter wrap") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    // A crowd with pairs and hash entries; and 600 boxes in one cell, so a hash bucket
    // is longer than one invocation's 256 candidates and spills.
    let crowd = uniform(3000, 5);
    let pairs = brute_pairs(&crowd).len() as u32;
    assert!(pairs > 8);
    let pile: Vec<GpuAabb> = (0..600)
        .map(|i| cube(Vec3::new(0.001 * i as f32, 0.0, 0.0), 0.5))
        .collect();
    let near = u32::MAX - 4;
    for method in [Method::Hash, Method::Sweep] {
        // From zero: nothing wraps, and the count is the brute-force count.
        let c = counter_after(&mut engine, &crowd, method, GpuPairCounter::default());
        assert_eq!((c.wrapped, c.count), (0, pairs), "{method:?}");
        // Pairs from 2^32 − 5: the adds pass the top.
        let start = GpuPairCounter {
            count: near,
            ..Default::default()
        };
        let c = counter_after(&mut engine, &crowd, method, start);
        assert_ne!(c.wrapped, 0, "{method:?} pairs");
        assert_eq!(c.count, near.wrapping_add(pairs), "{method:?}");
    }
    // Hash entries from 2^32 − 5.
    let start = GpuPairCounter {
        entries: near,
        ..Default::default()
    };
    assert_ne!(
        counter_after(&mut engine, &crowd, Method::Hash, start).wrapped,
        0
    );
    // Spill items from 2^32 − 5; from zero the pile spills without wrapping.
    let c = counter_after(&mut engine, &pile, Method::Hash, GpuPairCounter::default());
    assert!(c.spill > 4 && c.wrapped == 0, "{c:?}");
    let start = GpuPairCounter {
        spill: near,
        ..Default::default()
    };
    assert_ne!(
        counter_after(&mut engine, &pile, Method::Hash, start).wrapped,
        0
    );
}

#[test]
fn a_wrapped_counter_is_a_named_error() {
    use proxima::broadphase::{Attempt, run_until_fits};
    use proxima::passes::broadphase::{Capacities, GpuPairCounter};
    let caps = Capacities::guess(1000);
    let result = run_until_fits(caps, Method::Hash, caps, |_| {
        Ok(Attempt {
            value: (),
            counter: GpuPairCounter {
                count: 7,
                wrapped: 1,
                ..Default::default()
            },
        })
    });
    let err = result.unwrap_err().to_string();
    assert!(err.contains("2^32") && err.contains("hash"), "{err}");
}

#[test]
fn pipeline_box_pairs_under_auto_are_every_pair_whatever_the_spread() {
    use proxima::broadphase::Choice;
    use proxima::passes::broadphase::choose_method;
    use proxima::pipeline::Pipeline;
    // A crowd `auto` gives the hash, then a row of boxes along x it gives the sweep, then
    // the crowd again, through one pipeline: brute force's pairs each time.
    let crowd = uniform(5_000, 11);
    let row: Vec<GpuAabb> = (0..3_000)
        .map(|i| cube(Vec3::new(i as f32 * 0.7, 0.0, 0.0), 0.4))
        .collect();
    assert_eq!(choose_method(&crowd), Method::Hash);
    assert_eq!(choose_method(&row), Method::Sweep);
    let mut pipelines = vec![("cpu", Pipeline::cpu())];
    if let Some(ctx) = common::gpu("box pairs under auto") {
        pipelines.push(("gpu", Pipeline::on_gpu(ctx)));
    }
    for (label, mut pipeline) in pipelines {
        pipeline.set_broadphase(Choice::Auto);
        for (scene, boxes) in [("crowd", &crowd), ("row", &row), ("crowd again", &crowd)] {
            let got = pipeline.box_pairs(boxes).unwrap();
            assert_eq!(got, brute_pairs(boxes), "{label}: {scene}");
        }
        assert_eq!(pipeline.box_pairs(&row).unwrap().len(), row.len() - 1);
    }
}

#[test]
fn auto_on_a_large_set_reads_a_sample_and_chooses_as_on_the_whole() {
    use proxima::passes::broadphase::{CHOOSE_SAMPLE, choose_method};
    // Past the sample size: a uniform crowd, a corridor, and a crowd whose every 25th box
    // is a plank 40 cells long (4 % oversize, repeating with the index as a crowd's shapes
    // do: a sample of every k-th box could see all or none of them).
    let n = 20 * CHOOSE_SAMPLE;
    let crowd = uniform(n, 12);
    assert_eq!(choose_method(&crowd), Method::Hash, "uniform crowd");
    let corridor: Vec<GpuAabb> = (0..n)
        .map(|i| cube(Vec3::new(i as f32 * 0.5, (i % 7) as f32 * 0.1, 0.0), 0.4))
        .collect();
    assert_eq!(choose_method(&corridor), Method::Sweep, "corridor");
    // Every `every`-th box of the crowd made a plank 40 cells long.
    let planks = |every: usize| -> Vec<GpuAabb> {
        let mut boxes = crowd.clone();
        for b in boxes.iter_mut().step_by(every) {
            let lo = Vec3::from_array(b.min);
            *b = GpuAabb::new(lo, lo + Vec3::new(40.0, 0.5, 0.5));
        }
        boxes
    };
    assert_eq!(choose_method(&planks(25)), Method::Sweep, "4 % planks");
    assert_eq!(choose_method(&planks(1000)), Method::Hash, "0.1 % planks");
}
