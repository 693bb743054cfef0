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
        do {
            // Read through a file handle, not Data(contentsOf:), which fails on a pipe (stdin,
            // /dev/stdin, a FIFO).
            if file == "-" {
                data = try FileHandle.standardInput.readToEnd() ?? Data()
            } else {
                let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
                defer { try? handle.close() }
                data = try handle.readToEnd() ?? Data()
            }
        } catch {
            throw CLIError("\(file): cannot read: \(error.localizedDescription)")
        }
        let type = contentType ?? Self.contentType(forExtension: (file as NSString).pathExtension)
        let url = url
        let evicted = try await store.withStore(.creating, configure: cache.configure) {
            try await $0.images.put(url, data: data, contentType: type)
        }
        let evictions = evicted.isEmpty ? "" : "; evicted \(evicted.count) least recently used"
        Output.print("cached \(url) (\(data.count) bytes)\(evictions)")
    }

    static func contentType(forExtension ext: String) -> String? {
        [
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
            "svg": "image/svg+xml", "heic": "image/heic", "avif": "image/avif",
        ][ext.lowercased()]
    }
}
