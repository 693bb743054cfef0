/// One thing wrong with a feed: where (source and JSON path) and what.
public struct FeedProblem: Sendable, Equatable, CustomStringConvertible {
    /// The page it was found in: a file path or a URL.
    public let source: String
    /// The JSON path: `events[41].date`, or empty for the document itself.
    public let path: String
    /// What is wrong, in words.
    public let message: String

    /// A problem at `path` of `source`.
    public init(source: String, path: String, message: String) {
        self.source = source
        self.path = path
        self.message = message
    }

    /// `feed.json: events[41].date: 2026-02-30 is not a calendar date`.
    public var description: String { path.isEmpty ? "\(source): \(message)" : "\(source): \(path): \(message)" }
}

/// A feed that failed validation: nothing was written. Lists every problem found, up to a limit.
public struct FeedValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The problems, at most `FeedValidator.maximumProblems` of them.
    public let problems: [FeedProblem]
    /// How many problems were found in all (may exceed `problems.count`).
    public let totalCount: Int

    public var description: String {
        var lines = problems.map(\.description)
        if totalCount > problems.count { lines.append("... and \(totalCount - problems.count) more problems") }
        let header =
            totalCount == 1
            ? "the feed is invalid; nothing was written:" : "the feed has \(totalCount) problems; nothing was written:"
        return ([header] + lines.map { "  " + $0 }).joined(separator: "\n")
    }
}
