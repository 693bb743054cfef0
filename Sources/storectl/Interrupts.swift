import Dispatch
import Foundation
import Store

/// SIGINT (Ctrl-C) and SIGTERM as cancellation: the first cancels the running command's task,
/// which ends as it can (a sync's write transaction rolls back, its downloads stop); a second
/// exits at once. A command so interrupted exits 128 + the signal's number (130 for SIGINT, 143
/// for SIGTERM), what a shell reports for a process the signal killed; one that finished all
/// the same (the signal came too late to stop it) exits as it would have.
final class Interrupts: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `received`, `handler` and `sources` are read and written
    // only while `lock` is held; the signal sources' handlers run on a dispatch queue and only
    // call `receive`.
    private let lock = NSLock()
    private var received: Int32?
    private var handler: (@Sendable () -> Void)?
    /// Kept so that the sources live as long as this object (the whole run).
    private var sources: [any DispatchSourceSignal] = []

    /// Takes over SIGINT and SIGTERM. Returns once both signal sources are registered: a signal
    /// sent before that would be lost (the disposition is already SIG_IGN).
    static func install() async -> Interrupts {
        let interrupts = Interrupts()
        let registered = DispatchGroup()
        let sources = [SIGINT, SIGTERM].map { number in
            Foundation.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { interrupts.receive(number) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            return source
        }
        interrupts.lock.withLock { interrupts.sources = sources }
        await withCheckedContinuation { continuation in registered.notify(queue: .global()) { continuation.resume() } }
        return interrupts
    }

    /// The first signal received, if any.
    var receivedSignal: Int32? { lock.withLock { received } }

    /// Runs `handler` on the first signal (at once if one came already).
    func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
        let already = lock.withLock { () -> Bool in
            self.handler = handler
            return received != nil
        }
        if already { handler() }
    }

    private func receive(_ number: Int32) {
        let handler = lock.withLock { () -> (@Sendable () -> Void)? in
            // The second signal: the user insists; the store is safe (SQLite rolls back an
            // interrupted transaction when the file is next opened), and an output file half
            // written (an export) is removed, leaving the old one.
            if let first = received {
                OutputFile.removeTemporaries()
                _exit(128 + first)
            }
            received = number
            return self.handler
        }
        handler?()
    }
}
