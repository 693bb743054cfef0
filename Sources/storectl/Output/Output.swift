import Foundation
import Store

/// Writing to standard output and standard error.
///
/// Everything a person reads goes through `print`, `printError` or `redrawProgress`, which take
/// `TerminalText`: the string literals of the code are written as they are, and every value
/// interpolated into them is escaped (`escaped(_:)`), so text from a feed, a file or an argument
/// can never retitle or recolour the terminal, reverse what follows or forge a line. JSON goes
/// through `printJSON`, exact.
enum Output {
    static func print(_ text: TerminalText) {
        writeOrExit(text.text + "\n")
    }

    static func printError(_ text: TerminalText) {
        // Nothing is left to tell if stderr itself cannot be written.
        try? write(Array((text.text + "\n").utf8), to: STDERR_FILENO)
    }

    /// Redraws the one-line progress display on stderr: back to the line's start, clear it, write `text`.
    static func redrawProgress(_ text: TerminalText) {
        try? write(Array("\r\u{1B}[K\(text.text)".utf8), to: STDERR_FILENO)
    }

    /// JSON, the feed's shapes, one document on stdout (pretty) or one line (not): exact, not escaped.
    static func printJSON(_ value: JSONValue, pretty: Bool = true) {
        writeOrExit(JSONWriter(pretty: pretty).string(value) + "\n")
    }

    /// `print`, throwing `CLIError` (`stdout: REASON`) when stdout cannot be written, for a
    /// command whose work is done by then and which says so itself (a sync's report).
    static func tryPrint(_ text: TerminalText) throws {
        try write(Array((text.text + "\n").utf8), to: STDOUT_FILENO)
    }

    static func writeRaw(_ data: Data) {
        do {
            try write(data, to: STDOUT_FILENO)
        } catch {
            exitFailingToWrite(error)
        }
    }

    /// Writes all of `bytes` to `descriptor` (stdout or stderr), in as many calls as it takes.
    /// A failure throws `CLIError` naming the stream: `stdout: Broken pipe` once the reader of
    /// a pipe has gone, when SIGPIPE is ignored (as a parent process may leave it; otherwise
    /// the signal ends storectl first, as it ends any program writing to a closed pipe).
    static func write(_ bytes: some ContiguousBytes, to descriptor: Int32) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    let stream = descriptor == STDERR_FILENO ? "stderr" : "stdout"
                    throw CLIError("\(stream): \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    /// `write` to stdout for output printed once a command's work is done: a failure there
    /// (the reader gone, a full disk) ends storectl with status 1 and says so on stderr, as
    /// coreutils do, rather than crashing or losing the output without a word.
    private static func writeOrExit(_ text: String) {
        do {
            try write(Array(text.utf8), to: STDOUT_FILENO)
        } catch {
            exitFailingToWrite(error)
        }
    }

    private static func exitFailingToWrite(_ error: any Error) -> Never {
        printError("Error: \(error)")
        Foundation.exit(1)
    }

    /// `text` with every control character shown as an escape: `\n`, `\r`, `\t`, else `\u{1B}`
    /// (hex, at least two digits). Controls are C0, DEL, C1, the bidi controls (embeddings,
    /// overrides, isolates, marks) and the line and paragraph separators. With
    /// `keepingNewlines`, "\n" stays a line break (for text laid out in lines by code).
    static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard isControl(scalar), !(keepingNewlines && scalar == "\n") else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u{" + (hex.count < 2 ? "0" + hex : hex) + "}"
            }
        }
        return result
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true // C0, DEL, C1
        case 0x202A...0x202E, 0x2066...0x2069: true // embeddings, overrides, isolates
        case 0x200E, 0x200F, 0x061C: true // left-to-right, right-to-left, Arabic letter marks
        case 0x2028, 0x2029: true // line and paragraph separators
        default: false
        }
    }
}

/// Text for a person to read, safe to write to a terminal: the literal parts of the string are
/// kept as written, every interpolated value is escaped (`Output.escaped`). Write
/// `Output.print("added framework \(id)")`; a value that is already `TerminalText` (a rendered
/// table) is kept as it is.
struct TerminalText: ExpressibleByStringInterpolation, Sendable {
    /// The text as it is written out.
    let text: String

    init(stringLiteral value: String) { text = value }

    init(stringInterpolation: Interpolation) { text = stringInterpolation.text }

    /// Lines laid out by code, each escaped, one per line.
    init(lines: [String]) { text = lines.map { Output.escaped($0) }.joined(separator: "\n") }

    init(lines: [TerminalText]) { text = lines.map(\.text).joined(separator: "\n") }

    /// Text every value of which went through `Output.escaped` already (a table's row, its
    /// cells escaped and padded): kept as it is.
    init(escaped text: String) { self.text = text }

    /// Text ArgumentParser laid out in lines (help, usage errors): its line breaks are kept,
    /// every other control character is escaped.
    init(formatted: String) { text = Output.escaped(formatted, keepingNewlines: true) }

    struct Interpolation: StringInterpolationProtocol {
        var text = ""

        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + 16 * interpolationCount) }

        mutating func appendLiteral(_ literal: String) { text += literal }

        mutating func appendInterpolation(_ value: TerminalText) { text += value.text }

        mutating func appendInterpolation<T>(_ value: T) {
            switch value {
            case let value as TerminalText: text += value.text
            case let error as CLIError: text += error.text.text
            case let error as FeedValidationError:
                // One problem a line, as the library lays them out, each escaped on its own: the
                // header and the "... more" line are the library's, the problems quote the feed.
                let description = error.description
                var lines = [String(description.prefix { $0 != "\n" })] + error.problems.map { "  \($0)" }
                if error.totalCount > error.problems.count, let more = description.components(separatedBy: "\n").last {
                    lines.append(more)
                }
                text += TerminalText(lines: lines).text
            default: text += Output.escaped(String(describing: value))
            }
        }
    }
}
