import ArgumentParser

/// How long a write waits for another process's write: seconds from 0 to 86400, fractions allowed.
struct BusyTimeout: ExpressibleByArgument, Sendable {
    let duration: Duration

    init?(argument: String) {
        // Plain decimals only (5, 0.5, .5): Double(_:) also takes "+5", "1e2" and the
        // hexadecimal "0x1p3".
        let parts = argument.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard
            parts.count == 1 ? parts[0].isPlainDigits : ((parts[0].isEmpty || parts[0].isPlainDigits) && parts[1].isPlainDigits),
            let seconds = Double(argument), seconds <= 86_400
        else { return nil }
        duration = .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// A timeout read from the environment variable `name`; a usage error naming it if malformed.
    init(environment text: String, name: String) throws {
        guard let timeout = BusyTimeout(argument: text) else {
            throw ValidationError("\(name): '\(text)' is not a number of seconds from 0 to 86400")
        }
        self = timeout
    }
}
