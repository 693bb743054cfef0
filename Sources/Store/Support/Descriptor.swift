import Foundation

/// Waiting on a file descriptor without blocking past the task's cancellation.
package enum Descriptor {
    /// Waits until `descriptor` has bytes (or its end) to read, checking every 100 ms whether the
    /// task was cancelled (`CancellationError`): a pipe or FIFO whose writer stalls cannot hold
    /// a cancelled sync or `storectl images put`. A regular file is always readable at once.
    package static func waitUntilReadable(_ descriptor: Int32) throws {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            try Task.checkCancellation()
            let ready = poll(&entry, 1, 100)
            if ready > 0 || (ready < 0 && errno != EINTR) { return }
        }
    }
}
