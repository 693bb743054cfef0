import Foundation

/// Sync's two threads: a reader thread of its own ("store.sync.read", not the cooperative
/// pool) reads, validates, decodes and hashes the feed, while the writer's thread, inside the
/// sync's transaction, applies the records to the `Reconciler` in feed order.
///
/// Records cross in batches (`batchSize` each, or fewer holding `batchImageBytes` of images' data;
/// one lock round per batch) through a bounded
/// `FeedHandOff` (at most `batchesInFlight` waiting), so memory stays constant however large
/// the feed. Guarantees:
/// - the records are applied in the order the validator hands them on, as on one thread;
/// - when the reader throws (an unreadable page, a feed with problems), the writer applies the
///   batches sent before, then rethrows that error;
/// - when applying throws (a SQLite error, the sync cancelled), the reader is told to stop and
///   waited for before the error is rethrown;
/// - `run` never returns, nor throws, while its reader still runs (`liveReaders(applyingTo:)`
///   counts them).
enum FeedPipeline {
    /// Records and tombstones per batch.
    static let batchSize = 256
    /// Full batches that may wait for the writer.
    static let batchesInFlight = 3
    /// A batch is full at this many bytes of inline image data, whatever its count: batches cut
    /// by count alone held every image of a feed of forty 10 MB images between the two threads
    /// (a sync peaked at 496 MB, 202 MB for ten of them), where the limit is 256 MiB.
    static let batchImageBytes = 8 << 20
    /// The reader thread's name: at most 15 bytes, the longest name a Linux thread can have.
    static let threadName = "store.sync.read"
    /// How often (seconds) the writer, waiting for a batch, checks whether the sync was cancelled.
    static let cancellationInterval: TimeInterval = 0.05

    /// Thrown on the reader once the writer has stopped: it ends the read, and is never rethrown
    /// by `run` (the writer's own error is).
    struct Stopped: Error {}

    /// The reader threads running, by the connection their records are applied to.
    private static let readers = LockedBox<[ObjectIdentifier: Int]>([:])
    /// How many reader threads are running for syncs applied to `db`: 0 whenever none is under way.
    static func liveReaders(applyingTo db: Database) -> Int { readers.withLock { $0[ObjectIdentifier(db)] ?? 0 } }

    /// Runs `read` on a new reader thread, handing it the sink it must feed the validator, and
    /// applies what it sends to `reconciler` here, on the calling thread (the writer's, inside
    /// the transaction). Returns what `read` returned; throws what `read` or applying threw.
    static func run<Output: Sendable>(
        into reconciler: inout Reconciler, read: @escaping @Sendable (inout FeedBatchSink) throws -> Output
    ) throws -> Output {
        let handOff = FeedHandOff(capacity: batchesInFlight)
        let output = LockedBox<Output?>(nil)
        let connection = ObjectIdentifier(reconciler.db)
        readers.withLock { $0[connection, default: 0] += 1 }
        let thread = Thread {
            // Named again on the thread itself: on Linux a name given before `start()` does not
            // reach the system thread (what `top -H`, `perf` and a debugger show). And there
            // through the kernel's own file as well: Foundation's setter sometimes left the name
            // the thread inherited from its creator ("-qos.overcommit", a dispatch worker's,
            // seen in 1 of 10 test runs on a busy machine). (Glibc's pthread_setname_np is not
            // in Swift's Glibc module.)
            Thread.current.name = threadName
            #if os(Linux)
                try? threadName.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            #endif
            var sink = FeedBatchSink(handOff: handOff, batchSize: batchSize)
            do {
                let value = try read(&sink)
                try sink.flush()
                output.withLock { $0 = value }
                handOff.finish(nil)
            } catch {
                // What was read before the error is applied first, as on one thread.
                try? sink.flush()
                handOff.finish(error)
            }
            readers.withLock { readers in
                readers[connection]! -= 1
                if readers[connection] == 0 { readers[connection] = nil }
            }
            handOff.exit()
        }
        thread.name = threadName
        thread.start()

        let db = reconciler.db
        do {
            while let batch = try handOff.receive(checkingEvery: cancellationInterval, { try db.checkCancellation() }) {
                try batch.apply(to: &reconciler)
            }
        } catch {
            handOff.stop()
            handOff.waitForExit()
            throw error
        }
        handOff.waitForExit()
        guard let value = output.withLock({ $0 }) else { preconditionFailure("the reader finished without a result") }
        return value
    }
}
