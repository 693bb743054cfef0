import Foundation
import Store
import Testing

/// Replays the feed fuzzer's inputs (Fuzz/): every crash it ever found (Fuzz/Regressions/, where
/// `Fuzz/run.sh` writes them) and its seed corpus (Fuzz/Corpus/). Each input must give a feed or
/// a `FeedValidationError` naming at least one problem: never a crash, never another error.
@Suite("Fuzz regressions: Feed.decode on every saved fuzzer input")
struct FuzzRegressionTests {
    /// The package's Fuzz/ folder, found from this file's path (Tests/StoreTests/<this file>).
    static let fuzzFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz", isDirectory: true)

    /// "Regressions/<name>" and "Corpus/<name>" for every file there, hidden ones (.gitkeep) aside.
    static let inputs: [String] = ["Regressions", "Corpus"].flatMap { folder -> [String] in
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fuzzFolder.appendingPathComponent(folder).path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(folder)/\($0)" }
    }

    enum Outcome {
        case feed(Feed)
        case invalid(FeedValidationError)
    }

    /// What `Feed.decode` made of `data`; records an issue for any error but `FeedValidationError`
    /// and for one that names no problem.
    static func decode(_ data: Data, name: String, sourceLocation: SourceLocation = #_sourceLocation) -> Outcome? {
        do {
            return .feed(try Feed.decode(data, source: name))
        } catch let error as FeedValidationError {
            #expect(!error.problems.isEmpty, "\(name): a FeedValidationError with no problem", sourceLocation: sourceLocation)
            #expect(
                error.totalCount >= error.problems.count, "\(name): totalCount \(error.totalCount)",
                sourceLocation: sourceLocation)
            #expect(!error.description.isEmpty, sourceLocation: sourceLocation)
            return .invalid(error)
        } catch {
            Issue.record(
                "\(name): Feed.decode threw \(type(of: error)), not FeedValidationError: \(error)",
                sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test("the fuzzer's folders are found and the corpus is not empty")
    func foldersAreFound() throws {
        var isDirectory: ObjCBool = false
        for folder in ["Regressions", "Corpus"] {
            let path = Self.fuzzFolder.appendingPathComponent(folder).path
            #expect(
                FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue,
                "\(path) is missing")
        }
        #expect(Self.inputs.contains { $0.hasPrefix("Corpus/") }, "no corpus file found under \(Self.fuzzFolder.path)")
    }

    @Test("each saved input gives a feed or a FeedValidationError with problems", arguments: inputs)
    func replay(_ name: String) throws {
        let data = try Data(contentsOf: Self.fuzzFolder.appendingPathComponent(name))
        _ = Self.decode(data, name: name)
    }

    @Test("the seed corpus decodes as expected: the example feed is valid, invalid.json is not")
    func corpusOutcomes() throws {
        let example = try Data(contentsOf: Self.fuzzFolder.appendingPathComponent("Corpus/apple-frameworks.json"))
        if case .feed(let feed)? = Self.decode(example, name: "apple-frameworks.json") {
            #expect(feed.frameworks.count == 16)
        } else {
            Issue.record("Corpus/apple-frameworks.json is the example feed; it must decode")
        }
        let invalid = try Data(contentsOf: Self.fuzzFolder.appendingPathComponent("Corpus/invalid.json"))
        if case .invalid(let error)? = Self.decode(invalid, name: "invalid.json") {
            // 2026-02-30 is not a date; "x" is not a time; an order needs items.
            #expect(error.problems.count >= 3, "\(error)")
        } else {
            Issue.record("Corpus/invalid.json must be refused")
        }
    }

    /// A little of what the fuzzer does, deterministically and in every test run: every prefix
    /// of the small corpus files, and each of their bytes replaced by a few troublesome ones.
    @Test("truncations and byte substitutions of the small corpus files never crash nor throw another error")
    func mutationsOfTheSmallCorpusFiles() throws {
        let small = Self.inputs.filter { $0.hasPrefix("Corpus/") }.compactMap { name -> (String, [UInt8])? in
            guard let data = try? Data(contentsOf: Self.fuzzFolder.appendingPathComponent(name)), data.count <= 2_048 else {
                return nil
            }
            return (name, [UInt8](data))
        }
        #expect(!small.isEmpty)
        var decoded = 0
        for (name, bytes) in small {
            for length in 0..<bytes.count {
                _ = Self.decode(Data(bytes[..<length]), name: "\(name)[..<\(length)]")
                decoded += 1
            }
            for index in bytes.indices {
                for replacement: UInt8 in [0x00, 0x22, 0x5C, 0x7B, 0x5D, 0x2D, 0x39, 0xFF, 0xC3] where bytes[index] != replacement
                {
                    var mutated = bytes
                    mutated[index] = replacement
                    _ = Self.decode(Data(mutated), name: "\(name) with byte \(index) = \(replacement)")
                    decoded += 1
                }
            }
        }
        #expect(decoded > 0)
    }
}
