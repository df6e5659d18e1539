//! The engine on a real adapter (lavapipe in CI): command semantics byte for byte, the
//! readback ring, timings, external buffers, limits, and failures that must come back as
//! errors (lost device, missing adapter) rather than panics.

mod common;

use proxima::crowd::Crowd;
use proxima::frame::{self, Plan, stage};
use proxima::gpu::{ContextOptions, Engine, GpuContext, TimingMode};
use proxima::graph::{Counted, ReadbackId, Recording};
use proxima::passes::bounds::{GpuBoundsParams, bounds_cpu};
use proxima::passes::broadphase::{Capacities, Method};
use proxima::pipeline::Backend;
use proxima::profile::Clock;
use proxima::shaders::ShaderId;
use proxima::{DeviceChoice, Error, Pipeline};

fn words(n: u32, base: u32) -> Vec<u32> {
    (0..n).map(|i| base + i * 3).collect()
}

#[test]
fn upload_copy_clear_and_readback_move_exact_bytes() {
    let Some(ctx) = common::gpu("engine bytes") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let mut rec = Recording::new();
    let a = rec.buffer(64, "a");
    let b = rec.buffer(64, "b");
    let c = rec.buffer(32, "c");
    rec.upload(a, &words(16, 100));
    rec.upload(b, &words(16, 900));
    rec.copy(a, 8, b, 16, 24); // a[2..8] -> b[4..10]
    rec.upload(c, &words(8, 5));
    rec.clear(c);
    let rb_b = rec.readback(b);
    let rb_a = rec.readback_range(a, 60, 4);
    let rb_c = rec.readback(c);
    // A second upload to the same buffer later in the frame lands after the readback.
    rec.upload(a, &words(16, 7));
    let rb_a2 = rec.readback_range(a, 0, 8);
    let out = engine.run(&rec, &[]).expect("frame runs");
    let mut want_b = words(16, 900);
    want_b[4..10].copy_from_slice(&words(16, 100)[2..8]);
    assert_eq!(out.values::<u32>(rb_b), want_b);
    assert_eq!(out.values::<u32>(rb_a), vec![100 + 15 * 3]);
    assert_eq!(out.values::<u32>(rb_c), vec![0; 8]);
    assert_eq!(out.values::<u32>(rb_a2), vec![7, 10]);
}

/// A buffer freed in a stage and one declared after it whose first use is an upload: the
/// upload moves to the stage's start, so the new buffer must not be the freed one (still
/// read before the free), and both keep their own bytes, frame after frame (the second
/// frame takes its buffers from the pool the first filled).
#[test]
fn an_upload_moved_ahead_never_lands_in_a_buffer_the_stage_still_reads() {
    let Some(ctx) = common::gpu("engine hoisted upload") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    for round in 0..2 {
        let mut rec = Recording::new();
        rec.stage("only");
        let first = rec.buffer(64, "first");
        let out_first = rec.buffer(64, "out first");
        rec.upload(first, &words(16, 10 + round));
        rec.upload(out_first, &words(16, 0));
        rec.copy(first, 0, out_first, 0, 64);
        rec.free(first);
        let second = rec.buffer(64, "second");
        let out_second = rec.buffer(64, "out second");
        rec.upload(second, &words(16, 500 + round));
        rec.upload(out_second, &words(16, 0));
        rec.copy(second, 0, out_second, 0, 64);
        let rb_first = rec.readback(out_first);
        let rb_second = rec.readback(out_second);
        let out = engine.run(&rec, &[]).expect("frame runs");
        assert_eq!(
            out.values::<u32>(rb_first),
            words(16, 10 + round),
            "round {round}"
        );
        assert_eq!(
            out.values::<u32>(rb_second),
            words(16, 500 + round),
            "round {round}"
        );
    }
}

fn counter_frame(value: u32) -> (Recording, ReadbackId) {
    let mut rec = Recording::new();
    let a = rec.buffer(4, "counter");
    rec.upload(a, &[value]);
    let rb = rec.readback(a);
    (rec, rb)
}

/// A frame of 128 items of 8 bytes (`base`, `base` + 3, ...) whose count, `count`, lies at
/// byte 4 of a counter, read back by count with `head_items` copied with the frame.
fn counted_frame(base: u32, count: u32, head_items: u64) -> (Recording, ReadbackId) {
    let mut rec = Recording::new();
    let items = rec.buffer(1024, "items");
    let counter = rec.buffer(8, "counter");
    rec.upload(items, &words(256, base));
    rec.upload(counter, &[0u32, count]);
    let n = rec.readback(counter);
    let got = rec.readback_counted(
        items,
        Counted {
            counter: n,
            at: 4,
            stride: 8,
            head: head_items * 8,
        },
    );
    (rec, got)
}

#[test]
fn a_counted_readback_returns_the_counted_items_and_copies_no_more() {
    let Some(ctx) = common::gpu("engine counted") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    // (count, items in the head): within the head, exactly it, past it (a second copy),
    // none, and past the buffer (clamped to its 128 items).
    for (count, head_items) in [(10u32, 16u64), (16, 16), (100, 16), (0, 16), (500, 16)] {
        let (rec, got) = counted_frame(7, count, head_items);
        let out = engine.run(&rec, &[]).expect("counted frame");
        let k = count.min(128) as usize;
        assert_eq!(
            out.values::<u32>(got),
            words(256, 7)[..2 * k],
            "count {count}"
        );
        let (head, need) = (head_items * 8, k as u64 * 8);
        assert_eq!(out.round_trips, if need > head { 2 } else { 1 }, "{count}");
        assert_eq!(out.copied_bytes, 8 + head.max(need), "count {count}");
    }
    // Frames in flight each keep their own items until their tails are copied: the second
    // frame does not get the first one's held buffer from the pool.
    let (first, got_first) = counted_frame(1000, 100, 4);
    let (second, got_second) = counted_frame(5000, 60, 4);
    let a = engine.submit(&first, &[]).expect("first");
    let b = engine.submit(&second, &[]).expect("second");
    let out_b = engine.wait(b).expect("second");
    let out_a = engine.wait(a).expect("first");
    assert_eq!(out_a.values::<u32>(got_first), words(256, 1000)[..200]);
    assert_eq!(out_b.values::<u32>(got_second), words(256, 5000)[..120]);
}

#[test]
fn a_pair_frame_reads_back_its_counted_pairs_only() {
    let Some(ctx) = common::gpu("engine counted pairs") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let world = Crowd::random(20_000, 9);
    for method in [Method::Hash, Method::Sweep] {
        let want = frame::cpu(&world.bodies, &world.shapes, Some(method))
            .expect("twin")
            .pairs;
        let count = want.len() as u32;
        // Room for a tenth more than the count: its head (7/8 of the room) falls short
        // and the rest is a second copy. Twice the count: the head holds them all.
        for (room, trips) in [(count + count / 10, 2), (2 * count, 1)] {
            let caps = Capacities {
                pairs: room,
                ..Capacities::guess(world.len())
            };
            let (rec, rb) = frame::record(
                frame::Bodies::Upload(&world.bodies),
                &world.shapes,
                Plan::Pairs(method, caps),
            );
            let out = engine.run(&rec, &[]).expect("pair frame");
            let done = frame::finish(&out, &rb, &world.bodies, &world.shapes).expect("finish");
            assert_eq!(done.result.pairs, want, "{method:?} with room for {room}");
            assert!(done.result.aabbs.is_empty(), "the boxes stay on the device");
            let pairs = rb.pairs.expect("a pair frame reads its pairs back");
            assert_eq!(out.bytes(pairs).len(), want.len() * 8);
            assert_eq!(out.round_trips, trips, "{method:?} with room for {room}");
            // Beside the pairs only the counter and the bounds status come back; the pairs
            // copied are the head or, past it, exactly the count.
            let head = u64::from(caps.expected_pairs()) * 8;
            let others = out.copied_bytes - head.max(want.len() as u64 * 8);
            assert!(others <= 256, "{others} bytes beside the pairs");
        }
    }
}

#[test]
fn readback_ring_keeps_three_frames_in_flight() {
    let Some(ctx) = common::gpu("engine ring") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let frames: Vec<_> = (0..3).map(|k| counter_frame(10 + k)).collect();
    let pending: Vec<_> = frames
        .iter()
        .map(|(rec, _)| engine.submit(rec, &[]).expect("submit"))
        .collect();
    let (fourth, _) = counter_frame(99);
    match engine.submit(&fourth, &[]) {
        Err(Error::Readback(m)) => assert!(m.contains("in flight"), "{m}"),
        other => panic!("a fourth frame in flight must be refused, got {other:?}"),
    }
    // Collect out of order; each frame keeps its own bytes.
    let mut pending = pending.into_iter().map(Some).collect::<Vec<_>>();
    for k in [1usize, 0, 2] {
        let out = engine.wait(pending[k].take().unwrap()).expect("wait");
        assert_eq!(out.values::<u32>(frames[k].1), vec![10 + k as u32]);
    }
    let (rec, rb) = counter_frame(42);
    assert_eq!(engine.run(&rec, &[]).unwrap().values::<u32>(rb), vec![42]);
}

#[test]
fn stages_are_timed_by_timestamps_or_by_the_cpu_clock() {
    let Some(ctx) = common::gpu("engine timing") else {
        return;
    };
    let world = Crowd::random(20_000, 2);
    let (rec, _) = frame::record(
        frame::Bodies::Upload(&world.bodies),
        &world.shapes,
        Plan::Bounds,
    );
    let mut engine = Engine::new(ctx.clone());
    let out = engine.run(&rec, &[]).expect("frame");
    if ctx.has_timestamps() {
        assert_eq!(out.profile.clock, Clock::GpuTimestamps);
        // Only stages with passes are GPU-timed, and the stages never add up to more than
        // the frame's wall time: no GPU time is counted twice.
        let names: Vec<_> = out.profile.stages.iter().map(|s| s.name).collect();
        assert_eq!(names, [stage::BOUNDS]);
        let sum: f64 = out.profile.stages.iter().map(|s| s.seconds).sum();
        assert!(
            sum > 0.0 && sum <= out.profile.wall.as_secs_f64(),
            "{:?}",
            out.profile
        );
    }
    engine.set_timing(TimingMode::Cpu);
    let out = engine.run(&rec, &[]).expect("frame");
    assert_eq!(out.profile.clock, Clock::Cpu);
    let names: Vec<_> = out.profile.stages.iter().map(|s| s.name).collect();
    assert_eq!(names, [stage::UPLOAD, stage::BOUNDS, stage::READBACK]);
    let sum: f64 = out.profile.stages.iter().map(|s| s.seconds).sum();
    assert!(sum > 0.0 && sum <= out.profile.wall.as_secs_f64() * 1.01 + 1e-3);
}

#[test]
fn external_buffers_are_used_in_place_and_checked() {
    let Some(ctx) = common::gpu("engine external") else {
        return;
    };
    let world = Crowd::random(3000, 4);
    // A renderer's instance buffer, created and filled outside proxima.
    let instances = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("renderer instances"),
        size: size_of_val(&world.bodies[..]) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    ctx.queue
        .write_buffer(&instances, 0, bytemuck::cast_slice(&world.bodies));
    let mut rec = Recording::new();
    let bodies = rec.external(instances.size(), "renderer instances");
    let shapes = rec.array_buffer::<proxima::bodies::GpuShapeBounds>(world.shapes.len(), "shapes");
    rec.upload(shapes, &world.shapes);
    let params = GpuBoundsParams::new(world.len() as u32, world.shapes.len() as u32);
    let out = proxima::passes::bounds::record_bounds(&mut rec, bodies, shapes, params);
    let rb = rec.readback_range(out.aabbs, 0, world.len() as u64 * 32);
    let mut engine = Engine::new(ctx.clone());
    let got = engine
        .run(&rec, &[(bodies, &instances)])
        .expect("external frame");
    let mut want = Vec::new();
    assert!(bounds_cpu(&world.bodies, &world.shapes, params, &mut want).is_ok());
    let got: Vec<proxima::bodies::GpuAabb> = got.values(rb);
    for (g, w) in got.iter().zip(&want) {
        let gap = g.to_f64().max_face_gap(&w.to_f64());
        assert!(gap < 1e-4, "gpu {g:?} vs cpu {w:?}");
    }
    // Not supplied, and supplied too small: named errors.
    match engine.run(&rec, &[]) {
        Err(Error::Recording(m)) => assert!(m.contains("was not supplied"), "{m}"),
        other => panic!("{other:?}"),
    }
    let small = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("small"),
        size: 64,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    match engine.run(&rec, &[(bodies, &small)]) {
        Err(Error::Recording(m)) => assert!(
            m.contains("renderer instances") && m.contains("64 bytes"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    // Found missing in the middle of a compute pass (a dispatch encoded, the next names
    // the unsupplied buffer): the same named error, and the engine runs the next frame.
    let mut mid = Recording::new();
    let own = rec_bodies(&mut mid, &world);
    let shapes = mid.array_buffer::<proxima::bodies::GpuShapeBounds>(world.shapes.len(), "shapes");
    mid.upload(shapes, &world.shapes);
    proxima::passes::bounds::record_bounds(&mut mid, own, shapes, params);
    let outside = mid.external(instances.size(), "renderer instances");
    proxima::passes::bounds::record_bounds(&mut mid, outside, shapes, params);
    match engine.run(&mid, &[]) {
        Err(Error::Recording(m)) => assert!(m.contains("was not supplied"), "{m}"),
        other => panic!("{other:?}"),
    }
    let again = engine
        .run(&rec, &[(bodies, &instances)])
        .expect("the next frame");
    assert_eq!(again.values::<proxima::bodies::GpuAabb>(rb), got);
}

/// The world's bodies in a pooled buffer of `rec`.
fn rec_bodies(rec: &mut Recording, world: &Crowd) -> proxima::graph::BufferProxy {
    let b = rec.array_buffer::<proxima::bodies::GpuBody>(world.len(), "bodies");
    rec.upload(b, &world.bodies);
    b
}

/// A window of an external buffer: bound, copied from, read back and written at its
/// offset; past the buffer's end or off the storage offset alignment, a named error.
#[test]
fn a_window_of_an_external_buffer_is_addressed_at_its_offset() {
    let Some(ctx) = common::gpu("engine window") else {
        return;
    };
    let mut engine = Engine::new(ctx.clone());
    let big = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("big"),
        size: 4096,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    ctx.queue
        .write_buffer(&big, 0, bytemuck::cast_slice(&words(1024, 0)));
    // Read back, copied from and written, at the window's offset.
    let mut rec = Recording::new();
    let window = rec.external_window(1024, 512, "window");
    let head = rec.readback_range(window, 0, 8);
    let copy = rec.buffer(16, "copy");
    rec.copy(window, 16, copy, 0, 16);
    let copied = rec.readback(copy);
    rec.upload(window, &[7u32, 8]);
    let written = rec.readback_range(window, 0, 12);
    let out = engine.run(&rec, &[(window, &big)]).unwrap();
    // Word k of the buffer holds 3k; the window starts at word 256.
    assert_eq!(out.values::<u32>(head), vec![768, 771]);
    assert_eq!(out.values::<u32>(copied), vec![780, 783, 786, 789]);
    assert_eq!(out.values::<u32>(written), vec![7, 8, 774]);
    // A dispatch binds the window: the args pass turns its first word into a grid.
    let mut rec = Recording::new();
    let window = rec.external_window(2048, 16, "count window");
    let args = proxima::passes::dispatch_args::record_dispatch_args(&mut rec, window, 0, 64, 65535);
    let grid = rec.readback(args);
    let out = engine.run(&rec, &[(window, &big)]).unwrap();
    // Word 512 holds 1536: 24 groups of 64.
    assert_eq!(out.values::<u32>(grid)[0], 24);

    let mut rec = Recording::new();
    let past = rec.external_window(3840, 512, "past the end");
    rec.readback(past);
    let e = engine.run(&rec, &[(past, &big)]).unwrap_err().to_string();
    assert!(
        e.contains("past the end") && e.contains("from byte 3840"),
        "{e}"
    );
    let mut rec = Recording::new();
    let odd = rec.external_window(4, 64, "odd");
    rec.readback(odd);
    let e = engine.run(&rec, &[(odd, &big)]).unwrap_err().to_string();
    assert!(e.contains("alignment"), "{e}");
}

#[test]
fn a_buffer_over_the_device_limit_is_a_named_error() {
    let Some(ctx) = common::gpu("engine limits") else {
        return;
    };
    let limit = ctx.limits().max_storage_buffer_binding_size;
    let mut rec = Recording::new();
    let params = rec.buffer(16, "params");
    let huge = rec.buffer(limit + 4, "huge counts");
    let args = rec.buffer(12, "args");
    rec.dispatch(ShaderId::DispatchArgs, [1, 1, 1], &[params, huge, args]);
    let mut engine = Engine::new(ctx);
    match engine.run(&rec, &[]) {
        Err(Error::BufferLimit {
            label,
            needed,
            limit: l,
            limit_name,
        }) => {
            assert_eq!(
                (label.as_str(), needed, l),
                ("huge counts", limit + 4, limit)
            );
            assert_eq!(limit_name, "max_storage_buffer_binding_size");
        }
        other => panic!("expected BufferLimit, got {other:?}"),
    }
}

#[test]
fn a_lost_device_is_an_error_not_a_panic() {
    let Some(ctx) = common::fresh_gpu("engine device lost") else {
        return;
    };
    let world = Crowd::random(1000, 6);
    let mut pipeline = Pipeline::on_gpu(ctx.clone());
    pipeline.bounds(&world).expect("healthy frame");
    ctx.device.destroy();
    // Every later frame reports the loss by name; none panics.
    for _ in 0..3 {
        match pipeline.bounds(&world) {
            Err(Error::DeviceLost(reason)) => assert!(reason.contains("Destroyed"), "{reason}"),
            other => panic!("expected DeviceLost, got {:?}", other.map(|_| ())),
        }
    }
    assert!(ctx.is_lost());
}

#[test]
fn a_renderers_device_can_be_handed_in() {
    if common::gpu("engine from_device").is_none() {
        return;
    }
    // Create the device the way a renderer would, outside proxima.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .expect("an adapter exists (checked above)");
    let (device, queue) =
        pollster::block_on(adapter.request_device(&Default::default())).expect("device");
    let ctx = GpuContext::from_device(device, queue);
    assert_eq!(ctx.info.name, adapter.get_info().name);
    let world = Crowd::random(5000, 8);
    let mut pipeline = Pipeline::on_gpu(ctx);
    let gpu = pipeline
        .bounds(&world)
        .expect("frame on a handed-in device");
    let cpu = frame::cpu(&world.bodies, &world.shapes, None).unwrap();
    for (g, c) in gpu.aabbs.iter().zip(&cpu.aabbs) {
        assert!(g.to_f64().max_face_gap(&c.to_f64()) < 1e-4);
    }
}

#[test]
fn auto_takes_a_hardware_gpu_and_any_gpu_a_software_one_too() {
    let Some(ctx) = common::gpu("auto and any gpu") else {
        return;
    };
    let options = ContextOptions::default();
    let any = Pipeline::new(DeviceChoice::AnyGpu, &options).expect("an adapter");
    assert!(matches!(any.backend(), Backend::Gpu(_)));
    assert!(any.fallback_notice.is_none());
    // A software adapter (lavapipe) runs the passes on the CPU, slower than the twins.
    let auto = Pipeline::new(DeviceChoice::Auto, &options).expect("a device or the twins");
    assert_eq!(matches!(auto.backend(), Backend::Cpu), ctx.is_software());
    match &auto.fallback_notice {
        Some(notice) => {
            assert!(ctx.is_software());
            assert!(
                notice.contains(&ctx.info.name) && !notice.contains('\n'),
                "{notice}"
            );
        }
        None => assert!(!ctx.is_software()),
    }
}

#[test]
fn a_missing_adapter_is_an_error_or_a_cpu_fallback() {
    // Runs with or without a GPU: no adapter is ever named like this.
    let options = ContextOptions {
        adapter_name: Some("no-such-adapter-anywhere".into()),
        ..Default::default()
    };
    // With adapters present the error names them; with none, a driver is what is missing.
    let adapters_present = match GpuContext::new(&options) {
        Err(e @ (Error::NoAdapter { .. } | Error::NoAdapterNamed { .. })) => {
            let text = e.to_string();
            assert!(
                text.contains("no-such-adapter-anywhere") && text.contains("present:"),
                "{text}"
            );
            matches!(e, Error::NoAdapterNamed { .. })
        }
        other => panic!("expected NoAdapter, got {other:?}"),
    };
    assert!(matches!(
        Pipeline::new(DeviceChoice::Gpu, &options),
        Err(e) if e.is_no_adapter()
    ));
    let mut pipeline = Pipeline::new(DeviceChoice::Auto, &options).expect("falls back");
    assert!(matches!(pipeline.backend(), Backend::Cpu));
    let notice = pipeline.fallback_notice.clone().expect("a notice");
    assert!(!notice.contains('\n'), "{notice}");
    if adapters_present {
        // Not "no GPU adapter found ... install a driver": one is there, named otherwise.
        assert!(
            notice.contains("no-such-adapter-anywhere")
                && notice.contains("present:")
                && !notice.contains("mesa-vulkan-drivers"),
            "{notice}"
        );
    } else {
        assert!(notice.contains("mesa-vulkan-drivers"), "{notice}");
    }
    let world = Crowd::random(100, 1);
    let r = pipeline.bounds(&world).expect("cpu frame");
    let mut want = Vec::new();
    let params = GpuBoundsParams::new(100, world.shapes.len() as u32);
    bounds_cpu(&world.bodies, &world.shapes, params, &mut want);
    assert_eq!(r.aabbs, want);
}

/// Engines on one device in several threads: each thread's wait may return while another
/// thread's poll is still delivering its map callback; every frame must still read back.
#[test]
fn engines_sharing_a_device_across_threads_read_back_every_frame() {
    let Some(ctx) = common::gpu("shared device") else {
        return;
    };
    std::thread::scope(|scope| {
        for t in 0..4u32 {
            let ctx = ctx.clone();
            scope.spawn(move || {
                let mut engine = Engine::new(ctx);
                for f in 0..1000u32 {
                    let value = t * 1000 + f;
                    let (rec, rb) = counter_frame(value);
                    let out = engine
                        .run(&rec, &[])
                        .unwrap_or_else(|e| panic!("thread {t}, frame {f}: {e}"));
                    assert_eq!(out.values::<u32>(rb), vec![value]);
                }
            });
        }
    });
}

#[test]
fn dispatch_args_pass_matches_its_cpu_twin_with_several_threads_per_item() {
    use proxima::gpu::sizes::dispatch_grid;
    use proxima::passes::dispatch_args::record_dispatch_args_per_item;
    let Some(ctx) = common::gpu("dispatch args per item") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    // Counts whose product with per_item lands on, below and past workgroup and grid
    // boundaries (x at most 1000 groups here, so large counts need a 2D grid).
    for (count, per_item) in [
        (0u32, 7u32),
        (1, 1),
        (5, 51),
        (256, 1),
        (999, 3),
        (70_000, 40),
    ] {
        let mut rec = Recording::new();
        let counts = rec.buffer(8, "counts");
        rec.upload(counts, &[9u32, count]);
        let args = record_dispatch_args_per_item(&mut rec, counts, 1, per_item, 256, 1000);
        let rb = rec.readback(args);
        let got: Vec<u32> = engine.run(&rec, &[]).unwrap().values(rb);
        assert_eq!(
            got,
            dispatch_grid(count * per_item, 256, 1000),
            "{count} items × {per_item}"
        );
    }
}

#[test]
fn readbacks_past_one_staging_buffer_shrink_their_heads_and_arrive_whole() {
    // Buffers of at most 16 KiB: a frame's staging buffer too.
    let limits = wgpu::Limits {
        max_buffer_size: 16 << 10,
        max_storage_buffer_binding_size: 16 << 10,
        ..wgpu::Limits::default()
    };
    let Some((device, queue)) = common::device_with_limits("engine staging", limits) else {
        return;
    };
    let mut engine = Engine::new(GpuContext::from_device(device, queue));
    // Two 12 KiB buffers of 1,536 items counted in full, with heads asking for all of it,
    // and a plain 2 KiB readback: 26 KiB in all, past the 16 KiB staging buffer.
    let mut rec = Recording::new();
    let counter = rec.buffer(8, "counter");
    rec.upload(counter, &[0u32, 1536]);
    let n = rec.readback(counter);
    let plain = rec.buffer(2048, "plain");
    rec.upload(plain, &words(512, 3));
    let plain_rb = rec.readback(plain);
    let mut got = Vec::new();
    for base in [100u32, 90_000] {
        let items = rec.buffer(12 << 10, "items");
        rec.upload(items, &words(3072, base));
        let how = Counted {
            counter: n,
            at: 4,
            stride: 8,
            head: 12 << 10,
        };
        got.push((base, rec.readback_counted(items, how)));
    }
    let out = engine
        .run(&rec, &[])
        .expect("a frame past one staging buffer");
    assert_eq!(out.values::<u32>(plain_rb), words(512, 3));
    for (base, id) in got {
        assert_eq!(out.values::<u32>(id), words(3072, base), "base {base}");
    }
    assert!(
        out.round_trips > 1,
        "the heads shrank: the rest came after the frame"
    );
    // A plain readback alone past the staging buffer is the named limit error.
    let mut rec = Recording::new();
    let big = rec.buffer(16 << 10, "big");
    rec.clear(big);
    rec.readback(big);
    match engine.run(&rec, &[]) {
        Err(Error::BufferLimit { label, .. }) => assert_eq!(label, "readback staging"),
        other => panic!(
            "expected BufferLimit, got {:?}",
            other.map(|o| o.copied_bytes)
        ),
    }
}

/// A device that takes fewer workgroups a dimension than the passes' grids (a renderer's,
/// made with low compute limits) is named by that limit at the first pass, where its
/// direct dispatches were wgpu's validation message and its indirect ones were skipped
/// without a word (a sweep over 3,000 crowded bodies found no pair, the twin 25,756).
#[test]
fn a_device_with_few_workgroups_a_dimension_is_named() {
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: 16,
        ..wgpu::Limits::default()
    };
    let Some((device, queue)) = common::device_with_limits("few workgroups", limits) else {
        return;
    };
    let mut pipeline = Pipeline::on_gpu(GpuContext::from_device(device, queue));
    pipeline.set_broadphase(proxima::broadphase::Choice::Method(Method::Sweep));
    let err = pipeline.frame(&Crowd::random(3000, 2)).unwrap_err();
    assert!(
        matches!(&err, Error::Gpu(m) if m.contains("max_compute_workgroups_per_dimension 16")),
        "{err}"
    );
}
