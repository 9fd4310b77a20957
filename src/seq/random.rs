//! Counter-based random sequences (Philox4x32-10): lazy, like `sequence`, and the same bits on
//! every device. The definitions are in src/random.rs.

use super::{DeviceSeq, lazy_len};
use crate::device::Device;
use crate::error::Result;
use crate::item::{Element, Float};
use crate::random::Rand;
use crate::source::Source;

impl DeviceSeq<u32> {
    /// `len` random 32-bit words: element `i` is word `i % 4` of Philox4x32-10 (Salmon et al.,
    /// SC 2011: the generator of Random123 and of cuRAND's `PHILOX4_32_10`) of the 128-bit
    /// counter `i / 4`, with the key `(seed as u32, (seed >> 32) as u32)`.
    ///
    /// Lazy: nothing is stored and no kernel runs; each element is computed where it is read
    /// (a block of four once for the four elements that share it), so `random_bits(..)
    /// .histogram(..)` draws and counts in one pass. The same bits on the host and the GPU, and
    /// for any slice of the sequence.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `len` is more than 2^56 (the longest sequence).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let r = DeviceSeq::<u32>::random_bits(&dev, 8, 0)?;
    /// // Random123's known answer for counter 0 and key 0:
    /// assert_eq!(r.slice(..4).to_vec()?, [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
    /// assert_eq!(r.slice(4..).to_vec()?, DeviceSeq::<u32>::random_bits(&dev, 8, 0)?.slice(4..).to_vec()?);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn random_bits(dev: &Device, len: usize, seed: u64) -> Result<Self> {
        Ok(Self::from_source(
            dev,
            Source::random(Rand::Bits, u32::TYPE, seed, lazy_len(len)?),
        ))
    }
}

impl DeviceSeq<u64> {
    /// `len` random 64-bit words: element `i` is `w0 | w1 << 32` of words `2(i % 2)` and
    /// `2(i % 2) + 1` of Philox4x32-10 of the counter `i / 2` (the key as for the `u32` form).
    /// Lazy, as the `u32` form.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `len` is more than 2^56 (the longest sequence).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq};
    /// let dev = Device::auto()?;
    /// let r = DeviceSeq::<u64>::random_bits(&dev, 2, 0)?.to_vec()?;
    /// assert_eq!(r, [0xe169c58d_6627e8d5, 0x9b00dbd8_bc57ac4c]);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn random_bits(dev: &Device, len: usize, seed: u64) -> Result<Self> {
        Ok(Self::from_source(
            dev,
            Source::random(Rand::Bits, u64::TYPE, seed, lazy_len(len)?),
        ))
    }
}

impl<F: Float> DeviceSeq<F> {
    /// `len` uniform values in `[0, 1)`: element `i` is `(u32 bits i >> 8) * 2^-24` for `f32`
    /// (the `u32` words of [`random_bits`](DeviceSeq::<u32>::random_bits) with this seed),
    /// `(u64 bits i >> 11) * 2^-53` for `f64`, `(u32 bits i >> 21) * 2^-11` for `f16` and
    /// `(u32 bits i >> 24) * 2^-8` for `bf16`: every value a multiple of the type's smallest
    /// step, each as likely. Lazy and the same bits on every device.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `len` is more than 2^56 (the longest sequence).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let u = DeviceSeq::<f32>::random_uniform(&dev, 1 << 16, 7)?;
    /// let mean = u.reduce(Op::Add)? / (1 << 16) as f32;
    /// assert!((mean - 0.5).abs() < 0.01);
    /// assert!(u.reduce(Op::Min)? >= 0.0 && u.reduce(Op::Max)? < 1.0);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn random_uniform(dev: &Device, len: usize, seed: u64) -> Result<Self> {
        Ok(Self::from_source(
            dev,
            Source::random(Rand::Uniform, F::TYPE, seed, lazy_len(len)?),
        ))
    }

    /// `len` standard normal values by Box–Muller: with `j = i / 2`, `u1 = 1 - uniform(2j)`
    /// and `u2 = uniform(2j + 1)` ([`random_uniform`](Self::random_uniform) of the same type
    /// and seed), element `i` is `sqrt(-2 ln u1) * cos(2π u2)` for even `i` and `sin` for odd
    /// `i`; `f16`/`bf16` computed in `f32` and rounded once. Lazy; on the GPU within a few ulp
    /// of the host's value (the functions `ln`, `sin`, `cos` differ in their last bits).
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` where `len` is more than 2^56 (the longest sequence).
    ///
    /// # Examples
    ///
    /// ```
    /// use devseq::{Device, DeviceSeq, Op};
    /// let dev = Device::auto()?;
    /// let n = 1 << 16;
    /// let z = DeviceSeq::<f64>::random_normal(&dev, n, 1)?;
    /// let mean = z.reduce(Op::Add)? / n as f64;
    /// let var = z.map(|x| x * x)?.reduce(Op::Add)? / n as f64;
    /// assert!(mean.abs() < 0.02 && (var - 1.0).abs() < 0.03);
    /// # Ok::<(), devseq::Error>(())
    /// ```
    pub fn random_normal(dev: &Device, len: usize, seed: u64) -> Result<Self> {
        Ok(Self::from_source(
            dev,
            Source::random(Rand::Normal, F::TYPE, seed, lazy_len(len)?),
        ))
    }
}
