import Foundation
import StoreTestSupport
import Testing

/// An export is written to a hidden temporary file beside its output, then renamed into place.
/// Interrupted while that file is written, it is removed and the old output stays.
///
/// The export runs with `STORECTL_TEST_PAUSE_AFTER_TEMPORARY=1`: it stops right after creating
/// its temporary file until the signal's cancellation has run, so the signal always lands while
/// the file is written, however loaded the machine (without it, a fast export could finish
/// between "temporary file seen" and the signal). It then goes on and ends as any interrupted
/// export does, so a temporary file left behind, or the old output replaced, still fails.
@Suite("storectl export interrupted")
struct ExportInterruptTests {
    func temporaries(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".feed.json.tmp-") }
    }

    /// A store whose export (about 11 MB of JSON) takes several writes of the temporary file.
    func largeStore() async throws -> Storectl {
        let storectl = try Storectl()
        var bytes = Data(count: 8 << 20)
        for index in stride(from: 0, to: bytes.count, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index / 4096) }
        let image = try storectl.directory.write(bytes, to: "large.bin")
        expectSuccess(try await storectl("images", "put", "https://example.com/large.bin", image))
        return storectl
    }

    /// One signal cancels the export; a second one (another signal: the same one twice may be
    /// delivered as one) makes storectl exit at once, with the status of whichever it took first.
    @Test(
        "a signal while the output is written: exit 128 + signal, the old file unchanged, no temporary file left",
        arguments: [[SIGINT], [SIGTERM], [SIGTERM, SIGINT]])
    func interrupted(signals: [Int32]) async throws {
        let storectl = try await largeStore()
        let folder = try storectl.directory.makeDirectory("out")
        let out = folder + "/feed.json"
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: out))
        // A long grace period: the export must end by its cancellation (and say so), not be
        // cut short after 5 s by the grace period (on a loaded machine, a debug build takes
        // seconds to encode the 8 MiB image before it next looks at the cancellation).
        let export = try await storectl.start(
            ["export", "--out", out],
            environment: ["STORECTL_TEST_PAUSE_AFTER_TEMPORARY": "1", "STORECTL_TEST_INTERRUPT_GRACE": "600"])
        let writing = try await eventually(within: 120) { try !temporaries(in: folder).isEmpty || export.exitStatus != nil }
        #expect(writing)
        try #require(export.exitStatus == nil, "the export ended before it could be interrupted (it pauses): \(export.stderr)")
        for signal in signals { export.send(signal) }
        let status = await export.waitForExit(within: .seconds(240))
        #expect(signals.map { 128 + $0 }.contains(status ?? -1), "\(String(describing: status)): \(export.stderr)")
        // One signal: the export winds down and says what is left (two: it exits at once).
        if signals.count == 1 {
            #expect(export.stderr.contains("export to \(out) interrupted; \(out) is left as it was"), "\(export.stderr)")
        }
        let left = try temporaries(in: folder)
        #expect(left.isEmpty, "\(left)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "old\n")
    }
}
