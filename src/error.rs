//! The one error type of the crate. Every failure a user can cause (bad input, no adapter,
//! a device that went away, a buffer over the device's limits) is a variant here; the
//! library does not panic on user input.

use std::path::PathBuf;

/// Result alias used across proxima.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in proxima.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No GPU adapter could be found (or the one found cannot run compute shaders).
    #[error("no GPU adapter: {reason}")]
    NoAdapter {
        /// Why no adapter was usable.
        reason: String,
    },

    /// Adapters are present, but none has the name asked for (`WGPU_ADAPTER_NAME`, or
    /// [`crate::gpu::ContextOptions::adapter_name`]).
    #[error(
        "no GPU adapter: no adapter name contains `{name}` (WGPU_ADAPTER_NAME); present: {}",
        present.join(", ")
    )]
    NoAdapterNamed {
        /// The name asked for.
        name: String,
        /// The adapters present, each with its backend.
        present: Vec<String>,
    },

    /// The adapter refused to create a device.
    #[error("could not create a GPU device: {0}")]
    RequestDevice(String),

    /// The device was lost (driver reset, `Device::destroy`, out of memory, ...).
    #[error("GPU device lost: {0}")]
    DeviceLost(String),

    /// A wgpu validation, out-of-memory or internal error outside of an error scope.
    #[error("GPU error: {0}")]
    Gpu(String),

    /// A shader failed to parse, validate or compile.
    #[error("shader `{name}`: {message}")]
    Shader {
        /// File name of the shader inside `shaders/`.
        name: String,
        /// What the parser, validator or driver said.
        message: String,
    },

    /// A buffer would exceed what the device can hold or bind.
    #[error(
        "buffer `{label}` needs {needed} bytes but the device allows at most {limit} ({limit_name})"
    )]
    BufferLimit {
        /// Label of the buffer.
        label: String,
        /// Requested size in bytes.
        needed: u64,
        /// The limit that applies.
        limit: u64,
        /// Name of the wgpu limit that applies.
        limit_name: &'static str,
    },

    /// A scene would take more memory than the machine can give (see `memory`).
    #[error(
        "{what} need about {} of memory, and this machine can give the process {}: a \
         smaller scene (fewer bodies, fewer of them touching), or a machine with more memory",
        bytes(*needed),
        bytes(*capacity)
    )]
    Memory {
        /// What needs it, with its count ("the frame's 120,000,000 pairs").
        what: String,
        /// About how many bytes (a low estimate).
        needed: u64,
        /// How many bytes the process can have in all.
        capacity: u64,
    },

    /// A frame recording is inconsistent (a freed buffer used again, a copy out of range, ...).
    #[error("frame recording: {0}")]
    Recording(String),

    /// Mapping a readback buffer failed or waiting for the GPU timed out.
    #[error("readback: {0}")]
    Readback(String),

    /// A body's pose is not usable: a non-finite position or rotation, or a zero quaternion.
    #[error("body {body}: invalid pose ({what})")]
    InvalidPose {
        /// Index of the first offending body.
        body: u32,
        /// What is wrong with it.
        what: String,
    },

    /// A body names a shape that does not exist, or a shape's bounds are not usable.
    #[error("body {body}: {what}")]
    InvalidShape {
        /// Index of the first offending body (or shape, where stated).
        body: u32,
        /// What is wrong.
        what: String,
    },

    /// Geometry that cannot be used: a degenerate or non-finite point set, a polytope that
    /// is not closed or not convex.
    #[error("geometry: {0}")]
    Geometry(String),

    /// A motion that cannot be followed: a non-finite or non-unit pose, or a half turn
    /// whose shorter arc is ambiguous.
    #[error("motion: {0}")]
    Motion(String),

    /// A mesh file that cannot be used.
    #[error("mesh {path}: {message}")]
    Mesh {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },

    /// A query that cannot be answered (bad JSON, unknown query, not implemented yet).
    /// A benchmark that could not measure everything it was asked to.
    #[error("bench: {0}")]
    Bench(String),

    #[error("{0}")]
    Query(String),

    /// A scene description could not be used.
    #[error("scene {path}: {message}")]
    Scene {
        /// File the scene came from (`<built-in>` for generated ones).
        path: PathBuf,
        /// What is wrong, naming the line and field where known.
        message: String,
    },

    /// Bad command-line usage.
    #[error("{0}")]
    Usage(String),

    /// I/O on a named file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl Error {
    /// True for the errors that mean "there is no usable GPU here", after which the caller
    /// may fall back to the CPU twins.
    pub fn is_no_adapter(&self) -> bool {
        matches!(self, Error::NoAdapter { .. } | Error::NoAdapterNamed { .. })
    }

    /// The error of frame `k`'s poses (of several handed over at once), saying which frame.
    pub fn in_frame(self, k: u64) -> Self {
        match self {
            Error::InvalidPose { body, what } => Error::InvalidPose {
                body,
                what: format!("frame {k}'s poses: {what}"),
            },
            Error::Usage(what) => Error::Usage(format!("frame {k}'s poses: {what}")),
            other => other,
        }
    }

    /// The error of a run of bodies starting at `offset` in a larger table, naming its body
    /// by the index there.
    pub fn with_body_offset(self, offset: u32) -> Self {
        match self {
            Error::InvalidPose { body, what } => Error::InvalidPose {
                body: body + offset,
                what,
            },
            Error::InvalidShape { body, what } => Error::InvalidShape {
                body: body + offset,
                what,
            },
            other => other,
        }
    }
}

/// `b` bytes in the unit that reads best (kB, MB, GB: powers of 1000).
pub(crate) fn bytes(b: u64) -> String {
    let x = b as f64;
    match b {
        0..1_000_000 => format!("{:.0} kB", x / 1e3),
        1_000_000..1_000_000_000 => format!("{:.0} MB", x / 1e6),
        _ => format!("{:.1} GB", x / 1e9),
    }
}
