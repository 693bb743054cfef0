import Dispatch
import Foundation
import Store

/// SIGINT (Ctrl-C) and SIGTERM as cancellation: the first cancels the running command's task,
/// which ends as it can (a sync's write transaction rolls back, its downloads stop); a second
/// exits at once (the first one repeated within `repeatWindow` is the same request, not a
/// second), and so does the first if the command has not ended `grace` after it (a command
/// blocked in a call that no cancellation reaches: a write to a pipe nobody reads).
/// A command so interrupted exits 128 + the signal's number (130 for SIGINT, 143 for SIGTERM),
/// what a shell reports for a process the signal killed; one that finished all the same (the
/// signal came too late to stop it) exits as it would have, if it also ends (closing its
/// store) within `grace` of the signal.
final class Interrupts: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `received`, `receivedAt`, `handler` and `sources` are
    // read and written only while `lock` is held, `handledFlag` only while `handledCondition`
    // is; the signal sources' handlers run on a dispatch queue and only call `receive`.
    private let lock = NSLock()
    private var received: Int32?
    /// When the first signal came (`repeatWindow`).
    private var receivedAt: ContinuousClock.Instant?
    private var handler: (@Sendable () -> Void)?
    /// Kept so that the sources live as long as this object (the whole run).
    private var sources: [any DispatchSourceSignal] = []
    /// Set once the first signal's handler has run; `handled` waits on it.
    private let handledCondition = NSCondition()
    private var handledFlag = false

    /// Takes over SIGINT and SIGTERM (see `catchSignals`).
    static func install() async -> Interrupts {
        let interrupts = Interrupts()
        let sources = await catchSignals { interrupts.receive($0) }
        interrupts.lock.withLock { interrupts.sources = sources }
        return interrupts
    }

    /// Runs `handler` with the signal's number on each SIGINT or SIGTERM instead of dying,
    /// except for a signal this process was started with ignored. Returns once the signal
    /// sources are registered: a signal sent before that would be lost (the disposition is
    /// already SIG_IGN). Keep the sources for as long as the signals are to be caught.
    ///
    /// A signal ignored at entry stays ignored, as the GNU Coding Standards ask of a program
    /// that catches it (Python and Go do the same for SIGINT): a shell starts a script's
    /// background job (`storectl sync ... &`) with SIGINT ignored, and `nohup` or a supervisor
    /// may ignore SIGTERM, so that a Ctrl-C meant for the foreground does not stop it. Such a
    /// command runs to its end.
    static func catchSignals(_ handler: @escaping @Sendable (Int32) -> Void) async -> [any DispatchSourceSignal] {
        let registered = DispatchGroup()
        let sources = [SIGINT, SIGTERM].compactMap { number -> (any DispatchSourceSignal)? in
            let previous = Foundation.signal(number, SIG_IGN)
            if wasIgnored(previous) { return nil }
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            return source
        }
        await withCheckedContinuation { continuation in registered.notify(queue: .global()) { continuation.resume() } }
        return sources
    }

    /// Whether a disposition `signal` returned is SIG_IGN (function pointers, compared by address).
    private static func wasIgnored(_ disposition: sig_t?) -> Bool {
        unsafeBitCast(disposition, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
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

    /// How long a cancelled command has to end before the first signal exits as a second would.
    /// Cancellation ends every command within milliseconds where it checks for it (a rollback,
    /// a closed store); this bounds the rest, generously for a loaded machine.
    /// (Tests that show a command ends on its own, by cancellation, set a longer one with
    /// `STORECTL_TEST_INTERRUPT_GRACE` seconds; debug builds only.)
    static let grace: DispatchTimeInterval = {
        #if DEBUG
            if let text = ProcessInfo.processInfo.environment["STORECTL_TEST_INTERRUPT_GRACE"], let seconds = Int(text) {
                return .seconds(seconds)
            }
        #endif
        return .seconds(5)
    }()

    /// How soon a repeat of the first signal counts as the same request, not a second one.
    /// coreutils `timeout` sends its signal to the command and then to the command's process
    /// group, storectl included: two SIGTERMs microseconds apart (a parent that signals its
    /// whole group does the same), which the second-signal rule turned into an exit at once,
    /// without a word or a rollback. 200 ms is far more than the gap between two such `kill`s
    /// on a loaded machine, and less than a person takes to see that the first Ctrl-C did not
    /// stop the command and press it again (reaction times are 250 ms and more). Another
    /// signal (SIGINT after SIGTERM), or the same one later, still ends the command at once.
    /// (Tests that must send the repeat after seeing the first one's effect set a longer one
    /// with `STORECTL_TEST_SIGNAL_REPEAT_WINDOW` seconds; debug builds only.)
    static let repeatWindow: Duration = {
        #if DEBUG
            if let text = ProcessInfo.processInfo.environment["STORECTL_TEST_SIGNAL_REPEAT_WINDOW"], let seconds = Int(text) {
                return .seconds(seconds)
            }
        #endif
        return .milliseconds(200)
    }()

    private func receive(_ number: Int32) {
        let now = ContinuousClock.now
        let (isRepeat, handler) = lock.withLock { () -> (Bool, (@Sendable () -> Void)?) in
            if let first = received {
                // The same signal again, at once: the same request, delivered twice.
                if number == first, let firstAt = receivedAt, now - firstAt < Self.repeatWindow { return (true, nil) }
                // A second signal: the user insists.
                Self.exitNow(128 + first)
            }
            received = number
            receivedAt = now
            return (false, self.handler)
        }
        if isRepeat { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.grace) { Self.exitNow(128 + number) }
        handler?()
        handledCondition.withLock {
            handledFlag = true
            handledCondition.broadcast()
        }
    }

    /// Exits without waiting for the command: the store is safe (SQLite rolls back an
    /// interrupted transaction when the file is next opened), and an output file half written
    /// (an export) is removed, leaving the old one.
    private static func exitNow(_ status: Int32) -> Never {
        OutputFile.removeTemporaries()
        Store.removeSpoolFolders()
        _exit(status)
    }

    /// Blocks the calling thread (never a task of Swift's pool) until the first signal was
    /// received and its handler (the cancellation) has run.
    func waitUntilHandled() {
        handledCondition.withLock {
            while !handledFlag { handledCondition.wait() }
        }
    }

    /// For the export-interrupt tests, which must signal while an output file is written,
    /// whatever the machine's load: with `STORECTL_TEST_PAUSE_AFTER_TEMPORARY=1`, a write of
    /// an output file (an export, an image's bytes) pauses right after creating its temporary
    /// file, until a signal's cancellation has run; it then goes on, and ends as any
    /// interrupted write does. Without that variable, nothing changes; in a release build (what
    /// users run) the variable does nothing either: no setting of a user's can make it hang.
    func pauseOutputFilesUntilInterruptedIfTesting() {
        #if DEBUG
            guard ProcessInfo.processInfo.environment["STORECTL_TEST_PAUSE_AFTER_TEMPORARY"] == "1" else { return }
            OutputFile.temporaryCreated = { [self] _ in waitUntilHandled() }
        #endif
    }
}
