//! What launch shapes depend on besides the data: the GPU's attributes, read from the driver
//! (`Gpu::new`), and the published figures of the GPUs the tuning is checked against.

/// A GPU's attributes that launch shapes depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arch {
    /// Compute capability.
    pub major: u32,
    pub minor: u32,
    /// Multiprocessors.
    pub sms: u32,
    /// Bytes of L2 cache.
    pub l2_bytes: usize,
    /// Bytes of shared memory one block may use (the opt-in maximum).
    pub smem_block: usize,
    /// Bytes of shared memory of one multiprocessor, shared by its resident blocks.
    pub smem_sm: usize,
    /// Bytes of shared memory the driver reserves for each resident block.
    pub smem_reserved: usize,
    /// Threads and blocks one multiprocessor holds at once.
    pub threads_sm: u32,
    pub blocks_sm: u32,
    /// Whether kernels may be launched cooperatively (every block resident at once).
    pub cooperative: bool,
}

/// Bytes of static shared memory a kernel with a dynamic tile may use beside it (block scans'
/// and look-backs' scratch): what a tile leaves free of a block's limit. The compile check
/// asserts every instance's static and dynamic shared memory fit its architecture's block.
pub(crate) const STATIC_SMEM: usize = 8 << 10;

impl Arch {
    /// The compute capability as `10 * major + minor`.
    pub fn cc(&self) -> u32 {
        self.major * 10 + self.minor
    }

    /// At most `want` blocks of `block` threads, each with `smem` bytes of dynamic shared
    /// memory, that one multiprocessor holds at once (at least 1): the `__launch_bounds__`
    /// minimum that the kernel can reach, so that its registers are not capped for blocks that
    /// could never be resident.
    pub fn blocks_that_fit(&self, want: u32, block: u32, smem: usize) -> u32 {
        let by_threads = self.threads_sm / block.max(1);
        let by_smem = if smem == 0 {
            u32::MAX
        } else {
            (self.smem_sm / (smem + self.smem_reserved)) as u32
        };
        want.min(by_threads).min(by_smem).min(self.blocks_sm).max(1)
    }

    /// Whether `smem` bytes of dynamic shared memory a block leave room for the kernel's static
    /// shared memory (`STATIC_SMEM`) within the block's limit.
    pub fn tile_fits(&self, smem: usize) -> bool {
        smem + STATIC_SMEM <= self.smem_block
    }
}

/// The published figures (the CUDA C++ Programming Guide's technical specifications per compute
/// capability, and each product's multiprocessors and L2 cache) of the GPUs whose shapes the
/// tuning is checked against: every kernel's shared memory and threads must fit each.
pub(crate) mod gpus {
    use super::Arch;

    const KB: usize = 1 << 10;
    const MB: usize = 1 << 20;

    #[allow(clippy::too_many_arguments)]
    const fn arch(
        major: u32,
        minor: u32,
        sms: u32,
        l2_mb: usize,
        smem_sm_kb: usize,
        smem_block_kb: usize,
        reserved_kb: usize,
        threads_sm: u32,
        blocks_sm: u32,
    ) -> Arch {
        Arch {
            major,
            minor,
            sms,
            l2_bytes: l2_mb * MB,
            smem_block: smem_block_kb * KB,
            smem_sm: smem_sm_kb * KB,
            smem_reserved: reserved_kb * KB,
            threads_sm,
            blocks_sm,
            cooperative: true,
        }
    }

    pub const V100: Arch = arch(7, 0, 80, 6, 96, 96, 0, 2048, 32);
    pub const T4: Arch = arch(7, 5, 40, 4, 64, 64, 0, 1024, 16);
    pub const A100: Arch = arch(8, 0, 108, 40, 164, 163, 1, 2048, 32);
    pub const A10: Arch = arch(8, 6, 72, 6, 100, 99, 1, 1536, 16);
    pub const RTX3090: Arch = arch(8, 6, 82, 6, 100, 99, 1, 1536, 16);
    pub const L4: Arch = arch(8, 9, 58, 48, 100, 99, 1, 1536, 24);
    pub const RTX4090: Arch = arch(8, 9, 128, 72, 100, 99, 1, 1536, 24);
    pub const H100: Arch = arch(9, 0, 132, 50, 228, 227, 1, 2048, 32);
    pub const H200: Arch = arch(9, 0, 132, 50, 228, 227, 1, 2048, 32);
    pub const B200: Arch = arch(10, 0, 148, 126, 228, 227, 1, 2048, 32);
    pub const RTX5090: Arch = arch(12, 0, 170, 96, 100, 99, 1, 1536, 32);

    /// Every GPU above, by name.
    pub const ALL: [(&str, Arch); 11] = [
        ("V100", V100),
        ("T4", T4),
        ("A100", A100),
        ("A10", A10),
        ("RTX 3090", RTX3090),
        ("L4", L4),
        ("RTX 4090", RTX4090),
        ("H100", H100),
        ("H200", H200),
        ("B200", B200),
        ("RTX 5090", RTX5090),
    ];

    /// The GPU a compile check's `sm_XY` or `compute_XY` target stands for.
    pub fn for_target(arch: &str) -> Arch {
        let cc: u32 = arch
            .trim_start_matches("sm_")
            .trim_start_matches("compute_")
            .trim_end_matches(['a', 'f'])
            .parse()
            .unwrap_or(90);
        ALL.iter()
            .map(|(_, a)| *a)
            .find(|a| a.cc() == cc)
            .unwrap_or(H100)
    }
}
