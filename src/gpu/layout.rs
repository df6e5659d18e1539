//! Rust twins of WGSL structs. Each `#[repr(C)]` Pod struct declared with [`wgsl_twin!`](crate::wgsl_twin)
//! names its WGSL struct and lists its field offsets, so a test can hold them against
//! naga's layout of the shader source (`tests/shaders.rs`). Padding fields start with `_`
//! and have no WGSL counterpart.

/// A `#[repr(C)]` Pod struct that mirrors a WGSL struct field by field.
pub trait WgslTwin: bytemuck::Pod {
    /// Name of the struct in the WGSL sources.
    const WGSL_NAME: &'static str;
    /// `(field name, byte offset)` for every field, padding included.
    fn field_offsets() -> Vec<(&'static str, usize)>;
}

/// Declares a `#[repr(C)]` Pod struct and its [`WgslTwin`] impl in one place.
#[macro_export]
macro_rules! wgsl_twin {
    (
        $(#[$meta:meta])*
        pub struct $name:ident as $wgsl:literal {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty ),*
        }

        impl $crate::gpu::layout::WgslTwin for $name {
            const WGSL_NAME: &'static str = $wgsl;
            fn field_offsets() -> Vec<(&'static str, usize)> {
                vec![$( (stringify!($field), ::std::mem::offset_of!($name, $field)) ),*]
            }
        }
    };
}
