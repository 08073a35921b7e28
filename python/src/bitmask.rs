//! Bitmasks handed in from Python, written in place.
//!
//! A bitmask is the engine's `int32` array of shape `[batch, words]` (or one row, `[words]`),
//! `words = ceil(vocab_size / 32)`: bit `t % 32` of word `t / 32` set iff token `t` is allowed.
//! [`Bitmask::new`] takes any writable, C-contiguous CPU array of `int32` (or `uint32`) that
//! exports the buffer protocol (numpy), a torch CPU tensor (through `Tensor.numpy()`, which
//! shares its memory) or any other DLPack producer (through `numpy.from_dlpack`), and checks
//! dtype, shape, contiguity, alignment and writability, so that a wrong array is a `ValueError`
//! and never a write out of bounds. The words are then written without copies, with the GIL
//! released.

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::errors::value_error;

/// The exported buffer of a bitmask, held while its words are written.
enum Buffer {
    I32(PyBuffer<i32>),
    U32(PyBuffer<u32>),
}

/// A checked bitmask: `rows × cols` words, row major.
pub struct Bitmask {
    /// Keeps the exporter's memory alive and its shape fixed (numpy refuses to resize an array
    /// whose buffer is exported) while `ptr` is written.
    _buffer: Buffer,
    ptr: *mut u32,
    /// Rows: 1 for a one-dimensional bitmask.
    pub rows: usize,
    /// Words per row.
    pub cols: usize,
    /// Whether the array was one-dimensional (a single row).
    pub one_row: bool,
}

const WHAT: &str = "the bitmask must be a writable, C-contiguous CPU array of int32 with shape \
                    [batch, ceil(vocab_size / 32)] (see munch.allocate_token_bitmask)";

impl Bitmask {
    /// Checks `obj` and takes its buffer.
    pub fn new(obj: &Bound<'_, PyAny>) -> PyResult<Bitmask> {
        let converted;
        let obj = if has_buffer(obj) {
            obj
        } else {
            converted = to_numpy(obj)?;
            &converted
        };
        let buffer = match PyBuffer::<i32>::get(obj) {
            Ok(b) => Buffer::I32(b),
            Err(e) => match PyBuffer::<u32>::get(obj) {
                Ok(b) => Buffer::U32(b),
                // pyo3's reason says whether the items are not 4-byte integers or not aligned.
                Err(_) => {
                    return Err(value_error(format!(
                        "{WHAT}; got {} ({})",
                        describe(obj),
                        e.value(obj.py())
                    )))
                }
            },
        };
        let (ptr, readonly, contiguous, shape) = match &buffer {
            Buffer::I32(b) => (
                b.buf_ptr() as *mut u32,
                b.readonly(),
                b.is_c_contiguous(),
                b.shape().to_vec(),
            ),
            Buffer::U32(b) => (
                b.buf_ptr() as *mut u32,
                b.readonly(),
                b.is_c_contiguous(),
                b.shape().to_vec(),
            ),
        };
        if readonly {
            return Err(value_error(format!("{WHAT}; this one is read-only")));
        }
        let (rows, cols, one_row) = match shape[..] {
            [cols] => (1, cols, true),
            [rows, cols] => (rows, cols, false),
            _ => {
                return Err(value_error(format!(
                    "{WHAT}; got {} dimensions (shape {shape:?})",
                    shape.len()
                )))
            }
        };
        if !contiguous {
            return Err(value_error(format!(
                "{WHAT}; this one is not C-contiguous (a slice or transpose: pass a contiguous \
                 array, or .copy() it)"
            )));
        }
        if rows * cols > 0 && (ptr.is_null() || !ptr.is_aligned()) {
            return Err(value_error(format!(
                "{WHAT}; its memory is not aligned to 4 bytes"
            )));
        }
        Ok(Bitmask {
            _buffer: buffer,
            ptr,
            rows,
            cols,
            one_row,
        })
    }

    /// Row `index` as the rows of a one- or two-dimensional bitmask are counted, checked.
    pub fn check_row(&self, index: i64) -> PyResult<usize> {
        if index < 0 || index as u64 >= self.rows as u64 {
            return Err(value_error(if self.one_row {
                format!("index {index} is out of range: a one-dimensional bitmask has only row 0")
            } else {
                format!(
                    "index {index} is out of range: the bitmask has {} rows",
                    self.rows
                )
            }));
        }
        Ok(index as usize)
    }

    /// Every word, row after row.
    pub fn words(&mut self) -> &mut [u32] {
        let len = self.rows * self.cols;
        if len == 0 {
            return &mut [];
        }
        // SAFETY: `ptr` is the start of the exported buffer, held in `_buffer` for as long as
        // `self` lives; the exporter said it is writable and C-contiguous with this shape, so
        // it holds `rows * cols` consecutive items of 4 bytes (int32 or uint32, which have the
        // same layout as `u32`), and `new` checked that it is non-null and aligned. `&mut self`
        // keeps this the only slice made from it in Rust; Python code on another thread may
        // touch the same memory, as it may for any buffer an extension writes with the GIL
        // released.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, len) }
    }
}

// SAFETY: the pointer is only dereferenced through `words` (`&mut self`), and the exported
// buffer may be released from any thread (PyBuffer's drop takes the GIL).
unsafe impl Send for Bitmask {}

/// Whether `obj` exports the buffer protocol.
fn has_buffer(obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: `obj` is a valid object and we hold the GIL.
    unsafe { pyo3::ffi::PyObject_CheckBuffer(obj.as_ptr()) == 1 }
}

/// A numpy view of a torch CPU tensor or another DLPack producer.
fn to_numpy<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    if obj.hasattr("numpy")? && obj.hasattr("device")? {
        let device = obj.getattr("device")?;
        let kind = device
            .getattr("type")
            .map(|t| t.to_string())
            .unwrap_or_else(|_| device.to_string());
        if kind != "cpu" {
            return Err(value_error(format!(
                "{WHAT}; this one is on device {kind}: fill a CPU bitmask (pinned, for a fast \
                 copy) and move it to the device afterwards"
            )));
        }
        return obj
            .call_method0("numpy")
            .map_err(|e| value_error(format!("{WHAT}; Tensor.numpy() failed: {e}")));
    }
    if obj.hasattr("__dlpack__")? {
        let numpy = py.import("numpy")?;
        return numpy
            .call_method1("from_dlpack", (obj,))
            .map_err(|e| value_error(format!("{WHAT}; numpy.from_dlpack failed: {e}")));
    }
    Err(value_error(format!("{WHAT}; got {}", describe(obj))))
}

/// The type and, where it has them, the dtype and shape of `obj`, for messages.
fn describe(obj: &Bound<'_, PyAny>) -> String {
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_string());
    let attr = |name: &str| {
        obj.getattr(name)
            .ok()
            .and_then(|v| v.str().ok().map(|s: Bound<'_, PyString>| s.to_string()))
    };
    match (attr("dtype"), attr("shape")) {
        (Some(dtype), Some(shape)) => format!("a {type_name} of dtype {dtype} and shape {shape}"),
        (Some(dtype), None) => format!("a {type_name} of dtype {dtype}"),
        _ => format!("a {type_name}"),
    }
}
