//! The allocation guard's byte limit (runtime/csrc/alloc_guard.c), in its own test process
//! because the limit is global: a request over it fails like a failed malloc (the guarded
//! call returns the requested byte count) without reaching malloc, so an overcommitted
//! allocation larger than the machine's memory is never attempted; requests within it succeed.
use std::ffi::c_void;

use quabla_runtime as _;

unsafe extern "C" {
    fn quabla_rt_malloc(bytes: u64) -> *mut c_void;
    fn quabla_rt_set_limit(bytes: u64);
    fn quabla_rt_call(f: unsafe extern "C" fn(*mut *mut c_void), args: *mut *mut c_void) -> u64;
    fn quabla_rt_fail(bytes: u64) -> !;
}

/// A stand-in for a runtime kernel whose fallible allocation failed.
unsafe extern "C" fn kernel_fails(_args: *mut *mut c_void) {
    unsafe { quabla_rt_fail(123) }
}

#[test]
fn a_kernel_failure_abandons_the_guarded_call() {
    let mut args: [*mut c_void; 0] = [];
    assert_eq!(unsafe { quabla_rt_call(kernel_fails, args.as_mut_ptr()) }, 123);
    assert_eq!(guarded(64), 0);
}

/// A stand-in for compiled code: allocates `*args[0]` bytes through the guard and frees them.
unsafe extern "C" fn allocate(args: *mut *mut c_void) {
    unsafe {
        let bytes = *(*args as *const u64);
        let p = quabla_rt_malloc(bytes);
        libc_free(p);
    }
}

unsafe extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}

fn guarded(bytes: u64) -> u64 {
    let mut n = bytes;
    let mut args = [&mut n as *mut u64 as *mut c_void];
    unsafe { quabla_rt_call(allocate, args.as_mut_ptr()) }
}

#[test]
fn requests_over_the_limit_fail_without_malloc() {
    unsafe { quabla_rt_set_limit(1 << 20) };
    assert_eq!(guarded(1 << 10), 0);
    assert_eq!(guarded(1 << 20), 0);
    // 2**40 bytes: overcommit would let malloc succeed; the limit refuses it.
    assert_eq!(guarded(1 << 40), 1 << 40);
    assert_eq!(guarded((1 << 20) + 1), (1 << 20) + 1);
    // The thread goes on: later calls within the limit succeed.
    assert_eq!(guarded(4096), 0);
    unsafe { quabla_rt_set_limit(u64::MAX) };
    assert_eq!(guarded(1 << 21), 0);
}
