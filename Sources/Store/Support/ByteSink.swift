import Foundation

/// Where streamed output goes, through a small buffer: a file descriptor (a file being
/// written, stdout) or memory. Writers (`FeedPageWriter`) append text as they produce it, so
/// a document of any size is written in bounded memory.
///
/// Not Sendable: one is made, used and finished inside one closure (a read transaction).
final class ByteSink {
    private static let bufferSize = 1 << 18

    private let descriptor: Int32?
    /// The name used in errors (a path, or "stdout").
    private let name: String
    private var buffer: [UInt8] = []
    /// Everything written, for a sink in memory.
    private(set) var memory: [UInt8] = []
    /// Bytes written so far.
    private(set) var count = 0

    /// A sink that writes to `descriptor` (left open: the caller closes it).
    init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
        buffer.reserveCapacity(Self.bufferSize)
    }

    /// A sink that keeps everything in `memory`.
    init() {
        descriptor = nil
        name = "memory"
    }

    func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        count += bytes.count
        guard descriptor != nil else {
            memory.append(contentsOf: bytes)
            return
        }
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Writes out what is buffered.
    func flush() throws {
        guard let descriptor, !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw OutputFileError(path: name, reason: String(cString: strerror(errno)))
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
