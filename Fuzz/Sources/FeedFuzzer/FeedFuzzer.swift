import Foundation
import Store

/// libFuzzer's entry point: any bytes must give a feed or a `FeedValidationError` that names
/// at least one problem, never a crash, a hang or another error.
@_cdecl("LLVMFuzzerTestOneInput")
public func feedFuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    do {
        let feed = try Feed.decode(data, source: "fuzz.json")
        // A valid feed's records satisfy the format's rules.
        for framework in feed.frameworks { precondition(!framework.id.isEmpty) }
        for order in feed.orders { precondition(!order.items.isEmpty) }
    } catch let error as FeedValidationError {
        precondition(!error.problems.isEmpty && error.totalCount >= error.problems.count)
        precondition(!error.description.isEmpty)
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
    return 0
}
