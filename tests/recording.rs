//! The frame graph's recording side, with no GPU: handles, command order, the usages a
//! recording implies, and every mistake `validate` must name.

use proxima::bodies::{GpuBody, GpuShapeBounds};
use proxima::frame::{self, Plan, stage};
use proxima::graph::{BufferOrigin, Command, Counted, ReadbackId, Recording};
use proxima::shaders::{self, BindingKind, ShaderId};
use proxima::{Error, Result};
use wgpu::BufferUsages;

fn bindings(id: ShaderId) -> Result<Vec<BindingKind>> {
    Ok(shaders::reflect(id)?.bindings)
}

fn expect_recording_error(rec: &Recording, needle: &str) {
    match rec.validate(&bindings) {
        Err(Error::Recording(m)) => assert!(m.contains(needle), "`{m}` lacks `{needle}`"),
        other => panic!("expected a recording error containing `{needle}`, got {other:?}"),
    }
}

#[test]
fn handles_carry_rounded_size_and_label() {
    let mut rec = Recording::new();
    let a = rec.buffer(10, "a");
    let b = rec.buffer(0, "b");
    let e = rec.external(64, "e");
    assert_eq!((a.size, a.label), (12, "a"));
    assert_eq!(b.size, 4);
    assert_ne!(a.id, b.id);
    assert_eq!(rec.buffers()[2], (e, BufferOrigin::External { offset: 0 }));
}

#[test]
fn commands_keep_their_order_and_uploads_are_padded() {
    let mut rec = Recording::new();
    let a = rec.buffer(8, "a");
    let b = rec.buffer(8, "b");
    rec.stage("one");
    rec.upload_bytes(a, &[1, 2, 3, 4, 5]);
    rec.copy(a, 0, b, 0, 8);
    let r = rec.readback(b);
    rec.free(a);
    let c = rec.commands();
    assert_eq!(c[0], Command::Stage("one"));
    assert_eq!(
        c[1],
        Command::Upload {
            buffer: a,
            data: vec![1, 2, 3, 4, 5, 0, 0, 0]
        }
    );
    assert!(matches!(c[2], Command::Copy { size: 8, .. }));
    assert!(matches!(c[3], Command::Readback { id, offset: 0, size: 8, .. } if id == r));
    assert_eq!(c[4], Command::Free(a));
    assert_eq!(rec.readback_count(), 1);
}

#[test]
fn usages_follow_from_the_commands() {
    let mut rec = Recording::new();
    let params = rec.buffer(16, "params");
    let counts = rec.buffer(16, "counts");
    let args = rec.buffer(12, "args");
    let dst = rec.buffer(16, "dst");
    rec.upload_bytes(params, &[0; 16]);
    rec.clear(counts);
    rec.dispatch(ShaderId::DispatchArgs, [1, 1, 1], &[params, counts, args]);
    rec.dispatch_indirect(ShaderId::DispatchArgs, args, 0, &[params, counts, dst]);
    rec.readback(dst);
    let u = rec.validate(&bindings).unwrap();
    assert_eq!(
        u[&params.id],
        BufferUsages::COPY_DST | BufferUsages::UNIFORM
    );
    assert_eq!(
        u[&counts.id],
        BufferUsages::COPY_DST | BufferUsages::STORAGE
    );
    assert_eq!(u[&args.id], BufferUsages::STORAGE | BufferUsages::INDIRECT);
    assert_eq!(u[&dst.id], BufferUsages::STORAGE | BufferUsages::COPY_SRC);
}

#[test]
fn mistakes_are_named() {
    let mut rec = Recording::new();
    let a = rec.buffer(8, "alpha");
    rec.free(a);
    rec.clear(a);
    expect_recording_error(&rec, "alpha` is used after it was freed");

    let mut rec = Recording::new();
    let a = rec.buffer(8, "alpha");
    rec.free(a);
    rec.free(a);
    expect_recording_error(&rec, "used after it was freed");

    let mut rec = Recording::new();
    let a = rec.buffer(8, "alpha");
    let b = rec.buffer(8, "beta");
    rec.copy(a, 4, b, 0, 8);
    expect_recording_error(&rec, "outside `alpha`");

    let mut rec = Recording::new();
    let a = rec.buffer(8, "alpha");
    rec.copy(a, 0, a, 4, 4);
    expect_recording_error(&rec, "to itself");

    let mut rec = Recording::new();
    let a = rec.buffer(8, "alpha");
    rec.readback_range(a, 2, 4);
    expect_recording_error(&rec, "not 4-byte aligned");

    let mut rec = Recording::new();
    let a = rec.buffer(8, "alpha");
    rec.upload_bytes(a, &[0; 12]);
    expect_recording_error(&rec, "outside `alpha`");

    let mut rec = Recording::new();
    let a = rec.buffer(16, "alpha");
    rec.dispatch(ShaderId::Bounds, [1, 1, 1], &[a, a]);
    expect_recording_error(&rec, "takes 5 bindings, 2 given");

    let mut rec = Recording::new();
    let e = rec.external(16, "ext");
    rec.free(e);
    expect_recording_error(&rec, "external and cannot be freed");

    // A readback by count: its count must be an aligned u32 of an earlier readback, its
    // items a multiple of 4 bytes, and its buffer held to the end of the frame.
    let counted = |counter, at, stride| Counted {
        counter,
        at,
        stride,
        head: 16,
    };
    let mut rec = Recording::new();
    let items = rec.buffer(64, "items");
    let count = rec.buffer(8, "count");
    let later = ReadbackId(1);
    rec.readback_counted(items, counted(later, 0, 8));
    rec.readback(count);
    expect_recording_error(&rec, "count of `items` is not an aligned u32 of an earlier");

    let mut rec = Recording::new();
    let items = rec.buffer(64, "items");
    let count = rec.buffer(8, "count");
    let n = rec.readback(count);
    rec.readback_counted(items, counted(n, 8, 8));
    expect_recording_error(&rec, "readback #0, byte 8");

    let mut rec = Recording::new();
    let items = rec.buffer(64, "items");
    let count = rec.buffer(8, "count");
    let n = rec.readback(count);
    rec.readback_counted(items, counted(n, 4, 6));
    expect_recording_error(&rec, "items of 6 bytes");

    let mut rec = Recording::new();
    let items = rec.buffer(64, "items");
    let count = rec.buffer(8, "count");
    let n = rec.readback(count);
    rec.readback_counted(items, counted(n, 4, 8));
    rec.validate(&bindings)
        .expect("a well-formed counted readback");
    rec.free(items);
    expect_recording_error(&rec, "`items` is read back by count and is held");

    // A handle from another recording.
    let mut other = Recording::new();
    other.buffer(8, "x");
    let foreign = other.buffer(8, "foreign");
    let mut rec = Recording::new();
    rec.buffer(4, "only");
    rec.clear(foreign);
    expect_recording_error(&rec, "not declared");
}

#[test]
fn the_frame_is_recorded_in_stage_order() {
    let bodies = vec![GpuBody::default(); 3];
    let shapes = vec![GpuShapeBounds::default()];
    let (rec, _) = frame::record(frame::Bodies::Upload(&bodies), &shapes, Plan::Bounds);
    let stages: Vec<&str> = rec
        .commands()
        .iter()
        .filter_map(|c| match c {
            Command::Stage(s) => Some(*s),
            _ => None,
        })
        .collect();
    assert_eq!(stages, [stage::UPLOAD, stage::BOUNDS, stage::READBACK]);
    let dispatches: Vec<_> = rec
        .commands()
        .iter()
        .filter_map(|c| match c {
            Command::Dispatch { shader, grid, .. } => Some((*shader, *grid)),
            _ => None,
        })
        .collect();
    assert_eq!(dispatches, [(ShaderId::Bounds, [1, 1, 1])]);
    rec.validate(&bindings).expect("the frame validates");
}
