import Foundation
import Testing

@Suite("storectl images")
struct ImagesTests {
    /// `count` bytes covering every byte value (including NUL and invalid UTF-8), seeded.
    static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &* 7) })
    }

    /// Millisecond timestamps: make sure the next step happens in a later millisecond.
    func tick() async throws { try await Task.sleep(for: .milliseconds(5)) }

    func urls(_ result: StorectlResult) throws -> [String] {
        try JSON.array(expectSuccess(result).stdout).compactMap { $0["url"] as? String }
    }

    @Test("put, then get to --out and to stdout give back identical bytes")
    func putGet() async throws {
        let storectl = try Storectl()
        let data = Self.bytes(4096, seed: 1)
        let file = try storectl.directory.write(data, to: "in.png")
        let url = "https://example.com/img/a.png"
        let put = expectSuccess(try await storectl("images", "put", url, file))
        #expect(put.output == "cached \(url) (4096 bytes)")

        let out = storectl.directory.file("out.bin")
        let get = expectSuccess(try await storectl("images", "get", url, "--out", out))
        #expect(get.stdoutData.isEmpty, "--out writes nothing to stdout")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == data)

        let raw = expectSuccess(try await storectl("images", "get", url))
        #expect(raw.stdoutData == data)

        // Putting again replaces the bytes.
        let other = Self.bytes(100, seed: 9)
        expectSuccess(try await storectl("images", "put", url, try storectl.directory.write(other, to: "other.png")))
        #expect(expectSuccess(try await storectl("images", "get", url)).stdoutData == other)
    }

    @Test("put refuses a URL a feed could not carry back (64), creating no store")
    func putRefusesKeysAFeedCannotCarry() async throws {
        // A javascript: key made every later export and published folder unreadable to clients.
        let storectl = try Storectl()
        let file = try storectl.directory.write(Data([1, 2, 3]), to: "a.png")
        for url in ["javascript:alert(1)", "ftp://example.com/a.png", "https://example.com/a b"] {
            expectFailure(try await storectl("images", "put", url, file), status: exitUsage, mentioning: ["URL", "http"])
        }
        #expect(!FileManager.default.fileExists(atPath: storectl.db))
        expectSuccess(try await storectl("images", "put", "https://example.com/a%20b", file))
    }

    @Test("put reads the bytes from standard input through /dev/stdin")
    func putFromStdin() async throws {
        let storectl = try Storectl()
        let data = Self.bytes(70_000, seed: 5)
        let put = expectSuccess(
            try await storectl("images", "put", "from-stdin", "/dev/stdin", "--content-type", "image/png", stdin: data))
        #expect(put.output == "cached from-stdin (70000 bytes)")
        #expect(expectSuccess(try await storectl("images", "get", "from-stdin")).stdoutData == data)
    }

    @Test("a large image (1 MiB) passes through stdout intact")
    func largeImage() async throws {
        let storectl = try Storectl()
        let data = Self.bytes(1 << 20, seed: 3)
        expectSuccess(try await storectl("images", "put", "big", try storectl.directory.write(data, to: "big.bin")))
        #expect(expectSuccess(try await storectl("images", "get", "big")).stdoutData == data)
    }

    @Test("list --json: url, contentType (from the extension or --content-type), size, times")
    func listJSON() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl("images", "put", "u/b.png", try storectl.directory.write(Self.bytes(10, seed: 1), to: "b.png")))
        expectSuccess(
            try await storectl("images", "put", "u/a.jpg", try storectl.directory.write(Self.bytes(20, seed: 2), to: "a.JPG")))
        expectSuccess(
            try await storectl("images", "put", "u/c", try storectl.directory.write(Self.bytes(30, seed: 3), to: "c.bin")))
        expectSuccess(
            try await storectl(
                "images", "put", "u/d", try storectl.directory.write(Self.bytes(40, seed: 4), to: "d.bin"),
                "--content-type", "image/x-test"))
        let list = try JSON.array(expectSuccess(try await storectl("images", "list", "--json")).stdout)
        #expect(list.map { $0["url"] as? String } == ["u/a.jpg", "u/b.png", "u/c", "u/d"])
        #expect(list.map { $0["contentType"] as? String } == ["image/jpeg", "image/png", nil, "image/x-test"])
        #expect(list.map { JSON.integer($0["size"]) } == [20, 10, 30, 40])
        #expect(Set(list[2].keys) == ["url", "size", "storedAt", "lastAccessAt"])
        for image in list {
            #expect(Set(image.keys).isSuperset(of: ["url", "size", "storedAt", "lastAccessAt"]))
            #expect(image["data"] == nil, "list never carries bytes")
            for key in ["storedAt", "lastAccessAt"] {
                let text = try #require(image[key] as? String)
                #expect(text.hasSuffix("Z") && text.count >= 20, "\(key): \(text)")
            }
        }
        let table = expectSuccess(try await storectl("images", "list")).lines
        #expect(table.count == 6)
    }

    @Test("delete removes one image; a missing url fails naming it")
    func delete() async throws {
        let storectl = try Storectl()
        let file = try storectl.directory.write(Self.bytes(10, seed: 1), to: "x.png")
        expectSuccess(try await storectl("images", "put", "keep", file))
        expectSuccess(try await storectl("images", "put", "gone", file))
        #expect(expectSuccess(try await storectl("images", "delete", "gone")).output == "deleted image gone")
        #expect(try urls(try await storectl("images", "list", "--json")) == ["keep"])
        expectFailure(try await storectl("images", "delete", "gone"), mentioning: ["'gone'"])
        expectFailure(try await storectl("images", "get", "gone"), mentioning: ["'gone'"])
        expectFailure(try await storectl("images", "get", "gone", "--out", storectl.directory.file("o")), mentioning: ["'gone'"])
        #expect(!FileManager.default.fileExists(atPath: storectl.directory.file("o")))
    }

    @Test("put evicts the least recently used image beyond --budget; get refreshes an image")
    func putEvicts() async throws {
        let storectl = try Storectl()
        let files = try (1...3).map { try storectl.directory.write(Self.bytes(400, seed: UInt8($0)), to: "\($0).png") }
        expectSuccess(try await storectl("images", "put", "img/1", files[0], "--budget", "1000"))
        try await tick()
        expectSuccess(try await storectl("images", "put", "img/2", files[1], "--budget", "1000"))
        try await tick()
        // Reading 1 makes 2 the least recently used.
        expectSuccess(try await storectl("images", "get", "img/1", "--out", storectl.directory.file("1.out"), "--budget", "1000"))
        try await tick()
        let third = expectSuccess(try await storectl("images", "put", "img/3", files[2], "--budget", "1000"))
        #expect(third.output == "cached img/3 (400 bytes); evicted 1 least recently used")
        #expect(try urls(try await storectl("images", "list", "--json")) == ["img/1", "img/3"])
        expectFailure(try await storectl("images", "get", "img/2"), mentioning: ["'img/2'"])

        let stats = try JSON.object(expectSuccess(try await storectl("images", "stats", "--json", "--budget", "1000")).stdout)
        #expect(Set(stats.keys) == ["count", "totalBytes", "budgetBytes"])
        #expect(JSON.integer(stats["count"]) == 2)
        #expect(JSON.integer(stats["totalBytes"]) == 800)
        #expect(JSON.integer(stats["budgetBytes"]) == 1000)
    }

    @Test("prune --budget evicts least recently used first, and only as many as needed")
    func prune() async throws {
        let storectl = try Storectl()
        let files = try (1...3).map { try storectl.directory.write(Self.bytes(400, seed: UInt8($0)), to: "\($0).png") }
        for (index, file) in files.enumerated() {
            expectSuccess(try await storectl("images", "put", "img/\(index + 1)", file)) // default budget: nothing evicted
            try await tick()
        }
        #expect(try urls(try await storectl("images", "list", "--json")) == ["img/1", "img/2", "img/3"])
        // get (to stdout) refreshes 1: now 2 is the least recently used, then 3.
        #expect(expectSuccess(try await storectl("images", "get", "img/1")).stdoutData == Self.bytes(400, seed: 1))
        try await tick()

        let stats = try JSON.object(expectSuccess(try await storectl("images", "stats", "--json")).stdout)
        #expect(JSON.integer(stats["count"]) == 3)
        #expect(JSON.integer(stats["totalBytes"]) == 1200)
        #expect(JSON.integer(stats["budgetBytes"]) == 512 * 1024 * 1024)

        let pruned = expectSuccess(try await storectl("images", "prune", "--budget", "1000"))
        #expect(pruned.lines == ["evicted img/2", "evicted 1 image"])
        #expect(try urls(try await storectl("images", "list", "--json")) == ["img/1", "img/3"])

        let again = expectSuccess(try await storectl("images", "prune", "--budget", "1000"))
        #expect(again.lines == ["evicted 0 images"])

        // A smaller budget (in KiB notation works too) evicts 3, then 1.
        let smaller = expectSuccess(try await storectl("images", "prune", "--budget", "0KiB"))
        #expect(smaller.lines == ["evicted img/3", "evicted img/1", "evicted 2 images"])
        let empty = try JSON.object(try await storectl("images", "stats", "--json").stdout)
        #expect(JSON.integer(empty["count"]) == 0 && JSON.integer(empty["totalBytes"]) == 0)
    }

    @Test("STORECTL_IMAGE_BUDGET sets the budget; --budget wins")
    func budgetEnvironment() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate")) // the store exists: a read of a missing one is refused
        let env: [String: String?] = ["STORECTL_IMAGE_BUDGET": "1KiB"]
        let stats = try JSON.object(expectSuccess(try await storectl("images", "stats", "--json", environment: env)).stdout)
        #expect(JSON.integer(stats["budgetBytes"]) == 1024)
        let explicit = try JSON.object(
            expectSuccess(try await storectl("images", "stats", "--json", "--budget", "2MiB", environment: env)).stdout)
        #expect(JSON.integer(explicit["budgetBytes"]) == 2 << 20)
        expectFailure(
            try await storectl("images", "stats", environment: ["STORECTL_IMAGE_BUDGET": "lots"]),
            mentioning: ["STORECTL_IMAGE_BUDGET"])
        // Set but empty is a mistake, as for STORECTL_DB and STORECTL_BUSY_TIMEOUT (it used to mean
        // the default budget).
        expectFailure(
            try await storectl("images", "stats", environment: ["STORECTL_IMAGE_BUDGET": ""]), status: exitUsage,
            mentioning: ["STORECTL_IMAGE_BUDGET"])
    }

    @Test("bad inputs fail: unreadable file, image larger than the budget, malformed --budget")
    func failures() async throws {
        let storectl = try Storectl()
        // The store exists: a put that fails removes a store it created.
        expectSuccess(try await storectl("migrate"))
        let missing = storectl.directory.file("missing.png")
        expectFailure(try await storectl("images", "put", "u", missing), mentioning: [missing])
        let file = try storectl.directory.write(Self.bytes(400, seed: 1), to: "x.png")
        expectFailure(try await storectl("images", "put", "u", file, "--budget", "100"), mentioning: ["400 bytes", "100"])
        expectFailure(
            try await storectl("images", "stats", "--budget", "12XB"), status: exitUsage, mentioning: ["--budget", "12XB"])
        expectFailure(try await storectl("images", "prune", "--budget", "-1"), status: exitUsage, mentioning: ["--budget"])
        // Empty: a file or stdin with no bytes is never an image (it was stored as one of 0 bytes).
        let empty = try storectl.directory.write(Data(), to: "empty.png")
        expectFailure(try await storectl("images", "put", "u", empty), status: 1, mentioning: [empty, "empty"])
        expectFailure(try await storectl("images", "put", "u", "-", stdin: Data()), status: 1, mentioning: ["stdin", "empty"])
        #expect(try urls(try await storectl("images", "list", "--json")) == [])
    }
}
