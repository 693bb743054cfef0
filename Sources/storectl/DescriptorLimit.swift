import Foundation

/// storectl's file descriptors: as many as the hard limit allows (bounded), or a clear refusal.
///
/// Out of descriptors, storectl used to crash (SIGILL, exit 132, in libdispatch's thread
/// cleanup) or end a sync with no message, and Foundation's `UUID()` silently returned the same
/// value every time. A store needs a few descriptors (the database, its -wal and -shm, each
/// reader's, the spool files, an HTTP connection); a shell's soft limit is often far below its
/// hard one, so the soft limit is raised first, as a program may do without privileges.
enum DescriptorLimit {
    /// The fewest descriptors storectl starts with: the store's connections and their files,
    /// a sync's pages and downloads, the runtime's own (dispatch, signal sources), with room.
    static let minimum: rlim_t = 32

    /// The soft limit is raised to no more than this: enough for any command, without asking
    /// for an unbounded (or a million-entry) table a child process would inherit.
    static let ceiling: rlim_t = 4096

    /// Raises the soft RLIMIT_NOFILE toward the hard limit (at most `ceiling`; a higher soft
    /// limit is left as it is); if fewer than `minimum` are then allowed, writes
    /// `storectl: too few file descriptors (ulimit -n N): at least 32 are needed` and exits 1
    /// at once, before anything (a thread, a store) is started. Call first in `main`.
    static func raiseOrExit() {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return }
        let wanted = limit.rlim_max == unlimited ? ceiling : min(limit.rlim_max, ceiling)
        if limit.rlim_cur != unlimited, limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(resourceNumber, &raised) == 0 { limit = raised }
        }
        guard limit.rlim_cur != unlimited, limit.rlim_cur < minimum else { return }
        // Written with write(2) on the open stderr: nothing here may need another descriptor.
        let message = "storectl: too few file descriptors (ulimit -n \(limit.rlim_cur)): at least \(minimum) are needed\n"
        _ = message.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
        _exit(1)
    }

    /// RLIMIT_NOFILE, typed as `getrlimit` takes it (an enum's raw value on Glibc).
    #if canImport(Glibc)
        private static let resourceNumber = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        private static let resourceNumber = RLIMIT_NOFILE
    #endif

    /// RLIM_INFINITY (Glibc's, `(rlim_t) -1`, does not import into Swift).
    #if canImport(Glibc)
        private static let unlimited = rlim_t.max
    #else
        private static let unlimited = RLIM_INFINITY
    #endif
}
