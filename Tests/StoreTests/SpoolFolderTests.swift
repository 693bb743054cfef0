import Foundation
import Testing

@testable import Store

@Suite("Spool folders")
struct SpoolFolderTests {
    /// `removeAll` itself is not called here: it removes every live folder of the process,
    /// those of the syncs other tests run meanwhile too.
    @Test("a folder is listed for removeAll (a process exiting without unwinding) while it lives, and removed at its end")
    func listedWhileAlive() throws {
        var folder: SpoolFolder? = try SpoolFolder()
        let path = folder!.url.path
        try Data("page".utf8).write(to: folder!.file(forPage: 1))
        #expect(SpoolFolder.livePaths.contains(path))
        folder = nil
        #expect(!SpoolFolder.livePaths.contains(path))
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
