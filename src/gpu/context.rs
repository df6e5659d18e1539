//! The GPU context: a headless adapter and device, or a device a renderer hands in.
//!
//! Adapter choice follows wgpu's usual environment variables: `WGPU_BACKEND` (e.g.
//! `vulkan`, `gl`), `WGPU_POWER_PREF` (`low`, `high`) and `WGPU_ADAPTER_NAME` (a substring
//! of the adapter's name; no match is an error that lists the adapters present). Without
//! any, the first adapter wgpu prefers on the primary backends is taken.
//!
//! Device loss and errors raised outside an error scope are caught by callbacks and turned
//! into [`Error`] values by [`GpuContext::check`], which the engine calls after every
//! frame; nothing here panics on a missing or broken GPU.

use std::sync::{Arc, Mutex};

use crate::{Error, Result};

/// What went wrong on the device since the last check, filled by wgpu's callbacks.
#[derive(Debug, Default)]
struct Faults {
    lost: Option<String>,
    errors: Vec<String>,
}

/// A device and queue with what is known about the adapter behind them.
#[derive(Debug, Clone)]
pub struct GpuContext {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// Adapter name, backend, driver.
    pub info: wgpu::AdapterInfo,
    faults: Arc<Mutex<Faults>>,
}

/// How to pick the adapter.
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    /// Backends to try; `None` means the primary ones (Vulkan, Metal, DX12), overridden by
    /// `WGPU_BACKEND`.
    pub backends: Option<wgpu::Backends>,
    /// Substring of the adapter name; overrides `WGPU_ADAPTER_NAME`.
    pub adapter_name: Option<String>,
}

/// The line printed when proxima falls back to the CPU twins.
pub const NO_ADAPTER_HINT: &str = "no GPU adapter found: running the CPU twins of the GPU passes \
(for the GPU path install the GPU's Vulkan driver; Mesa's lavapipe, `apt-get install mesa-vulkan-drivers`, \
is a software adapter that `--device gpu` runs on)";

/// The line printed when proxima falls back to the CPU twins because `e` (an error for
/// which [`Error::is_no_adapter`] holds) found no adapter to run on.
pub fn fallback_line(e: &Error) -> String {
    match e {
        Error::NoAdapterNamed { name, present } => format!(
            "no GPU adapter's name contains `{name}` (WGPU_ADAPTER_NAME): running the CPU twins \
             of the GPU passes (present: {}; name one of them, or unset the variable)",
            present.join(", ")
        ),
        _ => format!("{NO_ADAPTER_HINT} [{e}]"),
    }
}

/// `WGPU_BACKEND`, when set, names backends wgpu knows: wgpu skips a name it does not know,
/// and a misspelt one would leave no backend to try ("no suitable adapter") where the
/// variable is what is wrong.
fn check_backend_variable() -> Result<()> {
    const KNOWN: [&str; 11] = [
        "vulkan", "vk", "dx12", "d3d12", "metal", "mtl", "opengl", "gles", "gl", "webgpu", "noop",
    ];
    let Ok(value) = std::env::var("WGPU_BACKEND") else {
        return Ok(());
    };
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !KNOWN.contains(&name.to_lowercase().as_str()) {
            return Err(Error::Usage(format!(
                "WGPU_BACKEND=`{value}`: `{name}` is not a backend (vulkan, metal, dx12, gl, \
                 webgpu; several separated by commas)"
            )));
        }
    }
    Ok(())
}

/// The one line a pipeline left to choose ([`crate::DeviceChoice::Auto`]) gives when the
/// only adapter is a software one, `name`.
pub fn software_adapter_notice(name: &str) -> String {
    format!(
        "only a software GPU adapter found ({name}), slower than the CPU twins of the GPU \
         passes: running the twins (`--device gpu` runs on the adapter)"
    )
}

impl GpuContext {
    /// Opens a headless device on the adapter chosen by `options` and the environment.
    pub fn new(options: &ContextOptions) -> Result<Self> {
        pollster::block_on(Self::new_async(options))
    }

    /// Async form of [`GpuContext::new`].
    pub async fn new_async(options: &ContextOptions) -> Result<Self> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = options.backends.unwrap_or(wgpu::Backends::PRIMARY);
        check_backend_variable()?;
        let desc = desc.with_env();
        let backends = desc.backends;
        let instance = wgpu::Instance::new(desc);
        let adapter = pick_adapter(&instance, backends, options).await?;
        let info = adapter.get_info();
        let downlevel = adapter.get_downlevel_capabilities();
        if !downlevel
            .flags
            .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
        {
            return Err(Error::NoAdapter {
                reason: format!(
                    "adapter `{}` ({:?}) cannot run compute shaders",
                    info.name, info.backend
                ),
            });
        }
        // Subgroups where the adapter has them: no pass of ours takes them (an 8-bit sort
        // ranking its blocks by ballots was slower on an H100 than the 4-bit sorts), but a
        // library sharing the device may (the sort bench's peer, lampshade, sorts 16M
        // pairs in 3.5 ms with them and 8.4 without).
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SUBGROUP;
        let device_desc = wgpu::DeviceDescriptor {
            label: Some("proxima"),
            required_features: adapter.features() & wanted,
            // Ask for everything the adapter offers: large scenes need the large bindings.
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) = adapter.request_device(&device_desc).await.map_err(|e| {
            Error::RequestDevice(format!("{} ({:?}): {e}", info.name, info.backend))
        })?;
        Ok(Self::from_parts(device, queue, info))
    }

    /// Wraps a device and queue created elsewhere (a renderer embedding proxima). proxima
    /// installs its own device-lost and uncaptured-error callbacks on it.
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue) -> Self {
        let info = device.adapter_info();
        Self::from_parts(device, queue, info)
    }

    fn from_parts(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Self {
        let faults = Arc::new(Mutex::new(Faults::default()));
        let lost = Arc::clone(&faults);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut f) = lost.lock() {
                f.lost = Some(format!("{reason:?}: {message}"));
            }
        });
        let errors = Arc::clone(&faults);
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            if let Ok(mut f) = errors.lock() {
                f.errors.push(error.to_string());
            }
        }));
        Self {
            device,
            queue,
            info,
            faults,
        }
    }

    /// A storage buffer holding `bytes` (at least 256 bytes: a binding may not be empty,
    /// nor smaller than one element of its array, and a table may be empty, e.g. no faces
    /// at all, or a picture of a world with no bodies, whose 32-byte body made 16 bytes
    /// too few); the named buffer-limit error when the device cannot bind that many bytes.
    pub fn storage_buffer(&self, label: &str, bytes: &[u8]) -> Result<wgpu::Buffer> {
        use wgpu::util::DeviceExt;
        let bytes = if bytes.is_empty() {
            &[0u8; 256][..]
        } else {
            bytes
        };
        let usage = wgpu::BufferUsages::STORAGE;
        super::sizes::check_buffer(&self.limits(), label, bytes.len() as u64, usage)?;
        Ok(self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage,
            }))
    }

    /// The device's limits.
    pub fn limits(&self) -> wgpu::Limits {
        self.device.limits()
    }

    /// True for a software adapter (lavapipe, WARP): it runs the passes on the CPU, so its
    /// timings show the harness, not GPU speed.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// True when compute passes can write timestamps.
    pub fn has_timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Returns the first fault recorded since the last check: device loss first, then
    /// uncaptured errors (all of them, joined).
    pub fn check(&self) -> Result<()> {
        // wgpu delivers the device-lost callback during maintenance: a non-blocking poll
        // first, so that a loss is reported as such rather than as the validation errors
        // that follow it (invalid buffers, failed submissions). Its own result adds nothing.
        let _ = self.device.poll(wgpu::PollType::Poll);
        let mut f = self
            .faults
            .lock()
            .map_err(|_| Error::Gpu("fault log poisoned".into()))?;
        if let Some(lost) = &f.lost {
            return Err(Error::DeviceLost(lost.clone()));
        }
        if !f.errors.is_empty() {
            let all = std::mem::take(&mut f.errors).join("; ");
            return Err(Error::Gpu(all));
        }
        Ok(())
    }

    /// True once the device has been lost.
    pub fn is_lost(&self) -> bool {
        self.faults.lock().map(|f| f.lost.is_some()).unwrap_or(true)
    }

    /// A few lines describing the adapter, its limits and features (for `proxima info`).
    pub fn describe(&self) -> String {
        let l = self.limits();
        let i = &self.info;
        format!(
            "adapter:            {}\n\
             backend:            {:?}\n\
             device type:        {:?}\n\
             driver:             {} {}\n\
             vendor / device id: {:#06x} / {:#06x}\n\
             timestamp queries:  {}\n\
             max buffer size:    {} bytes\n\
             max storage binding:{} bytes\n\
             max uniform binding:{} bytes\n\
             max storage buffers per stage: {}\n\
             max workgroups per dimension:  {}\n\
             max invocations per workgroup: {}\n\
             max workgroup storage: {} bytes",
            i.name,
            i.backend,
            i.device_type,
            i.driver,
            i.driver_info,
            i.vendor,
            i.device,
            if self.has_timestamps() {
                "yes"
            } else {
                "no (stages are timed on the CPU)"
            },
            l.max_buffer_size,
            l.max_storage_buffer_binding_size,
            l.max_uniform_buffer_binding_size,
            l.max_storage_buffers_per_shader_stage,
            l.max_compute_workgroups_per_dimension,
            l.max_compute_invocations_per_workgroup,
            l.max_compute_workgroup_storage_size,
        )
    }
}

async fn pick_adapter(
    instance: &wgpu::Instance,
    backends: wgpu::Backends,
    options: &ContextOptions,
) -> Result<wgpu::Adapter> {
    let wanted_name = options
        .adapter_name
        .clone()
        .or_else(|| std::env::var("WGPU_ADAPTER_NAME").ok())
        .filter(|n| !n.is_empty());
    if let Some(name) = wanted_name {
        let adapters = instance.enumerate_adapters(backends).await;
        let needle = name.to_lowercase();
        let names: Vec<String> = adapters
            .iter()
            .map(|a| {
                let i = a.get_info();
                format!("{} ({:?})", i.name, i.backend)
            })
            .collect();
        return adapters
            .into_iter()
            .find(|a| a.get_info().name.to_lowercase().contains(&needle))
            .ok_or_else(|| {
                if names.is_empty() {
                    Error::NoAdapter {
                        reason: format!(
                            "no adapter name contains `{name}` (WGPU_ADAPTER_NAME); present: none"
                        ),
                    }
                } else {
                    Error::NoAdapterNamed {
                        name,
                        present: names,
                    }
                }
            });
    }
    let power_preference = wgpu::PowerPreference::from_env().unwrap_or_default();
    instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference,
            ..Default::default()
        })
        .await
        .map_err(|e| Error::NoAdapter {
            reason: format!("{e} (backends {backends:?})"),
        })
}
