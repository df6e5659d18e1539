//! A frame recorded as data: buffer handles that carry a size and a label, and a list of
//! commands over them (upload, clear, dispatch, indirect dispatch, copy, readback, free),
//! grouped into named stages. Nothing here touches a GPU: a recording can be built,
//! inspected and validated anywhere, and [`crate::gpu::Engine`] runs it.

use std::collections::HashMap;

use wgpu::BufferUsages;

use crate::shaders::{BindingKind, ShaderId};
use crate::{Error, Result};

/// Identifies a buffer inside one recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u32);

/// A buffer as a recording sees it: an id, its size in bytes and a label for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferProxy {
    /// Identity within the recording.
    pub id: BufferId,
    /// Size in bytes (a multiple of 4, at least 4).
    pub size: u64,
    /// Name used in errors and debug labels.
    pub label: &'static str,
}

/// Identifies a readback inside one recording; the frame's output is looked up by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReadbackId(pub u32);

/// A readback whose length the frame itself decides: `count × stride` bytes (at most the
/// range), `count` being the u32 at byte `at` of the readback `counter`, recorded earlier
/// in the same frame (a pass's item counter). The first `head` bytes are copied with the
/// frame; when the count needs more, the engine copies the rest after the frame has
/// finished (one more round trip), so bytes past the count never leave the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted {
    /// The readback holding the count.
    pub counter: ReadbackId,
    /// Byte offset of the count in it.
    pub at: u64,
    /// Bytes per counted item (a multiple of 4).
    pub stride: u64,
    /// Bytes copied with the frame: the count the caller expects, with some room.
    pub head: u64,
}

/// Where a buffer comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferOrigin {
    /// Taken from the engine's pool for the frame and returned at `Free` or frame end.
    Pooled,
    /// Supplied by the caller when the recording runs (a renderer's instance buffer, data
    /// kept resident across frames): the bytes from `offset` on (a window of a buffer
    /// larger than one binding).
    External {
        /// Where the window starts in the supplied buffer.
        offset: u64,
    },
}

/// One step of a frame.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Starts a named stage; commands up to the next `Stage` are timed together.
    Stage(&'static str),
    /// Writes bytes at offset 0 of the buffer, in order with the other commands.
    Upload {
        /// Destination.
        buffer: BufferProxy,
        /// Bytes to write (length a multiple of 4, at most the buffer size).
        data: Vec<u8>,
    },
    /// Fills the whole buffer with zeros.
    Clear(BufferProxy),
    /// Runs a compute shader over a grid of workgroups.
    Dispatch {
        /// The shader.
        shader: ShaderId,
        /// Workgroup counts.
        grid: [u32; 3],
        /// Buffers for `@group(0) @binding(0..)`, in binding order.
        bindings: Vec<BufferProxy>,
    },
    /// Runs a compute shader with the grid read from a buffer (three u32 at `offset`).
    DispatchIndirect {
        /// The shader.
        shader: ShaderId,
        /// Buffer holding `[x, y, z]`.
        args: BufferProxy,
        /// Byte offset of the arguments.
        offset: u64,
        /// Buffers for `@group(0) @binding(0..)`, in binding order.
        bindings: Vec<BufferProxy>,
    },
    /// Copies `size` bytes between two different buffers.
    Copy {
        /// Source.
        src: BufferProxy,
        /// Byte offset in the source.
        src_offset: u64,
        /// Destination.
        dst: BufferProxy,
        /// Byte offset in the destination.
        dst_offset: u64,
        /// Bytes to copy.
        size: u64,
    },
    /// Reads `size` bytes at `offset` back to the CPU when the frame completes (with
    /// `counted`, only the counted items' bytes of them).
    Readback {
        /// Source buffer.
        buffer: BufferProxy,
        /// Byte offset.
        offset: u64,
        /// Bytes to read (at most, when counted).
        size: u64,
        /// Key of the bytes in the frame's output.
        id: ReadbackId,
        /// Where the item count comes from, for a readback sized by it.
        counted: Option<Counted>,
    },
    /// Returns a pooled buffer to the pool; later commands may not use it.
    Free(BufferProxy),
}

impl Command {
    /// The buffers the command names, in the order it names them.
    pub fn buffers(&self) -> Vec<&BufferProxy> {
        match self {
            Command::Stage(_) => Vec::new(),
            Command::Upload { buffer, .. }
            | Command::Clear(buffer)
            | Command::Readback { buffer, .. }
            | Command::Free(buffer) => vec![buffer],
            Command::Dispatch { bindings, .. } => bindings.iter().collect(),
            Command::DispatchIndirect { args, bindings, .. } => {
                std::iter::once(args).chain(bindings).collect()
            }
            Command::Copy { src, dst, .. } => vec![src, dst],
        }
    }
}

/// A frame as data. Build it with the methods below, in stage order.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    commands: Vec<Command>,
    buffers: Vec<(BufferProxy, BufferOrigin)>,
    readbacks: u32,
}

impl Recording {
    /// An empty recording.
    pub fn new() -> Self {
        Self::default()
    }

    /// The commands, in order.
    pub fn commands(&self) -> &[Command] {
        &self.commands
    }

    /// Every buffer declared, with its origin, in declaration order.
    pub fn buffers(&self) -> &[(BufferProxy, BufferOrigin)] {
        &self.buffers
    }

    /// Number of readbacks recorded.
    pub fn readback_count(&self) -> u32 {
        self.readbacks
    }

    /// Declares a buffer of `size` bytes (rounded up to a multiple of 4, at least 4) taken
    /// from the engine's pool. Its contents are undefined until written.
    pub fn buffer(&mut self, size: u64, label: &'static str) -> BufferProxy {
        self.declare(size, label, BufferOrigin::Pooled)
    }

    /// Declares a pooled buffer for an array of `count` values of `T`. WGSL needs at least
    /// one element behind an array binding, so an empty array still gets one.
    pub fn array_buffer<T: bytemuck::Pod>(
        &mut self,
        count: usize,
        label: &'static str,
    ) -> BufferProxy {
        self.buffer((count.max(1) * size_of::<T>()) as u64, label)
    }

    /// Declares a buffer the caller supplies when the recording runs.
    pub fn external(&mut self, size: u64, label: &'static str) -> BufferProxy {
        self.external_window(0, size, label)
    }

    /// Declares `size` bytes from `offset` on of a buffer the caller supplies when the
    /// recording runs: a window of one larger than a binding holds. Bindings, copies and
    /// readbacks of the proxy address the window (`offset` must meet the device's
    /// storage-offset alignment, 256 bytes at most).
    pub fn external_window(&mut self, offset: u64, size: u64, label: &'static str) -> BufferProxy {
        self.declare(size, label, BufferOrigin::External { offset })
    }

    fn declare(&mut self, size: u64, label: &'static str, origin: BufferOrigin) -> BufferProxy {
        let proxy = BufferProxy {
            id: BufferId(self.buffers.len() as u32),
            size: size.max(4).next_multiple_of(4),
            label,
        };
        self.buffers.push((proxy, origin));
        proxy
    }

    /// Starts a named stage.
    pub fn stage(&mut self, name: &'static str) {
        self.commands.push(Command::Stage(name));
    }

    /// Uploads raw bytes to the start of `buffer` (padded with zeros to a multiple of 4).
    pub fn upload_bytes(&mut self, buffer: BufferProxy, bytes: &[u8]) {
        let mut data = bytes.to_vec();
        data.resize(bytes.len().next_multiple_of(4), 0);
        self.commands.push(Command::Upload { buffer, data });
    }

    /// Uploads a slice of Pod values to the start of `buffer`.
    pub fn upload<T: bytemuck::Pod>(&mut self, buffer: BufferProxy, values: &[T]) {
        self.upload_bytes(buffer, bytemuck::cast_slice(values));
    }

    /// Zeroes `buffer`.
    pub fn clear(&mut self, buffer: BufferProxy) {
        self.commands.push(Command::Clear(buffer));
    }

    /// Dispatches `shader` over `grid` workgroups with `bindings` in binding order.
    pub fn dispatch(&mut self, shader: ShaderId, grid: [u32; 3], bindings: &[BufferProxy]) {
        self.commands.push(Command::Dispatch {
            shader,
            grid,
            bindings: bindings.to_vec(),
        });
    }

    /// Dispatches `shader` with the grid stored in `args` at `offset`.
    pub fn dispatch_indirect(
        &mut self,
        shader: ShaderId,
        args: BufferProxy,
        offset: u64,
        bindings: &[BufferProxy],
    ) {
        self.commands.push(Command::DispatchIndirect {
            shader,
            args,
            offset,
            bindings: bindings.to_vec(),
        });
    }

    /// Copies `size` bytes from `src` at `src_offset` to `dst` at `dst_offset`.
    pub fn copy(
        &mut self,
        src: BufferProxy,
        src_offset: u64,
        dst: BufferProxy,
        dst_offset: u64,
        size: u64,
    ) {
        self.commands.push(Command::Copy {
            src,
            src_offset,
            dst,
            dst_offset,
            size,
        });
    }

    /// Reads the whole buffer back.
    pub fn readback(&mut self, buffer: BufferProxy) -> ReadbackId {
        self.readback_range(buffer, 0, buffer.size)
    }

    /// Reads `size` bytes at `offset` back.
    pub fn readback_range(&mut self, buffer: BufferProxy, offset: u64, size: u64) -> ReadbackId {
        self.push_readback(buffer, offset, size, None)
    }

    /// Reads back the counted items at the start of `buffer` ([`Counted`]). The buffer is
    /// held until the frame's output is collected: no later command may free it.
    pub fn readback_counted(&mut self, buffer: BufferProxy, counted: Counted) -> ReadbackId {
        self.push_readback(buffer, 0, buffer.size, Some(counted))
    }

    fn push_readback(
        &mut self,
        buffer: BufferProxy,
        offset: u64,
        size: u64,
        counted: Option<Counted>,
    ) -> ReadbackId {
        let id = ReadbackId(self.readbacks);
        self.readbacks += 1;
        self.commands.push(Command::Readback {
            buffer,
            offset,
            size,
            id,
            counted,
        });
        id
    }

    /// Returns a pooled buffer to the pool.
    pub fn free(&mut self, buffer: BufferProxy) {
        self.commands.push(Command::Free(buffer));
    }

    /// Checks the recording for mistakes that would otherwise surface as GPU validation
    /// errors or wrong results: unknown or freed buffers, stale sizes, ranges out of
    /// bounds or misaligned, copies within one buffer, double frees, freeing an external
    /// buffer, and bindings that do not match the shader (`shader_bindings` gives each
    /// shader's binding kinds). Returns the usages each buffer needs.
    pub fn validate(
        &self,
        shader_bindings: &dyn Fn(ShaderId) -> Result<Vec<BindingKind>>,
    ) -> Result<HashMap<BufferId, BufferUsages>> {
        let mut usages: HashMap<BufferId, BufferUsages> = self
            .buffers
            .iter()
            .map(|(b, _)| (b.id, BufferUsages::empty()))
            .collect();
        let mut freed = vec![false; self.buffers.len()];
        // Readback sizes so far, and the buffers a counted readback holds.
        let mut read_sizes: Vec<u64> = Vec::new();
        let mut held = vec![false; self.buffers.len()];
        let mut require =
            |b: &BufferProxy, usage: BufferUsages, what: &str, freed: &[bool]| -> Result<()> {
                let Some((declared, _)) = self.buffers.get(b.id.0 as usize) else {
                    return Err(Error::Recording(format!(
                        "{what}: buffer `{}` (#{}) was not declared in this recording",
                        b.label, b.id.0
                    )));
                };
                if declared != b {
                    return Err(Error::Recording(format!(
                        "{what}: buffer #{} is `{}` of {} bytes, not `{}` of {} bytes",
                        b.id.0, declared.label, declared.size, b.label, b.size
                    )));
                }
                if freed[b.id.0 as usize] {
                    return Err(Error::Recording(format!(
                        "{what}: buffer `{}` is used after it was freed",
                        b.label
                    )));
                }
                *usages.get_mut(&b.id).expect("declared above") |= usage;
                Ok(())
            };
        let range = |b: &BufferProxy, offset: u64, size: u64, what: &str| -> Result<()> {
            if !offset.is_multiple_of(4) || !size.is_multiple_of(4) {
                return Err(Error::Recording(format!(
                    "{what}: range {offset}+{size} of `{}` is not 4-byte aligned",
                    b.label
                )));
            }
            if offset.checked_add(size).is_none_or(|end| end > b.size) {
                return Err(Error::Recording(format!(
                    "{what}: range {offset}+{size} is outside `{}` ({} bytes)",
                    b.label, b.size
                )));
            }
            Ok(())
        };
        for (index, command) in self.commands.iter().enumerate() {
            let what = format!("command {index}");
            match command {
                Command::Stage(_) => {}
                Command::Upload { buffer, data } => {
                    require(buffer, BufferUsages::COPY_DST, &what, &freed)?;
                    range(buffer, 0, data.len() as u64, &what)?;
                }
                Command::Clear(buffer) => require(buffer, BufferUsages::COPY_DST, &what, &freed)?,
                Command::Dispatch {
                    shader, bindings, ..
                }
                | Command::DispatchIndirect {
                    shader, bindings, ..
                } => {
                    if let Command::DispatchIndirect { args, offset, .. } = command {
                        require(args, BufferUsages::INDIRECT, &what, &freed)?;
                        range(args, *offset, 12, &what)?;
                    }
                    let kinds = shader_bindings(*shader)?;
                    if kinds.len() != bindings.len() {
                        return Err(Error::Recording(format!(
                            "{what}: {} takes {} bindings, {} given",
                            shader.file_name(),
                            kinds.len(),
                            bindings.len()
                        )));
                    }
                    for (b, kind) in bindings.iter().zip(kinds) {
                        require(b, binding_usage(kind), &what, &freed)?;
                    }
                }
                Command::Copy {
                    src,
                    src_offset,
                    dst,
                    dst_offset,
                    size,
                } => {
                    if src.id == dst.id {
                        return Err(Error::Recording(format!(
                            "{what}: copy from `{}` to itself",
                            src.label
                        )));
                    }
                    require(src, BufferUsages::COPY_SRC, &what, &freed)?;
                    require(dst, BufferUsages::COPY_DST, &what, &freed)?;
                    range(src, *src_offset, *size, &what)?;
                    range(dst, *dst_offset, *size, &what)?;
                }
                Command::Readback {
                    buffer,
                    offset,
                    size,
                    counted,
                    ..
                } => {
                    require(buffer, BufferUsages::COPY_SRC, &what, &freed)?;
                    range(buffer, *offset, *size, &what)?;
                    if let Some(c) = counted {
                        let counter_size = read_sizes.get(c.counter.0 as usize).copied();
                        if counter_size.is_none_or(|n| c.at.saturating_add(4) > n)
                            || !c.at.is_multiple_of(4)
                        {
                            return Err(Error::Recording(format!(
                                "{what}: the count of `{}` is not an aligned u32 of an earlier \
                                 readback (readback #{}, byte {})",
                                buffer.label, c.counter.0, c.at
                            )));
                        }
                        if c.stride == 0 || !c.stride.is_multiple_of(4) {
                            return Err(Error::Recording(format!(
                                "{what}: items of {} bytes in `{}`: a counted readback needs a \
                                 nonzero multiple of 4",
                                c.stride, buffer.label
                            )));
                        }
                        if matches!(
                            self.buffers[buffer.id.0 as usize].1,
                            BufferOrigin::External { offset } if offset > 0
                        ) {
                            return Err(Error::Recording(format!(
                                "{what}: `{}` is a window of an external buffer; a counted \
                                 readback reads a pooled buffer or a whole external one",
                                buffer.label
                            )));
                        }
                        held[buffer.id.0 as usize] = true;
                    }
                    read_sizes.push(*size);
                }
                Command::Free(buffer) => {
                    require(buffer, BufferUsages::empty(), &what, &freed)?;
                    if matches!(
                        self.buffers[buffer.id.0 as usize].1,
                        BufferOrigin::External { .. }
                    ) {
                        return Err(Error::Recording(format!(
                            "{what}: `{}` is external and cannot be freed",
                            buffer.label
                        )));
                    }
                    if held[buffer.id.0 as usize] {
                        return Err(Error::Recording(format!(
                            "{what}: `{}` is read back by count and is held until the frame \
                             is collected; it cannot be freed",
                            buffer.label
                        )));
                    }
                    freed[buffer.id.0 as usize] = true;
                }
            }
        }
        Ok(usages)
    }
}

fn binding_usage(kind: BindingKind) -> BufferUsages {
    match kind {
        BindingKind::Uniform => BufferUsages::UNIFORM,
        BindingKind::StorageRead | BindingKind::StorageReadWrite => BufferUsages::STORAGE,
    }
}
