import Foundation

/// Standard output through a buffer, for output written as it is produced (a `list` of any
/// size): bytes go out in writes of `bufferSize`, and a write that fails (a pipe closed by
/// its reader, a full disk) throws a `CLIError` naming stdout, which ends the command.
///
/// Not Sendable: made, used and flushed inside one closure (a read transaction).
final class BufferedOutput {
    static let bufferSize = 1 << 16

    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
        buffer.reserveCapacity(Self.bufferSize)
    }

    /// Text for a person (escaped), and a newline.
    func writeLine(_ text: TerminalText) throws { try write(text.text + "\n") }

    /// Text written exactly as it is: JSON, whose strings `JSONWriter` escapes.
    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Writes out what is buffered.
    func flush() throws {
        defer { buffer.removeAll(keepingCapacity: true) }
        try Output.write(buffer, to: descriptor)
    }
}
