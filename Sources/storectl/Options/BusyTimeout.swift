import ArgumentParser

/// How long a write waits for another process's write: seconds from 0 to 86400, fractions allowed.
struct BusyTimeout: ExpressibleByArgument, Sendable {
    let duration: Duration

    init?(argument: String) {
        guard let seconds = Double(argument), seconds.isFinite, seconds >= 0, seconds <= 86_400 else { return nil }
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
