//! The component's memory allocator: small blocks come from free lists, one
//! list a size class, and everything else from the system allocator
//! (wasi-libc's dlmalloc).
//!
//! Every call moves values across the component boundary, and each string,
//! list and map of them is a small allocation, made and freed within the
//! call: dlmalloc spent about half the instructions of a `null` provider
//! call (some 110 for a `malloc`, 130 for a `free`). A free list hands a block
//! back in a handful. A freed small block stays on its class's list for
//! the next allocation of that class, so the memory held is at most the
//! most of each class ever live at once (memory a call used for small
//! blocks of one size does not serve another size later); an instance's
//! memory is bounded by the host anyway.
//!
//! Measured with callgrind over 2,000 `null_resource`s: the `null`
//! provider's instructions fell by 37% in `plan -refresh=false` and 34% in
//! an apply, and the component grew from 401 KB to 471 KB (the allocator's
//! fast path is inlined where memory is allocated; kept out of line, the
//! component stays near 407 KB but saves only about half as much).
//!
//! Only for a single-threaded `wasm32` build (what `wasm32-wasip2`
//! components are): the lists are not locked. Native builds, such as a
//! provider's unit tests, keep the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

/// The size classes up to [`FINE`] bytes step by this many bytes, which is
/// also the alignment of every small block (enough for any type of a
/// `wasm32` program but SIMD vectors, which are larger than this and so not
/// small).
const STEP: usize = 8;

/// Blocks of up to this many bytes have a class every [`STEP`] bytes.
const FINE: usize = 256;

/// Above [`FINE`], blocks have a class for each power of two up to this
/// size: a map's node (a `BTreeMap<String, Value>` leaf is about 1.1 KB in
/// a component) is one of the commonest blocks of a call.
const SMALL: usize = 4096;

/// The classes: one every [`STEP`] bytes up to [`FINE`], then one for each
/// power of two up to [`SMALL`].
const CLASSES: usize = FINE / STEP + (SMALL.trailing_zeros() - FINE.trailing_zeros()) as usize;

/// The allocator the SDK installs in components (see the module's
/// documentation).
pub struct Heap {
    /// The first free block of each class; a free block holds the next.
    free: UnsafeCell<[*mut u8; CLASSES]>,
}

// SAFETY: the lists are only reached from one thread: the SDK installs the
// allocator only in builds without threads (see `lib.rs`).
unsafe impl Sync for Heap {}

impl Heap {
    /// An allocator with every list empty.
    pub const fn new() -> Heap {
        Heap { free: UnsafeCell::new([ptr::null_mut(); CLASSES]) }
    }
}

impl Default for Heap {
    fn default() -> Heap {
        Heap::new()
    }
}

/// The class of a block of `layout`, if it is small.
fn class(layout: Layout) -> Option<usize> {
    let size = layout.size().max(1);
    if layout.align() > STEP || size > SMALL {
        None
    } else if size <= FINE {
        Some(size.div_ceil(STEP) - 1)
    } else {
        Some(FINE / STEP + (size.next_power_of_two().trailing_zeros() - FINE.trailing_zeros()) as usize - 1)
    }
}

/// The size of the blocks of class `class`.
fn class_size(class: usize) -> usize {
    match class.checked_sub(FINE / STEP) {
        None => (class + 1) * STEP,
        Some(coarse) => FINE << (coarse + 1),
    }
}

/// The layout every block of class `class` is taken from the system with.
fn class_layout(class: usize) -> Layout {
    // SAFETY: STEP is a power of two, and every class's size a multiple of it.
    unsafe { Layout::from_size_align_unchecked(class_size(class), STEP) }
}

// SAFETY: small blocks are whole system blocks of their class's layout,
// which is at least as large and as aligned as any layout of the class; a
// block is on a list only once it was freed, and leaves it when handed out.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class(layout) else { return unsafe { System.alloc(layout) } };
        // SAFETY: single-threaded (see `Sync`), and no reference to the
        // lists outlives this call.
        let head = unsafe { &mut (*self.free.get())[class] };
        if head.is_null() {
            return unsafe { System.alloc(class_layout(class)) };
        }
        let block = *head;
        // SAFETY: a free block's first bytes hold the next free block (a
        // block is at least STEP bytes, room for a pointer).
        *head = unsafe { block.cast::<*mut u8>().read() };
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        let Some(class) = class(layout) else { return unsafe { System.dealloc(block, layout) } };
        // SAFETY: as in `alloc`; the block is ours again, and large enough
        // to hold the pointer.
        unsafe {
            let head = &mut (*self.free.get())[class];
            block.cast::<*mut u8>().write(*head);
            *head = block;
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller promises `new_size` makes a valid layout.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class(layout), class(new_layout)) {
            (Some(old), Some(new)) if old == new => block,
            (None, None) => unsafe { System.realloc(block, layout, new_size) },
            _ => {
                let moved = unsafe { self.alloc(new_layout) };
                if !moved.is_null() {
                    // SAFETY: both blocks are at least this large, and
                    // distinct.
                    unsafe {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                }
                moved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_blocks_are_reused_by_class_and_large_ones_go_to_the_system() {
        let heap = Heap::new();
        let small = Layout::from_size_align(20, 4).unwrap();
        let same_class = Layout::from_size_align(24, 8).unwrap();
        let large = Layout::from_size_align(SMALL + 1, 8).unwrap();
        unsafe {
            let a = heap.alloc(small);
            a.write_bytes(0xAB, 20);
            heap.dealloc(a, small);
            // The freed block is the next one of its class.
            let b = heap.alloc(same_class);
            assert_eq!(a, b);
            // Growing within the class keeps the block; past it, moves it
            // with its contents.
            b.write_bytes(7, 24);
            assert_eq!(heap.realloc(b, same_class, 17), b);
            let c = heap.realloc(b, Layout::from_size_align(17, 8).unwrap(), 300);
            assert_ne!(c, b);
            assert!((0..17).all(|i| *c.add(i) == 7));
            let d = heap.alloc(large);
            assert!(!d.is_null());
            heap.dealloc(d, large);
            heap.dealloc(c, Layout::from_size_align(300, 8).unwrap());
        }
    }

    #[test]
    fn every_small_layout_fits_its_class() {
        for size in 0..=SMALL {
            for align in [1, 2, 4, 8] {
                let layout = Layout::from_size_align(size, align).unwrap();
                let class = class(layout).unwrap();
                assert!(class < CLASSES, "{size}: class {class}");
                let block = class_layout(class);
                assert!(block.size() >= size.max(std::mem::size_of::<*mut u8>()) && block.align() >= align);
                // The class is the smallest that fits.
                if class > 0 {
                    assert!(class_size(class - 1) < size, "{size} would fit class {}", class - 1);
                }
            }
        }
        assert_eq!(class_size(CLASSES - 1), SMALL);
        assert_eq!(class(Layout::from_size_align(SMALL + 1, 1).unwrap()), None);
        assert_eq!(class(Layout::from_size_align(8, 16).unwrap()), None);
    }
}
