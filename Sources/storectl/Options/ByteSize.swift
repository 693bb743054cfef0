import ArgumentParser

/// A number of bytes: `1048576`, `512KiB`, `64MiB`, `1GiB` (also `B`).
struct ByteSize: ExpressibleByArgument, Sendable {
    let bytes: Int

    init?(argument: String) {
        let units: [(String, Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1), ("", 1)]
        for (suffix, factor) in units where argument.hasSuffix(suffix) {
            // Digits only: Int(_:) also takes a sign ("+5").
            let digits = argument.dropLast(suffix.count)
            guard digits.isPlainDigits else { continue }
            if let value = Int(digits), value <= Int.max / factor {
                self.bytes = value * factor
                return
            }
        }
        return nil
    }

    /// A size read from the environment variable `name`; a usage error naming it if malformed.
    init(environment text: String, name: String) throws {
        guard let size = ByteSize(argument: text) else {
            throw ValidationError("\(name): '\(text)' is not a size such as 1048576, 512KiB or 64MiB")
        }
        self = size
    }
}

extension ArgumentHelp {
    /// The help of an option taking a `ByteSize`: what it bounds, the forms a size takes, its
    /// default, then `note` if any, so every size option says the same of the forms.
    static func byteSize(_ what: String, default defaultValue: String, note: String? = nil) -> ArgumentHelp {
        ArgumentHelp(
            "\(what): bytes, or with KiB, MiB or GiB (default: \(defaultValue))" + (note.map { "; \($0)" } ?? "") + ".",
            valueName: "size")
    }
}
