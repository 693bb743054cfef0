import Foundation
import Store

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@main
struct FeedFuzzer {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, { bytes, count in feedFuzzerTestOneInput(bytes, count) }))
    }
}

/// One input: any bytes must give a feed or a `FeedValidationError` that names at least one
/// problem, never a crash, a hang or another error.
func feedFuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
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
