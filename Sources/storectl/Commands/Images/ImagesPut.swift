import ArgumentParser
import Foundation
import Store

struct ImagesPut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put", abstract: "Cache a file's bytes for a URL (replacing any earlier entry).")

    @OptionGroup var store: StoreOptions
    @OptionGroup var cache: ImageCacheOptions
    @Argument(help: "The image's URL (the cache key).") var url: String
    @Argument(help: "The file holding the bytes, or - for stdin.") var file: String
    @Option(name: .customLong("content-type"), help: "Its content type (default: from the file extension).") var contentType:
        String?

    func validate() throws {
        if let problem = ImageTable.keyProblem(url) { throw ValidationError("URL '\(url)': \(problem)") }
    }

    func run() async throws {
        let data: Data
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CLIError("'\(file)': cannot read: it is a folder, not a file")
        }
        if file == "-" {
            data = try Self.readAll(STDIN_FILENO, named: "stdin")
        } else {
            // Not blocking: a FIFO would wait in open() for a writer, past any Ctrl-C.
            let descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { throw CLIError("\(file): cannot read: \(String(cString: strerror(errno)))") }
            defer { close(descriptor) }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            data = try Self.readAll(descriptor, named: file)
        }
        // An empty file or stdin is a mistake (a failed download, a wrong path), never an image.
        if data.isEmpty { throw CLIError("\(file == "-" ? "stdin" : file): empty: an image has at least one byte") }
        let type = contentType ?? Self.contentType(forExtension: (file as NSString).pathExtension)
        let url = url
        let evicted = try await store.withStore(.creating, configure: cache.configure) {
            try await $0.images.put(url, data: data, contentType: type)
        }
        let evictions = evicted.isEmpty ? "" : "; evicted \(evicted.count) least recently used"
        Output.print("cached \(url) (\(data.count) bytes)\(evictions)")
    }

    /// The most bytes read: SQLite's default limit on a value (SQLITE_MAX_LENGTH, 1,000,000,000
    /// bytes), beyond which the store refuses the image anyway. `cat /dev/zero | storectl images
    /// put URL -` used to read until memory ran out.
    static let maximumBytes = 1_000_000_000

    /// Everything `descriptor` holds, read in chunks, each waited for without blocking past the
    /// task's cancellation: a pipe whose writer stalls cannot hold Ctrl-C (it held the first
    /// one). Not through Data(contentsOf:), which fails on a pipe.
    static func readAll(_ descriptor: Int32, named name: String) throws -> Data {
        var data = Data()
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
            if status.st_size > maximumBytes { throw tooLarge(name) }
            data.reserveCapacity(Int(status.st_size))
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            try Descriptor.waitUntilReadable(descriptor)
            let count = read(descriptor, &buffer, buffer.count)
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw CLIError("\(name): cannot read: \(String(cString: strerror(errno)))")
            }
            if data.count + count > maximumBytes { throw tooLarge(name) }
            data.append(buffer, count: count)
        }
    }

    private static func tooLarge(_ name: String) -> CLIError {
        CLIError("\(name): larger than \(maximumBytes) bytes, the most an image in the store can hold")
    }

    static func contentType(forExtension ext: String) -> String? {
        [
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
            "svg": "image/svg+xml", "heic": "image/heic", "avif": "image/avif",
        ][ext.lowercased()]
    }
}
