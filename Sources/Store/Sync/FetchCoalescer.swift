/// Shares one fetch among concurrent syncs of the same source in one process: the first sync
/// starts it, the others await the same task and get the same pages.
actor FetchCoalescer {
    typealias Result = FetchedFeed

    private var inFlight: [String: Task<Result, any Error>] = [:]
    /// Fetches started (for tests: two concurrent syncs of one source make one).
    private(set) var fetchCount = 0

    func load(_ key: String, _ work: @escaping @Sendable () async throws -> Result) async throws -> Result {
        if let task = inFlight[key] { return try await task.value }
        fetchCount += 1
        let task = Task { try await work() }
        inFlight[key] = task
        defer { if inFlight[key] == task { inFlight[key] = nil } }
        return try await task.value
    }
}
