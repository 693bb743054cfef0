import Foundation
import Store

/// A one-line progress display on stderr, redrawn in place; silent when disabled (not a
/// terminal, or --quiet).
final class ProgressLine: Sendable {
    let enabled: Bool
    // Why Sendable without @unchecked: the only state is `enabled` (immutable); each update
    // writes one whole line with a single write(2), so concurrent updates never interleave bytes.

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ progress: SyncProgress) {
        guard enabled else { return }
        let text: TerminalText
        switch progress {
        case .fetchedPage(let number, let bytes): text = "reading page \(number) (\(bytes) bytes)"
        case .validated(let records): text = "validated \(records) records"
        case .reconciled(let records): text = "applied \(records) records"
        case .images(let done, let total): text = "images \(done)/\(total)"
        }
        Output.redrawProgress(text)
    }

    func finish() {
        guard enabled else { return }
        Output.redrawProgress("")
    }
}
