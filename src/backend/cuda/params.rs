//! Kernel parameter structs and their C++ twins: a kernel takes its sources and then one
//! struct of its family's, declared once with `kernel_params!`, which gives both the Rust
//! `#[repr(C)]` struct and the C++ struct printed into the kernel's translation unit.

use super::mem::Ptr;
use cudarc::driver::DeviceRepr;

/// A kernel's parameter struct, laid out as its C++ twin.
pub(crate) trait KernelParams: DeviceRepr + Copy {
    /// The C++ twin (`struct Name { ... };`).
    fn cpp() -> String;
}

/// The C++ spelling of a parameter field's type.
pub(crate) trait CppType {
    const CPP: &'static str;
}
impl CppType for Ptr {
    const CPP: &'static str = "void*";
}
impl CppType for u64 {
    const CPP: &'static str = "u64";
}
impl CppType for u32 {
    const CPP: &'static str = "u32";
}

/// Constants passed by value in a parameter struct: at most `WORDS`, else a kernel reads them
/// from device memory. Its C++ twin `ds::Words` and `ds::WORDS` are printed from these
/// (`Words::cpp`), before the parameter structs.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Words(pub [u64; WORDS]);

/// The words of `Words` (`ds::WORDS`).
pub(crate) const WORDS: usize = 32;

impl Words {
    /// The C++ twin: `ds::WORDS` and `ds::Words`.
    pub fn cpp() -> String {
        format!(
            "namespace ds {{ constexpr int WORDS = {WORDS}; struct Words {{ u64 w[WORDS]; }}; }}\n"
        )
    }
}

impl Default for Words {
    fn default() -> Words {
        Words([0; WORDS])
    }
}
impl CppType for Words {
    const CPP: &'static str = "ds::Words";
}

/// Declares a kernel parameter struct (fields of type `Ptr`, `u64`, `u32` or `Words`) and its C++
/// twin of the same name, fields in the same order.
macro_rules! kernel_params {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $field:ident: $ty:ident),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, Default)]
        pub(crate) struct $name {
            $($(#[$fm])* pub $field: $ty,)*
        }

        // SAFETY: a `repr(C)` struct of plain integers and addresses, laid out as the C++
        // struct that `cpp` prints (the same fields, types of the same size and alignment, in
        // the same order), which is the kernel's parameter.
        unsafe impl cudarc::driver::DeviceRepr for $name {}

        impl $crate::backend::cuda::params::KernelParams for $name {
            fn cpp() -> String {
                let mut s = format!("struct {} {{", stringify!($name));
                $(
                    s.push_str(" ");
                    s.push_str(<$ty as $crate::backend::cuda::params::CppType>::CPP);
                    s.push_str(concat!(" ", stringify!($field), ";"));
                )*
                s.push_str(" };\n");
                s
            }
        }
    };
}
pub(crate) use kernel_params;
