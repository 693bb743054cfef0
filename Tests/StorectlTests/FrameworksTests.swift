import Foundation
import Testing

@Suite("storectl frameworks")
struct FrameworksTests {
    static let keys: Set<String> = ["id", "name", "imageName", "urlString", "description"]

    struct Fixture {
        var id, name, imageName, url, description: String

        var addArguments: [String] {
            [
                "frameworks", "add", "--id", id, "--name", name, "--image-name", imageName, "--url", url, "--description",
                description,
            ]
        }

        /// Compares a feed-shaped framework, field by field, byte for byte.
        func expectMatches(_ object: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(Set(object.keys) == FrameworksTests.keys, "keys: \(object.keys.sorted())", sourceLocation: sourceLocation)
            #expect(sameBytes(JSON.string(object, "id"), id), sourceLocation: sourceLocation)
            #expect(sameBytes(JSON.string(object, "name"), name), sourceLocation: sourceLocation)
            #expect(sameBytes(JSON.string(object, "imageName"), imageName), sourceLocation: sourceLocation)
            #expect(sameBytes(JSON.string(object, "urlString"), url), sourceLocation: sourceLocation)
            #expect(sameBytes(JSON.string(object, "description"), description), sourceLocation: sourceLocation)
        }
    }

    static let arkit = Fixture(
        id: "arkit", name: "ARKit", imageName: "arkit", url: "https://developer.apple.com/augmented-reality/arkit",
        description: "ARKit 5 brings Location Anchors to London and more cities.")
    static let metal = Fixture(
        id: "metal", name: "Metal", imageName: "metal", url: "https://developer.apple.com/metal/",
        description: "Metal is a modern, tightly integrated graphics and compute API.")

    @Test("add, list --json and show --json give back every field that was added")
    func addListShow() async throws {
        let storectl = try Storectl()
        // Added out of order: list is ordered by id.
        for fixture in [Self.metal, Self.arkit] {
            let added = expectSuccess(try await storectl.run(fixture.addArguments))
            #expect(added.output == "added framework \(fixture.id)")
        }

        let list = try JSON.array(expectSuccess(try await storectl("frameworks", "list", "--json")).stdout)
        try #require(list.count == 2)
        Self.arkit.expectMatches(list[0])
        Self.metal.expectMatches(list[1])

        for fixture in [Self.arkit, Self.metal] {
            let shown = try JSON.object(expectSuccess(try await storectl("frameworks", "show", fixture.id, "--json")).stdout)
            fixture.expectMatches(shown)
        }

        // The human forms name the records too.
        let table = expectSuccess(try await storectl("frameworks", "list")).lines
        #expect(table.first?.hasPrefix("ID") == true)
        #expect(table.count == 4, "header, rule and two rows: \(table)")
        #expect(table[2].hasPrefix("arkit") && table[3].hasPrefix("metal"))
        let text = expectSuccess(try await storectl("frameworks", "show", "arkit")).stdout
        #expect(text.contains(Self.arkit.url) && text.contains(Self.arkit.description))
    }

    @Test("an empty store lists [] as JSON")
    func emptyList() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate")) // the store exists: a read of a missing one is refused
        let list = try JSON.parse(expectSuccess(try await storectl("frameworks", "list", "--json")).stdout)
        #expect((list as? [Any])?.isEmpty == true)
    }

    @Test("adding an existing id fails, names the id, and keeps the original")
    func addExisting() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl.run(Self.arkit.addArguments))
        var duplicate = Self.metal
        duplicate.id = Self.arkit.id
        let failed = try await storectl.run(duplicate.addArguments)
        expectFailure(failed, mentioning: ["'arkit'", "already exists"])

        let shown = try JSON.object(expectSuccess(try await storectl("frameworks", "show", "arkit", "--json")).stdout)
        Self.arkit.expectMatches(shown)
        #expect(try JSON.array(try await storectl("frameworks", "list", "--json").stdout).count == 1)
    }

    @Test("update changes only the given fields")
    func update() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl.run(Self.arkit.addArguments))
        expectSuccess(try await storectl.run(Self.metal.addArguments))

        let updated = expectSuccess(
            try await storectl(
                "frameworks", "update", "arkit", "--name", "ARKit 6", "--description", "New description."))
        #expect(updated.output == "updated framework arkit")
        var expected = Self.arkit
        expected.name = "ARKit 6"
        expected.description = "New description."
        expected.expectMatches(try JSON.object(try await storectl("frameworks", "show", "arkit", "--json").stdout))

        expectSuccess(
            try await storectl("frameworks", "update", "arkit", "--image-name", "arkit-6", "--url", "https://example.com/arkit"))
        expected.imageName = "arkit-6"
        expected.url = "https://example.com/arkit"
        expected.expectMatches(try JSON.object(try await storectl("frameworks", "show", "arkit", "--json").stdout))

        // The other record is untouched.
        Self.metal.expectMatches(try JSON.object(try await storectl("frameworks", "show", "metal", "--json").stdout))
    }

    @Test("update with no fields is a usage error (exit 64)")
    func updateNothing() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl.run(Self.arkit.addArguments))
        let result = try await storectl("frameworks", "update", "arkit")
        expectFailure(result, status: exitUsage, mentioning: ["nothing to update"])
        Self.arkit.expectMatches(try JSON.object(try await storectl("frameworks", "show", "arkit", "--json").stdout))
    }

    @Test("update, show and delete of a missing id fail and name it")
    func missing() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl.run(Self.arkit.addArguments))
        expectFailure(try await storectl("frameworks", "show", "nope-1"), mentioning: ["'nope-1'"])
        expectFailure(try await storectl("frameworks", "show", "nope-2", "--json"), mentioning: ["'nope-2'"])
        expectFailure(try await storectl("frameworks", "delete", "nope-3"), mentioning: ["'nope-3'"])
        expectFailure(try await storectl("frameworks", "update", "nope-4", "--name", "X"), mentioning: ["'nope-4'"])
        #expect(try JSON.array(try await storectl("frameworks", "list", "--json").stdout).count == 1)
    }

    @Test("delete removes exactly one framework; deleting it again fails")
    func delete() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl.run(Self.arkit.addArguments))
        expectSuccess(try await storectl.run(Self.metal.addArguments))
        let deleted = expectSuccess(try await storectl("frameworks", "delete", "arkit"))
        #expect(deleted.output == "deleted framework arkit")
        expectFailure(try await storectl("frameworks", "show", "arkit"), mentioning: ["'arkit'"])
        expectFailure(try await storectl("frameworks", "delete", "arkit"), mentioning: ["'arkit'"])
        let list = try JSON.array(try await storectl("frameworks", "list", "--json").stdout)
        try #require(list.count == 1)
        Self.metal.expectMatches(list[0])
    }

    @Test("ids must be 1 to 200 characters")
    func idLength() async throws {
        let storectl = try Storectl()
        var fixture = Self.arkit
        fixture.id = String(repeating: "x", count: 200)
        expectSuccess(try await storectl.run(fixture.addArguments))
        fixture.id = String(repeating: "y", count: 201)
        expectFailure(try await storectl.run(fixture.addArguments), mentioning: ["id"])
        fixture.id = ""
        expectFailure(try await storectl.run(fixture.addArguments))
        #expect(try JSON.array(try await storectl("frameworks", "list", "--json").stdout).count == 1)
    }

    @Test("add without a required option is a usage error")
    func missingOption() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate")) // the store exists: a read of a missing one is refused
        expectFailure(
            try await storectl("frameworks", "add", "--id", "x", "--name", "X"), status: exitUsage, mentioning: ["--image-name"])
        // Nothing was written.
        #expect(try JSON.array(try await storectl("frameworks", "list", "--json").stdout).isEmpty)
    }
}
