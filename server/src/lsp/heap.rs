//! The process heap under glibc's allocator: a long session's memory should follow what it holds.
//! glibc keeps freed pages and gives each thread that allocates its own arena (up to 8 per core);
//! the blocking pool's threads come and go, so a server that opened and closed documents for ten
//! minutes held a few MiB more in stranded arenas than after one (tests/bench/lsp/soak.py). Two arenas
//! and a trim after a document goes (at most once a second) keep it flat. Elsewhere: nothing to do.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::ffi::c_int;
    unsafe extern "C" {
        pub fn mallopt(param: c_int, value: c_int) -> c_int;
        pub fn malloc_trim(pad: usize) -> c_int;
    }
    /// `M_ARENA_MAX` in glibc's malloc.h.
    pub const M_ARENA_MAX: c_int = -8;
}

/// At most this many arenas; call once, before the runtime's threads start.
pub fn limit_arenas(n: i32) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's tuning; called before other threads allocate.
    unsafe {
        glibc::mallopt(glibc::M_ARENA_MAX, n);
    }
    let _ = n;
}

/// Hand free heap pages back to the system now.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory that is already free.
    unsafe {
        glibc::malloc_trim(0);
    }
}

static LAST_TRIM_MS: AtomicU64 = AtomicU64::new(0);

/// [`trim`] on the blocking pool, at most once a second (documents can close hundreds of times a second).
pub fn trim_soon() {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let last = LAST_TRIM_MS.load(Ordering::Relaxed);
    if now.saturating_sub(last) < 1000 || LAST_TRIM_MS.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err() {
        return;
    }
    if let Ok(h) = tokio::runtime::Handle::try_current() {
        h.spawn_blocking(trim);
    }
}
