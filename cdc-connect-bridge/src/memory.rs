//! How the `oracle-cdc` process takes memory from the kernel.

/// Turns transparent huge pages off for this process (`prctl(PR_SET_THP_DISABLE)`), before
/// the pipeline allocates.
///
/// The pipeline keeps allocating and freeing: decoded rows, records, and librdkafka's copy of
/// each record, freed by other threads once the broker acknowledges them. mimalloc returns
/// freed pages to the kernel and asks for huge pages (`MADV_HUGEPAGE`), so the kernel zeroes a
/// whole 2 MiB page at each first touch of memory it had taken back. In the at-least-once
/// bench that zeroing was 17 % of the process's CPU, and 35–40 % of the mining and decode
/// threads'; without huge pages it is under 1 % (`docs/benchmarks.md`).
///
/// Best effort: a kernel that refuses (or an OS without the call) leaves the setting as it was.
pub fn prefer_small_pages() {
    if let Err(error) = rustix::thread::disable_transparent_huge_pages(true) {
        tracing::debug!(%error, "transparent huge pages left as they are");
    }
}
