//! The sphere and capsule contact pass: GPU against its CPU twin, and both against the
//! exact f64 answer (`exact::rounded`) on every pair the broadphase finds in a particle
//! crowd; degenerate pairs (concentric spheres, zero radius, touching); bad input.

mod common;

use std::sync::Arc;

use glam::{DVec3, Quat, Vec3};
use proxima::bodies::{GpuBody, Pose};
use proxima::broadphase::cpu_pairs;
use proxima::exact::rounded::{self, Contact};
use proxima::frame;
use proxima::geometry::generators;
use proxima::geometry::rounded::Rounded;
use proxima::gpu::Engine;
use proxima::particles::{GpuRoundContacts, contacts_cpu, particle_frame_cpu};
use proxima::passes::broadphase::Method;
use proxima::passes::round_contacts::{GpuRoundContact, GpuRoundShape, GpuTouchContact};
use proxima::rng::Rng;

fn round_shapes() -> Vec<Rounded> {
    vec![
        Rounded::sphere(0.5).unwrap(),
        Rounded::sphere(0.2).unwrap(),
        Rounded::capsule(0.6, 0.25).unwrap(),
        Rounded::capsule(1.5, 0.1).unwrap(),
        Rounded::sphere(0.0).unwrap(),
    ]
}

/// `n` particles of every shape at random in a cube of `cells` unit cells per particle.
fn particles(n: usize, cells: f64, seed: u64) -> Vec<GpuBody> {
    let kinds = round_shapes().len();
    let mut rng = Rng::new(seed);
    let side = (n as f64 * cells).cbrt();
    (0..n)
        .map(|i| {
            let p = rng.point_in(DVec3::splat(-side / 2.0), DVec3::splat(side / 2.0));
            GpuBody::new(p.as_vec3(), rng.rotation().as_quat(), (i % kinds) as u32)
        })
        .collect()
}

/// `n` particles of every shape in a cube sized for a few contacts each, and the pairs the
/// broadphase finds among them.
fn crowd(n: usize, seed: u64) -> (Vec<GpuBody>, Vec<[u32; 2]>) {
    let (_, bounds) = common::round_tables(&round_shapes());
    let bodies = particles(n, 0.4, seed);
    let aabbs = frame::cpu(&bodies, &bounds, None).unwrap().aabbs;
    let pairs = cpu_pairs(&aabbs, Method::Hash).unwrap();
    (bodies, pairs)
}

/// The exact signed distance (negative: depth) of a pair, f64, from the f32 body.
fn exact(shapes: &[Rounded], a: &GpuBody, b: &GpuBody) -> f64 {
    let pose = |g: &GpuBody| Pose::from_gpu(g);
    let (sa, sb) = (&shapes[a.shape as usize], &shapes[b.shape as usize]);
    let d = rounded::distance(sa, &pose(a), sb, &pose(b));
    match d.contact {
        Contact::Separated => d.distance,
        _ => rounded::penetration(sa, &pose(a), sb, &pose(b)).map_or(0.0, |p| -p.depth),
    }
}

fn check(
    shapes: &[Rounded],
    bodies: &[GpuBody],
    pairs: &[[u32; 2]],
    got: &[GpuRoundContact],
) -> usize {
    let mut overlapping = 0;
    for (c, &[a, b]) in got.iter().zip(pairs) {
        let (ba, bb) = (&bodies[a as usize], &bodies[b as usize]);
        let truth = exact(shapes, ba, bb);
        let scale = Vec3::from_array(ba.position).abs().max_element()
            + Vec3::from_array(bb.position).abs().max_element()
            + 4.0;
        assert!(
            (f64::from(c.distance) - truth).abs() <= 1e-5 * f64::from(scale),
            "pair {a}-{b}: {c:?}, exact {truth}"
        );
        let n = Vec3::from_array(c.normal);
        assert!(n == Vec3::ZERO || (n.length() - 1.0).abs() < 1e-5, "{c:?}");
        overlapping += usize::from(truth < 0.0);
    }
    overlapping
}

#[test]
fn gpu_contacts_match_the_cpu_twin_and_the_exact_answer() {
    let Some(ctx) = common::gpu("round contacts") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let shapes = round_shapes();
    let (table, _) = common::round_tables(&shapes);
    let pass = GpuRoundContacts::new(&engine, table.clone()).unwrap();
    let (bodies, pairs) = crowd(200_000, 7);
    let gpu = pass.run(&mut engine, &bodies, &pairs).unwrap().contacts;
    let cpu = contacts_cpu(&table, &bodies, &pairs).unwrap();
    assert_eq!(gpu.len(), pairs.len());
    for ((g, c), p) in gpu.iter().zip(&cpu).zip(&pairs) {
        let tol = 1e-5 * (1.0 + c.distance.abs());
        assert!(
            (g.distance - c.distance).abs() <= tol,
            "{p:?}: {g:?} vs {c:?}"
        );
        // Two nearly parallel capsule axes have ill-conditioned closest points (they slide
        // along the axes) but the same perpendicular offset, so their normals agree less
        // tightly; every other pair has one closest point.
        let capsules = p.iter().all(|&i| bodies[i as usize].shape / 2 == 1);
        // A normal is a difference of points divided by its length: f32 rounding of the
        // points (a few ulps of the coordinates) tilts it by that over the cores' gap.
        let radii: f32 = p
            .iter()
            .map(|&i| table[bodies[i as usize].shape as usize].radius)
            .sum();
        let core_gap = (c.distance + radii).max(1e-12);
        let scale = p
            .iter()
            .map(|&i| {
                Vec3::from_array(bodies[i as usize].position)
                    .abs()
                    .max_element()
            })
            .fold(1.0, f32::max);
        let conditioning = 64.0 * f32::EPSILON * scale / core_gap;
        let ntol = if capsules { 1e-2 } else { 1e-4 } + conditioning;
        let (gn, cn) = (Vec3::from_array(g.normal), Vec3::from_array(c.normal));
        assert!((gn - cn).length() <= ntol, "{p:?}: {g:?} vs {c:?}");
    }
    let overlapping = check(&shapes, &bodies, &pairs, &cpu);
    check(&shapes, &bodies, &pairs, &gpu);
    eprintln!("{} pairs, {overlapping} overlapping", pairs.len());
    assert!(overlapping > 10_000 && pairs.len() - overlapping > 10_000);
}

/// Concentric spheres (zero normal: any direction serves, depth both radii), a point on a
/// sphere's surface (touching), a capsule lying on a sphere; and what the shader must not
/// be given.
#[test]
fn degenerate_pairs_and_bad_input() {
    let shapes = round_shapes();
    let (table, _) = common::round_tables(&shapes);
    let body = |p: [f32; 3], q: Quat, s: u32| GpuBody::new(Vec3::from_array(p), q, s);
    let bodies = vec![
        body([0.0; 3], Quat::IDENTITY, 0),
        body([0.0; 3], Quat::IDENTITY, 0),
        body([0.0, 0.0, 0.5], Quat::IDENTITY, 4),
        body(
            [0.0, 0.0, 0.75],
            Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
            2,
        ),
    ];
    let c = contacts_cpu(&table, &bodies, &[[0, 1], [0, 2], [0, 3]]).unwrap();
    assert_eq!(c[0].normal, [0.0; 3]);
    assert_eq!(c[0].distance, -1.0);
    assert_eq!(c[1].distance, 0.0);
    assert_eq!(c[1].normal, [0.0, 0.0, 1.0]);
    assert!(c[2].distance.abs() < 1e-6, "{:?}", c[2]);
    let e = contacts_cpu(&table, &bodies, &[[0, 9]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("names body 9"), "{e}");
    let bad = vec![body([0.0; 3], Quat::IDENTITY, 7)];
    let e = contacts_cpu(&table, &bad, &[[0, 0]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("past the 5 round shapes"), "{e}");
    let cube = Rounded::polytope(Arc::new(generators::cuboid(DVec3::ONE).unwrap()), 0.1).unwrap();
    assert!(GpuRoundShape::new(&cube).is_err());
    assert!(contacts_cpu(&table, &bodies, &[]).unwrap().is_empty());
}

/// The whole particle frame on the GPU (bounds, broadphase, contacts; nothing read back
/// between the stages, and afterwards only the pair count and the contacts asked for)
/// against the CPU twins of the same stages: the same pair count, and the same contacts
/// within f32 rounding (one within a few ulps of the asked distance may be on one side
/// only).
#[test]
fn the_particle_frame_matches_its_cpu_twin() {
    let Some(ctx) = common::gpu("particle frame") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let shapes = round_shapes();
    let (table, bounds) = common::round_tables(&shapes);
    let mut pass = GpuRoundContacts::new(&engine, table.clone()).unwrap();
    let (bodies, _) = crowd(50_000, 11);
    let mut last = None;
    for method in [Method::Hash, Method::Sweep] {
        // Touching, then within a speculative margin, then touching again with the
        // expectation the margin left (the head holds them all).
        for within in [0.0f32, 0.05, 0.0] {
            let gpu = pass
                .frame(&mut engine, &bodies, &bounds, method, within)
                .unwrap();
            let cpu = particle_frame_cpu(&table, &bodies, &bounds, method, within).unwrap();
            assert_eq!(gpu.pairs, cpu.pairs, "{method:?}");
            let mut all = contacts_cpu(
                &table,
                &bodies,
                &frame::cpu(&bodies, &bounds, Some(method)).unwrap().pairs,
            )
            .unwrap();
            all.retain(|c| c.distance <= within);
            assert_eq!(
                cpu.contacts.len(),
                all.len(),
                "the twin gathers every contact within"
            );
            let radii = |[a, b]: [u32; 2]| {
                let r = |i: u32| table[bodies[i as usize].shape as usize].radius;
                r(a) + r(b)
            };
            same_contacts(&gpu.contacts, &cpu.contacts, within, method, radii);
            assert!(cpu.contacts.len() > 1000 && (cpu.contacts.len() as u32) < gpu.pairs);
            // Back came the contacts (24 bytes each; with the frame as many as the last
            // frame had and an eighth, any more after it) and a few counters: far less
            // than the pairs alone would be.
            let n = gpu.contacts.len() as u64;
            let head = last.map_or(0, |m: u64| (m + m / 8).max(256));
            last = Some(n);
            assert!(
                gpu.read_back <= 128 + 24 * n.max(head) && gpu.read_back < 8 * u64::from(gpu.pairs),
                "{method:?}: {} bytes for {n} contacts of {} pairs",
                gpu.read_back,
                gpu.pairs
            );
            eprintln!(
                "{method:?} within {within}: {} pairs, {n} contacts, {} bytes back",
                gpu.pairs, gpu.read_back
            );
        }
    }
}

/// The GPU's gathered contacts against the twin's, both sorted by pair; normals compared
/// where the cores are apart (where they nearly meet, any direction serves and rounding
/// picks one).
fn same_contacts(
    gpu: &[GpuTouchContact],
    cpu: &[GpuTouchContact],
    within: f32,
    method: Method,
    radii: impl Fn([u32; 2]) -> f32,
) {
    let tol = 1e-5f32;
    let find = |list: &[GpuTouchContact], pair: [u32; 2]| {
        list.binary_search_by_key(&pair, |c| c.pair)
            .ok()
            .map(|i| list[i])
    };
    assert!(
        gpu.windows(2).all(|w| w[0].pair < w[1].pair),
        "sorted, no pair twice"
    );
    for c in cpu {
        match find(gpu, c.pair) {
            Some(g) => {
                assert!(
                    (g.distance - c.distance).abs() <= tol * (1.0 + c.distance.abs()),
                    "{method:?} {:?}: {g:?} vs {c:?}",
                    c.pair
                );
                let dot: f32 = (0..3).map(|k| g.normal[k] * c.normal[k]).sum();
                let cores_apart = c.distance + radii(c.pair) > 1e-3;
                assert!(!cores_apart || dot > 0.999, "{g:?} vs {c:?}");
            }
            None => assert!(
                within - c.distance <= tol,
                "{method:?}: {c:?} missing on the GPU"
            ),
        }
    }
    for g in gpu {
        if find(cpu, g.pair).is_none() {
            assert!(
                g.distance - within <= tol,
                "{method:?}: {g:?} only on the GPU"
            );
        }
    }
}

/// A million particles, 8 unit cells each (the particle scene's density): the GPU frame's
/// pair count and contacts equal the CPU twins', and for 300 particles (half of them in a
/// contact) a brute-force scan over every other particle with the exact f64 distance finds
/// the same contacts, up to f32 rounding of the coordinates.
#[test]
fn a_million_particles_match_the_twin_and_brute_force() {
    let Some(ctx) = common::gpu("particle million") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let shapes = round_shapes();
    let (table, bounds) = common::round_tables(&shapes);
    let mut pass = GpuRoundContacts::new(&engine, table.clone()).unwrap();
    let n = 1_000_000usize;
    let bodies = particles(n, 8.0, 3);
    let side = (n as f64 * 8.0).cbrt();
    let mut rng = Rng::new(4);
    let within = 0.0f32;
    let gpu = pass
        .frame(&mut engine, &bodies, &bounds, Method::Hash, within)
        .unwrap();
    let cpu = particle_frame_cpu(&table, &bodies, &bounds, Method::Hash, within).unwrap();
    assert_eq!(gpu.pairs, cpu.pairs);
    let radii = |[a, b]: [u32; 2]| {
        let r = |i: u32| table[bodies[i as usize].shape as usize].radius;
        r(a) + r(b)
    };
    same_contacts(&gpu.contacts, &cpu.contacts, within, Method::Hash, radii);
    assert!(
        gpu.contacts.len() > 10_000,
        "{} contacts",
        gpu.contacts.len()
    );

    // Brute force around sampled particles: every other particle, by the exact distance.
    let reach: Vec<f64> = shapes
        .iter()
        .map(|r| match r.core {
            proxima::geometry::rounded::Core::Segment { half_height } => half_height + r.radius,
            _ => r.radius,
        })
        .collect();
    let mut sample: Vec<u32> = (0..150)
        .map(|k| gpu.contacts[k * gpu.contacts.len() / 150].pair[k % 2])
        .collect();
    sample.extend((0..150).map(|_| rng.below(n as u64) as u32));
    let listed = |pair: [u32; 2]| gpu.contacts.binary_search_by_key(&pair, |c| c.pair).is_ok();
    let mut found = 0;
    for &s in &sample {
        let bs = &bodies[s as usize];
        let ps = Vec3::from_array(bs.position).as_dvec3();
        for (j, bj) in bodies.iter().enumerate() {
            let j = j as u32;
            let near = reach[bs.shape as usize] + reach[bj.shape as usize] + 0.01;
            if j == s
                || Vec3::from_array(bj.position)
                    .as_dvec3()
                    .distance_squared(ps)
                    > near * near
            {
                continue;
            }
            let truth = exact(&shapes, bs, bj);
            let tol = 1e-5 * (2.0 * side);
            let pair = [s.min(j), s.max(j)];
            if truth <= f64::from(within) - tol {
                assert!(listed(pair), "{pair:?} at {truth} is missing");
                found += 1;
            }
            if listed(pair) {
                assert!(
                    truth <= f64::from(within) + tol,
                    "{pair:?} listed at {truth}"
                );
            }
        }
    }
    eprintln!(
        "1M particles: {} pairs, {} contacts, {} bytes back; {found} contacts around the \
         sample, all listed",
        gpu.pairs,
        gpu.contacts.len(),
        gpu.read_back
    );
    assert!(found >= 100, "{found} contacts around the sample");
}

/// Past what one frame binds, the particle frame runs in slabs: on a device whose 256 KiB
/// bindings hold 8,192 bodies a frame, 40,000 particles (capsules 3.2 long straddling the
/// cuts) give the same pair count and the same contacts, bit for bit, as the same GPU's
/// frame of the whole crowd on a device that binds it, and the CPU twins' pair count. A
/// slab's contacts past its 24-byte list's binding cut the slabs finer.
#[test]
fn a_particle_crowd_past_one_frame_runs_in_slabs() {
    let Some(whole_ctx) = common::gpu("particle slabs") else {
        return;
    };
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 256 << 10,
        max_buffer_size: 256 << 10,
        ..wgpu::Limits::default()
    };
    let (device, queue) = common::device_with_limits("particle slabs", limits).expect("a device");
    let mut small = Engine::new(proxima::gpu::GpuContext::from_device(device, queue));
    let mut whole = Engine::new(whole_ctx);
    let shapes = round_shapes();
    let (table, bounds) = common::round_tables(&shapes);
    let mut sliced_pass = GpuRoundContacts::new(&small, table.clone()).unwrap();
    let mut whole_pass = GpuRoundContacts::new(&whole, table.clone()).unwrap();
    let bodies = particles(40_000, 0.8, 21);
    for method in [Method::Hash, Method::Sweep] {
        for within in [0.0f32, 0.05] {
            let want = whole_pass
                .frame(&mut whole, &bodies, &bounds, method, within)
                .unwrap();
            let got = sliced_pass
                .frame(&mut small, &bodies, &bounds, method, within)
                .unwrap();
            let slabs = got
                .profile
                .stages
                .iter()
                .filter(|s| s.name == "bounds")
                .count();
            assert!(slabs >= 5, "{method:?}: {slabs} slab frames");
            assert_eq!(got.profile.stages[0].name, "slabs");
            assert_eq!(got.pairs, want.pairs, "{method:?} within {within}");
            assert!(
                got.contacts == want.contacts,
                "{method:?} within {within}: {} contacts, want {}; first differing {:?}",
                got.contacts.len(),
                want.contacts.len(),
                got.contacts
                    .iter()
                    .zip(&want.contacts)
                    .find(|(g, w)| g != w)
            );
            let twin = particle_frame_cpu(&table, &bodies, &bounds, method, within).unwrap();
            assert_eq!(got.pairs, twin.pairs);
            assert!(
                got.contacts.len() > 10_000 && got.pairs > 40_000,
                "{}",
                got.pairs
            );
            eprintln!(
                "{method:?} within {within}: {slabs} slabs, {} pairs, {} contacts",
                got.pairs,
                got.contacts.len()
            );
        }
    }
    // A NaN pose in a sliced crowd is named by its index.
    let mut bad = bodies.clone();
    bad[31_234].position[1] = f32::NAN;
    let e = sliced_pass
        .frame(&mut small, &bad, &bounds, Method::Hash, 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("31234"), "{e}");
}
