import Foundation
import Testing

/// Parsing storectl's JSON output with Foundation's JSONSerialization (independently of the
/// library's own writer), and checking values without Swift's canonical-equivalence string ==.
enum JSON {
    struct NotJSON: Error, CustomStringConvertible {
        let text: String
        let reason: String
        var description: String { "not the expected JSON (\(reason)):\n\(text)" }
    }

    static func parse(_ text: String) throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        } catch {
            throw NotJSON(text: text, reason: "\(error)")
        }
    }

    static func object(_ text: String) throws -> [String: Any] {
        guard let object = try parse(text) as? [String: Any] else { throw NotJSON(text: text, reason: "not an object") }
        return object
    }

    static func array(_ text: String) throws -> [[String: Any]] {
        guard let array = try parse(text) as? [[String: Any]] else {
            throw NotJSON(text: text, reason: "not an array of objects")
        }
        return array
    }

    /// The value at `key` as a string (nil if absent or not a string).
    static func string(_ object: [String: Any], _ key: String) -> String? { object[key] as? String }

    /// True if `value` is a JSON number (not a string, not a boolean).
    static func isNumber(_ value: Any?) -> Bool {
        guard let value, !(value is String), let number = value as? NSNumber else { return false }
        #if canImport(Darwin)
            // On Darwin, true/false decode as NSNumber too; a boolean's objCType is "c".
            if String(cString: number.objCType) == "c" { return false }
        #endif
        _ = number
        return true
    }

    /// A JSON number as a count of cents, exactly (`2.49` -> 249); nil if it is not a number.
    static func cents(_ value: Any?) -> Int? {
        guard isNumber(value), let number = value as? NSNumber else { return nil }
        let cents = (number.doubleValue * 100).rounded()
        return Int(exactly: cents)
    }

    /// A JSON integer; nil if it is not a number or not whole.
    static func integer(_ value: Any?) -> Int? {
        guard isNumber(value), let number = value as? NSNumber else { return nil }
        return Int(exactly: number.doubleValue)
    }
}

/// Byte-for-byte equality of strings: `"é" == "e\u{301}"` in Swift, but not here.
func sameBytes(_ a: String?, _ b: String?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    return Array(a.utf8) == Array(b.utf8)
}

/// Runs /usr/bin/sqlite3 (the stock CLI) on `database` with `arguments`; its stdout, trimmed.
func sqlite3(_ database: String, _ arguments: String...) async throws -> String {
    let outcome = try await ProcessRunner.run("/usr/bin/sqlite3", [database] + arguments)
    guard outcome.status == 0 else {
        throw SQLite3Failed(arguments: arguments, status: outcome.status, stderr: outcome.stderr)
    }
    return outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

struct SQLite3Failed: Error, CustomStringConvertible {
    let arguments: [String]
    let status: Int32
    let stderr: String
    var description: String { "sqlite3 \(arguments) exited \(status): \(stderr)" }
}

/// Expects a failed run: non-zero exit, nothing on stdout, a message on stderr.
func expectFailure(
    _ result: StorectlResult, status: Int32? = nil, mentioning needles: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(!result.timedOut, "\(result)", sourceLocation: sourceLocation)
    if let status {
        #expect(result.status == status, "\(result)", sourceLocation: sourceLocation)
    } else {
        #expect(result.status != 0, "\(result)", sourceLocation: sourceLocation)
    }
    #expect(result.stdoutData.isEmpty, "stdout must be empty on failure: \(result)", sourceLocation: sourceLocation)
    #expect(!result.stderr.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(result)", sourceLocation: sourceLocation)
    for needle in needles {
        #expect(result.stderr.contains(needle), "stderr should mention \(needle): \(result)", sourceLocation: sourceLocation)
    }
}

/// Expects a successful run (exit 0, nothing alarming on stderr) and returns it.
@discardableResult
func expectSuccess(_ result: StorectlResult, sourceLocation: SourceLocation = #_sourceLocation) -> StorectlResult {
    #expect(result.succeeded, "\(result)", sourceLocation: sourceLocation)
    return result
}

/// The usage-error exit status (EX_USAGE), what ArgumentParser uses for validation errors.
let exitUsage: Int32 = 64
