import ArgumentParser
import Store

struct SourcesForget: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget the sync state of sources: their validators, cursor and received records' hashes.",
        discussion: """
            The records stay, and so does the history. The next sync from a forgotten source is a \
            first sync: every page fetched, and, three-way, nothing as last received to tell which \
            side changed a record. Exit 1 if the store has no state for a source (the others are \
            still forgotten).
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "Sources as `sources list` prints them, or as given to sync (a path, a URL, a published folder).")
    var sources: [FeedSource]

    func validate() throws {
        if sources.isEmpty { throw ValidationError("name at least one source") }
    }

    func run() async throws {
        let sources = sources
        let forgotten = try await store.withStore(.existing) { opened in
            var forgotten: [(FeedSource, Bool)] = []
            for source in sources { forgotten.append((source, try await opened.forgetSyncSource(source))) }
            return forgotten
        }
        var missing = false
        for (source, done) in forgotten {
            if done {
                Output.print("forgot \(source.key)")
            } else {
                missing = true
                Output.printError("no sync state for \(source.key)")
            }
        }
        if missing { throw ExitCode.failure }
    }
}
